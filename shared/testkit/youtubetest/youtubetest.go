// Package youtubetest serves a catalog of channels and videos over the YouTube Data API v3's wire format on
// loopback (/youtube/v3/search, /channels, /playlistItems, /videos, /videos:batchGetStats: parameters, JSON
// bodies, page tokens, the API's error bodies), so the real client can be tested against it. It meters the
// calls it answers in the API's three buckets (shared/quota), and can answer quotaExceeded once a bucket's
// quota is spent, or any error the test asks for.
package youtubetest

import (
	"cmp"
	"encoding/json"
	"fmt"
	"html"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/creatorstrategy/css/shared/quota"
	"github.com/creatorstrategy/css/shared/research"
	"github.com/creatorstrategy/css/shared/testkit/offline/youtubesample"
)

// Server is the Data API on loopback.
type Server struct {
	*httptest.Server
	key     string
	catalog *youtubesample.Catalog

	mu     sync.Mutex
	calls  map[string]int // endpoint ("search", "channels", ...) -> calls answered or refused
	spent  quota.Cost
	limit  quota.Cost // a bucket at 0: unlimited
	failAt map[string]Failure
	keys   []string // the API keys requests carried, in order
	urls   []string
	own    *ownerState      // owner.go: the channel owners' side
	clock  func() time.Time // retention.go: views grow with it (SetClock)
}

// Failure is an error answer: the HTTP status and the API's reason.
type Failure struct {
	Status int
	Reason string
	Domain string
}

// Common failures, as the API answers them.
func QuotaExceeded() Failure {
	return Failure{Status: http.StatusForbidden, Reason: "quotaExceeded", Domain: "youtube.quota"}
}

func RateLimited() Failure {
	return Failure{Status: http.StatusForbidden, Reason: "rateLimitExceeded", Domain: "youtube.quota"}
}

func BackendError() Failure {
	return Failure{Status: http.StatusInternalServerError, Reason: "backendError", Domain: "global"}
}

func Forbidden() Failure {
	return Failure{Status: http.StatusForbidden, Reason: "forbidden", Domain: "youtube.common"}
}

// Start serves catalog to requests that carry key (in the X-Goog-Api-Key header, or the key parameter).
func Start(key string, catalog *youtubesample.Catalog) *Server {
	s := &Server{key: key, catalog: catalog, calls: map[string]int{}, failAt: map[string]Failure{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /youtube/v3/search", s.metered("search", quota.SearchCall, s.search))
	mux.HandleFunc("GET /youtube/v3/channels", s.metered("channels", quota.ListCall, s.channels))
	mux.HandleFunc("GET /youtube/v3/playlistItems", s.metered("playlistItems", quota.ListCall, s.playlistItems))
	mux.HandleFunc("GET /youtube/v3/videos", s.metered("videos", quota.ListCall, s.videos))
	mux.HandleFunc("GET /youtube/v3/videos:batchGetStats", s.metered("batchGetStats", quota.StatsCall, s.batchGetStats))
	s.ownerRoutes(mux)
	s.Server = httptest.NewServer(mux)
	return s
}

// Endpoint is the base URL to give the client (option.WithEndpoint).
func (s *Server) Endpoint() string { return s.URL + "/" }

// SetQuota makes the server answer quotaExceeded once units have been spent (0: no limit).
func (s *Server) SetQuota(units int) { s.SetBucketQuota(quota.Units, units) }

// SetBucketQuota makes the server answer quotaExceeded to calls of bucket b once n of it have been spent
// (0: no limit).
func (s *Server) SetBucketQuota(b quota.Bucket, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.limit = s.limit.With(b, n)
}

// FailNext makes the next call of endpoint fail with f.
func (s *Server) FailNext(endpoint string, f Failure) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failAt[endpoint] = f
}

// Units returns the units the calls so far cost.
func (s *Server) Units() int { return s.Spent().Units }

// Spent returns what the calls so far cost, in each bucket.
func (s *Server) Spent() quota.Cost {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.spent
}

// Calls returns the calls so far per endpoint.
func (s *Server) Calls() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.calls)
}

// Keys returns the API key of every request so far, and URLs their request URIs.
func (s *Server) Keys() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.keys)
}

// URLs returns the request URI of every request so far.
func (s *Server) URLs() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.urls)
}

// spendLocked counts a call of endpoint and its cost in units (the API charges failed calls too), with s.mu
// held, and releases s.mu. It answers the request itself, and returns false, when the quota is spent or a
// failure was asked for this endpoint.
func (s *Server) spendLocked(w http.ResponseWriter, endpoint string, cost quota.Cost) bool {
	s.calls[endpoint]++
	for _, b := range quota.Buckets() {
		if s.limit.Of(b) > 0 && cost.Of(b) > 0 && s.spent.Of(b)+cost.Of(b) > s.limit.Of(b) {
			s.mu.Unlock()
			fail(w, QuotaExceeded())
			return false
		}
	}
	s.spent = s.spent.Add(cost)
	f, failing := s.failAt[endpoint]
	delete(s.failAt, endpoint)
	s.mu.Unlock()
	if failing {
		fail(w, f)
		return false
	}
	return true
}

// metered counts a call's units (every call the API receives costs them, failed ones too) and answers
// the failures asked for before the handler runs.
func (s *Server) metered(endpoint string, cost quota.Cost, h func(w http.ResponseWriter, r *http.Request)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		key := cmp.Or(r.Header.Get("X-Goog-Api-Key"), r.URL.Query().Get("key"))
		s.mu.Lock()
		s.keys = append(s.keys, key)
		s.urls = append(s.urls, r.URL.RequestURI())
		if _, owner := s.bearerOwnerLocked(r); key != s.key && !owner { // an owner's token stands for the key
			s.mu.Unlock()
			writeError(w, http.StatusBadRequest, "badRequest", "global", "API key not valid. Please pass a valid API key.")
			return
		}
		if !s.spendLocked(w, endpoint, cost) {
			return
		}
		if r.URL.Query().Get("part") == "" {
			writeError(w, http.StatusBadRequest, "required", "global", "Required parameter: part")
			return
		}
		h(w, r)
	}
}

func fail(w http.ResponseWriter, f Failure) {
	msg := cmp.Or(map[string]string{
		"quotaExceeded":     "The request cannot be completed because you have exceeded your <a href=\"/youtube/v3/getting-started#quota\">quota</a>.",
		"rateLimitExceeded": "The request cannot be completed because you have exceeded your quota rate.",
		"backendError":      "Backend Error",
	}[f.Reason], "The request is not allowed: "+f.Reason)
	writeError(w, f.Status, f.Reason, f.Domain, msg)
}

// writeError answers the API's error body.
func writeError(w http.ResponseWriter, status int, reason, domain, message string) {
	statusText := map[int]string{400: "INVALID_ARGUMENT", 403: "PERMISSION_DENIED", 404: "NOT_FOUND", 429: "RESOURCE_EXHAUSTED",
		500: "INTERNAL", 503: "UNAVAILABLE"}[status]
	writeJSON(w, status, map[string]any{"error": map[string]any{
		"code": status, "message": message, "status": statusText,
		"errors": []map[string]string{{"message": message, "domain": domain, "reason": reason}},
	}})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// maxResults reads maxResults (0..50, default 5, as the API has it).
func maxResults(w http.ResponseWriter, r *http.Request) (int, bool) {
	v := r.URL.Query().Get("maxResults")
	if v == "" {
		return 5, true
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 || n > 50 {
		writeError(w, http.StatusBadRequest, "invalidParameter", "youtube.parameter",
			fmt.Sprintf("Invalid value '%s'. Values must be within the range: [0, 50]", v))
		return 0, false
	}
	return n, true
}

// ids reads the id parameter, comma-separated or repeated (the Go client repeats it), at most 50 ids.
func ids(w http.ResponseWriter, r *http.Request) ([]string, bool) {
	var out []string
	for _, v := range r.URL.Query()["id"] {
		for _, id := range strings.Split(v, ",") {
			if id = strings.TrimSpace(id); id != "" {
				out = append(out, id)
			}
		}
	}
	if len(out) > 50 {
		writeError(w, http.StatusBadRequest, "invalidFilters", "youtube.parameter", "The request specifies too many ids (at most 50).")
		return nil, false
	}
	return out, true
}

func (s *Server) search(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	n, ok := maxResults(w, r)
	if !ok {
		return
	}
	if t := q.Get("type"); t != "" && t != "video" {
		writeError(w, http.StatusBadRequest, "invalidSearchFilter", "youtube.search", "only type=video is served here")
		return
	}
	var after time.Time
	if v := q.Get("publishedAfter"); v != "" {
		var err error
		if after, err = time.Parse(time.RFC3339, v); err != nil {
			writeError(w, http.StatusBadRequest, "invalidPublishedAfter", "youtube.search", "Invalid publishedAfter: "+v)
			return
		}
	}
	order := cmp.Or(q.Get("order"), research.OrderRelevance)
	page, err := s.catalog.Search(research.SearchQuery{Terms: terms(q.Get("q")), PublishedAfter: after, Order: order,
		MaxResults: max(n, 1), PageToken: q.Get("pageToken")})
	if err != nil {
		writeError(w, http.StatusBadRequest, "invalidPageToken", "youtube.parameter", "The request specifies an invalid page token.")
		return
	}
	items := []map[string]any{}
	for _, h := range page.Hits[:min(n, len(page.Hits))] {
		v, _ := s.catalog.Video(h.VideoID)
		items = append(items, map[string]any{
			"kind": "youtube#searchResult", "etag": etag(h.VideoID),
			"id": map[string]string{"kind": "youtube#video", "videoId": h.VideoID},
			"snippet": map[string]any{
				"publishedAt": h.PublishedAt.Format(time.RFC3339), "channelId": h.ChannelID,
				// Search snippets come HTML-escaped.
				"title": html.EscapeString(h.Title), "description": html.EscapeString(truncate(v.Description, 160)),
				"thumbnails": thumbnails(v.ThumbnailURL), "channelTitle": html.EscapeString(h.ChannelTitle),
				"liveBroadcastContent": "none", "publishTime": h.PublishedAt.Format(time.RFC3339),
			},
		})
	}
	body := map[string]any{"kind": "youtube#searchListResponse", "etag": etag(q.Encode()), "regionCode": "US",
		"pageInfo": map[string]int{"totalResults": 1000000, "resultsPerPage": n}, "items": items}
	if page.NextPageToken != "" {
		body["nextPageToken"] = page.NextPageToken
	}
	writeJSON(w, http.StatusOK, body)
}

// terms reads q with the API's OR operator: "vegan|\"meal prep\"" is vegan or "meal prep".
func terms(q string) []string {
	var out []string
	for _, t := range strings.Split(q, "|") {
		if t = strings.Trim(strings.TrimSpace(t), `"`); t != "" {
			out = append(out, t)
		}
	}
	return out
}

func (s *Server) channels(w http.ResponseWriter, r *http.Request) {
	if r.URL.Query().Get("mine") == "true" {
		s.mine(w, r)
		return
	}
	list, ok := ids(w, r)
	if !ok {
		return
	}
	items := []map[string]any{}
	for _, id := range list {
		c, ok := s.catalog.Channel(id)
		if !ok {
			continue
		}
		items = append(items, map[string]any{
			"kind": "youtube#channel", "etag": etag(id), "id": id,
			"snippet":        map[string]any{"title": c.Title, "description": "", "publishedAt": "2015-01-01T00:00:00Z"},
			"contentDetails": map[string]any{"relatedPlaylists": map[string]string{"likes": "", "uploads": c.UploadsPlaylistID}},
			"statistics": map[string]any{"viewCount": "1000000", "subscriberCount": strconv.FormatInt(c.Subscribers, 10),
				"hiddenSubscriberCount": false, "videoCount": strconv.FormatInt(c.VideoCount, 10)},
		})
	}
	writeJSON(w, http.StatusOK, map[string]any{"kind": "youtube#channelListResponse", "etag": etag(r.URL.RawQuery),
		"pageInfo": map[string]int{"totalResults": len(items), "resultsPerPage": len(items)}, "items": items})
}

func (s *Server) playlistItems(w http.ResponseWriter, r *http.Request) {
	n, ok := maxResults(w, r)
	if !ok {
		return
	}
	id := r.URL.Query().Get("playlistId")
	if _, known := s.catalog.Channel("UC" + strings.TrimPrefix(id, "UU")); !known || !strings.HasPrefix(id, "UU") {
		writeError(w, http.StatusNotFound, "playlistNotFound", "youtube.playlistItem",
			"The playlist identified with the request's <code>playlistId</code> parameter cannot be found.")
		return
	}
	page, err := s.catalog.Uploads(id, max(n, 1), r.URL.Query().Get("pageToken"))
	if err != nil {
		writeError(w, http.StatusBadRequest, "invalidPageToken", "youtube.parameter", "The request specifies an invalid page token.")
		return
	}
	items := []map[string]any{}
	for _, vid := range page.VideoIDs[:min(n, len(page.VideoIDs))] {
		v, _ := s.catalog.Video(vid)
		items = append(items, map[string]any{"kind": "youtube#playlistItem", "etag": etag(vid), "id": etag(id + vid),
			"contentDetails": map[string]string{"videoId": vid, "videoPublishedAt": v.PublishedAt.Format(time.RFC3339)}})
	}
	body := map[string]any{"kind": "youtube#playlistItemListResponse", "etag": etag(r.URL.RawQuery),
		"pageInfo": map[string]int{"totalResults": 1000, "resultsPerPage": n}, "items": items}
	if page.NextPageToken != "" {
		body["nextPageToken"] = page.NextPageToken
	}
	writeJSON(w, http.StatusOK, body)
}

// catalogVideos returns the catalog's videos of the request's ids, unknown ones left out; false when it
// answered the request (a bad id list).
func (s *Server) catalogVideos(w http.ResponseWriter, r *http.Request) ([]research.SourceVideo, bool) {
	list, ok := ids(w, r)
	if !ok {
		return nil, false
	}
	var out []research.SourceVideo
	for _, id := range list {
		if v, ok := s.catalog.Video(id); ok {
			out = append(out, v)
		}
	}
	return out, true
}

func (s *Server) videos(w http.ResponseWriter, r *http.Request) {
	vs, ok := s.catalogVideos(w, r)
	if !ok {
		return
	}
	items := []map[string]any{}
	for _, v := range vs {
		items = append(items, map[string]any{
			"kind": "youtube#video", "etag": etag(v.ID), "id": v.ID,
			"snippet": map[string]any{
				"publishedAt": v.PublishedAt.Format(time.RFC3339), "channelId": v.ChannelID, "title": v.Title,
				"description": v.Description, "thumbnails": thumbnails(v.ThumbnailURL), "channelTitle": v.ChannelTitle,
				"tags": v.Tags, "categoryId": "26", "liveBroadcastContent": "none", "defaultAudioLanguage": "en",
			},
			"contentDetails": map[string]any{"duration": isoDuration(v.DurationSeconds), "dimension": "2d",
				"definition": "hd", "caption": "false", "licensedContent": true, "contentRating": map[string]any{},
				"projection": "rectangular"},
			"statistics": map[string]string{"viewCount": strconv.FormatInt(s.viewsOf(v), 10), "likeCount": strconv.FormatInt(v.Likes, 10),
				"favoriteCount": "0", "commentCount": strconv.FormatInt(v.Comments, 10)},
		})
	}
	writeJSON(w, http.StatusOK, map[string]any{"kind": "youtube#videoListResponse", "etag": etag(r.URL.RawQuery),
		"pageInfo": map[string]int{"totalResults": len(items), "resultsPerPage": len(items)}, "items": items})
}

// batchGetStats answers videos:batchGetStats: statistics, the duration as a protobuf Duration and the
// publishing time, and nothing of the snippet else.
func (s *Server) batchGetStats(w http.ResponseWriter, r *http.Request) {
	vs, ok := s.catalogVideos(w, r)
	if !ok {
		return
	}
	items := []map[string]any{}
	for _, v := range vs {
		items = append(items, map[string]any{
			"kind": "youtube#videoStats", "etag": etag(v.ID), "id": v.ID,
			"snippet":        map[string]any{"publishTime": v.PublishedAt.Format(time.RFC3339)},
			"contentDetails": map[string]any{"duration": strconv.Itoa(v.DurationSeconds) + "s"},
			"statistics": map[string]string{"viewCount": strconv.FormatInt(s.viewsOf(v), 10), "likeCount": strconv.FormatInt(v.Likes, 10),
				"commentCount": strconv.FormatInt(v.Comments, 10)},
		})
	}
	writeJSON(w, http.StatusOK, map[string]any{"kind": "youtube#batchGetStatsResponse", "etag": etag(r.URL.RawQuery), "items": items})
}

func thumbnails(url string) map[string]any {
	return map[string]any{
		"default": map[string]any{"url": strings.Replace(url, ".jpg", "-default.jpg", 1), "width": 120, "height": 90},
		"medium":  map[string]any{"url": strings.Replace(url, ".jpg", "-medium.jpg", 1), "width": 320, "height": 180},
		"high":    map[string]any{"url": url, "width": 480, "height": 360},
	}
}

// isoDuration writes seconds as the API does: "PT1H2M3S", "PT45S", "P0D".
func isoDuration(sec int) string {
	if sec == 0 {
		return "P0D"
	}
	var b strings.Builder
	b.WriteString("PT")
	if h := sec / 3600; h > 0 {
		fmt.Fprintf(&b, "%dH", h)
	}
	if m := sec % 3600 / 60; m > 0 {
		fmt.Fprintf(&b, "%dM", m)
	}
	if s := sec % 60; s > 0 {
		fmt.Fprintf(&b, "%dS", s)
	}
	return b.String()
}

func etag(s string) string { return fmt.Sprintf("%x", len(s)*2654435761) }

func truncate(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n])
	}
	return s
}
