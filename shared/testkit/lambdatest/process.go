package lambdatest

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
)

// LambdaEnv is the environment Lambda gives a provided.al2023 function named function whose Runtime API is
// at runtimeAPI and whose code is in taskRoot, with placeholder credentials. Nothing is inherited from
// this process, so no real credentials leak in; callers append the function's own variables (a later
// entry of a key wins).
func LambdaEnv(function, runtimeAPI, taskRoot string) []string {
	return []string{
		"AWS_LAMBDA_RUNTIME_API=" + runtimeAPI,
		"AWS_LAMBDA_FUNCTION_NAME=" + function,
		"AWS_LAMBDA_FUNCTION_VERSION=$LATEST",
		"AWS_LAMBDA_FUNCTION_MEMORY_SIZE=256",
		"AWS_LAMBDA_INITIALIZATION_TYPE=on-demand",
		"AWS_LAMBDA_LOG_GROUP_NAME=/aws/lambda/" + function,
		"AWS_LAMBDA_LOG_STREAM_NAME=2025/01/01/[$LATEST]lambdatest",
		"AWS_EXECUTION_ENV=AWS_Lambda_provided.al2023",
		"AWS_REGION=us-east-1",
		"AWS_DEFAULT_REGION=us-east-1",
		"AWS_ACCESS_KEY_ID=AKIACOLDSTARTBENCH00",
		"AWS_SECRET_ACCESS_KEY=coldstart-bench-not-a-secret",
		"AWS_SESSION_TOKEN=coldstart-bench-session",
		"AWS_EC2_METADATA_DISABLED=true",
		"_HANDLER=bootstrap",
		"LAMBDA_TASK_ROOT=" + taskRoot,
		"PATH=/usr/local/bin:/usr/bin:/bin",
		"LANG=en_US.UTF-8",
		"TZ=:UTC",
	}
}

// Process is one running function binary: one execution environment, invoked in sequence.
type Process struct {
	name     string
	api      *RuntimeAPI
	stopAPI  func()
	cmd      *exec.Cmd
	exited   chan struct{}
	exitErr  error
	output   *TailBuffer // the last of stdout and stderr: the logs say why a start failed
	deadline time.Duration

	mu        sync.Mutex // one invocation at a time, as Lambda sends one environment
	closed    bool
	closeOnce sync.Once
}

// Options configure a Process.
type Options struct {
	// Env is added after LambdaEnv (a later entry of a key wins).
	Env []string
	// Stdout receives the function's logs (nil: discarded). The last 2 KiB of its output are kept for
	// the error of an invocation the process died on.
	Stdout io.Writer
	// Deadline is each invocation's time (default 15 minutes, Lambda's longest).
	Deadline time.Duration
}

// Start starts the binary at path as the function named name. Close it when done.
func Start(name, path string, o Options) (*Process, error) {
	api := NewRuntimeAPI()
	addr, stop, err := Serve(api)
	if err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		stop()
		return nil, err
	}
	p := &Process{name: name, api: api, stopAPI: stop, exited: make(chan struct{}), output: &TailBuffer{},
		deadline: cmp.Or(o.Deadline, 15*time.Minute)}
	p.cmd = exec.Command(abs)
	p.cmd.Env = append(LambdaEnv(name, addr, filepath.Dir(abs)), o.Env...)
	p.cmd.Dir = filepath.Dir(abs)
	p.cmd.Stdout, p.cmd.Stderr = p.output, p.output
	if o.Stdout != nil {
		p.cmd.Stdout = io.MultiWriter(p.output, o.Stdout)
	}
	if err := p.cmd.Start(); err != nil {
		stop()
		return nil, fmt.Errorf("%s: start: %w", name, err)
	}
	go func() {
		p.exitErr = p.cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

// ErrExited is wrapped by Invoke's error when the process ended instead of answering (its init failed,
// or it crashed).
var ErrExited = errors.New("the function's process exited")

// FunctionError is an invocation the function answered with an error (or an init error): Body is what it
// posted, e.g. {"errorMessage":"…","errorType":"…"}.
type FunctionError struct {
	Kind Kind
	Body []byte
}

func (e *FunctionError) Error() string { return fmt.Sprintf("function %s: %s", e.Kind, e.Body) }

// Invoke hands event to the process and returns its response. The error is a *FunctionError when the
// function answered with an error, wraps ErrExited when the process ended first, or is ctx's.
func (p *Process) Invoke(ctx context.Context, event []byte) ([]byte, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, fmt.Errorf("%s: invoked after Close", p.name)
	}
	inv := NewInvocation(uuid.NewString(), event, "arn:aws:lambda:us-east-1:123456789012:function:"+p.name, p.deadline)
	p.api.Arm(inv)
	select {
	case o := <-inv.Done():
		if o.Kind != KindResponse {
			return nil, &FunctionError{Kind: o.Kind, Body: o.Body}
		}
		return o.Body, nil
	case <-p.exited:
		return nil, fmt.Errorf("%s: %w (%v): %s", p.name, ErrExited, p.exitErr, p.output.String())
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Close kills the process and stops its Runtime API. It does not wait for an invocation in flight: that
// one fails with ErrExited.
func (p *Process) Close() {
	p.closeOnce.Do(func() {
		_ = p.cmd.Process.Kill()
		<-p.exited
		p.stopAPI()
	})
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
}

// Build builds the main packages pkgs (import paths or ./relative to dir) as `make build` builds the
// functions (-tags lambda.norpc, CGO_ENABLED=0, for this machine) into out, one binary named after each
// package's last element, in one go build. dir is the module's folder the build runs in.
func Build(ctx context.Context, dir, out string, pkgs ...string) (map[string]string, error) {
	args := append([]string{"build", "-tags", "lambda.norpc", "-trimpath", "-o", out + string(filepath.Separator)}, pkgs...)
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("go build %s: %w: %s", strings.Join(pkgs, " "), err, stderr.String())
	}
	bins := map[string]string{}
	for _, pkg := range pkgs {
		name := filepath.Base(pkg)
		bins[name] = filepath.Join(out, name)
	}
	return bins, nil
}

// TailBuffer keeps the last 2 KiB written to it: enough to say why a process died.
type TailBuffer struct {
	mu  sync.Mutex
	buf []byte
}

const tailMax = 2048

func (t *TailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - tailMax; over > 0 {
		t.buf = t.buf[over:]
	}
	return len(p), nil
}

func (t *TailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(bytes.TrimSpace(t.buf))
}
