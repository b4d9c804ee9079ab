package store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/creatorstrategy/css/shared/apperr"
	"github.com/creatorstrategy/css/shared/quota"
	"github.com/creatorstrategy/css/shared/research"
	"github.com/creatorstrategy/css/shared/videos"
)

// Research (shared/research). Items:
//
//	CH#<channel>  RESEARCH                 the channel's research State: patterns, current video set, the run
//	                                       holding the channel, when the scheduler looks next (versioned)
//	CH#<channel>  RRUN#<run>               a research run (versioned)
//	CH#<channel>  RWORK#<run>#<step>#<nnn> a step's output, read by later steps; expires after workTTL
//	CH#<channel>  RVSET#<run>#<nnn>        a run's scored videos, the channel's research once the run completes;
//	                                       expire research.DataLifetime after their fetch (decision 49)
//	CH#<channel>  IDEAS                    a version marker that serialises writers adding to the backlog
//	NICHE#<key>   NICHE                    a niche's shared research (which set, fetched when); expires
//	NICHE#<key>   SET#<run>#<nnn>          its videos; expire with it
//	RSCHED        DUE#<unix ms>#<channel>  when the scheduler looks at a channel (State.VisitAt), oldest first;
//	              DUE#<unix ms>#<channel>#kick  a keyword change asks for a run (written by PutProfile)
//	NICHE#<key>   CHANNELS                 the niche's channels as its last discovery found them; expire
//	                                       KnownChannelsFor (30 days) after it
//	BUDGET#<day>  UNITS | SEARCHES | STATS the deployment's YouTube quota reserved that day, one counter per
//	                                       bucket (shared/quota)
//	BUDGET#<day>  EXHAUSTED[#<bucket>]     the API answered quotaExceeded for that bucket that day: nothing
//	                                       more is spent from it
//	BUDGET#<day>  ACCOUNT#<acct>, ACCOUNT-<bucket>#<acct>  an account's on-demand share of each bucket
//
// Sets of videos are chunks of up to chunkBytes of JSON arrays, so 500 videos are a few items and a run's
// results are written in the same transaction as the run.
const (
	skResearchIdeas    = "IDEAS"
	prefixResearchRun  = "RRUN#"
	prefixResearchWork = "RWORK#"
	prefixResearchSet  = "RVSET#"
	skNiche            = "NICHE"
	skNicheChannels    = "CHANNELS"
	prefixNicheSet     = "SET#"
	schedulePK         = "RSCHED"
	prefixDue          = "DUE#"
	kickSuffix         = "#kick"
	skBudgetUnits      = "UNITS"
	skBudgetExhausted  = "EXHAUSTED"
	skBudgetAccount    = "ACCOUNT#"

	// chunkBytes bounds a chunk's JSON, well inside DynamoDB's 400 KB item limit.
	chunkBytes = 256 << 10
	// workTTL is how long a step's output is kept: a run still unfinished by then has failed long ago.
	workTTL = 14 * 24 * time.Hour
	// budgetTTL keeps a budget day's items a little beyond the day, for runs settling late.
	budgetTTL = 3 * 24 * time.Hour
)

func researchKey(channelID string) Key { return channelKey(channelID, skResearch) }
func researchRunKey(channelID, runID string) Key {
	return channelKey(channelID, prefixResearchRun+runID)
}
func researchWorkPrefix(runID, step string) string {
	return prefixResearchWork + runID + "#" + step + "#"
}
func researchSetPrefix(runID string) string { return prefixResearchSet + runID + "#" }
func nichePK(key string) string             { return "NICHE#" + key }
func nicheSetPrefix(runID string) string    { return prefixNicheSet + runID + "#" }
func chunkSK(prefix string, i int) string   { return fmt.Sprintf("%s%03d", prefix, i) }
func budgetPK(day string) string            { return "BUDGET#" + day }

// The budget's items of a bucket. The units bucket keeps the keys it had before quota had buckets, so a
// day's counts carry over the change.
func budgetKey(day string, b quota.Bucket) Key {
	return Key{PK: budgetPK(day), SK: map[quota.Bucket]string{quota.Units: skBudgetUnits, quota.Searches: "SEARCHES", quota.Stats: "STATS"}[b]}
}

func exhaustedKey(day string, b quota.Bucket) Key {
	if b == quota.Units {
		return Key{PK: budgetPK(day), SK: skBudgetExhausted}
	}
	return Key{PK: budgetPK(day), SK: skBudgetExhausted + "#" + strings.ToUpper(string(b))}
}

func accountQuotaKey(day, accountID string, b quota.Bucket) Key {
	if b == quota.Units {
		return Key{PK: budgetPK(day), SK: skBudgetAccount + accountID}
	}
	return Key{PK: budgetPK(day), SK: "ACCOUNT-" + strings.ToUpper(string(b)) + "#" + accountID}
}

// budgetOps are the ops that move a day's budget by delta, bucket by bucket: a positive amount within
// limit's and unless the API said that bucket ran out that day (an increment and a check, in that order),
// a negative one given back (never below 0).
func (s *Store) budgetOps(day string, delta, limit quota.Cost) []Op {
	expires := s.Now().Add(budgetTTL).Unix()
	var ops []Op
	for _, b := range quota.Buckets() {
		switch n := delta.Of(b); {
		case n > 0:
			ops = append(ops, IncrUntil(budgetKey(day, b), int64(n), int64(max(limit.Of(b), 0)), expires),
				Check(exhaustedKey(day, b), IfNotExists))
		case n < 0:
			ops = append(ops, IncrUntil(budgetKey(day, b), int64(n), 0, expires))
		}
	}
	return ops
}

// accountOps move an account's share of a day by delta, bucket by bucket, within limit's.
func (s *Store) accountOps(day, accountID string, delta, limit quota.Cost) []Op {
	expires := s.Now().Add(budgetTTL).Unix()
	var ops []Op
	for _, b := range quota.Buckets() {
		if n := delta.Of(b); n != 0 {
			ops = append(ops, IncrUntil(accountQuotaKey(day, accountID, b), int64(n), int64(max(limit.Of(b), 0)), expires))
		}
	}
	return ops
}
func dueKey(at time.Time, channelID string) Key {
	return Key{PK: schedulePK, SK: fmt.Sprintf("%s%013d#%s", prefixDue, at.UnixMilli(), channelID)}
}

// ResearchState returns the channel's research state; the zero State (Version 0) before any. State.Version
// is the stored version plus one, so that an item of version 0 (written by earlier builds, unversioned)
// still reads as present.
func (s *Store) ResearchState(ctx context.Context, channelID string) (research.State, error) {
	var r researchStateRecord
	v, err := s.getJSON(ctx, researchKey(channelID), &r)
	if errors.Is(err, ErrNotFound) {
		return research.State{}, nil
	}
	if err != nil {
		return research.State{}, err
	}
	st := r.state()
	st.Version = v + 1
	return st, nil
}

// GetPatterns returns the channel's research patterns; empty ones before research has run and once it
// expired (decision 49).
func (s *Store) GetPatterns(ctx context.Context, channelID string) (research.Patterns, error) {
	st, err := s.ResearchState(ctx, channelID)
	return st.Current(s.Now()).Patterns, err
}

// PutPatterns replaces the channel's research patterns, keeping the rest of its research state; without
// videos, they count as research fetched now (the store's clock), as patterns expire with their videos.
func (s *Store) PutPatterns(ctx context.Context, channelID string, p research.Patterns) error {
	for attempt := 0; ; attempt++ {
		st, err := s.ResearchState(ctx, channelID)
		if err != nil {
			return err
		}
		st.Patterns = p
		if st.Set == nil {
			st.Set = &research.SetRef{FetchedAt: s.Now()}
		}
		ops, err := s.stateOps(ctx, channelID, st)
		if err != nil {
			return err
		}
		err = s.write(ctx, ops...)
		if errors.Is(err, ErrConditionFailed) && attempt+1 < conflictRetries {
			continue
		}
		return err
	}
}

// stateOps are the ops that store st under the version it was read at, moving its entry in the
// scheduler's index (at VisitAt: DueAt, or when its research expires if sooner) when that changed (the
// stored state is read to find the old entry).
func (s *Store) stateOps(ctx context.Context, channelID string, st research.State) ([]Op, error) {
	item, err := encode(researchKey(channelID), researchStateRecordOf(st))
	if err != nil {
		return nil, err
	}
	op := Put(item, IfNotExists)
	if st.Version > 0 {
		op = PutIfVersion(item, st.Version-1)
	}
	ops := []Op{op}
	var was time.Time
	if st.Version > 0 {
		stored, err := s.ResearchState(ctx, channelID)
		if err != nil {
			return nil, err
		}
		was = stored.VisitAt()
	}
	if at := st.VisitAt(); !was.Equal(at) {
		if !was.IsZero() {
			ops = append(ops, Delete(dueKey(was, channelID), Always))
		}
		if !at.IsZero() {
			ops = append(ops, Put(Item{Key: dueKey(at, channelID), Data: []byte(channelID)}, Always))
		}
	}
	return ops, nil
}

// SaveResearchState stores st under the version it was read at (research.ErrStale when it changed since).
func (s *Store) SaveResearchState(ctx context.Context, channelID string, st research.State) error {
	ops, err := s.stateOps(ctx, channelID, st)
	if err != nil {
		return err
	}
	if err := s.write(ctx, ops...); err != nil {
		return staleIf(err, "research state")
	}
	return nil
}

// StartResearchRun stores a new run and the state that names it, the state under the version it was read
// at (research.ErrStale when another write got in first). superseded, when given, is an earlier run of
// the channel stored as it is now (failed), under its version, in the same transaction.
func (s *Store) StartResearchRun(ctx context.Context, st research.State, run research.Run, superseded *research.Run) error {
	ops, err := s.stateOps(ctx, run.ChannelID, st)
	if err != nil {
		return err
	}
	item, err := encode(researchRunKey(run.ChannelID, run.ID), researchRunRecordOf(run))
	if err != nil {
		return err
	}
	ops = append(ops, putNew(item))
	if superseded != nil {
		old, err := encode(researchRunKey(superseded.ChannelID, superseded.ID), researchRunRecordOf(*superseded))
		if err != nil {
			return err
		}
		ops = append(ops, PutIfVersion(old, superseded.Version))
	}
	if err := s.write(ctx, ops...); err != nil {
		return staleIf(err, "research state")
	}
	return nil
}

// ResearchRun returns a run of the channel; NOT_FOUND when the channel has none with that id.
func (s *Store) ResearchRun(ctx context.Context, channelID, runID string) (research.Run, error) {
	var r researchRunRecord
	v, err := s.getJSON(ctx, researchRunKey(channelID, runID), &r)
	if errors.Is(err, ErrNotFound) {
		return research.Run{}, apperr.NotFoundf("research run %s not found", runID)
	}
	if err != nil {
		return research.Run{}, err
	}
	run := r.run(channelID)
	run.Version = v
	return run, nil
}

// ResearchRuns returns every run of the channel, oldest first.
func (s *Store) ResearchRuns(ctx context.Context, channelID string) ([]research.Run, error) {
	items, err := s.queryAll(ctx, channelPK(channelID), prefixResearchRun, false)
	if err != nil {
		return nil, err
	}
	runs := make([]research.Run, 0, len(items))
	for _, it := range items {
		var r researchRunRecord
		if err := decode(it, &r); err != nil {
			return nil, err
		}
		run := r.run(channelID)
		run.Version = it.Version
		runs = append(runs, run)
	}
	return runs, nil
}

// SaveResearchRun stores run under its version (research.ErrStale when it changed since) with what c
// carries, in one transaction, and sets run.Version to the stored one. c.Budget that the budget does not
// admit is research.ErrBudget; c.Ideas are checked against the backlog and the pipeline first, and the
// ones added are set in c.Added.
func (s *Store) SaveResearchRun(ctx context.Context, run *research.Run, c *research.Commit) error {
	for attempt := 0; ; attempt++ {
		ops, budget, ideasOp, account, err := s.commitOps(ctx, run, c)
		if err != nil {
			return err
		}
		err = s.write(ctx, ops...)
		switch failed := FailedOp(err); {
		case err == nil:
			run.Version++
			return nil
		case failed == 0:
			return fmt.Errorf("save research run %s: %w", run.ID, research.ErrStale)
		case budget.has(failed):
			return research.ErrBudget
		case account.has(failed):
			// The account's counter has less than the run gives back (it expired with its day): the run's
			// write goes on without it.
			c.Account = nil
			continue
		case failed >= 0 && failed == ideasOp && attempt+1 < conflictRetries:
			continue // another writer added ideas since they were read
		case failed >= 0:
			return apperr.Conflictf("the idea backlog is being changed concurrently; try again")
		default:
			return fmt.Errorf("save research run %s: %w", run.ID, err)
		}
	}
}

// opRange is the ops [from, to) of a write.
type opRange struct{ from, to int }

func (r opRange) has(i int) bool { return i >= r.from && i < r.to }

// commitOps builds a run's commit: the run first, then the budget change (per bucket, an increment, then
// the exhausted check), the account's share given back, the niche's channels, the step's output, the
// videos and the ideas. It returns the ops of the budget and of the account's share, and the index of the
// ideas op (-1 when absent). The run is encoded last, after c.Finish has seen what the commit adds.
func (s *Store) commitOps(ctx context.Context, run *research.Run, c *research.Commit) ([]Op, opRange, int, opRange, error) {
	ops := []Op{{}} // the run's op, filled in at the end
	budget, ideasOp, account := opRange{}, -1, opRange{}
	if c == nil {
		c = &research.Commit{}
	}
	if b := c.Budget; b != nil && !b.Delta.IsZero() {
		budget.from = len(ops)
		ops = append(ops, s.budgetOps(b.Day, b.Delta, b.Limit)...)
		budget.to = len(ops)
	}
	if a := c.Account; a != nil && !a.Cost.AtLeast0().IsZero() {
		// Gives back (never below 0) an account's share: counter writes with the run's.
		account.from = len(ops)
		ops = append(ops, s.accountOps(a.Day, a.Account, a.Cost.AtLeast0().Times(-1), quota.Cost{})...)
		account.to = len(ops)
	}
	if k := c.Channels; k != nil {
		item, err := encode(Key{PK: nichePK(k.Key), SK: skNicheChannels}, nicheChannelsRecord{IDs: k.IDs, DiscoveredAt: k.DiscoveredAt})
		if err != nil {
			return nil, opRange{}, 0, opRange{}, err
		}
		item.ExpiresAt = research.DataExpiry(k.DiscoveredAt).Unix() // other channels' data (decision 49)
		ops = append(ops, Put(item, Always))
	}
	if len(c.Work) > 0 {
		chunks, err := chunk(c.Work)
		if err != nil {
			return nil, opRange{}, 0, opRange{}, err
		}
		expires := run.CreatedAt.Add(workTTL).Unix()
		for i, data := range chunks {
			ops = append(ops, Put(Item{Key: channelKey(run.ChannelID, chunkSK(researchWorkPrefix(run.ID, c.Step), i)),
				Data: data, ExpiresAt: expires}, Always))
		}
	}
	if c.Videos != nil {
		// Other channels' videos are never stored without an expiry, so a set no state names any more (a
		// superseded run's) goes too (decision 49).
		if c.VideosExpire.IsZero() || c.Niche != nil && (c.NicheExpires.IsZero() || c.NicheExpires.After(c.VideosExpire)) {
			return nil, opRange{}, 0, opRange{}, fmt.Errorf("save research run %s: research videos need an expiry, the niche's no later than theirs", run.ID)
		}
		chunks, err := videoChunks(c.Videos)
		if err != nil {
			return nil, opRange{}, 0, opRange{}, err
		}
		c.Chunks = len(chunks)
		for i, data := range chunks {
			ops = append(ops, Put(Item{Key: channelKey(run.ChannelID, chunkSK(researchSetPrefix(run.ID), i)), Data: data,
				ExpiresAt: c.VideosExpire.Unix()}, Always))
		}
		if c.Niche != nil {
			expires := c.NicheExpires.Unix()
			c.Niche.Set.Chunks = len(chunks)
			for i, data := range chunks {
				ops = append(ops, Put(Item{Key: Key{PK: nichePK(c.Niche.Key), SK: chunkSK(nicheSetPrefix(run.ID), i)},
					Data: data, ExpiresAt: expires}, Always))
			}
			hdr, err := encode(Key{PK: nichePK(c.Niche.Key), SK: skNiche}, nicheRecordOf(*c.Niche))
			if err != nil {
				return nil, opRange{}, 0, opRange{}, err
			}
			hdr.ExpiresAt = expires
			ops = append(ops, Put(hdr, Always))
		}
	}
	if len(c.Ideas) > 0 {
		added, marker, err := s.newIdeas(ctx, run.ChannelID, c.Ideas, c.MaxBacklog)
		if err != nil {
			return nil, opRange{}, 0, opRange{}, err
		}
		c.Added = added
		ideasOp = len(ops)
		ops = append(ops, marker)
		for _, idea := range added {
			it, err := encode(ideaKey(run.ChannelID, idea.ID), ideaRecord(idea))
			if err != nil {
				return nil, opRange{}, 0, opRange{}, err
			}
			ops = append(ops, Put(it, IfNotExists))
		}
	}
	if len(ops) > MaxTransactOps {
		return nil, opRange{}, 0, opRange{}, fmt.Errorf("save research run %s: %d writes, over the %d of one transaction", run.ID, len(ops), MaxTransactOps)
	}
	if c.Finish != nil {
		c.Finish(c)
	}
	item, err := encode(researchRunKey(run.ChannelID, run.ID), researchRunRecordOf(*run))
	if err != nil {
		return nil, opRange{}, 0, opRange{}, err
	}
	ops[0] = PutIfVersion(item, run.Version)
	return ops, budget, ideasOp, account, nil
}

// newIdeas reads the backlog and the pipeline and keeps the candidates that videos.NewIdeas admits, with
// the op that bumps the backlog's marker under the version read, so two writers adding ideas at once
// cannot both pass the backlog's bound.
func (s *Store) newIdeas(ctx context.Context, channelID string, candidates []videos.Idea, maxBacklog int) ([]videos.Idea, Op, error) {
	marker, err := s.t.Get(ctx, channelKey(channelID, skResearchIdeas))
	if err != nil && !errors.Is(err, ErrNotFound) {
		return nil, Op{}, err
	}
	taken, backlog, err := s.takenTitles(ctx, channelID)
	if err != nil {
		return nil, Op{}, err
	}
	added := videos.NewIdeas(candidates, taken, maxBacklog-backlog)
	return added, versioned(Item{Key: channelKey(channelID, skResearchIdeas)}, marker.Version), nil
}

// AddIdeas adds ideas to the channel's backlog by decision 32's rules (videos.NewIdeas: no title the
// backlog or the pipeline holds, at most maxBacklog in all), serialised with every other writer adding
// ideas (research runs, POST /generate/ideas) by the backlog's version marker, and returns the ones added.
// At most MaxTransactOps-1 ideas a call.
func (s *Store) AddIdeas(ctx context.Context, channelID string, ideas []videos.Idea, maxBacklog int) ([]videos.Idea, error) {
	if len(ideas) >= MaxTransactOps {
		return nil, fmt.Errorf("add ideas: %d ideas, at most %d a call", len(ideas), MaxTransactOps-1)
	}
	for attempt := 0; ; attempt++ {
		added, marker, err := s.newIdeas(ctx, channelID, ideas, maxBacklog)
		if err != nil || len(added) == 0 {
			return added, err
		}
		ops := []Op{marker}
		for _, idea := range added {
			it, err := encode(ideaKey(channelID, idea.ID), ideaRecord(idea))
			if err != nil {
				return nil, err
			}
			ops = append(ops, Put(it, IfNotExists))
		}
		err = s.write(ctx, ops...)
		switch failed := FailedOp(err); {
		case err == nil:
			return added, nil
		case failed == 0 && attempt+1 < conflictRetries:
			continue // another writer added ideas since the backlog was read
		case failed == 0:
			return nil, apperr.Conflictf("the idea backlog is being changed concurrently; try again")
		default:
			return nil, fmt.Errorf("add ideas: %w", err)
		}
	}
}

// TakenTitles returns the titles of the channel's backlog and pipeline.
func (s *Store) TakenTitles(ctx context.Context, channelID string) ([]string, error) {
	taken, _, err := s.takenTitles(ctx, channelID)
	return taken, err
}

// takenTitles returns the titles of the backlog and the pipeline, and the size of the backlog.
func (s *Store) takenTitles(ctx context.Context, channelID string) ([]string, int, error) {
	backlog, err := s.ListIdeas(ctx, channelID)
	if err != nil {
		return nil, 0, err
	}
	pipeline, err := s.ListVideos(ctx, channelID)
	if err != nil {
		return nil, 0, err
	}
	out := make([]string, 0, len(backlog)+len(pipeline))
	for _, i := range backlog {
		out = append(out, i.Title)
	}
	for _, raw := range pipeline {
		var v struct {
			Title string `json:"title"`
		}
		if err := json.Unmarshal(raw, &v); err != nil {
			return nil, 0, fmt.Errorf("decode video: %w", err)
		}
		out = append(out, v.Title)
	}
	return out, len(backlog), nil
}

// SaveResearchRunAndState stores run and st together, each under the version it was read at
// (research.ErrStale when either changed since): how a run completes, waits or fails, and how the
// scheduler resumes one.
func (s *Store) SaveResearchRunAndState(ctx context.Context, run *research.Run, st research.State) error {
	item, err := encode(researchRunKey(run.ChannelID, run.ID), researchRunRecordOf(*run))
	if err != nil {
		return err
	}
	ops, err := s.stateOps(ctx, run.ChannelID, st)
	if err != nil {
		return err
	}
	ops = append([]Op{PutIfVersion(item, run.Version)}, ops...)
	if err := s.write(ctx, ops...); err != nil {
		return staleIf(err, "research run "+run.ID)
	}
	run.Version++
	return nil
}

// staleIf turns a failed condition into research.ErrStale.
func staleIf(err error, what string) error {
	if errors.Is(err, ErrConditionFailed) {
		return fmt.Errorf("%s: %w", what, research.ErrStale)
	}
	return err
}

// ResearchWork returns the output a step of a run stored, in the order it was given.
func (s *Store) ResearchWork(ctx context.Context, channelID, runID, step string) ([]json.RawMessage, error) {
	items, err := s.queryAll(ctx, channelPK(channelID), researchWorkPrefix(runID, step), false)
	if err != nil {
		return nil, err
	}
	return unchunk(items)
}

// ChannelResearchVideos returns a channel's set of research videos. A set whose items are fewer than it
// had (deleted since the reference was read: a newer run completed) is research.ErrStale.
func (s *Store) ChannelResearchVideos(ctx context.Context, channelID string, set research.SetRef) ([]research.Video, error) {
	return s.setVideos(ctx, channelPK(channelID), researchSetPrefix(set.RunID), set.Chunks, "research set "+set.RunID)
}

// setVideos reads a set of videos in chunks under prefix; fewer chunks than it had is research.ErrStale.
func (s *Store) setVideos(ctx context.Context, pk, prefix string, chunks int, what string) ([]research.Video, error) {
	items, err := s.queryAll(ctx, pk, prefix, false)
	if err != nil {
		return nil, err
	}
	if len(items) != chunks {
		return nil, fmt.Errorf("%s: %d of %d chunks: %w", what, len(items), chunks, research.ErrStale)
	}
	return decodeVideoChunks(items)
}

// DeleteChannelResearchVideos deletes a channel's set of research videos (one no state refers to).
func (s *Store) DeleteChannelResearchVideos(ctx context.Context, channelID string, runID string) error {
	items, err := s.queryAll(ctx, channelPK(channelID), researchSetPrefix(runID), false)
	if err != nil {
		return err
	}
	return deleteEach(ctx, s, items, itemKey)
}

// ResearchSetRuns returns the runs whose video sets the channel has stored, in SK order.
func (s *Store) ResearchSetRuns(ctx context.Context, channelID string) ([]string, error) {
	items, err := s.queryAll(ctx, channelPK(channelID), prefixResearchSet, false)
	if err != nil {
		return nil, err
	}
	var runs []string
	for _, it := range items {
		run, _, ok := strings.Cut(strings.TrimPrefix(it.SK, prefixResearchSet), "#")
		if ok && (len(runs) == 0 || runs[len(runs)-1] != run) {
			runs = append(runs, run)
		}
	}
	return runs, nil
}

// NicheResearch returns a niche's shared research, if some is stored and unexpired.
func (s *Store) NicheResearch(ctx context.Context, key string) (research.NicheResearch, bool, error) {
	var r nicheRecord
	_, err := s.getJSON(ctx, Key{PK: nichePK(key), SK: skNiche}, &r)
	if errors.Is(err, ErrNotFound) {
		return research.NicheResearch{}, false, nil
	}
	if err != nil {
		return research.NicheResearch{}, false, err
	}
	return r.niche(), true, nil
}

// NicheResearchVideos returns the videos of a niche's shared research (research.ErrStale when they
// expired since the reference was read).
func (s *Store) NicheResearchVideos(ctx context.Context, n research.NicheResearch) ([]research.Video, error) {
	return s.setVideos(ctx, nichePK(n.Key), nicheSetPrefix(n.Set.RunID), n.Set.Chunks, "niche set "+n.Set.RunID)
}

// QuotaUsed returns what was reserved on a budget day, per bucket, and the buckets the API said were spent.
func (s *Store) QuotaUsed(ctx context.Context, day string) (quota.Usage, error) {
	var keys []Key
	for _, b := range quota.Buckets() {
		keys = append(keys, budgetKey(day, b), exhaustedKey(day, b))
	}
	items, err := s.t.GetMany(ctx, keys)
	if err != nil {
		return quota.Usage{}, err
	}
	var u quota.Usage
	for _, it := range items {
		for _, b := range quota.Buckets() {
			switch it.Key {
			case budgetKey(day, b):
				u.Used = u.Used.With(b, int(it.Count))
			case exhaustedKey(day, b):
				u.Exhausted = append(u.Exhausted, b)
			}
		}
	}
	return u, nil
}

// ChannelAccount returns the account that owns the channel ("" when the channel has no record).
func (s *Store) ChannelAccount(ctx context.Context, channelID string) (string, error) {
	ch, err := s.GetChannel(ctx, channelID)
	if apperr.CodeOf(err) == apperr.NotFound {
		return "", nil
	}
	return ch.AccountID, err
}

// AddAccountQuota adds delta to what an account's on-demand research runs reserved on a budget day, unless
// a bucket would pass limit's (decision 46): all buckets or none. The counters live beside the day's budget
// and expire with it.
func (s *Store) AddAccountQuota(ctx context.Context, accountID, day string, delta, limit quota.Cost) (bool, error) {
	return s.reserve(ctx, s.accountOps(day, accountID, delta, limit))
}

// reserve writes ops (counters moved within their bounds, and their checks) all or nothing: false when a
// condition fails.
func (s *Store) reserve(ctx context.Context, ops []Op) (bool, error) {
	if len(ops) == 0 {
		return true, nil
	}
	err := s.write(ctx, ops...)
	if errors.Is(err, ErrConditionFailed) {
		return false, nil
	}
	return err == nil, err
}

// SpendQuota counts quota spent outside research runs in the day's budget and the account's share, all or
// nothing (decision 46).
func (s *Store) SpendQuota(ctx context.Context, day string, cost, dayLimit quota.Cost, accountID string, share quota.Cost) error {
	budget := s.budgetOps(day, cost, dayLimit)
	err := s.write(ctx, append(budget, s.accountOps(day, accountID, cost, share)...)...)
	switch failed := FailedOp(err); {
	case failed >= 0 && failed < len(budget):
		return research.ErrBudget
	case failed >= len(budget):
		return research.ErrAccountShare
	}
	return err
}

// MarkQuotaExhausted records that the API's quota of bucket b is spent for the day: no reservation from
// that bucket succeeds that day any more.
func (s *Store) MarkQuotaExhausted(ctx context.Context, day string, b quota.Bucket) error {
	return s.write(ctx, Put(Item{Key: exhaustedKey(day, b), Data: []byte(day), ExpiresAt: s.Now().Add(budgetTTL).Unix()}, Always))
}

// NicheChannels returns the niche's channels as its last discovery found them, if stored and younger than
// research.KnownChannelsFor (an adapter may keep an expired item a while; it is not returned).
func (s *Store) NicheChannels(ctx context.Context, key string) (research.KnownChannels, bool, error) {
	var r nicheChannelsRecord
	if _, err := s.getJSON(ctx, Key{PK: nichePK(key), SK: skNicheChannels}, &r); errors.Is(err, ErrNotFound) {
		return research.KnownChannels{}, false, nil
	} else if err != nil {
		return research.KnownChannels{}, false, err
	}
	if !s.Now().Before(r.DiscoveredAt.Add(research.KnownChannelsFor)) {
		return research.KnownChannels{}, false, nil
	}
	return research.KnownChannels{Key: key, IDs: r.IDs, DiscoveredAt: r.DiscoveredAt}, true, nil
}

type nicheChannelsRecord struct {
	IDs          []string  `json:"ids"`
	DiscoveredAt time.Time `json:"discoveredAt"`
}

// DueResearch returns the scheduler's entries due at or before `until`, oldest first, at most limit.
func (s *Store) DueResearch(ctx context.Context, until time.Time, limit int) ([]research.Due, error) {
	var out []research.Due
	q := Query{PK: schedulePK, Prefix: prefixDue, Limit: limit}
	for len(out) < limit {
		page, err := s.t.Query(ctx, q)
		if err != nil {
			return nil, err
		}
		for _, it := range page.Items {
			d, err := parseDue(it.SK)
			if err != nil {
				return nil, err
			}
			if d.At.After(until) || len(out) == limit {
				return out, nil
			}
			out = append(out, d)
		}
		if page.Next == "" {
			break
		}
		q.Cursor = page.Next
	}
	return out, nil
}

func parseDue(sk string) (research.Due, error) {
	rest, _ := strings.CutPrefix(sk, prefixDue)
	ms, ch, ok := strings.Cut(rest, "#")
	n, err := strconv.ParseInt(ms, 10, 64)
	if !ok || err != nil {
		return research.Due{}, fmt.Errorf("research: malformed schedule entry %q", sk)
	}
	ch, kick := strings.CutSuffix(ch, kickSuffix)
	return research.Due{ChannelID: ch, At: time.UnixMilli(n).UTC(), Kick: kick}, nil
}

// IndexResearchStates puts every channel's research state that has a next visit (State.VisitAt) in the
// scheduler's index, and returns how many: a one-off migration (infra/admin index-research) for states that
// left the index before research expired (decision 49: a channel without keywords holding research), as
// the table is scanned for them. An entry already there is written again unchanged.
func (s *Store) IndexResearchStates(ctx context.Context) (int, error) {
	sc, ok := s.t.(Scanner)
	if !ok {
		return 0, fmt.Errorf("index research states: %T cannot list partitions", s.t)
	}
	pks, err := sc.PartitionsWith(ctx, channelPK(""), skResearch)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, pk := range pks {
		channelID := strings.TrimPrefix(pk, channelPK(""))
		st, err := s.ResearchState(ctx, channelID)
		if err != nil {
			return n, err
		}
		if at := st.VisitAt(); !at.IsZero() {
			if err := s.write(ctx, Put(Item{Key: dueKey(at, channelID), Data: []byte(channelID)}, Always)); err != nil {
				return n, err
			}
			n++
		}
	}
	return n, nil
}

// DeleteResearchDue removes an entry from the scheduler's index (a handled keyword change, or an entry no
// state names).
func (s *Store) DeleteResearchDue(ctx context.Context, d research.Due) error {
	k := dueKey(d.At, d.ChannelID)
	if d.Kick {
		k.SK += kickSuffix
	}
	return s.write(ctx, Delete(k, Always))
}

// kickOp asks the scheduler for a run of the channel now (a keyword change, decision 33).
func (s *Store) kickOp(channelID string) Op {
	k := dueKey(s.Now(), channelID)
	k.SK += kickSuffix
	return Put(Item{Key: k, Data: []byte(channelID)}, Always)
}

// chunk packs JSON records into arrays of at most chunkBytes each.
func chunk(records []json.RawMessage) ([][]byte, error) {
	var out [][]byte
	var cur bytes.Buffer
	flush := func() {
		if cur.Len() > 0 {
			cur.WriteByte(']')
			out = append(out, append([]byte{format2}, cur.Bytes()...))
			cur.Reset()
		}
	}
	for _, r := range records {
		if len(r)+2 > chunkBytes {
			return nil, fmt.Errorf("research: a record of %d bytes is over the %d of a chunk", len(r), chunkBytes)
		}
		if cur.Len()+len(r)+2 > chunkBytes {
			flush()
		}
		if cur.Len() == 0 {
			cur.WriteByte('[')
		} else {
			cur.WriteByte(',')
		}
		cur.Write(r)
	}
	flush()
	return out, nil
}

func unchunk(items []Item) ([]json.RawMessage, error) {
	var out []json.RawMessage
	for _, it := range items {
		var part []json.RawMessage
		if err := decode(it, &part); err != nil {
			return nil, err
		}
		out = append(out, part...)
	}
	return out, nil
}

func videoChunks(vs []research.Video) ([][]byte, error) {
	records := make([]json.RawMessage, len(vs))
	for i, v := range vs {
		b, err := json.Marshal(researchVideoRecordOf(v))
		if err != nil {
			return nil, err
		}
		records[i] = b
	}
	return chunk(records)
}

func decodeVideoChunks(items []Item) ([]research.Video, error) {
	var out []research.Video
	for _, it := range items {
		var part []researchVideoRecord
		if err := decode(it, &part); err != nil {
			return nil, err
		}
		for _, r := range part {
			out = append(out, r.video())
		}
	}
	return out, nil
}
