//go:build !unix

package inproc

import "os"

// lockDir opens path without locking it: outside Unix the journal relies on one process per data directory.
func lockDir(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
}
