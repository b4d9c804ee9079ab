package deploy

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// sam build runs `make build-<Function>` for every function at once (samconfig.toml: parallel = true), and
// each needs the API reference's bundle: on a fresh clone 15 installs of it start together. They must all
// succeed and leave one whole bundle (a shared temporary file failed the first sam build of a fresh clone).
func TestConcurrentRedocInstallsOnAFreshClone(t *testing.T) {
	const repo = "../.."
	installed := filepath.Join(repo, "infra", "tools", "redoc", "node_modules", "redoc")
	script, err := os.ReadFile(filepath.Join(installed, "bundles", "redoc.standalone.js"))
	if err != nil {
		t.Fatalf("Redoc is not installed (%v): run `make tools`", err)
	}
	// A fresh clone's tree, with Redoc already fetched (npm ci is not what this tests).
	root := t.TempDir()
	copyFile := func(from, to string) {
		t.Helper()
		b, err := os.ReadFile(from)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(to, b, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	copyFile(filepath.Join(repo, "infra", "tools", "install-redoc"), filepath.Join(root, "infra", "tools", "install-redoc"))
	copyFile(filepath.Join(repo, "shared", "apidocs", "redoc.sha256"), filepath.Join(root, "shared", "apidocs", "redoc.sha256"))
	copyFile(filepath.Join(repo, "shared", "apidocs", "bundle", ".gitignore"), filepath.Join(root, "shared", "apidocs", "bundle", ".gitignore"))
	copyFile(filepath.Join(installed, "package.json"), filepath.Join(root, "infra", "tools", "redoc", "node_modules", "redoc", "package.json"))
	copyFile(filepath.Join(installed, "bundles", "redoc.standalone.js"), filepath.Join(root, "infra", "tools", "redoc", "node_modules", "redoc", "bundles", "redoc.standalone.js"))

	const builds = 8
	var wg sync.WaitGroup
	outs, errs := make([][]byte, builds), make([]error, builds)
	for i := range builds {
		wg.Go(func() {
			outs[i], errs[i] = exec.Command(filepath.Join(root, "infra", "tools", "install-redoc")).CombinedOutput()
		})
	}
	wg.Wait()
	for i := range builds {
		if errs[i] != nil {
			t.Errorf("install %d: %v\n%s", i, errs[i], outs[i])
		}
	}
	bundleDir := filepath.Join(root, "shared", "apidocs", "bundle")
	f, err := os.Open(filepath.Join(bundleDir, "redoc.standalone.js.gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(zr)
	if err != nil {
		t.Fatalf("the bundle is not whole: %v", err)
	}
	want := bytes.Replace(script, []byte("https://cdn.redoc.ly/redoc/logo-mini.svg"), []byte("data:,"), 1)
	if !bytes.Equal(got, want) {
		t.Fatalf("the bundle holds %d bytes, not the script's %d with its logo replaced", len(got), len(want))
	}
	// The folder is embedded whole (go:embed all:bundle): nothing but the bundle, its stamp and .gitignore.
	entries, _ := os.ReadDir(bundleDir)
	if len(entries) != 3 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Fatalf("the bundle's folder holds %v", names)
	}
}
