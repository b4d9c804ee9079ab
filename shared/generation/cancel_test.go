package generation_test

import (
	"context"
	"testing"
	"time"

	"github.com/creatorstrategy/css/shared/contract"
	"github.com/creatorstrategy/css/shared/generation"
	"github.com/creatorstrategy/css/shared/queue"
)

// leavingClient is a queue whose Send sees the client leave first (its request's context cancelled, as
// net/http does when the connection closes), and then answers as a queue client does: the context's error
// when it is done.
type leavingClient struct {
	leave func()
	sent  []queue.Outgoing
}

func (q *leavingClient) Send(ctx context.Context, msgs ...queue.Outgoing) error {
	q.leave()
	if err := ctx.Err(); err != nil {
		return err
	}
	q.sent = append(q.sent, msgs...)
	return nil
}

// A client that leaves while its generation is submitted does not leave it half done (issue 32 item 10):
// the run counted and stored is queued, and stays pending for the worker, instead of failing with
// "queue: context canceled".
func TestSubmitOutlivesTheClient(t *testing.T) {
	ctx, leave := context.WithCancel(context.Background())
	defer leave()
	q := &leavingClient{leave: leave}
	e := newEnv(t, 100, func(_ *env, cfg *generation.Config) { cfg.Queue = q })
	in := contract.TitlesRequest{Title: "Editing a week of videos in a day", Type: "how-to"}
	out, err := e.gen.Submit(ctx, generation.Submission{Operation: "generateTitles", ChannelID: "ch1", AccountID: "acct1", Body: &in})
	if err != nil || out.Done || out.RunID == "" {
		t.Fatalf("submit: %+v %v; want the pending run", out, err)
	}
	if len(q.sent) != 1 {
		t.Fatalf("%d jobs queued, want 1", len(q.sent))
	}
	run, _, err := e.st.GetRun(context.Background(), "ch1", out.RunID)
	if err != nil || run.Status != generation.Pending {
		t.Fatalf("run %+v %v; want it pending for the worker", run, err)
	}
	if n, _, _, _ := e.st.GenerationUsage(context.Background(), "acct1", time.Now().UTC().Format("2006-01")); n != 1 {
		t.Errorf("quota count %d, want 1", n)
	}
}
