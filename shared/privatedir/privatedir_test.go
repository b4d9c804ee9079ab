package privatedir

import (
	"os"
	"path/filepath"
	"testing"
)

func mode(t *testing.T, path string) os.FileMode {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode().Perm()
}

func TestMake(t *testing.T) {
	root := t.TempDir()
	tests := []struct {
		name    string
		prepare func(dir string) error
	}{
		{"new, with a new parent", func(string) error { return nil }},
		{"existing, open to others", func(dir string) error {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return err
			}
			return os.Chmod(dir, 0o755)
		}},
		{"existing, group-readable only", func(dir string) error {
			if err := os.MkdirAll(dir, 0o700); err != nil {
				return err
			}
			return os.Chmod(dir, 0o740)
		}},
		{"existing, private", func(dir string) error { return os.MkdirAll(dir, 0o700) }},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			parent := filepath.Join(root, string(rune('a'+i)))
			dir := filepath.Join(parent, "table")
			if err := tt.prepare(dir); err != nil {
				t.Fatal(err)
			}
			if err := Make(dir); err != nil {
				t.Fatal(err)
			}
			if m := mode(t, dir); m != 0o700 {
				t.Errorf("%s: mode %04o, want 0700", dir, m)
			}
			if i == 0 {
				if m := mode(t, parent); m != 0o700 {
					t.Errorf("created parent %s: mode %04o, want 0700", parent, m)
				}
			}
		})
	}
	file := filepath.Join(root, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := Make(file); err == nil {
		t.Error("a file was taken for a folder")
	}
}
