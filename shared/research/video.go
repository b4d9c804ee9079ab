package research

import (
	"cmp"
	"math"
	"slices"
	"time"
)

// MaxVideos is the most videos research keeps per niche (decision 29).
const MaxVideos = 500

// ShortMaxSeconds: a video is a Short when it lasts this long or less, else Long (decision 29).
const ShortMaxSeconds = 180

// Content types of research videos (two of the ContentType enum).
const (
	Long  = "Long"
	Short = "Short"
)

// ContentTypeOf says whether a video of this duration is Long or Short.
func ContentTypeOf(durationSeconds int) string {
	if durationSeconds <= ShortMaxSeconds {
		return Short
	}
	return Long
}

// Video is a research video: a recent video of the niche, scored against its own channel. Its JSON is the
// ResearchVideo of the API.
type Video struct {
	VideoID         string    `json:"videoId"`
	Title           string    `json:"title"`
	URL             string    `json:"url"`
	ChannelID       string    `json:"channelId"`
	ChannelTitle    string    `json:"channelTitle"`
	Views           int64     `json:"views"`
	Likes           int64     `json:"likes"`
	Comments        int64     `json:"comments"`
	PublishedAt     time.Time `json:"publishedAt"`
	ContentType     string    `json:"contentType"`
	DurationSeconds int       `json:"durationSeconds"`
	// OutlierScore is Views ÷ ChannelMedianViews: how far the video beat its channel's usual.
	OutlierScore float64 `json:"outlierScore"`
	// ChannelMedianViews is the median views of the channel's recent uploads that research fetched;
	// SampleSize is how many they were.
	ChannelMedianViews float64 `json:"channelMedianViews"`
	SampleSize         int     `json:"sampleSize"`
	ViewsPerDay        float64 `json:"viewsPerDay"`
	ThumbnailURL       string  `json:"thumbnailUrl,omitempty"`
	// Description (its first DescriptionChars characters) and Tags feed pattern analysis; the API leaves
	// them out.
	Description string   `json:"-"`
	Tags        []string `json:"-"`
	Source      string   `json:"source"`
	// SnippetAt is when the title, description and tags were read (zero: unknown, in sets stored before
	// it was kept).
	SnippetAt time.Time `json:"-"`
	// withheld: the derived figures above are left out of the API's JSON (decision 48).
	withheld bool
}

// DescriptionChars and MaxTags bound what research keeps of a video's description and tags, so 500
// videos stay a few hundred KB.
const (
	DescriptionChars = 300
	MaxTags          = 10
)

// Score turns fetched videos into research videos: each video's outlier score against the median views of
// its channel's videos in vs (the channel's recent uploads), its views per day since publishing, and its
// content type. Only videos published after `since` with a known duration are kept: the `limit` first in
// the order `by` (SortOutlier: the strongest outliers; SortViews while derived metrics are not accepted,
// decision 48), then more views, then the id, so the order is total.
func Score(vs []SourceVideo, source string, since, now time.Time, limit int, by string) []Video {
	views := map[string][]int64{}
	for _, v := range vs {
		views[v.ChannelID] = append(views[v.ChannelID], v.Views)
	}
	medians := make(map[string]float64, len(views))
	for ch, vv := range views {
		medians[ch] = Median(vv)
	}
	out := make([]Video, 0, len(vs))
	for _, v := range vs {
		if !v.PublishedAt.After(since) || v.DurationSeconds <= 0 {
			continue
		}
		m := medians[v.ChannelID]
		days := max1(now.Sub(v.PublishedAt).Hours() / 24)
		out = append(out, Video{
			VideoID: v.ID, Title: v.Title, URL: v.URL, ChannelID: v.ChannelID, ChannelTitle: v.ChannelTitle,
			Views: v.Views, Likes: v.Likes, Comments: v.Comments, PublishedAt: v.PublishedAt.UTC(),
			ContentType: ContentTypeOf(v.DurationSeconds), DurationSeconds: v.DurationSeconds,
			OutlierScore:       round(float64(v.Views)/max1(m), 2),
			ChannelMedianViews: round(m, 1), SampleSize: len(views[v.ChannelID]),
			ViewsPerDay:  round(float64(v.Views)/days, 1),
			ThumbnailURL: v.ThumbnailURL, Description: truncate(v.Description, DescriptionChars),
			Tags: v.Tags[:min(len(v.Tags), MaxTags)], Source: source, SnippetAt: v.SnippetAt,
		})
	}
	SortVideos(out, by)
	out = out[:min(len(out), limit)]
	SortVideos(out, SortOutlier) // stored strongest outliers first, whatever chose them
	return out
}

// Orders of research videos (decision 31).
const (
	SortOutlier = "outlier"
	SortViews   = "views"
	SortRecent  = "recent"
)

// SortVideos orders vs by outlier score, views or publication (newest first); ties fall to views, then
// the id, so every order is total.
func SortVideos(vs []Video, by string) {
	slices.SortStableFunc(vs, func(a, b Video) int {
		var c int
		switch by {
		case SortViews:
			c = cmp.Compare(b.Views, a.Views)
		case SortRecent:
			c = b.PublishedAt.Compare(a.PublishedAt)
		default:
			c = cmp.Compare(b.OutlierScore, a.OutlierScore)
		}
		return cmp.Or(c, cmp.Compare(b.Views, a.Views), cmp.Compare(a.VideoID, b.VideoID))
	})
}

// Median is the median of vs (0 for none).
func Median(vs []int64) float64 {
	s := slices.Clone(vs)
	slices.Sort(s)
	n := len(s)
	if n == 0 {
		return 0
	}
	if n%2 == 1 {
		return float64(s[n/2])
	}
	return (float64(s[n/2-1]) + float64(s[n/2])) / 2
}

// max1 keeps a divisor at 1 or more: a channel whose median is 0 views, or a video published an hour ago,
// would otherwise divide by (almost) nothing.
func max1(x float64) float64 { return math.Max(x, 1) }

func round(x float64, places int) float64 {
	p := math.Pow(10, float64(places))
	return math.Round(x*p) / p
}

// truncate cuts s to at most n characters (runes), at a rune boundary.
func truncate(s string, n int) string {
	i := 0
	for j := range s {
		if i == n {
			return s[:j]
		}
		i++
	}
	return s
}
