// Package emulatortest gives tests the endpoint of a DynamoDB Local or an ElasticMQ: the one named by the
// environment when set, otherwise one started (once per test binary) by the scripts in infra/emulators.
//
//	func TestMain(m *testing.M) { emulatortest.Main(m) }
//
//	endpoint := emulatortest.DynamoDB(t) // http://127.0.0.1:PORT
//
// A test that needs an emulator fails, never skips, when it cannot be had. The first start fetches the
// emulator from Maven Central (Java and Maven must be installed); later starts take a few seconds.
package emulatortest

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// The emulators of this test binary. Package state because the point is to share one process between
// every test of the binary; each is started at most once and stopped by Main.
var (
	dynamoDB  = &emulator{name: "DynamoDB Local", script: "dynamodb-local", env: "CSS_DYNAMODB_ENDPOINT"}
	elasticMQ = &emulator{name: "ElasticMQ", script: "elasticmq", env: "CSS_SQS_ENDPOINT"}
	oauth2    = &emulator{name: "mock-oauth2-server", script: "mock-oauth2-server", env: "CSS_TEST_OAUTH2_ENDPOINT"}
)

// DynamoDB returns the endpoint of a DynamoDB Local: $CSS_DYNAMODB_ENDPOINT when set, otherwise one started
// for this test binary. Tables are shared by every test using it, so tests create their own.
func DynamoDB(t testing.TB) string {
	t.Helper()
	return dynamoDB.endpoint(t)
}

// ElasticMQ returns the endpoint of an SQS-compatible ElasticMQ: $CSS_SQS_ENDPOINT when set, otherwise one
// started for this test binary. Queues are shared by every test using it, so tests create their own.
func ElasticMQ(t testing.TB) string {
	t.Helper()
	return elasticMQ.endpoint(t)
}

// OAuth2 returns the base URL of a mock-oauth2-server (an OAuth 2.0 server standing in for Google's):
// $CSS_TEST_OAUTH2_ENDPOINT when set, otherwise one started for this test binary. Each issuer id under it
// (e.g. <endpoint>/google) has its own authorize, token and revoke endpoints; authorization is
// non-interactive (a redirect back with a code).
func OAuth2(t testing.TB) string {
	t.Helper()
	return oauth2.endpoint(t)
}

// Main runs the tests and then stops the emulators they started. Without it they still stop when the test
// binary exits (the scripts watch the process that started them), just a moment later.
func Main(m *testing.M) {
	code := m.Run()
	for _, e := range []*emulator{dynamoDB, elasticMQ, oauth2} {
		if err := e.stop(); err != nil {
			fmt.Fprintln(os.Stderr, "emulatortest:", err)
			code = cmp.Or(code, 1)
		}
	}
	os.Exit(code)
}

type emulator struct {
	name   string
	script string // under infra/emulators
	env    string // names an already running one

	once    sync.Once
	url     string
	err     error
	started bool // by this binary, so Main stops it
}

func (e *emulator) endpoint(t testing.TB) string {
	t.Helper()
	if url := os.Getenv(e.env); url != "" {
		return url
	}
	e.once.Do(func() {
		e.url, e.err = e.start()
		e.started = e.err == nil
	})
	if e.err != nil {
		t.Fatalf("emulatortest: %v", e.err)
	}
	return e.url
}

// start runs the script's start subcommand and returns the endpoint it prints.
func (e *emulator) start() (string, error) {
	script, err := findScript(e.script)
	if err != nil {
		return "", fmt.Errorf("start %s: %w", e.name, err)
	}
	cmd := exec.Command(script, "start")
	// The script stops the emulator when this process exits, whatever way it does.
	cmd.Env = append(os.Environ(), "EMULATOR_OWNER_PID="+strconv.Itoa(os.Getpid()))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("start %s: %s start: %w\n%s", e.name, script, err, stderr.Bytes())
	}
	url := strings.TrimSpace(stdout.String())
	if !strings.HasPrefix(url, "http://127.0.0.1:") {
		return "", fmt.Errorf("start %s: %s start printed %q, not an endpoint\n%s", e.name, script, url, stderr.Bytes())
	}
	return url, nil
}

// stop stops the emulator if this binary started it.
func (e *emulator) stop() error {
	if !e.started {
		return nil
	}
	script, err := findScript(e.script)
	if err != nil {
		return fmt.Errorf("stop %s: %w", e.name, err)
	}
	if out, err := exec.Command(script, "stop", e.url).CombinedOutput(); err != nil {
		return fmt.Errorf("stop %s at %s: %w\n%s", e.name, e.url, err, out)
	}
	return nil
}

// findScript looks for infra/emulators/<name> in the working directory and its parents: go test runs a
// test binary in its package's directory, somewhere inside the module.
func findScript(name string) (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		p := filepath.Join(dir, "infra", "emulators", name)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		} else if !errors.Is(err, os.ErrNotExist) {
			return "", err
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("infra/emulators/%s not found above the working directory", name)
		}
		dir = parent
	}
}
