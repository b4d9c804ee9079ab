package store

import (
	"errors"
	"fmt"
)

// ErrInvalidCall marks a call that breaks the Table port's rules (an empty key part, too many ops or keys,
// a key twice, an unknown op kind or condition). It is never a condition failure.
var ErrInvalidCall = errors.New("store: invalid call")

// CheckKey rejects a key with an empty part.
func CheckKey(k Key) error {
	if k.PK == "" || k.SK == "" {
		return fmt.Errorf("%w: key %q has an empty part", ErrInvalidCall, k.String())
	}
	return nil
}

// CheckKeys rejects an invalid key and any key given twice.
func CheckKeys(keys []Key) error {
	seen := make(map[Key]struct{}, len(keys))
	for _, k := range keys {
		if err := CheckKey(k); err != nil {
			return err
		}
		if _, dup := seen[k]; dup {
			return fmt.Errorf("%w: key %s given twice", ErrInvalidCall, k)
		}
		seen[k] = struct{}{}
	}
	return nil
}

// CheckOps holds a Write's ops to the port's rules: 1 to MaxTransactOps ops of known kinds and conditions,
// increments unconditional, no key empty or twice. Every adapter calls it before speaking to its system,
// so they refuse the same calls.
func CheckOps(ops []Op) error {
	if len(ops) == 0 || len(ops) > MaxTransactOps {
		return fmt.Errorf("%w: %d ops, want 1 to %d", ErrInvalidCall, len(ops), MaxTransactOps)
	}
	keys := make([]Key, len(ops))
	for i, op := range ops {
		if op.Kind < OpPut || op.Kind > OpIncr {
			return fmt.Errorf("%w: op %d has unknown kind %d", ErrInvalidCall, i, op.Kind)
		}
		if op.Cond < Always || op.Cond > IfVersion {
			return fmt.Errorf("%w: op %d has unknown condition %d", ErrInvalidCall, i, op.Cond)
		}
		if op.Kind == OpIncr && op.Cond != Always {
			return fmt.Errorf("%w: op %d: an increment takes no condition", ErrInvalidCall, i)
		}
		keys[i] = op.Item.Key
	}
	return CheckKeys(keys)
}
