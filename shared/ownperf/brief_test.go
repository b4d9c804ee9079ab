package ownperf_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/creatorstrategy/css/shared/contract"
	"github.com/creatorstrategy/css/shared/generation"
	"github.com/creatorstrategy/css/shared/ownperf"
	"github.com/creatorstrategy/css/shared/planning"
	"github.com/creatorstrategy/css/shared/research"
	"github.com/creatorstrategy/css/shared/transcript"
)

// The brief of a synced channel carries its own reviewed videos, labelled as its own, before the research
// patterns of other channels; a channel never synced gets none.
func TestTheBriefCarriesTheChannelsOwnResultsBeforeResearch(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t, uploads(ytA, "a", 60, start), uploads(ytB, "b", 10, start), 0)
	se := planning.Series{ID: h.store.NewID(), Name: "Budget Bites", CreatedAt: start, UpdatedAt: start}
	if err := h.store.CreateSeries(ctx, chA, se, 50); err != nil {
		t.Fatal(err)
	}
	h.sync(t, chA)
	// Link five uploads of 30..50 days by hand: each is reviewed at 7 and 28 days by the next sync.
	var titles []string
	for i := range 5 {
		v := commit(t, h, chA, "own video "+string(rune('A'+i)), "published")
		if i == 0 {
			_, version, err := h.store.GetVideo(ctx, chA, v.ID)
			if err != nil {
				t.Fatal(err)
			}
			v.SeriesID = &se.ID
			if err := h.store.UpdateVideo(ctx, chA, v, version); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := h.svc.Link(ctx, chA, contract.UpdateMyVideoInput{ID: v.ID, Body: update(videoID("a", 30+5*i))}); err != nil {
			t.Fatal(err)
		}
		titles = append(titles, v.Title)
	}
	h.clock.add(time.Hour)
	if rep := h.sync(t, chA); rep.Reviews != 10 {
		t.Fatalf("reviews %+v", rep)
	}
	if err := h.store.PutPatterns(ctx, chA, research.Patterns{Titles: "numbers in titles win"}); err != nil {
		t.Fatal(err)
	}
	src := ownperf.BriefSource{Data: h.store, Now: h.clock.now}
	a := &generation.Assembler{Data: h.store, Own: src}
	b, err := a.Assemble(ctx, chA, "titles", "", generation.Brief{Task: generation.TaskTitles, VideoType: "Long",
		Input: json.RawMessage(`{"title":"lunch","type":"how-to"}`)})
	if err != nil {
		t.Fatal(err)
	}
	own := b.OwnResults
	if own == nil || own.Label != ownperf.OwnResultsLabel || len(own.Best) != 3 || len(own.Worst) != 2 {
		t.Fatalf("own results %+v", own)
	}
	for i := 1; i < len(own.Best); i++ {
		if own.Best[i].OwnOutlierScore > own.Best[i-1].OwnOutlierScore {
			t.Fatalf("best out of order: %+v", own.Best)
		}
	}
	if own.Worst[0].OwnOutlierScore > own.Worst[1].OwnOutlierScore || own.Worst[0].OwnOutlierScore > own.Best[2].OwnOutlierScore {
		t.Fatalf("worst %+v best %+v", own.Worst, own.Best)
	}
	series := 0
	for _, v := range append(own.Best, own.Worst...) {
		if v.Series == "Budget Bites" && v.Title == titles[0] {
			series++
		}
		if v.ContentType != "Long" || v.FormulaType != "listicle" {
			t.Fatalf("video %+v", v)
		}
	}
	if series != 1 {
		t.Fatalf("the series name is missing: %+v %+v", own.Best, own.Worst)
	}
	_, usr, err := generation.Render(b)
	if err != nil {
		t.Fatal(err)
	}
	ownAt, patternsAt := strings.Index(usr, `"own_results"`), strings.Index(usr, `"research_patterns"`)
	if ownAt < 0 || patternsAt < 0 || ownAt > patternsAt {
		t.Fatalf("own results at %d, research patterns at %d:\n%s", ownAt, patternsAt, usr)
	}
	// Channel B has no reviews: no own results.
	if r, err := src.OwnResults(ctx, chB); err != nil || r != nil {
		t.Fatalf("B: %+v %v", r, err)
	}
	h.sync(t, chB)
	// Synced without reviews: B's own search terms alone (decision 53), and none of A's.
	r, err := src.OwnResults(ctx, chB)
	if err != nil || r == nil || len(r.Best)+len(r.Worst)+len(r.LostViewers) != 0 || len(r.SearchTerms) == 0 || r.SearchPeriod == "" {
		t.Fatalf("B synced, no reviews: %+v %v", r, err)
	}
	for _, st := range r.SearchTerms {
		if !strings.HasPrefix(st.Term, "upload b ") {
			t.Fatalf("B's brief has the term %q", st.Term)
		}
	}
}

// Where the channel's own videos lost viewers reaches the brief of the tools that write a video's words
// (scripts, hooks, reoptimize), with the words spoken there, and not the others'.
func TestTheBriefSaysWhatLostViewers(t *testing.T) {
	ctx := context.Background()
	ups := uploads(ytA, "a", 30, start)
	ups[2].Title, ups[2].DurationSeconds = "Lost them here", 600
	h := newHarness(t, ups, nil, 0)
	commit(t, h, chA, "Lost them here", "edited")
	var cues []transcript.Cue
	for s := 0; s < 600; s += 5 {
		cues = append(cues, transcript.Cue{Start: time.Duration(s) * time.Second, End: time.Duration(s+5) * time.Second, Text: fmt.Sprintf("words %d", s)})
	}
	if err := h.store.PutTranscript(ctx, chA, ups[2].ID, "t1", "v1", transcript.Text(cues)); err != nil {
		t.Fatal(err)
	}
	h.sync(t, chA)
	h.clock.add(5*24*time.Hour + 2*time.Hour)
	h.sync(t, chA)
	a := &generation.Assembler{Data: h.store, Own: ownperf.BriefSource{Data: h.store, Now: h.clock.now}}
	for tool, want := range map[string]bool{"hooks": true, "long_scripts": true, "reoptimize": true, "titles": false, "descriptions": false} {
		b, err := a.Assemble(ctx, chA, tool, "", generation.Brief{Task: generation.TaskHooks, Input: json.RawMessage(`{"title":"x"}`)})
		if err != nil {
			t.Fatal(err)
		}
		if b.OwnResults == nil || (len(b.OwnResults.LostViewers) == 1) != want || len(b.OwnResults.SearchTerms) == 0 {
			t.Fatalf("%s: own results %+v", tool, b.OwnResults)
		}
		if !want {
			continue
		}
		lv := b.OwnResults.LostViewers[0]
		if lv.Title != "Lost them here" || !strings.HasPrefix(lv.Caption, "words ") || lv.PercentLost < 6 {
			t.Fatalf("%s: lost viewers %+v", tool, lv)
		}
		_, usr, err := generation.Render(b)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(usr, "are what lost viewers") || !strings.Contains(usr, lv.Caption) {
			t.Fatalf("%s: the prompt does not say what lost viewers:\n%s", tool, usr)
		}
	}
}
