package research_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/creatorstrategy/css/shared/accounts"
	"github.com/creatorstrategy/css/shared/apperr"
	"github.com/creatorstrategy/css/shared/config"
	"github.com/creatorstrategy/css/shared/quota"
	"github.com/creatorstrategy/css/shared/research"
	"github.com/creatorstrategy/css/shared/testkit/youtubetest"
)

// Decision 46: a part of each bucket of the daily budget is kept for scheduled refreshes. With on-demand load from
// many accounts, each within its share, filling what on-demand runs may spend, the refreshes due that day
// still run that day.
func TestScheduledRefreshesKeepTheirReserve(t *testing.T) {
	var srv *youtubetest.Server
	f := newFixture(t, setup{source: onYouTube(t, &srv)})
	ctx := context.Background()
	c, _ := research.NewClock()
	account := func(id string, channels ...string) {
		if err := f.store.CreateAccount(ctx, accounts.Account{ID: id, AccessUntil: start.AddDate(1, 0, 0), CreatedAt: start}); err != nil {
			t.Fatal(err)
		}
		for _, ch := range channels {
			if err := f.store.CreateChannel(ctx, accounts.Channel{ID: ch, AccountID: id}, 10); err != nil {
				t.Fatal(err)
			}
		}
	}
	// Day 0: five channels get their research; it is due again a week later.
	const refreshes = 5
	for i := range refreshes {
		ch := fmt.Sprintf("s%d", i)
		account("acct-"+ch, ch)
		f.profile(ch, "vegan", "meal prep", fmt.Sprintf("refresh %d", i))
		f.start(ch)
		f.drain(0)
	}
	// A week later, from the start of the quota day: 20 accounts of 2 channels each start research on
	// demand, every one within its channel's runs and its account's share.
	day := c.NextDay(f.clock.Now().Add(7 * 24 * time.Hour))
	f.clock.Set(day.Add(time.Minute))
	base := srv.Spent()
	startedOnDemand, waiting, limited := 0, 0, 0
	for a := range 20 {
		chs := []string{fmt.Sprintf("d%d-0", a), fmt.Sprintf("d%d-1", a)}
		account(fmt.Sprintf("acct-d%d", a), chs...)
		for i, ch := range chs {
			f.profile(ch, "vegan", "meal prep", fmt.Sprintf("load %d %d", a, i))
			run, err := f.service.Start(ctx, ch, research.TriggerAPI)
			if apperr.CodeOf(err) == apperr.UsageLimit {
				limited++
				continue
			} else if err != nil {
				t.Fatal(err)
			}
			startedOnDemand++
			f.drain(0)
			if f.run(ch, run.ID).Status == research.WaitingQuota {
				waiting++
			}
		}
	}
	onDemand := srv.Spent().Sub(base)
	// The rest of the day: the scheduler's passes, every 10 minutes.
	for now := f.clock.Now(); now.Before(c.NextDay(day).Add(-time.Minute)); now = now.Add(10 * time.Minute) {
		f.clock.Set(now)
		if _, err := f.service.Schedule(ctx); err != nil {
			t.Fatal(err)
		}
		f.drain(0)
	}
	refreshed := 0
	for i := range refreshes {
		r := f.lastRun(fmt.Sprintf("s%d", i))
		if r.Trigger == research.TriggerSchedule && r.Status == research.Succeeded && c.Day(r.CreatedAt) == c.Day(day) {
			refreshed++
		}
	}
	t.Logf("on demand: %d runs started (%d waiting for quota, %d USAGE_LIMIT), %v; due refreshes run that day: %d of %d, %v in all of the day's %v (reserve %d%%)",
		startedOnDemand, waiting, limited, onDemand, refreshed, refreshes, srv.Spent().Sub(base), f.cfg.Daily, f.cfg.ScheduledReserve)
	if limit := f.cfg.OnDemand(); !onDemand.Within(limit) {
		t.Errorf("on-demand runs spent %v, into the scheduled refreshes' reserve (on demand may spend %v)", onDemand, limit)
	}
	if waiting == 0 {
		t.Error("no on-demand run waited: the load did not reach the reserve")
	}
	if refreshed != refreshes {
		t.Errorf("%d of the %d refreshes due ran that day", refreshed, refreshes)
	}
}

// Decision 46: an account's share measures what its on-demand runs really spent. Each run counts its
// ceiling when it starts and gives back what it did not spend when its fetching ends, so runs that reuse
// their niche's fresh research (0 units) do not use up the share.
func TestAccountShareSettlesAgainstRealSpend(t *testing.T) {
	var srv *youtubetest.Server
	f := newFixture(t, setup{source: onYouTube(t, &srv), config: func(c *research.Config) { c.ChannelRunsPerDay = 1 }})
	ctx := context.Background()
	if err := f.store.CreateAccount(ctx, accounts.Account{ID: "acct", AccessUntil: start.AddDate(1, 0, 0), CreatedAt: start}); err != nil {
		t.Fatal(err)
	}
	const channels = 8 // the share (20% of 90 searches) holds 6 ceilings of 3 searches
	started, limited := 0, 0
	for i := range channels {
		ch := fmt.Sprintf("c%d", i)
		if err := f.store.CreateChannel(ctx, accounts.Channel{ID: ch, AccountID: "acct"}, 10); err != nil {
			t.Fatal(err)
		}
		f.profile(ch, keywords...) // one niche: the first run fetches, the others reuse its research
		_, err := f.service.Start(ctx, ch, research.TriggerAPI)
		switch {
		case apperr.CodeOf(err) == apperr.UsageLimit:
			limited++
		case err != nil:
			t.Fatal(err)
		default:
			started++
		}
		f.drain(0)
	}
	c, _ := research.NewClock()
	share := f.cfg.AccountQuota()
	// What is left of the share, bucket by bucket: the most one more reservation may take.
	var left quota.Cost
	for _, b := range quota.Buckets() {
		for step := share.Of(b); step > 0; step /= 2 {
			for {
				ok, err := f.store.AddAccountQuota(ctx, "acct", c.Day(f.clock.Now()), quota.Cost{}.With(b, step), share)
				if err != nil {
					t.Fatal(err)
				}
				if !ok {
					break
				}
				left = left.Add(quota.Cost{}.With(b, step))
			}
		}
	}
	t.Logf("%d on-demand runs of one niche: %d started, %d USAGE_LIMIT; the API charged %v; the share of %v has %v left (counted %v)",
		channels, started, limited, srv.Spent(), share, left, share.Sub(left))
	if started != channels {
		t.Errorf("%d of %d runs started: the share counted ceilings, not what the runs spent", started, channels)
	}
	if counted := share.Sub(left); counted != srv.Spent() {
		t.Errorf("the share counts %v, the runs spent %v", counted, srv.Spent())
	}
}

// Refreshes come due spread over the 12 hours after their interval, each channel at its own offset, and
// not all at the moment a week after the pass that researched them together.
func TestDueRefreshesAreSpread(t *testing.T) {
	f := newFixture(t, setup{})
	ctx := context.Background()
	const channels = 20
	for i := range channels {
		ch := fmt.Sprintf("c%d", i)
		f.profile(ch, "vegan", "meal prep", fmt.Sprintf("spread %d", i))
		f.start(ch)
	}
	f.drain(0) // every run completes at the same moment
	due := f.clock.Now().Add(f.cfg.Interval)
	times := map[time.Time]bool{}
	for i := range channels {
		st, err := f.store.ResearchState(ctx, fmt.Sprintf("c%d", i))
		if err != nil {
			t.Fatal(err)
		}
		times[st.DueAt.Truncate(10*time.Minute)] = true
		if d := st.DueAt.Sub(due); d < 0 || d >= 12*time.Hour {
			t.Errorf("c%d: due at %s, %s from a week after its research", i, st.DueAt, d)
		}
	}
	t.Logf("%d channels researched at one moment come due again at %d different 10-minute passes", channels, len(times))
	if len(times) < channels*3/4 {
		t.Errorf("%d channels come due at %d passes, want them spread", channels, len(times))
	}
}

// The reserve read from the environment is taken as is (0 turns it off); a configuration built in code
// without it keeps the default. On-demand runs may reserve the rest, and at least one run's ceiling.
func TestScheduledReserveConfig(t *testing.T) {
	env := config.Research{DailyUnits: 9000, DailySearches: 90, DailyStatsCalls: 9000, AccountSharePercent: 20, ChannelRunsPerDay: 3}
	if c := research.ConfigFrom(env); c.ScheduledReserve != 0 || c.OnDemand() != quota.DefaultDaily {
		t.Errorf("reserve 0 from the environment: %d, on demand %v", c.ScheduledReserve, c.OnDemand())
	}
	if c := research.ConfigFrom(config.Research{Source: config.SourceOffline}); c.ScheduledReserve != research.DefaultScheduledReserve ||
		c.OnDemand() != (quota.Cost{Units: 6300, Searches: 63, Stats: 6300}) {
		t.Errorf("built in code: reserve %d, on demand %v", c.ScheduledReserve, c.OnDemand())
	}
	c := research.DefaultConfig(research.SourceYouTube)
	c.Daily = quota.Cost{Units: 400, Searches: 4, Stats: 9000}
	if want := (quota.Cost{Units: 280, Searches: 3, Stats: 6300}); c.OnDemand() != want {
		t.Errorf("a small budget leaves on demand %v, want %v (at least one run's ceiling, %v)", c.OnDemand(), want, c.Plan.Ceiling())
	}
	c.Daily.Searches = 2
	if c.Validate() == nil {
		t.Error("a budget of 2 searches, under a new niche's 3, was accepted")
	}
	c.Daily.Searches = 4
	c.ScheduledReserve = 95
	if c.Validate() == nil {
		t.Error("a reserve of 95% was accepted")
	}
}
