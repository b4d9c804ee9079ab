package store

import (
	"time"

	"github.com/creatorstrategy/css/shared/quota"
	"github.com/creatorstrategy/css/shared/research"
)

// Stored formats of research (format 2). The state's patterns stay at the top level, where the
// patternsRecord of earlier builds put them, so an item written before runs existed reads as a state with
// those patterns and nothing else.

type researchStateRecord struct {
	patternsRecord
	Set          *setRecord `json:"set,omitempty"`
	ActiveRun    string     `json:"activeRun,omitempty"`
	LeaseUntil   time.Time  `json:"leaseUntil,omitzero"`
	DueAt        time.Time  `json:"dueAt,omitzero"`
	StartedAt    time.Time  `json:"startedAt,omitzero"`
	ResearchedAt time.Time  `json:"researchedAt,omitzero"`
	LastRunID    string     `json:"lastRunId,omitempty"`
	RunsDay      string     `json:"runsDay,omitempty"`
	RunsOnDay    int        `json:"runsOnDay,omitempty"`
	OldRunsSwept bool       `json:"oldRunsSwept,omitempty"`
}

type setRecord struct {
	RunID     string    `json:"runId"`
	Chunks    int       `json:"chunks"`
	Videos    int       `json:"videos"`
	Source    string    `json:"source"`
	FetchedAt time.Time `json:"fetchedAt"`
	DataAt    time.Time `json:"dataAt,omitzero"`
}

func researchStateRecordOf(s research.State) researchStateRecord {
	r := researchStateRecord{patternsRecord: patternsRecordOf(s.Patterns), ActiveRun: s.ActiveRun, LeaseUntil: s.LeaseUntil,
		DueAt: s.DueAt, StartedAt: s.StartedAt, ResearchedAt: s.ResearchedAt, LastRunID: s.LastRunID,
		RunsDay: s.RunsDay, RunsOnDay: s.RunsOnDay, OldRunsSwept: s.OldRunsSwept}
	if s.Set != nil {
		set := setRecord(*s.Set)
		r.Set = &set
	}
	return r
}

func (r researchStateRecord) state() research.State {
	s := research.State{Patterns: r.patternsRecord.patterns(), ActiveRun: r.ActiveRun, LeaseUntil: r.LeaseUntil,
		DueAt: r.DueAt, StartedAt: r.StartedAt, ResearchedAt: r.ResearchedAt, LastRunID: r.LastRunID,
		RunsDay: r.RunsDay, RunsOnDay: r.RunsOnDay, OldRunsSwept: r.OldRunsSwept}
	if r.Set != nil {
		set := research.SetRef(*r.Set)
		s.Set = &set
	}
	return s
}

type researchRunRecord struct {
	ID           string               `json:"id"`
	Status       string               `json:"status"`
	Trigger      string               `json:"trigger"`
	Source       string               `json:"source"`
	Keywords     []string             `json:"keywords"`
	Language     string               `json:"language"`
	Focus        string               `json:"focus,omitempty"`
	NicheKey     string               `json:"nicheKey,omitempty"`
	Reused       bool                 `json:"reused,omitempty"`
	Discovery    string               `json:"discovery,omitempty"`
	Steps        []researchStepRecord `json:"steps"`
	UnitsSpent   int                  `json:"unitsSpent"`
	SearchCalls  int                  `json:"searchCalls,omitempty"`
	StatsCalls   int                  `json:"statsCalls,omitempty"`
	VideoCount   int                  `json:"videoCount"`
	WaitingUntil *time.Time           `json:"waitingUntil,omitempty"`
	Message      string               `json:"message,omitempty"`
	CreatedAt    time.Time            `json:"createdAt"`
	UpdatedAt    time.Time            `json:"updatedAt"`
	FinishedAt   *time.Time           `json:"finishedAt,omitempty"`
	Next         int                  `json:"next"`
	ClaimMessage string               `json:"claimMessage,omitempty"`
	ClaimUntil   time.Time            `json:"claimUntil,omitzero"`
	CommittedBy  string               `json:"committedBy,omitempty"`
	Emitted      int                  `json:"emitted"`
	Reserved     reservationRecord    `json:"reserved,omitzero"`
	Charged      chargeRecord         `json:"charged,omitzero"`
	Patterns     patternsRecord       `json:"patterns,omitzero"`
	Set          *setRecord           `json:"set,omitempty"`
	Replaced     string               `json:"replaced,omitempty"`
}

type researchStepRecord struct {
	Name        string         `json:"name"`
	Status      string         `json:"status"`
	Counts      map[string]int `json:"counts,omitempty"`
	UnitsSpent  int            `json:"unitsSpent,omitempty"`
	SearchCalls int            `json:"searchCalls,omitempty"`
	StatsCalls  int            `json:"statsCalls,omitempty"`
	FinishedAt  *time.Time     `json:"finishedAt,omitempty"`
}

// chargeRecord and reservationRecord keep the units bucket in the fields records had before quota had
// buckets, so runs stored then read as what they were.
type chargeRecord struct {
	Account  string `json:"account"`
	Day      string `json:"day"`
	Units    int    `json:"units"`
	Searches int    `json:"searches,omitempty"`
	Stats    int    `json:"stats,omitempty"`
}

type reservationRecord struct {
	Day           string `json:"day"`
	Units         int    `json:"units"`
	Spent         int    `json:"spent"`
	Searches      int    `json:"searches,omitempty"`
	SpentSearches int    `json:"spentSearches,omitempty"`
	Stats         int    `json:"stats,omitempty"`
	SpentStats    int    `json:"spentStats,omitempty"`
}

func chargeRecordOf(c research.AccountCharge) chargeRecord {
	return chargeRecord{Account: c.Account, Day: c.Day, Units: c.Cost.Units, Searches: c.Cost.Searches, Stats: c.Cost.Stats}
}

func (r chargeRecord) charge() research.AccountCharge {
	return research.AccountCharge{Account: r.Account, Day: r.Day, Cost: quota.Cost{Units: r.Units, Searches: r.Searches, Stats: r.Stats}}
}

func reservationRecordOf(r research.Reservation) reservationRecord {
	return reservationRecord{Day: r.Day, Units: r.Cost.Units, Spent: r.Spent.Units, Searches: r.Cost.Searches,
		SpentSearches: r.Spent.Searches, Stats: r.Cost.Stats, SpentStats: r.Spent.Stats}
}

func (r reservationRecord) reservation() research.Reservation {
	return research.Reservation{Day: r.Day, Cost: quota.Cost{Units: r.Units, Searches: r.Searches, Stats: r.Stats},
		Spent: quota.Cost{Units: r.Spent, Searches: r.SpentSearches, Stats: r.SpentStats}}
}

func researchRunRecordOf(r research.Run) researchRunRecord {
	rec := researchRunRecord{
		ID: r.ID, Status: string(r.Status), Trigger: r.Trigger, Source: r.Source, Keywords: r.Niche.Keywords,
		Language: r.Niche.Language, Focus: r.Niche.Focus, NicheKey: r.NicheKey, Reused: r.Reused, Discovery: string(r.Discovery),
		Steps: make([]researchStepRecord, len(r.Steps)), UnitsSpent: r.Spent.Units, SearchCalls: r.Spent.Searches,
		StatsCalls: r.Spent.Stats, VideoCount: r.VideoCount,
		WaitingUntil: r.WaitingUntil, Message: r.Message, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt,
		FinishedAt: r.FinishedAt, Next: r.Next, ClaimMessage: r.Claim.MessageID, ClaimUntil: r.Claim.Until, CommittedBy: r.CommittedBy,
		Emitted: r.Emitted, Reserved: reservationRecordOf(r.Reserved), Charged: chargeRecordOf(r.Charged), Patterns: patternsRecordOf(r.Patterns),
		Replaced: r.Replaced,
	}
	if r.Set != nil {
		set := setRecord(*r.Set)
		rec.Set = &set
	}
	for i, s := range r.Steps {
		rec.Steps[i] = researchStepRecord{Name: s.Name, Status: string(s.Status), Counts: s.Counts,
			UnitsSpent: s.UnitsSpent, SearchCalls: s.SearchCallsSpent, StatsCalls: s.StatsCallsSpent, FinishedAt: s.FinishedAt}
	}
	return rec
}

func (rec researchRunRecord) run(channelID string) research.Run {
	r := research.Run{
		ID: rec.ID, ChannelID: channelID, Status: research.Status(rec.Status), Trigger: rec.Trigger, Source: rec.Source,
		Niche:    research.Niche{Keywords: rec.Keywords, Language: rec.Language, Focus: rec.Focus},
		NicheKey: rec.NicheKey, Reused: rec.Reused, Discovery: research.Discovery(rec.Discovery), Steps: make([]research.Step, len(rec.Steps)),
		Spent: quota.Cost{Units: rec.UnitsSpent, Searches: rec.SearchCalls, Stats: rec.StatsCalls}, VideoCount: rec.VideoCount, WaitingUntil: rec.WaitingUntil, Message: rec.Message,
		CreatedAt: rec.CreatedAt, UpdatedAt: rec.UpdatedAt, FinishedAt: rec.FinishedAt, Next: rec.Next,
		Claim: research.Claim{MessageID: rec.ClaimMessage, Until: rec.ClaimUntil}, CommittedBy: rec.CommittedBy,
		Emitted: rec.Emitted, Reserved: rec.Reserved.reservation(), Charged: rec.Charged.charge(), Patterns: rec.Patterns.patterns(),
		Replaced: rec.Replaced,
	}
	if rec.Set != nil {
		set := research.SetRef(*rec.Set)
		r.Set = &set
	}
	for i, s := range rec.Steps {
		counts := s.Counts
		if counts == nil {
			counts = map[string]int{}
		}
		r.Steps[i] = research.Step{Name: s.Name, Status: research.StepStatus(s.Status), Counts: counts,
			UnitsSpent: s.UnitsSpent, SearchCallsSpent: s.SearchCalls, StatsCallsSpent: s.StatsCalls, FinishedAt: s.FinishedAt}
	}
	return r
}

// researchVideoRecord is a research video (format 2), in short names: a set holds up to 500 of them.
type researchVideoRecord struct {
	ID           string    `json:"id"`
	Title        string    `json:"t"`
	URL          string    `json:"u"`
	ChannelID    string    `json:"c"`
	ChannelTitle string    `json:"ct"`
	Views        int64     `json:"v"`
	Likes        int64     `json:"l,omitempty"`
	Comments     int64     `json:"cm,omitempty"`
	PublishedAt  time.Time `json:"p"`
	ContentType  string    `json:"k"`
	Duration     int       `json:"d"`
	Outlier      float64   `json:"o"`
	Median       float64   `json:"m"`
	Sample       int       `json:"n"`
	PerDay       float64   `json:"vd"`
	Thumbnail    string    `json:"th,omitempty"`
	Description  string    `json:"de,omitempty"`
	Tags         []string  `json:"tg,omitempty"`
	Source       string    `json:"s"`
	SnippetAt    time.Time `json:"sa,omitzero"`
}

func researchVideoRecordOf(v research.Video) researchVideoRecord {
	return researchVideoRecord{ID: v.VideoID, Title: v.Title, URL: v.URL, ChannelID: v.ChannelID, ChannelTitle: v.ChannelTitle,
		Views: v.Views, Likes: v.Likes, Comments: v.Comments, PublishedAt: v.PublishedAt, ContentType: v.ContentType,
		Duration: v.DurationSeconds, Outlier: v.OutlierScore, Median: v.ChannelMedianViews, Sample: v.SampleSize,
		PerDay: v.ViewsPerDay, Thumbnail: v.ThumbnailURL, Description: v.Description, Tags: v.Tags, Source: v.Source,
		SnippetAt: v.SnippetAt}
}

func (r researchVideoRecord) video() research.Video {
	return research.Video{VideoID: r.ID, Title: r.Title, URL: r.URL, ChannelID: r.ChannelID, ChannelTitle: r.ChannelTitle,
		Views: r.Views, Likes: r.Likes, Comments: r.Comments, PublishedAt: r.PublishedAt, ContentType: r.ContentType,
		DurationSeconds: r.Duration, OutlierScore: r.Outlier, ChannelMedianViews: r.Median, SampleSize: r.Sample,
		ViewsPerDay: r.PerDay, ThumbnailURL: r.Thumbnail, Description: r.Description, Tags: r.Tags, Source: r.Source,
		SnippetAt: r.SnippetAt}
}

type nicheRecord struct {
	Key       string    `json:"key"`
	Set       setRecord `json:"set"`
	ChannelID string    `json:"channelId"`
}

func nicheRecordOf(n research.NicheResearch) nicheRecord {
	return nicheRecord{Key: n.Key, Set: setRecord(n.Set), ChannelID: n.ChannelID}
}

func (r nicheRecord) niche() research.NicheResearch {
	return research.NicheResearch{Key: r.Key, Set: research.SetRef(r.Set), ChannelID: r.ChannelID}
}
