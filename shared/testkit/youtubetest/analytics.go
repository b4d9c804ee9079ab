package youtubetest

import (
	"cmp"
	"crypto/sha256"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/creatorstrategy/css/shared/research"
	"github.com/creatorstrategy/css/shared/testkit/offline/youtubesample"
)

// Analytics is YouTube Analytics API v2's reports.query (GET /v2/reports) on loopback, over a catalog's
// channels: it checks the bearer token (each token granted one channel, as an owner's OAuth token is),
// answers ids=channel==MINE (or the token's own channel id) with the dimensions the sync asks for ("",
// "day", "video"; "" and "day" also narrowed by filters=video==ID to one of the channel's own videos), the
// retention curve and the search terms (retention.go), and counts the queries it answers. Each video's views are spread over the days since
// it was published, decaying, so a day's and a video's figures add up across reports. A channel can be
// made to answer 403 forbidden, as a channel without analytics access does.
type Analytics struct {
	*httptest.Server
	catalog *youtubesample.Catalog
	today   func() time.Time

	mu        sync.Mutex
	tokens    map[string]string // bearer token -> channel id
	owners    *Server           // also accepts the tokens this Data API server's OAuth flow issued (TrustOwners)
	forbidden map[string]bool
	queries   int
	refused   int
	rep       reporting // the Reporting API's jobs (reporting.go)
}

// StartAnalytics serves catalog; today is the date reports end at the latest (its UTC day).
func StartAnalytics(catalog *youtubesample.Catalog, today func() time.Time) *Analytics {
	a := &Analytics{catalog: catalog, today: today, tokens: map[string]string{}, forbidden: map[string]bool{},
		rep: reporting{failJobs: map[string]int{}, corrupt: map[string]bool{}}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v2/reports", a.reports)
	a.reportingRoutes(mux)
	a.Server = httptest.NewServer(mux)
	return a
}

// Endpoint is the base URL to give the client (CSS_YOUTUBE_ANALYTICS_ENDPOINT).
func (a *Analytics) Endpoint() string { return a.URL + "/" }

// Grant makes token an OAuth token of channelID.
func (a *Analytics) Grant(token, channelID string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.tokens[token] = channelID
}

// TrustOwners makes the server accept, besides the granted tokens, every token the Data API server s
// takes as an owner's (issued by the OAuth flow its token endpoint fronts), for that owner's channel: the
// owner's token is then good for both APIs, as Google's is.
func (a *Analytics) TrustOwners(s *Server) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.owners = s
}

// Forbid makes every query of channelID answer 403 forbidden, and its Reporting API calls.
func (a *Analytics) Forbid(channelID string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.forbidden[channelID] = true
}

// Queries returns the queries answered so far (403s included).
func (a *Analytics) Queries() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.queries
}

// Refused returns the queries refused for a missing or unknown token.
func (a *Analytics) Refused() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.refused
}

// channelOf returns the channel the request's bearer token was granted, or, under TrustOwners, that of the
// owner the token acts as.
func (a *Analytics) channelOf(r *http.Request) (string, bool) {
	token, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	a.mu.Lock()
	channelID, ok := a.tokens[token]
	owners := a.owners
	a.mu.Unlock()
	if !ok && owners != nil {
		o, found := owners.bearerOwner(r)
		channelID, ok = o.ChannelID, found
	}
	return channelID, ok && token != ""
}

// Metrics the server knows, in the API's names.
var analyticsMetrics = []string{"views", "estimatedMinutesWatched", "averageViewDuration", "averageViewPercentage",
	"subscribersGained", "subscribersLost"}

func (a *Analytics) reports(w http.ResponseWriter, r *http.Request) {
	channelID, ok := a.channelOf(r)
	a.mu.Lock()
	if !ok {
		a.refused++
		a.mu.Unlock()
		writeJSON(w, http.StatusUnauthorized, map[string]any{"error": map[string]any{"code": 401,
			"message": "Request is missing required authentication credential.", "status": "UNAUTHENTICATED",
			"errors": []map[string]string{{"message": "Login Required.", "domain": "global", "reason": "required"}}}})
		return
	}
	a.queries++
	forbidden := a.forbidden[channelID]
	a.mu.Unlock()
	if forbidden {
		writeError(w, http.StatusForbidden, "forbidden", "global", "Forbidden")
		return
	}
	q := r.URL.Query()
	if ids := q.Get("ids"); ids != "channel==MINE" && ids != "channel=="+channelID {
		writeError(w, http.StatusForbidden, "forbidden", "global", "Forbidden")
		return
	}
	start, err1 := time.Parse(time.DateOnly, q.Get("startDate"))
	end, err2 := time.Parse(time.DateOnly, q.Get("endDate"))
	if err1 != nil || err2 != nil || end.Before(start) {
		writeError(w, http.StatusBadRequest, "badRequest", "global", "Invalid startDate or endDate")
		return
	}
	ch, _ := a.catalog.Channel(channelID)
	today := a.today().UTC().Truncate(24 * time.Hour)
	if end.After(today) {
		end = today
	}
	if a.insight(w, q, ch, start, end, today) {
		return
	}
	// filters=video==ID narrows a day (or total) report to one of the channel's own videos.
	only, filtered := filterOf(q, "video")
	if q.Get("filters") != "" && (!filtered || q.Get("dimensions") == "video") {
		writeError(w, http.StatusBadRequest, "badRequest", "global", "The query is not supported: filters="+q.Get("filters"))
		return
	}
	if filtered && !owns(ch, only) {
		writeError(w, http.StatusForbidden, "forbidden", "global", "Forbidden")
		return
	}
	metrics := strings.Split(q.Get("metrics"), ",")
	for _, m := range metrics {
		if !slices.Contains(analyticsMetrics, m) {
			writeError(w, http.StatusBadRequest, "badRequest", "global", "Unknown identifier ("+m+") given in field parameters.metrics.")
			return
		}
	}
	maxRows := 0
	if v := q.Get("maxResults"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 200 {
			writeError(w, http.StatusBadRequest, "badRequest", "global", "maxResults must be 1..200")
			return
		}
		maxRows = n
	}
	dim := q.Get("dimensions")
	if dim == "video" && maxRows == 0 {
		writeError(w, http.StatusBadRequest, "badRequest", "global", "The query is not supported: dimensions=video needs maxResults and sort.")
		return
	}
	type cell struct {
		key string
		f   figures
	}
	var cells []cell
	index := map[string]int{}
	add := func(key string, f figures) {
		if i, ok := index[key]; ok {
			cells[i].f = cells[i].f.plus(f)
			return
		}
		index[key] = len(cells)
		cells = append(cells, cell{key, f})
	}
	if ch != nil {
		for _, v := range ch.Uploads {
			if filtered && v.ID != only {
				continue
			}
			for d := start; !d.After(end); d = d.AddDate(0, 0, 1) {
				f := dayFigures(v, d, today)
				switch dim {
				case "day":
					add(d.Format(time.DateOnly), f)
				case "video":
					add(v.ID, f)
				case "":
					add("", f)
				default:
					writeError(w, http.StatusBadRequest, "badRequest", "global", "The query is not supported: dimensions="+dim)
					return
				}
			}
		}
	}
	if dim == "video" {
		cells = slices.DeleteFunc(cells, func(c cell) bool { return c.f.views == 0 })
		slices.SortStableFunc(cells, func(x, y cell) int { return cmp.Or(cmp.Compare(y.f.views, x.f.views), cmp.Compare(x.key, y.key)) })
	}
	if maxRows > 0 && len(cells) > maxRows {
		cells = cells[:maxRows]
	}
	headers := []map[string]string{}
	if dim != "" {
		headers = append(headers, map[string]string{"name": dim, "columnType": "DIMENSION", "dataType": "STRING"})
	}
	for _, m := range metrics {
		dt := "INTEGER"
		if m == "averageViewPercentage" {
			dt = "FLOAT"
		}
		headers = append(headers, map[string]string{"name": m, "columnType": "METRIC", "dataType": dt})
	}
	rows := [][]any{}
	for _, c := range cells {
		var row []any
		if dim != "" {
			row = append(row, c.key)
		}
		for _, m := range metrics {
			row = append(row, c.f.metric(m))
		}
		rows = append(rows, row)
	}
	writeJSON(w, http.StatusOK, map[string]any{"kind": "youtubeAnalytics#resultTable", "columnHeaders": headers, "rows": rows})
}

// figures are a cell's sums; the averages are derived from them.
type figures struct {
	views, subsGained, subsLost int64
	watchSeconds, fullSeconds   float64 // seconds watched; seconds the views would be watched in full
}

func (f figures) plus(g figures) figures {
	return figures{f.views + g.views, f.subsGained + g.subsGained, f.subsLost + g.subsLost,
		f.watchSeconds + g.watchSeconds, f.fullSeconds + g.fullSeconds}
}

func (f figures) metric(m string) any {
	switch m {
	case "views":
		return f.views
	case "estimatedMinutesWatched":
		return int64(math.Round(f.watchSeconds / 60))
	case "averageViewDuration":
		if f.views == 0 {
			return 0
		}
		return int64(math.Round(f.watchSeconds / float64(f.views)))
	case "averageViewPercentage":
		if f.fullSeconds == 0 {
			return 0.0
		}
		return math.Round(f.watchSeconds/f.fullSeconds*10000) / 100
	case "subscribersGained":
		return f.subsGained
	default:
		return f.subsLost
	}
}

// decay is the share of a day's views that the next day keeps.
const decay = 0.8

// DayViews is a video's views on day (UTC) as the server reports them: its Views (as of today) spread over
// the days from its publishing to yesterday, decaying by 0.8 a day.
func DayViews(v research.SourceVideo, day, today time.Time) int64 {
	pub := v.PublishedAt.UTC().Truncate(24 * time.Hour)
	age := int(today.Sub(pub).Hours() / 24) // days with views: pub .. today-1
	k := int(day.Sub(pub).Hours() / 24)
	if age < 1 || k < 0 || k >= age {
		return 0
	}
	total := (1 - math.Pow(decay, float64(age))) / (1 - decay)
	return int64(math.Round(float64(v.Views) * math.Pow(decay, float64(k)) / total))
}

// ViewPercentage is the share of a video its viewers watch, 30..70 %, fixed per video.
func ViewPercentage(videoID string) float64 {
	sum := sha256.Sum256([]byte(videoID))
	return 30 + float64(sum[0])/255*40
}

func dayFigures(v research.SourceVideo, day, today time.Time) figures {
	views := DayViews(v, day, today)
	dur := float64(max(v.DurationSeconds, 1))
	return figures{views: views, subsGained: views / 200, subsLost: views / 1000,
		watchSeconds: float64(views) * dur * ViewPercentage(v.ID) / 100, fullSeconds: float64(views) * dur}
}
