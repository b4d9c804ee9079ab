package store

import (
	"errors"
	"fmt"
	"slices"
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
		if len(op.Item.Counters) > 0 && op.Kind != OpPut {
			return fmt.Errorf("%w: op %d: only a put writes named counters", ErrInvalidCall, i)
		}
		if op.KeepCounters && (op.Kind != OpPut || len(op.Item.Counters) > 0) {
			return fmt.Errorf("%w: op %d: only a put without counters of its own keeps the stored ones", ErrInvalidCall, i)
		}
		for name := range op.Item.Counters {
			if err := checkCounterName(name); err != nil {
				return fmt.Errorf("op %d: %w", i, err)
			}
		}
		keys[i] = op.Item.Key
	}
	return CheckKeys(keys)
}

// MaxCounterName and MaxCountersDropped bound AddCounter's names: a counter's name is 1 to MaxCounterName
// bytes of [A-Za-z0-9@._-] (so every backend can use it in an attribute name as it is), and one call drops
// at most MaxCountersDropped counters, each once, never the one it adds to.
const (
	MaxCounterName     = 64
	MaxCountersDropped = 16
)

// CheckCounters holds AddCounter's key and names to the port's rules.
func CheckCounters(key Key, name string, drop []string) error {
	if err := CheckKey(key); err != nil {
		return err
	}
	if len(drop) > MaxCountersDropped {
		return fmt.Errorf("%w: %d counters dropped, at most %d", ErrInvalidCall, len(drop), MaxCountersDropped)
	}
	if err := checkCounterName(name); err != nil {
		return err
	}
	for i, d := range drop {
		if err := checkCounterName(d); err != nil {
			return err
		}
		if d == name || slices.Contains(drop[:i], d) {
			return fmt.Errorf("%w: counter %q named twice", ErrInvalidCall, d)
		}
	}
	return nil
}

func checkCounterName(name string) error {
	if name == "" || len(name) > MaxCounterName {
		return fmt.Errorf("%w: a counter name of %d bytes, want 1 to %d", ErrInvalidCall, len(name), MaxCounterName)
	}
	for i := 0; i < len(name); i++ {
		switch c := name[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '@', c == '.', c == '_', c == '-':
		default:
			return fmt.Errorf("%w: counter name %q: only [A-Za-z0-9@._-]", ErrInvalidCall, name)
		}
	}
	return nil
}
