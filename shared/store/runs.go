package store

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"github.com/creatorstrategy/css/shared/apperr"
	"github.com/creatorstrategy/css/shared/generation"
)

// Tool runs (the generation history). Each run is written as four items and two counters, in one
// transaction, so a history page reads O(page) items whatever the number of runs:
//
//	RUN#<id>                 the run whole (runRecord: the ToolRun shape, outputs included)
//	RUNX#<id>                its summary: tool and bounded search text, what a search reads
//	RUNA#<id>                an entry without data, in the index of every run
//	RUNT#<tool>#<id>         an entry without data, in the index of the tool's runs
//	COUNT#runs, COUNT#runs#<tool>   how many runs, and how many of the tool: the totals of unsearched pages
//
// A page without search reads offset+limit index entries (one Query: about 12,000 entries fit its 1 MB)
// and then, in one GetMany, the page's runs and the counter of its total. A search reads every summary of
// the channel (a few hundred bytes each, so one Query per about 2,000 runs), then the page's runs.
// Completing a run rewrites RUN# and RUNX# only; runs are never deleted, so the counters stay exact.
const (
	prefixRunSummary = "RUNX#"
	prefixRunAll     = "RUNA#"
	prefixRunTool    = "RUNT#"
	runsCounter      = "runs"
)

func runKey(channelID, id string) Key        { return channelKey(channelID, prefixRun+id) }
func runSummaryKey(channelID, id string) Key { return channelKey(channelID, prefixRunSummary+id) }
func runAllKey(channelID, id string) Key     { return channelKey(channelID, prefixRunAll+id) }
func runToolPrefix(tool string) string       { return prefixRunTool + tool + "#" }
func runToolKey(channelID, tool, id string) Key {
	return channelKey(channelID, runToolPrefix(tool)+id)
}
func runsCounterKey(channelID, tool string) Key {
	if tool == "" {
		return channelCounter(channelID, runsCounter)
	}
	return channelCounter(channelID, runsCounter+"#"+tool)
}

// summaryFormat2 is a summary's stored format: the format byte, the tool name, a 0x00 byte, the search
// text. Not JSON, so a search over thousands of summaries decodes none.
func encodeSummary(key Key, s generation.Summary) Item {
	data := make([]byte, 0, 2+len(s.Tool)+len(s.Text))
	data = append(data, format2)
	data = append(data, s.Tool...)
	data = append(data, 0)
	data = append(data, s.Text...)
	return Item{Key: key, Data: data}
}

func decodeSummary(it Item) (generation.Summary, error) {
	format, body := formatOf(it.Data)
	tool, text, ok := strings.Cut(string(body), "\x00")
	if format != format2 || !ok {
		return generation.Summary{}, fmt.Errorf("decode %s: not a run summary of format 2", it.Key)
	}
	return generation.Summary{Tool: tool, Text: text}, nil
}

// checkTool refuses a tool name that would break the key layout.
func checkTool(tool string) error {
	if tool == "" || strings.ContainsAny(tool, "#\x00") {
		return fmt.Errorf("store: tool name %q: empty, or holds '#' or 0x00", tool)
	}
	return nil
}

// CreateRun stores a new run (generation creates it pending) with its summary, its index entries and its
// counts, in one transaction.
func (s *Store) CreateRun(ctx context.Context, channelID string, r generation.ToolRun) error {
	if err := checkTool(r.ToolName); err != nil {
		return err
	}
	run, err := encode(runKey(channelID, r.ID), runRecord(r))
	if err != nil {
		return err
	}
	err = s.write(ctx,
		putNew(run),
		Put(encodeSummary(runSummaryKey(channelID, r.ID), generation.Summarize(r)), Always),
		Put(Item{Key: runAllKey(channelID, r.ID)}, Always),
		Put(Item{Key: runToolKey(channelID, r.ToolName, r.ID)}, Always),
		Incr(runsCounterKey(channelID, ""), 1, 0),
		Incr(runsCounterKey(channelID, r.ToolName), 1, 0),
	)
	if FailedOp(err) == 0 {
		return apperr.Conflictf("run %s exists already", r.ID)
	}
	return err
}

// GetRun returns a run and its version.
func (s *Store) GetRun(ctx context.Context, channelID, id string) (generation.ToolRun, int64, error) {
	var r runRecord
	version, err := s.getJSON(ctx, runKey(channelID, id), &r)
	return generation.ToolRun(r), version, orNotFound(err, "run %s not found", id)
}

// UpdateRun replaces a run and its summary (generation completes a run with it) if the run is still at
// version was; the tool, which the index entries are filed under, must not change.
func (s *Store) UpdateRun(ctx context.Context, channelID string, r generation.ToolRun, was int64) error {
	run, err := encode(runKey(channelID, r.ID), runRecord(r))
	if err != nil {
		return err
	}
	err = s.write(ctx,
		PutIfVersion(run, was),
		Put(encodeSummary(runSummaryKey(channelID, r.ID), generation.Summarize(r)), Always),
		Check(runToolKey(channelID, r.ToolName, r.ID), IfExists),
	)
	switch FailedOp(err) {
	case -1:
		return err
	case 0:
		return apperr.Conflictf("run %s was changed concurrently; read it again", r.ID)
	default:
		return fmt.Errorf("update run %s: its tool %q is not the one it was created with", r.ID, r.ToolName)
	}
}

// RunPage returns the runs [offset, offset+limit) of tool ("": every tool), newest first, as stored, and
// how many there are. With match set, only the runs whose summary it accepts count.
func (s *Store) RunPage(ctx context.Context, channelID, tool string, match func(generation.Summary) bool, limit, offset int) ([]generation.Stored, int, error) {
	var ids []string
	var total int
	var keys []Key
	if match == nil {
		prefix := prefixRunAll
		if tool != "" {
			prefix = runToolPrefix(tool)
		}
		want := limit
		if offset < math.MaxInt-limit {
			want += offset
		}
		entries, err := s.queryNewest(ctx, channelPK(channelID), prefix, want)
		if err != nil {
			return nil, 0, err
		}
		for _, it := range pageOf(entries, limit, offset) {
			ids = append(ids, it.SK[len(prefix):])
		}
		total = -1 // read from the counter, with the runs
		keys = append(keys, runsCounterKey(channelID, tool))
	} else {
		summaries, err := s.queryAll(ctx, channelPK(channelID), prefixRunSummary, true)
		if err != nil {
			return nil, 0, err
		}
		var matching []Item
		for _, it := range summaries {
			sum, err := decodeSummary(it)
			if err != nil {
				return nil, 0, err
			}
			if match(sum) {
				matching = append(matching, it)
			}
		}
		total = len(matching)
		for _, it := range pageOf(matching, limit, offset) {
			ids = append(ids, it.SK[len(prefixRunSummary):])
		}
	}
	for _, id := range ids {
		keys = append(keys, runKey(channelID, id))
	}
	items, err := s.getAll(ctx, keys)
	if err != nil {
		return nil, 0, fmt.Errorf("history page: %w", err)
	}
	out := make([]generation.Stored, 0, len(ids))
	for _, it := range items {
		if strings.HasPrefix(it.SK, prefixCount) {
			total = int(it.Count)
			continue
		}
		run, err := storedRun(it)
		if err != nil {
			return nil, 0, err
		}
		out = append(out, run)
	}
	if total < 0 { // no counter yet: no run of the tool was ever written
		total = 0
	}
	return out, total, nil
}

// queryNewest reads up to n items under prefix, newest (highest SK) first, following cursors.
func (s *Store) queryNewest(ctx context.Context, pk, prefix string, n int) ([]Item, error) {
	var all []Item
	q := Query{PK: pk, Prefix: prefix, Desc: true}
	for len(all) < n {
		q.Limit = n - len(all)
		page, err := s.t.Query(ctx, q)
		if err != nil {
			return nil, fmt.Errorf("query %s %s: %w", pk, prefix, err)
		}
		if all == nil && (page.Next == "" || len(page.Items) >= n) {
			return page.Items, nil // one page, the usual case: no copy
		}
		all = append(all, page.Items...)
		if page.Next == "" {
			break
		}
		q.Cursor = page.Next
	}
	return all, nil
}

// newestPage returns the items [offset, offset+limit) under prefix, newest first, and how many there are:
// only the page's items are read; the rest are counted a page of the table at a time (issue 19 item 18).
func (s *Store) newestPage(ctx context.Context, pk, prefix string, limit, offset int) ([]Item, int, error) {
	want := limit
	if offset < math.MaxInt-limit {
		want += offset
	}
	items, err := s.queryNewest(ctx, pk, prefix, want)
	if err != nil {
		return nil, 0, err
	}
	total := len(items)
	if total >= want { // more may follow the page
		if total, err = s.countItems(ctx, pk, prefix); err != nil {
			return nil, 0, err
		}
	}
	return pageOf(items, limit, offset), total, nil
}

// pageOf returns items[offset:offset+limit], clipped.
func pageOf(items []Item, limit, offset int) []Item {
	if offset >= len(items) {
		return nil
	}
	return items[offset:min(len(items), offset+min(limit, len(items)-offset))]
}

// storedRun returns a run's ToolRun JSON: the stored JSON itself in the current format, else the run
// converted from its older format.
func storedRun(it Item) (generation.Stored, error) {
	if format, body := formatOf(it.Data); format == format2 {
		return body, nil
	}
	var r runRecord
	if err := decode(it, &r); err != nil {
		return nil, err
	}
	return json.Marshal(generation.ToolRun(r))
}
