package store

import (
	"encoding/json"
	"time"

	"github.com/creatorstrategy/css/shared/generation"
	"github.com/creatorstrategy/css/shared/notes"
	"github.com/creatorstrategy/css/shared/planning"
	"github.com/creatorstrategy/css/shared/research"
	"github.com/creatorstrategy/css/shared/videos"
)

// The records below are the stored format 2 of each entity, declared here so the stored shape changes only
// when the store decides it, never as a side effect of a change to an API or domain type. Where a record
// is converted from its domain type with a plain Go conversion, the conversion compiles only while both
// have the same fields: a field added to the domain type breaks the build here, where its stored format
// (a new record format, or a default for the records without it) is decided.

// convertEach converts each element of in with to; nil when in is empty.
func convertEach[A, B any](in []A, to func(A) B) []B {
	if len(in) == 0 {
		return nil
	}
	out := make([]B, len(in))
	for i, a := range in {
		out[i] = to(a)
	}
	return out
}

// videoRecord is a video, format 2. Its JSON is byte for byte the MyVideo shape that json.Marshal gives a
// videos.Video (a test holds them together), so lists serve stored videos of this format as they are.
type videoRecord struct {
	ID            string               `json:"id"`
	Title         string               `json:"title"`
	ContentType   string               `json:"contentType"`
	FormulaType   string               `json:"formulaType"`
	Status        string               `json:"status"`
	SeriesID      *string              `json:"seriesId"`
	CreatedAt     time.Time            `json:"createdAt"`
	UpdatedAt     time.Time            `json:"updatedAt"`
	StatusHistory []statusChangeRecord `json:"statusHistory"`
	// The link to the upload and its reviews (decision 44): absent on videos never linked, so the stored
	// record stays the MyVideo shape lists serve as they are.
	YouTubeVideoID *string        `json:"youtubeVideoId,omitempty"`
	Reviews        []reviewRecord `json:"reviews,omitempty"`
}

type reviewRecord struct {
	Day                   int       `json:"day"`
	Views                 int64     `json:"views"`
	OwnOutlierScore       *float64  `json:"ownOutlierScore"`
	AverageViewPercentage *float64  `json:"averageViewPercentage"`
	SubscribersGained     *int64    `json:"subscribersGained"`
	At                    time.Time `json:"at"`
	// Absent on reviews without reach or a title score, so records stay the VideoReview shape.
	Impressions    *int64   `json:"impressions,omitempty"`
	ImpressionsCTR *float64 `json:"impressionsCtr,omitempty"`
	TitleScore     *float64 `json:"titleScore,omitempty"`
	// Retention (decision 53): absent on reviews without it.
	DropPoints        []dropPointRecord `json:"dropPoints,omitempty"`
	RelativeRetention *float64          `json:"relativeRetention,omitempty"`
}

type dropPointRecord struct {
	AtSeconds    int     `json:"atSeconds"`
	ElapsedRatio float64 `json:"elapsedRatio"`
	ShareLost    float64 `json:"shareLost"`
	Caption      string  `json:"caption,omitempty"`
}

type statusChangeRecord struct {
	Status string    `json:"status"`
	At     time.Time `json:"at"`
}

func videoRecordOf(v videos.Video) videoRecord {
	r := videoRecord{
		ID: v.ID, Title: v.Title, ContentType: v.ContentType, FormulaType: v.FormulaType, Status: string(v.Status),
		SeriesID: v.SeriesID, CreatedAt: v.CreatedAt, UpdatedAt: v.UpdatedAt,
		StatusHistory: make([]statusChangeRecord, len(v.StatusHistory)),
	}
	for i, c := range v.StatusHistory {
		r.StatusHistory[i] = statusChangeRecord{Status: string(c.Status), At: c.At}
	}
	r.YouTubeVideoID = v.YouTubeVideoID
	for _, rv := range v.Reviews {
		r.Reviews = append(r.Reviews, reviewRecord{Day: rv.Day, Views: rv.Views, OwnOutlierScore: rv.OwnOutlierScore, AverageViewPercentage: rv.AverageViewPercentage,
			SubscribersGained: rv.SubscribersGained, At: rv.At, Impressions: rv.Impressions, ImpressionsCTR: rv.ImpressionsCTR,
			TitleScore: rv.TitleScore, RelativeRetention: rv.RelativeRetention,
			DropPoints: convertEach(rv.DropPoints, func(d videos.DropPoint) dropPointRecord { return dropPointRecord(d) })})
	}
	return r
}

func (r videoRecord) video() videos.Video {
	v := videos.Video{
		ID: r.ID, Title: r.Title, ContentType: r.ContentType, FormulaType: r.FormulaType, Status: videos.Status(r.Status),
		SeriesID: r.SeriesID, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt,
		StatusHistory: make([]videos.StatusChange, len(r.StatusHistory)),
	}
	for i, c := range r.StatusHistory {
		v.StatusHistory[i] = videos.StatusChange{Status: videos.Status(c.Status), At: c.At}
	}
	v.YouTubeVideoID = r.YouTubeVideoID
	for _, rv := range r.Reviews {
		v.Reviews = append(v.Reviews, videos.Review{Day: rv.Day, Views: rv.Views, OwnOutlierScore: rv.OwnOutlierScore, AverageViewPercentage: rv.AverageViewPercentage,
			SubscribersGained: rv.SubscribersGained, At: rv.At, Impressions: rv.Impressions, ImpressionsCTR: rv.ImpressionsCTR,
			TitleScore: rv.TitleScore, RelativeRetention: rv.RelativeRetention,
			DropPoints: convertEach(rv.DropPoints, func(d dropPointRecord) videos.DropPoint { return videos.DropPoint(d) })})
	}
	return v
}

// ideaRecord is a backlog idea, format 2.
type ideaRecord struct {
	ID          string         `json:"id"`
	Title       string         `json:"title"`
	ContentType string         `json:"contentType"`
	FormulaType string         `json:"formulaType"`
	InspiredBy  *string        `json:"inspiredBy"`
	ViewCount   *float64       `json:"viewCount"`
	CreatedAt   time.Time      `json:"createdAt"`
	Demand      *videos.Demand `json:"demand,omitempty"`
}

// seriesRecord is a content series, format 2.
type seriesRecord struct {
	ID            string    `json:"id"`
	Name          string    `json:"name"`
	Description   string    `json:"description"`
	ScriptFormula string    `json:"scriptFormula"`
	IsActive      bool      `json:"isActive"`
	VideoCount    int       `json:"videoCount"`
	CreatedAt     time.Time `json:"createdAt"`
	UpdatedAt     time.Time `json:"updatedAt"`
}

// noteRecord is a creator note, format 2.
type noteRecord struct {
	ID        string       `json:"id"`
	Category  string       `json:"category"`
	Content   string       `json:"content"`
	Source    notes.Source `json:"source"`
	CreatedAt time.Time    `json:"createdAt"`
}

// profileRecord is the niche profile, format 2.
type profileRecord struct {
	BroadNiche       string   `json:"broadNiche,omitempty"`
	FocusedNiche     string   `json:"focusedNiche,omitempty"`
	Slogan           string   `json:"slogan,omitempty"`
	NicheStatement   string   `json:"nicheStatement,omitempty"`
	Mission          string   `json:"mission,omitempty"`
	Purpose          string   `json:"purpose,omitempty"`
	Passion          string   `json:"passion,omitempty"`
	Keywords         []string `json:"keywords,omitempty"`
	InsiderTerms     []string `json:"insiderTerms,omitempty"`
	TargetAudience   string   `json:"targetAudience,omitempty"`
	ChannelGoals     string   `json:"channelGoals,omitempty"`
	PainPoints       string   `json:"painPoints,omitempty"`
	ProfitModel      string   `json:"profitModel,omitempty"`
	TopCompetitors   []string `json:"topCompetitors,omitempty"`
	Conferences      []string `json:"conferences,omitempty"`
	IndustrySpeakers []string `json:"industrySpeakers,omitempty"`
	Podcasters       []string `json:"podcasters,omitempty"`
	Sponsors         []string `json:"sponsors,omitempty"`
	ContentLanguage  string   `json:"contentLanguage,omitempty"`
}

// patternsRecord is the research patterns, format 2.
type patternsRecord struct {
	Titles       string `json:"titles,omitempty"`
	Thumbnails   string `json:"thumbnails,omitempty"`
	LongScripts  string `json:"longScripts,omitempty"`
	ShortScripts string `json:"shortScripts,omitempty"`
	Descriptions string `json:"descriptions,omitempty"`
	Ideas        string `json:"ideas,omitempty"`
	// Sources was added within format 2: absent in patterns stored before, which read without sources.
	Sources *patternSourcesRecord `json:"sources,omitempty"`
}

// patternSourcesRecord is the source videos of each pattern kind, format 2.
type patternSourcesRecord struct {
	Titles       []patternSourceRecord `json:"titles,omitempty"`
	Thumbnails   []patternSourceRecord `json:"thumbnails,omitempty"`
	LongScripts  []patternSourceRecord `json:"longScripts,omitempty"`
	ShortScripts []patternSourceRecord `json:"shortScripts,omitempty"`
	Descriptions []patternSourceRecord `json:"descriptions,omitempty"`
	Ideas        []patternSourceRecord `json:"ideas,omitempty"`
}

type patternSourceRecord struct {
	VideoID      string  `json:"videoId"`
	Title        string  `json:"title"`
	ChannelTitle string  `json:"channelTitle,omitempty"`
	URL          string  `json:"url,omitempty"`
	Views        int64   `json:"views"`
	OutlierScore float64 `json:"outlierScore"`
}

func patternsRecordOf(p research.Patterns) patternsRecord {
	r := patternsRecord{Titles: p.Titles, Thumbnails: p.Thumbnails, LongScripts: p.LongScripts, ShortScripts: p.ShortScripts,
		Descriptions: p.Descriptions, Ideas: p.Ideas}
	if s := p.Sources; s != nil {
		conv := func(vs []research.PatternSource) []patternSourceRecord {
			return convertEach(vs, func(v research.PatternSource) patternSourceRecord { return patternSourceRecord(v) })
		}
		r.Sources = &patternSourcesRecord{Titles: conv(s.Titles), Thumbnails: conv(s.Thumbnails), LongScripts: conv(s.LongScripts),
			ShortScripts: conv(s.ShortScripts), Descriptions: conv(s.Descriptions), Ideas: conv(s.Ideas)}
	}
	return r
}

func (r patternsRecord) patterns() research.Patterns {
	p := research.Patterns{Titles: r.Titles, Thumbnails: r.Thumbnails, LongScripts: r.LongScripts, ShortScripts: r.ShortScripts,
		Descriptions: r.Descriptions, Ideas: r.Ideas}
	if s := r.Sources; s != nil {
		conv := func(rs []patternSourceRecord) []research.PatternSource {
			return convertEach(rs, func(v patternSourceRecord) research.PatternSource { return research.PatternSource(v) })
		}
		p.Sources = &research.PatternSources{Titles: conv(s.Titles), Thumbnails: conv(s.Thumbnails), LongScripts: conv(s.LongScripts),
			ShortScripts: conv(s.ShortScripts), Descriptions: conv(s.Descriptions), Ideas: conv(s.Ideas)}
	}
	return p
}

// templateRecord is the weekly template, format 2.
type templateRecord struct {
	Slots []slotRecord `json:"slots"`
}

type slotRecord struct {
	DayOfWeek       int               `json:"dayOfWeek"`
	SlotType        planning.SlotType `json:"slotType"`
	ContentType     *string           `json:"contentType"`
	PublishTime     *string           `json:"publishTime"`
	AssignedVideoID *string           `json:"assignedVideoId"`
}

func templateRecordOf(t planning.Template) templateRecord {
	r := templateRecord{Slots: make([]slotRecord, len(t.Slots))}
	for i, s := range t.Slots {
		r.Slots[i] = slotRecord(s)
	}
	return r
}

func (r templateRecord) template() planning.Template {
	t := planning.Template{Slots: make([]planning.Slot, len(r.Slots))}
	for i, s := range r.Slots {
		t.Slots[i] = planning.Slot(s)
	}
	return t
}

// weekRecord is one week's assignments (slot identity -> video id), format 2.
type weekRecord struct {
	Start       string            `json:"start"`
	Assignments map[string]string `json:"assignments"`
}

// runRecord is a tool run, format 2: the whole generation record, whose JSON is the ToolRun shape, so a
// history page serves it as it is.
type runRecord struct {
	ID           string               `json:"id"`
	ToolName     string               `json:"toolName"`
	Status       generation.RunStatus `json:"status"`
	Input        json.RawMessage      `json:"input,omitempty"`
	Output       json.RawMessage      `json:"output,omitempty"`
	Error        *string              `json:"error,omitempty"` // added within format 2: absent in older items
	InputTokens  *int                 `json:"inputTokens"`
	OutputTokens *int                 `json:"outputTokens"`
	Model        *string              `json:"model"`
	GeneratedAt  time.Time            `json:"generatedAt"`
}
