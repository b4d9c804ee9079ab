package generation

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/creatorstrategy/css/shared/apperr"
	"github.com/creatorstrategy/css/shared/contract"
	"github.com/creatorstrategy/css/shared/videos"
)

// Backlog is the idea backlog as POST /generate/ideas uses it (store.Store).
type Backlog interface {
	// TakenTitles returns the titles of the channel's backlog and pipeline.
	TakenTitles(ctx context.Context, channelID string) ([]string, error)
	// ListIdeas returns the channel's backlog.
	ListIdeas(ctx context.Context, channelID string) ([]videos.Idea, error)
	// AddIdeas adds the ideas decision 32 admits (no title the backlog or the pipeline holds, at most
	// maxBacklog in all) and returns those added.
	AddIdeas(ctx context.Context, channelID string, ideas []videos.Idea, maxBacklog int) ([]videos.Idea, error)
}

// admitIdeas refuses a generation of ideas into a full backlog before it spends quota or a model call.
func (g *Generator) admitIdeas(ctx context.Context, channelID string) error {
	if g.cfg.Backlog == nil {
		return &apperr.Error{Code: apperr.GenerationFailed, Message: "the idea backlog is not configured in this function"}
	}
	ideas, err := g.cfg.Backlog.ListIdeas(ctx, channelID)
	if err != nil {
		return err
	}
	return fullBacklog(len(ideas))
}

// fullBacklog is the refusal of ideas into a backlog of n ideas, nil while it has room: the same answer
// before a run starts and, for runs that started while it had room, when another filled it meanwhile.
func fullBacklog(n int) error {
	if n >= videos.MaxBacklog {
		return apperr.New(apperr.Validation, "the idea backlog holds %d ideas, its most (decision 32); commit or dismiss some before generating more", n)
	}
	return nil
}

// draftIdeas is the ideas tool's one writer call: the brief carries the titles taken already, so the model
// does not spend ideas on them.
func draftIdeas(ctx context.Context, g *Generator, r *run) (json.RawMessage, error) {
	in := r.in.(*contract.IdeasRequest)
	taken, err := g.cfg.Backlog.TakenTitles(ctx, r.channelID)
	if err != nil {
		return nil, fmt.Errorf("generation: taken titles: %w", err)
	}
	var out json.RawMessage
	err = g.write(ctx, r, Brief{Task: TaskIdeas, Count: ideaCount(in), ContentType: string(contract.Value(in.ContentType)),
		Taken: takenForPrompt(taken)}, &out)
	return out, err
}

func ideaCount(in *contract.IdeasRequest) int {
	if in.Count == nil { // a body that skipped Validate's defaults
		return 10
	}
	return min(*in.Count, MaxIdeas)
}

// finishIdeas adds the drafted ideas to the backlog and answers the ones added. Their ids derive from the
// run's, so a job delivered again after adding them (a crash before the run completed) finds them and
// answers them instead of adding more.
func finishIdeas(ctx context.Context, g *Generator, r *run, draft json.RawMessage) (any, error) {
	ids := ideaIDs(r.id)
	index := make(map[string]int, len(ids))
	for i, id := range ids {
		index[id] = i
	}
	backlog, err := g.cfg.Backlog.ListIdeas(ctx, r.channelID)
	if err != nil {
		return nil, err
	}
	var before []videos.Idea
	for _, idea := range backlog {
		if _, ok := index[idea.ID]; ok {
			before = append(before, idea)
		}
	}
	if len(before) > 0 {
		slices.SortFunc(before, func(a, b videos.Idea) int { return index[a.ID] - index[b.ID] })
		return ideasResult(before), nil
	}

	var d IdeaDrafts
	if err := json.Unmarshal(draft, &d); err != nil {
		return nil, &apperr.Error{Code: apperr.GenerationFailed, Message: "the drafted ideas could not be read", Cause: err}
	}
	// The outliers the prompt numbered: the assembler takes the strongest first, so an index the prompt
	// showed names the same video here.
	var outs []Outlier
	if g.assembler.Outliers != nil {
		if outs, err = g.assembler.Outliers.Outliers(ctx, r.channelID, kindOf[ToolIdeas], maxOutliers); err != nil {
			return nil, fmt.Errorf("generation: outliers: %w", err)
		}
	}
	demand, err := g.demand(ctx, r.channelID)
	if err != nil {
		return nil, err
	}
	in := r.in.(*contract.IdeasRequest)
	now := g.cfg.Now().UTC().Truncate(time.Millisecond)
	var ideas []videos.Idea
	for i, dr := range d.Ideas[:min(len(d.Ideas), len(ids))] {
		idea := videos.Idea{ID: ids[i], Title: strings.TrimSpace(dr.Title), ContentType: dr.ContentType,
			FormulaType: strings.TrimSpace(dr.FormulaType), CreatedAt: now}
		if dr.Outlier != nil && *dr.Outlier < len(outs) {
			o := outs[*dr.Outlier]
			by := cutRunes(o.Title, 200) + " (" + o.URL + ")"
			if o.URL == "" {
				by = cutRunes(o.Title, 200)
			}
			views := float64(o.Views)
			idea.InspiredBy, idea.ViewCount = &by, &views
		}
		idea.Demand = demand(idea.Title)
		ideas = append(ideas, idea)
	}
	// The first `count` that are new: a repeated title does not take the place of a new one written
	// after it. AddIdeas applies the same rules again, against writers adding ideas meanwhile.
	taken, err := g.cfg.Backlog.TakenTitles(ctx, r.channelID)
	if err != nil {
		return nil, fmt.Errorf("generation: taken titles: %w", err)
	}
	ideas = videos.NewIdeas(ideas, taken, ideaCount(in))
	added, err := g.cfg.Backlog.AddIdeas(ctx, r.channelID, ideas, videos.MaxBacklog)
	if err != nil {
		return nil, fmt.Errorf("generation: add ideas: %w", err)
	}
	if len(added) == 0 && len(ideas) > 0 {
		// Nothing added though there were new ideas: concurrent runs filled the backlog since this one was
		// admitted (issue 19 item 13). It answers as a call at the cap does.
		backlog, err := g.cfg.Backlog.ListIdeas(ctx, r.channelID)
		if err != nil {
			return nil, err
		}
		if err := fullBacklog(len(backlog)); err != nil {
			return nil, err
		}
	}
	return ideasResult(added), nil
}

// demand returns what gives an idea its demand: the channel's own search term its title holds, the most
// viewed first (decision 53); none for a channel without own results.
func (g *Generator) demand(ctx context.Context, channelID string) (func(title string) *videos.Demand, error) {
	none := func(string) *videos.Demand { return nil }
	if g.assembler.Own == nil {
		return none, nil
	}
	own, err := g.assembler.Own.OwnResults(ctx, channelID)
	if err != nil {
		return nil, fmt.Errorf("generation: own results: %w", err)
	}
	if own == nil || len(own.SearchTerms) == 0 {
		return none, nil
	}
	terms := make([]string, len(own.SearchTerms))
	for i, t := range own.SearchTerms {
		terms[i] = t.Term
	}
	return func(title string) *videos.Demand {
		i := videos.MatchTerm(title, terms)
		if i < 0 {
			return nil
		}
		return &videos.Demand{Source: string(contract.IdeaDemandSourceOwnSearchTerms), Term: own.SearchTerms[i].Term,
			Views: own.SearchTerms[i].Views, Period: own.SearchPeriod}
	}, nil
}

func ideasResult(ideas []videos.Idea) contract.IdeasResult {
	out := contract.IdeasResult{Ideas: make([]contract.VideoIdea, len(ideas))}
	for i, idea := range ideas {
		out.Ideas[i] = videoIdea(idea)
	}
	return out
}

// videoIdea is a backlog idea as the contract's VideoIdea: inspiredBy and viewCount are null when unknown.
func videoIdea(i videos.Idea) contract.VideoIdea {
	v := contract.VideoIdea{ID: i.ID, Title: i.Title, ContentType: contract.ContentType(i.ContentType),
		FormulaType: i.FormulaType, CreatedAt: i.CreatedAt.Format(time.RFC3339Nano),
		InspiredBy: contract.Optional[string]{Set: true, Value: i.InspiredBy}, ViewCount: contract.Optional[int]{Set: true}}
	if i.ViewCount != nil {
		n := int(*i.ViewCount)
		v.ViewCount.Value = &n
	}
	if d := i.Demand; d != nil {
		v.Demand = &contract.IdeaDemand{Source: contract.IdeaDemandSource(d.Source), Term: d.Term, Views: int(d.Views), Period: d.Period}
	}
	return v
}

// ideaIDs are the ids of a run's ideas, by draft index: UUIDv7s that keep the run id's time (so the
// backlog, newest first, keeps them at the run's moment) and number the drafts in their random bits, the
// first highest (so they list in the order written), the rest a hash of the run id and the index.
func ideaIDs(runID string) []string {
	run, err := uuid.Parse(runID)
	out := make([]string, MaxIdeas)
	for i := range out {
		h := sha256.Sum256([]byte(fmt.Sprintf("idea/%s/%d", runID, i)))
		var id uuid.UUID
		copy(id[:6], run[:6])
		if err != nil { // not a UUID (a test's id): the hash alone tells runs apart
			copy(id[:6], h[10:16])
		}
		copy(id[8:], h[:8])
		seq := 0xfff - i
		id[6] = 0x70 | byte(seq>>8)&0x0f // version 7, then the 12 bits of rand_a
		id[7] = byte(seq)
		id[8] = id[8]&0x3f | 0x80 // RFC 9562 variant
		out[i] = id.String()
	}
	return out
}
