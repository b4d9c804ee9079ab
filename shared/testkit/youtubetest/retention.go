package youtubetest

// The owner's deeper Analytics queries (issue 31): the audience retention curve of one video
// (dimensions=elapsedVideoTimeRatio, filters=video==ID), the channel's own search terms
// (dimensions=insightTrafficSourceDetail, filters=insightTrafficSourceType==YT_SEARCH), and one video's
// views per day (dimensions=day, filters=video==ID); and, on the Data API's side, views that grow with a
// controlled clock (SetClock), so an hourly read sees a young upload's views change.

import (
	"cmp"
	"crypto/sha256"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/creatorstrategy/css/shared/research"
	"github.com/creatorstrategy/css/shared/testkit/offline/youtubesample"
)

// RetentionPoint is one row of a retention report.
type RetentionPoint struct {
	Ratio               float64 // elapsedVideoTimeRatio: 0.01 .. 1.00
	AudienceWatchRatio  float64
	RelativePerformance float64 // relativeRetentionPerformance: 0 .. 1, 0.5 the median of similar videos
}

// RetentionDrops are where RetentionCurve makes its cliffs, as indexes of the curve (the drop happens
// between point i-1 and point i), and how deep each is: fixed per video, so tests know the answer.
func RetentionDrops(videoID string) (at [3]int, depth [3]float64) {
	h := sha256.Sum256([]byte("retention:" + videoID))
	at = [3]int{5 + int(h[0])%20, 35 + int(h[1])%25, 65 + int(h[2])%25}
	depth = [3]float64{0.12, 0.09, 0.06}
	return at, depth
}

// RetentionCurve is a video's 100-point retention curve: a slow decline from 1.0, with the three cliffs of
// RetentionDrops.
func RetentionCurve(videoID string) []RetentionPoint {
	at, depth := RetentionDrops(videoID)
	h := sha256.Sum256([]byte("relative:" + videoID))
	rel := 0.3 + float64(h[0])/255*0.4
	out := make([]RetentionPoint, 0, 100)
	w := 1.0
	for i := range 100 {
		if i > 0 {
			w -= 0.003
		}
		for k, j := range at {
			if i == j {
				w -= depth[k]
			}
		}
		out = append(out, RetentionPoint{Ratio: float64(i+1) / 100, AudienceWatchRatio: math.Round(w*10000) / 10000,
			RelativePerformance: math.Round(rel*1000) / 1000})
	}
	return out
}

// SearchTerm is a row of the search-terms report.
type SearchTerm struct {
	Term  string
	Views int64
}

// SearchTerms are a channel's YouTube search terms over [start, end]: each upload's title's first three
// words, lower case, with a quarter of the upload's views of the period, most viewed first; n at most.
func SearchTerms(ch youtubesample.CatalogChannel, start, end, today time.Time, n int) []SearchTerm {
	views := map[string]int64{}
	for _, v := range ch.Uploads {
		words := strings.Fields(strings.ToLower(v.Title))
		term := strings.Join(words[:min(3, len(words))], " ")
		for d := start; !d.After(end); d = d.AddDate(0, 0, 1) {
			views[term] += DayViews(v, d, today) / 4
		}
	}
	var out []SearchTerm
	for t, v := range views {
		if t != "" && v > 0 {
			out = append(out, SearchTerm{t, v})
		}
	}
	slices.SortFunc(out, func(a, b SearchTerm) int { return cmp.Or(cmp.Compare(b.Views, a.Views), cmp.Compare(a.Term, b.Term)) })
	return out[:min(n, len(out))]
}

// filterOf reads filters=key==value (one filter), "" when absent.
func filterOf(q url.Values, key string) (string, bool) {
	f := q.Get("filters")
	if f == "" {
		return "", false
	}
	v, ok := strings.CutPrefix(f, key+"==")
	return v, ok && v != "" && !strings.ContainsAny(v, ";,")
}

// insight answers the retention and search-terms queries; false when the query is neither (the caller
// answers it). ch is the token's channel (nil when the catalog has none).
func (a *Analytics) insight(w http.ResponseWriter, q url.Values, ch *youtubesample.CatalogChannel, start, end, today time.Time) bool {
	switch q.Get("dimensions") {
	case "elapsedVideoTimeRatio":
		id, ok := filterOf(q, "video")
		if !ok {
			writeError(w, http.StatusBadRequest, "badRequest", "global", "The query is not supported: dimensions=elapsedVideoTimeRatio needs filters=video==ID.")
			return true
		}
		if q.Get("metrics") != "audienceWatchRatio,relativeRetentionPerformance" {
			writeError(w, http.StatusBadRequest, "badRequest", "global", "this server answers metrics=audienceWatchRatio,relativeRetentionPerformance only")
			return true
		}
		if !owns(ch, id) {
			writeError(w, http.StatusForbidden, "forbidden", "global", "Forbidden")
			return true
		}
		rows := [][]any{}
		for _, p := range RetentionCurve(id) {
			rows = append(rows, []any{p.Ratio, p.AudienceWatchRatio, p.RelativePerformance})
		}
		writeTable(w, []header{{"elapsedVideoTimeRatio", "DIMENSION", "FLOAT"}, {"audienceWatchRatio", "METRIC", "FLOAT"},
			{"relativeRetentionPerformance", "METRIC", "FLOAT"}}, rows)
		return true
	case "insightTrafficSourceDetail":
		if src, ok := filterOf(q, "insightTrafficSourceType"); !ok || src != "YT_SEARCH" {
			writeError(w, http.StatusBadRequest, "badRequest", "global", "this server answers filters=insightTrafficSourceType==YT_SEARCH only")
			return true
		}
		n, err := strconv.Atoi(q.Get("maxResults"))
		if err != nil || n < 1 || n > 25 || q.Get("sort") != "-views" || q.Get("metrics") != "views" {
			writeError(w, http.StatusBadRequest, "badRequest", "global", "The query is not supported: insightTrafficSourceDetail needs metrics=views, sort=-views and maxResults 1..25.")
			return true
		}
		rows := [][]any{}
		if ch != nil {
			for _, t := range SearchTerms(*ch, start, end, today, n) {
				rows = append(rows, []any{t.Term, t.Views})
			}
		}
		writeTable(w, []header{{"insightTrafficSourceDetail", "DIMENSION", "STRING"}, {"views", "METRIC", "INTEGER"}}, rows)
		return true
	}
	return false
}

// owns says whether videoID is one of ch's uploads.
func owns(ch *youtubesample.CatalogChannel, videoID string) bool {
	return ch != nil && slices.ContainsFunc(ch.Uploads, func(v research.SourceVideo) bool { return v.ID == videoID })
}

type header struct{ name, columnType, dataType string }

func writeTable(w http.ResponseWriter, hs []header, rows [][]any) {
	headers := make([]map[string]string, 0, len(hs))
	for _, h := range hs {
		headers = append(headers, map[string]string{"name": h.name, "columnType": h.columnType, "dataType": h.dataType})
	}
	writeJSON(w, http.StatusOK, map[string]any{"kind": "youtubeAnalytics#resultTable", "columnHeaders": headers, "rows": rows})
}

// GrownViews is a video's views at now under SetClock: its Views (what it reaches in about a month) grown
// as 1 - 0.8^days since publishing, the same decay the Analytics server spreads a video's days with; 0
// before it is published.
func GrownViews(v research.SourceVideo, now time.Time) int64 {
	days := now.Sub(v.PublishedAt).Hours() / 24
	if days <= 0 {
		return 0
	}
	return int64(math.Round(float64(v.Views) * (1 - math.Pow(decay, days))))
}

// SetClock makes videos.list and videos:batchGetStats answer each video's views as GrownViews at now(),
// so reads an hour apart see them grow (nil: the catalog's views, as they are).
func (s *Server) SetClock(now func() time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.clock = now
}

// viewsOf returns v's views as the server answers them now.
func (s *Server) viewsOf(v research.SourceVideo) int64 {
	s.mu.Lock()
	now := s.clock
	s.mu.Unlock()
	if now == nil {
		return v.Views
	}
	return GrownViews(v, now())
}
