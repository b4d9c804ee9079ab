package mcp

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/creatorstrategy/css/shared/auth"
	"github.com/creatorstrategy/css/shared/contract"
	"github.com/creatorstrategy/css/shared/planning"
	"github.com/creatorstrategy/css/shared/videos"
)

type planWeekInput struct {
	WeekStart string `json:"weekStart,omitempty" jsonschema:"a date in the week to plan (YYYY-MM-DD; weeks start on Sunday); default this week"`
	Apply     bool   `json:"apply,omitempty" jsonschema:"true: commit the backlog picks and write the assignments; false (default): only propose"`
}

type weekInput struct {
	WeekStart string `json:"weekStart,omitempty" jsonschema:"a date in the week (YYYY-MM-DD; weeks start on Sunday); default this week"`
}

// slotRef names a publish slot of the week.
type slotRef struct {
	DayOfWeek   int     `json:"dayOfWeek"`
	PublishTime *string `json:"publishTime"`
	ContentType *string `json:"contentType"`
	Date        string  `json:"date"`
}

// proposal is one slot filled by plan_my_week.
type proposal struct {
	slotRef
	Source  string `json:"source"` // pipeline or backlog
	VideoID string `json:"videoId,omitempty"`
	IdeaID  string `json:"ideaId,omitempty"`
	Title   string `json:"title"`
	Status  string `json:"status,omitempty"` // the video's pipeline status (pipeline picks)
	// Applied and Error report what apply did.
	Applied bool   `json:"applied,omitempty"`
	Error   string `json:"error,omitempty"`
}

type weekPlan struct {
	WeekStart       string     `json:"weekStart"`
	Applied         bool       `json:"applied"`
	Proposals       []proposal `json:"proposals"`
	EmptySlots      []slotRef  `json:"emptySlots"`
	AlreadyAssigned int        `json:"alreadyAssigned"`
}

// statusRank orders pipeline videos for publishing: the furthest along first.
var statusRank = map[string]int{"edited": 0, "filmed": 1, "scripted": 2, "planned": 3}

// planMyWeek fills the week's empty publish slots: videos already in the pipeline first (the furthest
// along, then the oldest), then backlog ideas, each matching the slot's content type.
func (s *server) planMyWeek(ctx context.Context, p auth.Principal, args json.RawMessage) (any, string, error) {
	var in planWeekInput
	if err := decode(args, &in); err != nil {
		return nil, "", err
	}
	view, err := s.schedule(ctx, p, in.WeekStart)
	if err != nil {
		return nil, "", err
	}
	var vids struct {
		Videos []videos.Video `json:"videos"`
	}
	if err := s.read(ctx, p, "listMyVideos", nil, &vids); err != nil {
		return nil, "", err
	}
	var ideas struct {
		Ideas []videos.Idea `json:"ideas"`
	}
	if err := s.read(ctx, p, "listVideoIdeas", map[string]any{"limit": 100}, &ideas); err != nil {
		return nil, "", err
	}
	assigned := map[string]bool{}
	plan := weekPlan{WeekStart: view.WeekStart, Proposals: []proposal{}, EmptySlots: []slotRef{}}
	for _, sl := range view.Slots {
		if sl.AssignedVideoID != nil {
			assigned[*sl.AssignedVideoID] = true
			if sl.SlotType == planning.Publish {
				plan.AlreadyAssigned++
			}
		}
	}
	pipeline := slices.DeleteFunc(vids.Videos, func(v videos.Video) bool {
		_, publishable := statusRank[string(v.Status)]
		return !publishable || assigned[v.ID]
	})
	slices.SortStableFunc(pipeline, func(a, b videos.Video) int {
		return cmp.Or(cmp.Compare(statusRank[string(a.Status)], statusRank[string(b.Status)]), a.CreatedAt.Compare(b.CreatedAt))
	})
	backlog := ideas.Ideas
	for _, sl := range publishSlots(view) {
		ref := slotRef{DayOfWeek: sl.DayOfWeek, PublishTime: sl.PublishTime, ContentType: sl.ContentType,
			Date: slotDate(view.WeekStart, sl.DayOfWeek)}
		if i := slices.IndexFunc(pipeline, func(v videos.Video) bool { return fits(sl, v.ContentType) }); i >= 0 {
			v := pipeline[i]
			pipeline = slices.Delete(pipeline, i, i+1)
			plan.Proposals = append(plan.Proposals, proposal{slotRef: ref, Source: "pipeline", VideoID: v.ID, Title: v.Title, Status: string(v.Status)})
			continue
		}
		if i := slices.IndexFunc(backlog, func(idea videos.Idea) bool { return fits(sl, idea.ContentType) }); i >= 0 {
			idea := backlog[i]
			backlog = slices.Delete(backlog, i, i+1)
			plan.Proposals = append(plan.Proposals, proposal{slotRef: ref, Source: "backlog", IdeaID: idea.ID, Title: idea.Title})
			continue
		}
		plan.EmptySlots = append(plan.EmptySlots, ref)
	}
	if in.Apply {
		plan.Applied = true
		for i := range plan.Proposals {
			s.applyProposal(ctx, p, view.WeekStart, &plan.Proposals[i])
		}
	}
	verb := "Proposed"
	if in.Apply {
		verb = "Planned"
	}
	return plan, fmt.Sprintf("%s %d of the week of %s's empty publish slots; %d left empty, %d already assigned.",
		verb, len(plan.Proposals), plan.WeekStart, len(plan.EmptySlots), plan.AlreadyAssigned), nil
}

// applyProposal commits a backlog pick and assigns the video to its slot; a failure stays on the proposal.
func (s *server) applyProposal(ctx context.Context, p auth.Principal, week string, pr *proposal) {
	if pr.Source == "backlog" {
		var v videos.Video
		if err := s.read(ctx, p, "commitVideo", map[string]any{"ideaId": pr.IdeaID}, &v); err != nil {
			pr.Error = errorText(err)
			return
		}
		pr.VideoID = v.ID
	}
	err := s.read(ctx, p, "upsertScheduleSlot", map[string]any{
		"dayOfWeek": pr.DayOfWeek, "slotType": string(planning.Publish), "contentType": pr.ContentType,
		"publishTime": pr.PublishTime, "assignedVideoId": pr.VideoID, "weekStart": week,
	}, nil)
	if err != nil {
		pr.Error = errorText(err)
		return
	}
	pr.Applied = true
}

// publishSlots are the week's publish slots without a video, by day and time.
func publishSlots(view planning.View) []planning.Slot {
	var out []planning.Slot
	for _, sl := range view.Slots {
		if sl.SlotType == planning.Publish && sl.AssignedVideoID == nil {
			out = append(out, sl)
		}
	}
	slices.SortStableFunc(out, func(a, b planning.Slot) int {
		return cmp.Or(cmp.Compare(a.DayOfWeek, b.DayOfWeek), cmp.Compare(contract.Value(a.PublishTime), contract.Value(b.PublishTime)))
	})
	return out
}

// fits reports whether content of type contentType may go into the slot: a slot without a type takes
// any video.
func fits(sl planning.Slot, contentType string) bool {
	return sl.ContentType == nil || *sl.ContentType == contentType
}

func slotDate(weekStart string, day int) string {
	d, err := time.Parse(time.DateOnly, weekStart)
	if err != nil {
		return ""
	}
	return d.AddDate(0, 0, day).Format(time.DateOnly)
}

// schedule reads a week of the schedule.
func (s *server) schedule(ctx context.Context, p auth.Principal, weekStart string) (planning.View, error) {
	var args map[string]any
	if weekStart != "" {
		args = map[string]any{"weekStart": weekStart}
	}
	var view planning.View
	err := s.read(ctx, p, "getSchedule", args, &view)
	return view, err
}

// read runs an operation and decodes its response into out (nil: ignored).
func (s *server) read(ctx context.Context, p auth.Principal, opID string, args any, out any) error {
	if args == nil {
		args = map[string]any{}
	}
	body, _, err := s.callWith(ctx, p, opID, args)
	if err != nil {
		return err
	}
	if out == nil || len(body) == 0 {
		return nil
	}
	return json.Unmarshal(body, out)
}
