// Package privatedir makes the local stack's folders private to their owner: they hold key hashes, the
// session-token secret and every tenant's data.
package privatedir

import (
	"fmt"
	"os"
)

// Make makes sure dir exists with mode 0700, creating missing parents with the same mode, and tightens a
// folder that group or others may enter or read (earlier versions made them 0755).
func Make(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("stat %s: %w", dir, err)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		if err := os.Chmod(dir, 0o700); err != nil {
			return fmt.Errorf("%s is open to group or others and could not be made private: %w", dir, err)
		}
	}
	return nil
}
