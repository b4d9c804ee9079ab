package research_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/creatorstrategy/css/shared/accounts"
	"github.com/creatorstrategy/css/shared/apperr"
	"github.com/creatorstrategy/css/shared/research"
	"github.com/creatorstrategy/css/shared/research/sourcetest"
	"github.com/creatorstrategy/css/shared/testkit/youtubetest"
)

// Issue 19 item 6: one channel changing its keywords and starting research in a loop for 70 s cannot spend
// the deployment's YouTube budget. Its on-demand runs stop at the channel's runs per day (3, keyword
// changes included), its account's at the account's share (here 17% of each daily bucket: 15 of the 90
// searches, five new niches), each past it with 429 USAGE_LIMIT saying when it resets; another account
// still gets its research that day.
func TestOneChannelCannotSpendTheBudget(t *testing.T) {
	var srv *youtubetest.Server
	f := newFixture(t, setup{source: onYouTube(t, &srv), config: func(c *research.Config) { c.AccountShare = 17 }})
	ctx := context.Background()
	for _, a := range []string{"acct-a", "acct-b"} {
		if err := f.store.CreateAccount(ctx, accounts.Account{ID: a, AccessUntil: start.AddDate(1, 0, 0), CreatedAt: start}); err != nil {
			t.Fatal(err)
		}
	}
	for _, ch := range []accounts.Channel{{ID: "a1", AccountID: "acct-a"}, {ID: "a2", AccountID: "acct-a"}, {ID: "b1", AccountID: "acct-b"}} {
		if err := f.store.CreateChannel(ctx, ch, 10); err != nil {
			t.Fatal(err)
		}
	}
	// The loop: change the keywords, start research, 26 times in 70 s.
	started, limited, conflicts := 0, 0, 0
	var limit *apperr.Error
	for i := range 26 {
		f.profile("a1", "vegan", "meal prep", "budget", fmt.Sprintf("protein %d", i))
		_, err := f.service.Start(ctx, "a1", research.TriggerAPI)
		switch ae, _ := apperr.As(err); {
		case err == nil:
			started++
		case ae != nil && ae.Code == apperr.UsageLimit:
			limited++
			limit = ae
		case ae != nil && ae.Code == apperr.Conflict:
			conflicts++
		default:
			t.Fatal(err)
		}
		f.drain(0)
		if _, err := f.service.Schedule(ctx); err != nil { // the keyword changes' runs
			t.Fatal(err)
		}
		f.drain(0)
		f.clock.Add(70 * time.Second / 26)
	}
	spentA1 := srv.Spent()
	// The account's other channel: on-demand runs until the account's share is reserved.
	a2 := 0
	for i := range 3 {
		f.profile("a2", "tofu", "meal prep", "budget", fmt.Sprintf("protein %d", i))
		if _, err := f.service.Start(ctx, "a2", research.TriggerAPI); err == nil {
			a2++
		} else if apperr.CodeOf(err) != apperr.UsageLimit {
			t.Fatal(err)
		}
		f.drain(0)
		f.clock.Add(time.Second)
	}
	spentA := srv.Spent()
	// Another account still gets its research today.
	f.profile("b1", sourcetest.Niche().Keywords...)
	b1, err := f.service.Start(ctx, "b1", research.TriggerAPI)
	if err != nil {
		t.Fatal(err)
	}
	f.drain(0)
	b1 = f.run("b1", b1.ID)
	runs := 0
	for _, ch := range []string{"a1", "a2"} {
		st, _ := f.store.ResearchState(ctx, ch)
		runs += st.RunsOnDay
	}
	t.Logf("the loop: %d runs started, %d USAGE_LIMIT, %d CONFLICT; channel a1 spent %v, account a %v (a2: %d runs); another account's run: %s, %v",
		started, limited, conflicts, spentA1, spentA, a2, b1.Status, b1.Spent)
	share := f.cfg.AccountQuota()
	if !spentA.Within(share) {
		t.Errorf("account a spent %v, over its share of %v", spentA, share)
	}
	if b1.Status != research.Succeeded {
		t.Errorf("another account's run is %s (%s)", b1.Status, b1.Message)
	}
	if limit == nil || limit.RetryAfter <= 0 || !strings.Contains(limit.Message, "resets at") {
		t.Fatalf("past the limit: %v, want USAGE_LIMIT with Retry-After and when it resets", limit)
	}
	if st, _ := f.store.ResearchState(ctx, "a1"); st.RunsOnDay > f.cfg.ChannelRunsPerDay {
		t.Errorf("channel a1 started %d on-demand runs in a day, over %d", st.RunsOnDay, f.cfg.ChannelRunsPerDay)
	}
	if a2 >= 3 {
		t.Errorf("the account's second channel started %d runs past the account's share", a2)
	}
	// The keyword change past the limit is researched on the next budget day (spread over its first half),
	// and the limits reset.
	c, _ := research.NewClock()
	next := c.NextDay(f.clock.Now())
	f.clock.Set(next.Add(time.Minute))
	if _, err := f.service.Start(ctx, "a2", research.TriggerAPI); err != nil {
		t.Errorf("on the next day: %v", err)
	}
	f.drain(0)
	f.clock.Set(next.Add(12 * time.Hour))
	if rep, err := f.service.Schedule(ctx); err != nil || rep.Started == 0 {
		t.Errorf("on the next day: %+v %v, want the last keywords researched", rep, err)
	}
	f.drain(0)
	if r := f.lastRun("a1"); r.Status != research.Succeeded || r.Trigger != research.TriggerSchedule || !slices.Contains(r.Niche.Keywords, "protein 25") {
		t.Errorf("a1's deferred keyword change: %s %s %v", r.Status, r.Trigger, r.Niche.Keywords)
	}
}
