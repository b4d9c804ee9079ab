package storetest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creatorstrategy/css/shared/profile"
	"github.com/creatorstrategy/css/shared/queue"
	"github.com/creatorstrategy/css/shared/research"
	"github.com/creatorstrategy/css/shared/store"
	"github.com/creatorstrategy/css/shared/videos"
)

// sentMessages is a queue.Sender that keeps what it is sent.
type sentMessages struct {
	mu   sync.Mutex
	msgs []queue.Outgoing
}

func (s *sentMessages) Send(_ context.Context, msgs ...queue.Outgoing) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.msgs = append(s.msgs, msgs...)
	return nil
}

// testThirtyDays (issue 30 item 4, decision 49): every item holding other channels' data is gone
// research.DataLifetime after the data's fetch, on every adapter and through the scheduler's pass: video
// sets (also ones stored before sets carried an expiry, one that no state names), the niche's shared
// research, step outputs, the state's patterns and the patterns runs of an earlier build kept. A channel with keywords is researched
// again at once; one without leaves the schedule. The channels' own data is left exactly as it was.
func testThirtyDays(t *testing.T, f *researchFixture) {
	ctx := context.Background()
	t0 := f.now()
	sent := &sentMessages{}
	svc, err := research.NewService(f.st, sent, research.DefaultConfig(research.SourceOffline), f.now)
	if err != nil {
		t.Fatal(err)
	}
	pats := research.Patterns{Titles: "Numbers win", Sources: &research.PatternSources{
		Titles: []research.PatternSource{{VideoID: "vid00000000", Title: "Title 0", ChannelTitle: "Channel", Views: 1000}}}}

	// researched stores a completed run of the channel the way a build before this change left it: its
	// patterns kept in the run, its videos either as the pipeline writes them now or, legacy, without an
	// expiry. The scheduler comes back at due (zero: never).
	researched := func(channelID string, legacy bool, due time.Time) research.Run {
		t.Helper()
		run := f.started(channelID, "run-"+channelID)
		run.Set = &research.SetRef{RunID: run.ID, Videos: 3, Source: research.SourceYouTube, FetchedAt: t0}
		work := &research.Commit{Step: research.StepEnrich, Work: []json.RawMessage{json.RawMessage(`{"id":"vid00000000"}`)}}
		if err := f.save(&run, work); err != nil {
			t.Fatal(err)
		}
		if legacy {
			chunk := append([]byte{2}, `[{"id":"vid00000000","t":"Title 0","c":"UC0","v":1000,"k":"Long","s":"youtube"}]`...)
			mustWrite(t, f.st.Table(), store.Put(store.Item{Key: key("CH#"+channelID, "RVSET#"+run.ID+"#000"), Data: chunk}, store.Always))
			run.Set.Chunks = 1
		} else {
			set := run.Set
			c := &research.Commit{Videos: sampleVideos(3), VideosExpire: research.DataExpiry(t0),
				Niche:        &research.NicheResearch{Key: "niche-" + channelID, Set: *run.Set, ChannelID: channelID},
				NicheExpires: t0.Add(8 * 24 * time.Hour), Finish: func(c *research.Commit) { set.Chunks = c.Chunks }}
			if err := f.save(&run, c); err != nil {
				t.Fatal(err)
			}
		}
		st, err := f.st.ResearchState(ctx, channelID)
		if err != nil {
			t.Fatal(err)
		}
		now := f.now()
		run.Status, run.FinishedAt, run.Patterns = research.Succeeded, &now, pats
		st.Patterns, st.Set, st.ActiveRun, st.LeaseUntil = pats, run.Set, "", time.Time{}
		st.DueAt, st.ResearchedAt, st.LastRunID, st.StartedAt = due, now, run.ID, now
		if err := f.st.SaveResearchRunAndState(ctx, &run, st); err != nil {
			t.Fatal(err)
		}
		return run
	}
	// The channels' own data, which no sweep may touch: profile, pipeline, backlog, notes, the connected
	// YouTube channel's sync and connection (decision 43).
	own := func(channelID string, keywords ...string) {
		t.Helper()
		if err := f.st.PutProfile(ctx, channelID, profile.NicheProfile{BroadNiche: "cooking", Keywords: keywords}); err != nil {
			t.Fatal(err)
		}
		v := videos.Video{ID: "01900000-0000-7000-8000-000000000001", Title: "My video", ContentType: "Long", FormulaType: "x",
			Status: videos.Planned, CreatedAt: t0}
		if err := f.st.CreateVideo(ctx, channelID, v, 0, 10); err != nil {
			t.Fatal(err)
		}
		for _, sk := range []string{"NOTE#01900000-0000-7000-8000-000000000002", "IDEA#01900000-0000-7000-8000-000000000003", "OWN", "OWNUP#000", "YTCONN"} {
			mustWrite(t, f.st.Table(), store.Put(store.Item{Key: key("CH#"+channelID, sk), Data: []byte(`{"own":"` + sk + `"}`)}, store.Always))
		}
	}
	own("kw", "vegan")
	own("nokw")
	// Keyword changes are answered by the runs below.
	if kicks, err := f.st.DueResearch(ctx, t0, 10); err != nil || len(kicks) != 1 {
		t.Fatalf("kicks %+v, %v", kicks, err)
	} else if err := f.st.DeleteResearchDue(ctx, kicks[0]); err != nil {
		t.Fatal(err)
	}
	f.advance(time.Second)
	// A run an earlier build superseded: its patterns kept, its videos stored without an expiry.
	old := f.started("kw", "run-old")
	old.Status, old.Patterns = research.Failed, pats
	if err := f.save(&old, nil); err != nil {
		t.Fatal(err)
	}
	mustWrite(t, f.st.Table(), store.Put(store.Item{Key: key("CH#kw", "RVSET#run-old#000"),
		Data: append([]byte{2}, `[{"id":"vid00000009","t":"Title 9","c":"UC9","v":9,"k":"Long","s":"youtube"}]`...)}, store.Always))
	kwRun := researched("kw", false, t0.Add(7*24*time.Hour))
	nokwRun := researched("nokw", true, time.Time{})
	expiry := research.DataExpiry(t0)

	// The scheduler looks at a channel without keywords when its research expires.
	due, err := f.st.DueResearch(ctx, expiry, 10)
	if err != nil || len(due) != 2 || due[0].ChannelID != "kw" || due[1].ChannelID != "nokw" || !due[1].At.Equal(expiry) {
		t.Fatalf("index %+v, %v; want kw at its refresh, nokw at %s", due, err, expiry)
	}
	before := map[string][]store.Item{"kw": f.partition("kw"), "nokw": f.partition("nokw")}

	f.advance(8*24*time.Hour + time.Second)
	if _, ok, err := f.st.NicheResearch(ctx, "niche-kw"); ok || err != nil {
		t.Fatalf("the niche's research after 8 days: %v, %v; want expired", ok, err)
	}
	f.advance(6 * 24 * time.Hour)
	if w, err := f.st.ResearchWork(ctx, "kw", kwRun.ID, research.StepEnrich); len(w) != 0 || err != nil {
		t.Fatalf("step output after 14 days: %d records, %v; want expired", len(w), err)
	}
	f.advance(expiry.Add(-time.Second).Sub(f.now()))
	if vs, n, err := svc.Videos(ctx, "kw", research.VideoQuery{Limit: 10}); err != nil || n != 3 || len(vs) != 3 {
		t.Fatalf("a second before expiry: %d videos, %v; want 3", n, err)
	}

	f.advance(time.Second)
	// At expiry every read treats the research as gone, before the pass deletes it.
	if _, n, err := svc.Videos(ctx, "kw", research.VideoQuery{Limit: 10}); err != nil || n != 0 {
		t.Fatalf("at expiry: %d videos, %v; want none", n, err)
	}
	if p, err := svc.Insights(ctx, "nokw"); err != nil || !p.Empty() {
		t.Fatalf("at expiry: insights %+v, %v; want none", p, err)
	}
	if p, err := f.st.GetPatterns(ctx, "kw"); err != nil || !p.Empty() {
		t.Fatalf("at expiry: generation's patterns %+v, %v; want none", p, err)
	}
	if n := f.items("kw", "RVSET#"+kwRun.ID); n != 0 {
		t.Fatalf("at expiry: %d video chunks read; want them expired", n)
	}
	if n := f.items("nokw", "RVSET#"); n != 1 {
		t.Fatalf("a set stored without an expiry: %d chunks before the pass; want 1", n)
	}

	rep, err := svc.Schedule(ctx)
	if err != nil || rep.Swept != 2 || rep.Started != 1 || rep.Cleared != 1 {
		t.Fatalf("pass %+v, %v; want 2 swept, kw refreshed, nokw cleared", rep, err)
	}
	for _, ch := range []string{"kw", "nokw"} {
		st, err := f.st.ResearchState(ctx, ch)
		if err != nil || !st.Patterns.Empty() || st.Set != nil {
			t.Fatalf("%s's state after the pass: %+v, %v; want no research", ch, st, err)
		}
		if n := f.items(ch, "RVSET#"); n != 0 {
			t.Fatalf("%s: %d video chunks after the pass", ch, n)
		}
	}
	if run, err := f.st.ResearchRun(ctx, "kw", old.ID); err != nil || !run.Patterns.Empty() {
		t.Fatalf("the superseded run after the pass: patterns %+v, %v; want none", run.Patterns, err)
	}
	for ch, id := range map[string]string{"kw": kwRun.ID, "nokw": nokwRun.ID} {
		if run, err := f.st.ResearchRun(ctx, ch, id); err != nil || !run.Patterns.Empty() || run.Status != research.Succeeded {
			t.Fatalf("%s's last run after the pass: %s, patterns %+v, %v; want it kept without patterns", ch, run.Status, run.Patterns, err)
		}
	}
	if st, _ := f.st.ResearchState(ctx, "kw"); st.ActiveRun == "" || len(sent.msgs) != 1 {
		t.Fatalf("kw after the pass: active run %q, %d messages; want a refresh queued", st.ActiveRun, len(sent.msgs))
	}
	if due, _ := f.st.DueResearch(ctx, expiry.Add(365*24*time.Hour), 10); len(due) != 1 || due[0].ChannelID != "kw" {
		t.Fatalf("index after the pass %+v; want kw's refresh alone", due)
	}
	for ch, was := range before {
		after := map[string]store.Item{}
		for _, it := range f.partition(ch) {
			after[it.SK] = it
		}
		for _, it := range was {
			if it.SK == "RESEARCH" || strings.HasPrefix(it.SK, "RRUN#") || strings.HasPrefix(it.SK, "RVSET#") || strings.HasPrefix(it.SK, "RWORK#") {
				continue
			}
			got, ok := after[it.SK]
			if !ok || !bytes.Equal(got.Data, it.Data) || got.Version != it.Version || got.Count != it.Count {
				t.Fatalf("%s's own item %s changed by the sweep: %+v, present %v", ch, it.SK, got, ok)
			}
		}
	}
}

// partition reads every live item of a channel's partition.
func (f *researchFixture) partition(channelID string) []store.Item {
	f.t.Helper()
	all, _ := queryAll(f.t, f.st.Table(), store.Query{PK: "CH#" + channelID}, 100)
	return all
}

// items counts the live items of a channel's partition under prefix.
func (f *researchFixture) items(channelID, prefix string) int {
	n := 0
	for _, it := range f.partition(channelID) {
		if strings.HasPrefix(it.SK, prefix) {
			n++
		}
	}
	return n
}

// testPartitionsWith: the migration's scan finds the live items of one SK under a PK prefix, across pages.
func testPartitionsWith(t *testing.T, s suite) {
	tbl := s.fresh(t)
	sc, ok := tbl.(store.Scanner)
	if !ok {
		t.Fatalf("%T is not a store.Scanner", tbl)
	}
	var items []store.Item
	want := map[string]bool{}
	for i := range 120 { // DynamoDB pages a Scan by 1 MB: big items make several pages
		pk := fmt.Sprintf("CH#c%03d", i)
		items = append(items, store.Item{Key: key(pk, "RESEARCH"), Data: bytes.Repeat([]byte("r"), 20<<10)})
		want[pk] = true
	}
	items = append(items,
		store.Item{Key: key("CH#expired", "RESEARCH"), Data: []byte("x"), ExpiresAt: past()},
		store.Item{Key: key("CH#later", "RESEARCH"), Data: []byte("x"), ExpiresAt: future()},
		store.Item{Key: key("CH#other", "RESEARCHX"), Data: []byte("x")},
		store.Item{Key: key("CH#other", "PROFILE"), Data: []byte("x")},
		store.Item{Key: key("NICHE#n", "RESEARCH"), Data: []byte("x")},
		store.Item{Key: key("CH", "RESEARCH"), Data: []byte("x")})
	want["CH#later"] = true
	putAll(t, tbl, items)
	got, err := sc.PartitionsWith(t.Context(), "CH#", "RESEARCH")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, pk := range got {
		if !want[pk] || seen[pk] {
			t.Fatalf("PartitionsWith listed %q (again: %v)", pk, seen[pk])
		}
		seen[pk] = true
	}
	if len(seen) != len(want) {
		t.Fatalf("PartitionsWith listed %d partitions, want %d", len(seen), len(want))
	}
}
