// Package brief holds the material a prompt is written from: the channel's data and what one call asks.
// The generation side fills it (generation.Brief is this type); the model port carries it typed
// (ai.Request.Brief), so neither the port nor an adapter imports generation. Network models read the
// prompt text rendered from it; the local stack's offline model writes from it directly, so both
// personalise from the same facts.
package brief

import (
	"encoding/json"

	"github.com/creatorstrategy/css/shared/profile"
)

// Brief is the material of one model call, trimmed to the prompt budget by generation's Assembler.
type Brief struct {
	Task     string `json:"task"`     // one of generation's Task constants
	Language string `json:"language"` // the channel's contentLanguage: write in it (decision 20)

	Profile profile.NicheProfile `json:"profile"`
	Notes   []Note               `json:"notes,omitempty"`  // creator notes, most important first
	Series  *Series              `json:"series,omitempty"` // the series named by seriesId
	// OwnResults is a connected channel's own best and worst recent videos (decision 45): its own
	// results, which outrank the research of other channels (Patterns, Outliers).
	OwnResults *OwnResults `json:"ownResults,omitempty"`
	Patterns   string      `json:"patterns,omitempty"` // research patterns for this content kind
	Outliers   []Outlier   `json:"outliers,omitempty"` // the niche's strongest research videos
	Recent     []string    `json:"recent,omitempty"`   // recent outputs of the same tool: do not repeat them

	// Input is the tool's request body, validated against the contract (e.g. a contract.TitlesRequest).
	Input json.RawMessage `json:"input"`

	// What the call asks beyond the input.
	VideoType    string          `json:"videoType,omitempty"`    // TaskTitles: "Long" or "Short"
	Transcript   string          `json:"transcript,omitempty"`   // tools reading a video's words
	Items        []string        `json:"items,omitempty"`        // grading: the texts to grade, by index
	GradedTool   string          `json:"gradedTool,omitempty"`   // TaskGradeContent: the tool that wrote Items[0]
	Original     json.RawMessage `json:"original,omitempty"`     // TaskRefine: the output to refine
	OriginalTask string          `json:"originalTask,omitempty"` // TaskRefine: the task that wrote it
	Feedback     string          `json:"feedback,omitempty"`     // TaskRefine
	SpecificItem string          `json:"specificItem,omitempty"` // TaskRefine: narrows the refinement

	// Research analysis (the pattern tasks) and idea writing (TaskIdeas).
	Kind        string   `json:"kind,omitempty"`        // pattern tasks: the ResearchPatterns field written
	Videos      []Video  `json:"videos,omitempty"`      // pattern tasks: the kind's strongest outliers, strongest first
	Count       int      `json:"count,omitempty"`       // TaskIdeas: how many ideas to write
	ContentType string   `json:"contentType,omitempty"` // TaskIdeas: the one format asked for ("" for any)
	Taken       []string `json:"taken,omitempty"`       // TaskIdeas: titles the backlog and the pipeline hold
}

// Note is a creator note as a prompt sees it.
type Note struct {
	Category string `json:"category"`
	Content  string `json:"content"`
}

// Series is the series a script follows.
type Series struct {
	Name          string `json:"name"`
	Description   string `json:"description,omitempty"`
	ScriptFormula string `json:"scriptFormula,omitempty"`
}

// Video is a research video as pattern analysis reads it: the writer fills the fields its content
// kind looks at and leaves the others empty, so a prompt carries only what its kind needs.
type Video struct {
	Title           string   `json:"title"`
	URL             string   `json:"url,omitempty"` // the video's address: the one URL a pattern about it may cite
	ChannelTitle    string   `json:"channelTitle,omitempty"`
	Views           int64    `json:"views"`
	Score           float64  `json:"score"` // views ÷ the median views of its channel's recent uploads
	ViewsPerDay     float64  `json:"viewsPerDay,omitempty"`
	ContentType     string   `json:"contentType,omitempty"`
	DurationSeconds int      `json:"durationSeconds,omitempty"`
	AgeDays         int      `json:"ageDays,omitempty"` // days since publishing
	Formula         string   `json:"formula,omitempty"` // the title's formula (research.FormulaOf)
	Description     string   `json:"description,omitempty"`
	Tags            []string `json:"tags,omitempty"`
}

// Outlier is a research video that did far better than its channel's usual.
type Outlier struct {
	Title       string  `json:"title"`
	URL         string  `json:"url,omitempty"`
	Views       int64   `json:"views"`
	Score       float64 `json:"score"` // views ÷ the median views of its channel's recent uploads
	ContentType string  `json:"contentType,omitempty"`
}

// OwnResults is how the channel's own reviewed videos of the last 90 days did: up to 5 best and 5 worst
// by own outlier score (views at 7 or 28 days ÷ the channel's median at that age).
type OwnResults struct {
	Label string     `json:"label"` // says whose results these are
	Best  []OwnVideo `json:"best"`
	Worst []OwnVideo `json:"worst"`
	// TitlePatterns are its own title patterns by day-28 click-through rate, highest first (decision 52);
	// only the title tools get them.
	TitlePatterns []TitlePattern `json:"titlePatterns,omitempty"`
	// LostViewers is where those videos lost viewers (their steepest retention drop and the words spoken
	// there); the assembler keeps it for the tools that write or fix a video's words (scripts, hooks,
	// reoptimize). SearchTerms are what viewers searched YouTube for before watching the channel, over
	// SearchPeriod (decision 53).
	LostViewers  []LostViewer `json:"lostViewers,omitempty"`
	SearchTerms  []SearchTerm `json:"searchTerms,omitempty"`
	SearchPeriod string       `json:"searchPeriod,omitempty"`
}

// TitlePattern is one of the channel's title patterns (listicle, how-to, question, ...) with the mean
// impressions CTR of its videos 28 days after publishing (a fraction), how many videos, and its best title.
type TitlePattern struct {
	Pattern        string  `json:"pattern"`
	Videos         int     `json:"videos"`
	ImpressionsCTR float64 `json:"impressionsCtr"`
	BestTitle      string  `json:"bestTitle"`
}

// LostViewer is a moment one of the channel's own videos lost viewers.
type LostViewer struct {
	Title       string  `json:"title"`
	At          string  `json:"at"`          // M:SS into the video
	PercentLost float64 `json:"percentLost"` // of the starting audience
	Caption     string  `json:"caption,omitempty"`
}

// SearchTerm is one of the channel's own YouTube search terms and the views it brought.
type SearchTerm struct {
	Term  string `json:"term"`
	Views int64  `json:"views"`
}

// OwnVideo is one of the channel's own reviewed videos.
type OwnVideo struct {
	Title           string  `json:"title"`
	ContentType     string  `json:"contentType,omitempty"`
	FormulaType     string  `json:"formulaType,omitempty"`
	Series          string  `json:"series,omitempty"`
	OwnOutlierScore float64 `json:"ownOutlierScore"`
}
