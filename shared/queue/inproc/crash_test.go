package inproc_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/creatorstrategy/css/shared/queue"
	"github.com/creatorstrategy/css/shared/queue/inproc"
)

// crashChildEnv makes the test binary run crashChild instead of the tests.
const crashChildEnv = "INPROC_CRASH_CHILD_DIR"

func TestMain(m *testing.M) {
	if dir := os.Getenv(crashChildEnv); dir != "" {
		crashChild(dir)
		return
	}
	os.Exit(m.Run())
}

// crashChild sends and handles messages on a durable queue until it is killed, printing "sent BODY" once
// Send has returned for BODY and "handling BODY" when a handler starts on it. Messages ending in "a" are
// handled; those ending in "b" are put off for an hour, so they must all still be there after the kill.
func crashChild(dir string) {
	q, err := inproc.Open(inproc.Config{Name: "crash", Dir: dir})
	if err != nil {
		fmt.Println("open:", err)
		os.Exit(2)
	}
	var mu sync.Mutex
	say := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Printf(format+"\n", args...)
	}
	if err := q.Start(func(_ context.Context, m queue.Message) error {
		say("handling %s", m.Body)
		if strings.HasSuffix(string(m.Body), "b") {
			return queue.RetryAfter(time.Hour, errors.New("later"))
		}
		return nil
	}, 2); err != nil {
		fmt.Println("start:", err)
		os.Exit(2)
	}
	var wg sync.WaitGroup
	for s := range 4 {
		wg.Go(func() {
			for i := 0; ; i++ {
				body := fmt.Sprintf("s%d-%06d", s, i)
				batch := []queue.Outgoing{{Body: []byte(body + "a")}, {Body: []byte(body + "b")}}
				if err := q.Send(context.Background(), batch...); err != nil {
					say("send: %v", err)
					os.Exit(2)
				}
				say("sent %sa", body)
				say("sent %sb", body)
			}
		})
	}
	wg.Wait()
}

// A process killed with SIGKILL while sending and handling loses no message whose Send had returned: the
// reopened queue holds every acknowledged message not handled successfully, and nothing never sent.
func TestKill9LosesNothingAcknowledged(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for round := range 3 {
		dir := t.TempDir()
		cmd := exec.Command(exe)
		cmd.Env = append(os.Environ(), crashChildEnv+"="+dir)
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		acked, handling := map[string]bool{}, map[string]bool{}
		sc := bufio.NewScanner(out)
		killAfter := 400 + 300*round // acknowledgements before the kill
		for sc.Scan() {
			verb, body, _ := strings.Cut(sc.Text(), " ")
			switch verb {
			case "sent":
				acked[body] = true
			case "handling":
				handling[body] = true
			default:
				t.Fatalf("child: %s", sc.Text())
			}
			if len(acked) == killAfter {
				if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
					t.Fatal(err)
				}
			}
		}
		cmd.Wait()
		if len(acked) < killAfter {
			t.Fatalf("child stopped after %d acknowledgements", len(acked))
		}

		q, err := inproc.Open(inproc.Config{Name: "crash", Dir: dir})
		if err != nil {
			t.Fatalf("reopen after kill -9: %v", err)
		}
		recovered := map[string]bool{}
		for _, m := range q.List() {
			recovered[string(m.Body)] = true
			if !strings.HasPrefix(string(m.Body), "s") {
				t.Errorf("recovered %q, never sent", m.Body)
			}
		}
		lost := 0
		for body := range acked {
			if !recovered[body] && (strings.HasSuffix(body, "b") || !handling[body]) {
				lost++
			}
		}
		if lost > 0 {
			t.Errorf("round %d: %d of %d acknowledged messages lost", round, lost, len(acked))
		}
		t.Logf("round %d: %d acknowledged, %d handled, %d recovered", round, len(acked), len(handling), len(recovered))
		if err := q.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
}
