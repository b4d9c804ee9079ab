package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// The generators' flags, as the README gives them (TestGeneratedClients checks the README says so).
// openapi-typescript: without --default-non-nullable false, a request member with a default (the niche
// profile's contentLanguage, a count) would be typed as required, though the API fills it in.
const (
	tsGenerateFlags = "--default-non-nullable false"
	pyGenerateFlags = "--meta none"
)

// clientTool is a pinned generator or runtime that infra/tools/install-clients installs.
func clientTool(t *testing.T, root, rel string) string {
	t.Helper()
	path := filepath.Join(root, rel)
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("%s is not installed (%v): run `make tools` (infra/tools/install-clients)", rel, err)
	}
	return path
}

// runCommand runs name with args in dir and returns what it printed; it fails t on a non-zero exit.
func runCommand(t *testing.T, dir string, env []string, name string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\n%s", filepath.Base(name), strings.Join(args, " "), err, out.String())
	}
	return out.String()
}

var generatorWarning = regexp.MustCompile(`(?i)\bwarn`)

// TestGeneratedClients generates a TypeScript client (openapi-typescript's types for openapi-fetch) and a
// Python client (openapi-python-client) from the contract the local stack serves, into .build/clients, and
// runs a smoke script with each against that stack: the niche profile set, a video created and listed, a
// note saved, a generation started with Prefer: respond-async and polled to success, a 404 read as the
// typed Error. A generator that warns about the contract fails the test: what it skips, a client lacks.
func TestGeneratedClients(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	tools := filepath.Join(root, "infra", "tools", "clients")
	tsGen := clientTool(t, root, "infra/tools/clients/node_modules/.bin/openapi-typescript")
	tsc := clientTool(t, root, "infra/tools/clients/node_modules/.bin/tsc")
	pyGen := clientTool(t, root, ".tools/venv/bin/openapi-python-client")
	python := clientTool(t, root, ".tools/venv/bin/python")
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("node: %v: run `make tools` (infra/tools/install-clients names what it needs)", err)
	}
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"openapi-typescript $API/openapi.json " + tsGenerateFlags,
		"openapi-python-client generate --url $API/openapi.json " + pyGenerateFlags,
	} {
		if !bytes.Contains(readme, []byte(want)) {
			t.Errorf("README.md does not give the command this test runs: %q", want)
		}
	}

	base, _, stop := start(t, map[string]string{
		"CSS_DATA_DIR":                t.TempDir(),
		"CSS_DEV_API_KEYS":            devKey,
		"CSS_RESEARCH_SCHEDULE_EVERY": "24h",
	})
	defer stop()
	contract := base + "/api/v1/openapi.json"

	out := filepath.Join(root, ".build", "clients")
	if err := os.RemoveAll(out); err != nil {
		t.Fatal(err)
	}
	// The served document, kept beside the clients generated from it.
	resp, err := http.Get(contract)
	if err != nil {
		t.Fatal(err)
	}
	served, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET %s: %d %v", contract, resp.StatusCode, err)
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(out, "openapi.json"), served, 0o644); err != nil {
		t.Fatal(err)
	}
	smokeEnv := []string{"CSS_BASE=" + base, "CSS_KEY=" + devKey}

	t.Run("typescript", func(t *testing.T) {
		dir := filepath.Join(out, "typescript")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		gen := runCommand(t, dir, nil, tsGen, append([]string{contract}, append(strings.Fields(tsGenerateFlags), "-o", "schema.d.ts")...)...)
		if generatorWarning.MatchString(gen) {
			t.Errorf("openapi-typescript warned:\n%s", gen)
		}
		// The smoke script beside the types, and the pinned packages where Node and tsc look for them.
		src, err := os.ReadFile(filepath.Join(tools, "smoke.mts"))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "smoke.mts"), src, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(filepath.Join(tools, "node_modules"), filepath.Join(dir, "node_modules")); err != nil {
			t.Fatal(err)
		}
		runCommand(t, dir, nil, tsc, "--strict", "--noEmitOnError", "--module", "nodenext", "--moduleResolution", "nodenext",
			"--target", "es2022", "--types", "node", "smoke.mts")
		smoke := runCommand(t, dir, smokeEnv, node, "smoke.mjs")
		t.Logf("openapi-typescript + openapi-fetch smoke run:\n%s", smoke)
		if !strings.Contains(smoke, "typescript client: smoke passed") {
			t.Errorf("the smoke run did not finish:\n%s", smoke)
		}
	})

	t.Run("python", func(t *testing.T) {
		dir := filepath.Join(out, "python")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		// The generator formats what it writes with ruff, which the venv holds.
		path := "PATH=" + filepath.Dir(pyGen) + string(os.PathListSeparator) + os.Getenv("PATH")
		gen := runCommand(t, dir, []string{path}, pyGen, append(append([]string{"generate", "--url", contract}, strings.Fields(pyGenerateFlags)...),
			"--output-path", "css_client")...)
		if generatorWarning.MatchString(gen) {
			t.Errorf("openapi-python-client warned:\n%s", gen)
		}
		smoke := runCommand(t, dir, append(smokeEnv, "PYTHONPATH="+dir), python, filepath.Join(tools, "smoke.py"))
		t.Logf("openapi-python-client smoke run:\n%s", smoke)
		if !strings.Contains(smoke, "python client: smoke passed") {
			t.Errorf("the smoke run did not finish:\n%s", smoke)
		}
	})

	// What the clients wrote is in the key's channel: one note and one video each.
	var notes struct {
		Notes []struct{ Content string }
	}
	_, body := call(t, "GET", base+"/api/v1/notes", devKey, "")
	if err := json.Unmarshal([]byte(body), &notes); err != nil {
		t.Fatalf("GET /notes: %s", body)
	}
	var contents []string
	for _, n := range notes.Notes {
		contents = append(contents, n.Content)
	}
	for _, client := range []string{"TypeScript", "Python"} {
		if !strings.Contains(strings.Join(contents, "\n"), "("+client+" client)") {
			t.Errorf("no note from the %s client among %q", client, contents)
		}
	}
	if _, body := call(t, "GET", base+"/api/v1/my-videos", devKey, ""); !strings.Contains(body, "(TypeScript)") || !strings.Contains(body, "(Python)") {
		t.Errorf("GET /my-videos lacks a client's video: %s", body)
	}
}
