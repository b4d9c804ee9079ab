package research_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/creatorstrategy/css/shared/accounts"
	"github.com/creatorstrategy/css/shared/apperr"
	"github.com/creatorstrategy/css/shared/config"
	"github.com/creatorstrategy/css/shared/research"
	"github.com/creatorstrategy/css/shared/youtube/youtubetest"
)

// Decision 46: a part of the daily unit budget is kept for scheduled refreshes. With on-demand load from
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
	base := srv.Units()
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
	onDemandUnits := srv.Units() - base
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
	t.Logf("on demand: %d runs started (%d waiting for quota, %d USAGE_LIMIT), %d units; due refreshes run that day: %d of %d, %d units in all of the day's %d (reserve %d%%)",
		startedOnDemand, waiting, limited, onDemandUnits, refreshed, refreshes, srv.Units()-base, f.cfg.DailyUnits, f.cfg.ScheduledReserve)
	if limit := f.cfg.OnDemandUnits(); onDemandUnits > limit {
		t.Errorf("on-demand runs spent %d units, into the scheduled refreshes' reserve (on demand may spend %d)", onDemandUnits, limit)
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
	const channels = 8 // the share (20% of 9,000) holds 5 ceilings of 344
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
	share := f.cfg.AccountUnits()
	// What is left of the share: the most one more reservation may take.
	left := 0
	for step := share; step > 0; step /= 2 {
		for {
			ok, err := f.store.AddAccountUnits(ctx, "acct", c.Day(f.clock.Now()), step, share)
			if err != nil {
				t.Fatal(err)
			}
			if !ok {
				break
			}
			left += step
		}
	}
	t.Logf("%d on-demand runs of one niche: %d started, %d USAGE_LIMIT; the API charged %d units; the share of %d has %d left (counted %d)",
		channels, started, limited, srv.Units(), share, left, share-left)
	if started != channels {
		t.Errorf("%d of %d runs started: the share counted ceilings, not what the runs spent", started, channels)
	}
	if counted := share - left; counted != srv.Units() {
		t.Errorf("the share counts %d units, the runs spent %d", counted, srv.Units())
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
	if c := research.ConfigFrom(config.Research{DailyUnits: 9000, AccountSharePercent: 20, ChannelRunsPerDay: 3}); c.ScheduledReserve != 0 || c.OnDemandUnits() != 9000 {
		t.Errorf("reserve 0 from the environment: %d, on demand %d", c.ScheduledReserve, c.OnDemandUnits())
	}
	if c := research.ConfigFrom(config.Research{Source: config.SourceOffline}); c.ScheduledReserve != research.DefaultScheduledReserve || c.OnDemandUnits() != 6300 {
		t.Errorf("built in code: reserve %d, on demand %d", c.ScheduledReserve, c.OnDemandUnits())
	}
	c := research.DefaultConfig(research.SourceYouTube)
	c.DailyUnits = 400
	if c.OnDemandUnits() != c.Plan.Ceiling() {
		t.Errorf("a small budget leaves on demand %d, want one run's ceiling %d", c.OnDemandUnits(), c.Plan.Ceiling())
	}
	c.ScheduledReserve = 95
	if c.Validate() == nil {
		t.Error("a reserve of 95% was accepted")
	}
}
