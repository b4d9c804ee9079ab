package main

import (
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// buildStack builds the local stack's binary, as make run does.
func buildStack(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "local-stack")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// stackCommand runs the binary on port with a data folder of its own, and none of the caller's CSS_
// settings.
func stackCommand(bin string, port int, dataDir string) (*exec.Cmd, *syncBuffer) {
	cmd := exec.Command(bin)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "CSS_") && !strings.HasPrefix(kv, "PORT=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "PORT="+strconv.Itoa(port), "CSS_DATA_DIR="+dataDir)
	out := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	return cmd, out
}

// A stack whose port is taken fails before it opens its store: no data folder, no channel, no key printed
// (issue 35 item 4).
func TestBusyPortStartsNothing(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	dataDir := filepath.Join(t.TempDir(), "data")
	cmd, out := stackCommand(buildStack(t), busy.Addr().(*net.TCPAddr).Port, dataDir)
	err = cmd.Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("exit %v; want 1\n%s", err, out)
	}
	if s := out.String(); !strings.Contains(s, "address already in use") || strings.Contains(s, "sk-css-") || strings.Contains(s, "First start") {
		t.Errorf("a stack that could not listen said:\n%s", s)
	}
	if _, err := os.Stat(dataDir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a stack that could not listen made its data folder: %v", err)
	}
}

// An interrupt (Ctrl-C) stops the stack cleanly, and it exits 0 (issue 35 item 3).
func TestInterruptStopsCleanly(t *testing.T) {
	free, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := free.Addr().(*net.TCPAddr).Port
	free.Close()
	cmd, out := stackCommand(buildStack(t), port, filepath.Join(t.TempDir(), "data"))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	listening := time.NewTimer(2 * time.Minute)
	defer listening.Stop()
	for !strings.Contains(out.String(), `"msg":"listening"`) {
		select {
		case err := <-done:
			t.Fatalf("the stack ended before listening: %v\n%s", err, out)
		case <-listening.C:
			_ = cmd.Process.Kill()
			t.Fatalf("the stack did not listen within 2 minutes\n%s", out)
		case <-time.After(50 * time.Millisecond):
		}
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil || !strings.Contains(out.String(), `"msg":"stopped"`) {
			t.Fatalf("after an interrupt: %v\n%s", err, out)
		}
	case <-time.After(time.Minute):
		_ = cmd.Process.Kill()
		t.Fatalf("the stack did not stop within a minute of an interrupt\n%s", out)
	}
}
