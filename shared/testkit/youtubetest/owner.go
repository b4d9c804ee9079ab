package youtubetest

// The channel owner's side of the API (decisions 41 and 42): requests carrying `Authorization: Bearer
// <access token>` are the owner of the channel the token's subject is mapped to (AddOwner). Served:
// channels.list mine=true (1 unit), captions.list (50) and captions.download tfmt=vtt (200), metered
// like the rest; and, standing in for Google's OAuth endpoints where mock-oauth2-server differs from
// Google, /revoke (which records what it revoked) and /token, which forwards to an upstream token
// endpoint (mock-oauth2-server's) but answers invalid_grant, as Google does, for a refresh token revoked
// here.

import (
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/creatorstrategy/css/shared/quota"
)

// Owner is a YouTube channel whose owner's tokens the server accepts.
type Owner struct {
	ChannelID, Title, Language string
}

// CaptionTrack is a caption track of an owned video.
type CaptionTrack struct {
	ID, Language, Kind, Name, LastUpdated string
	Draft                                 bool
	// VTT is what captions.download tfmt=vtt answers.
	VTT string
}

type ownerState struct {
	owners    map[string]Owner          // token subject (or the token itself) -> channel
	videos    map[string]string         // video id -> owning channel
	tracks    map[string][]CaptionTrack // video id -> tracks
	revoked   []string
	upstream  string   // the token endpoint /token forwards to
	noRefresh bool     // /token drops refresh_token from the upstream's answers
	issued    []string // refresh tokens /token has passed on
	access    []string // access tokens /token has passed on
}

func (s *Server) owner() *ownerState {
	if s.own == nil {
		s.own = &ownerState{owners: map[string]Owner{}, videos: map[string]string{}, tracks: map[string][]CaptionTrack{}}
	}
	return s.own
}

// AddOwner makes tokens whose subject (the `sub` claim of a JWT access token, as mock-oauth2-server
// issues them) or whole value is subject act as the owner of o.
func (s *Server) AddOwner(subject string, o Owner) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.owner().owners[subject] = o
}

// AddCaptions gives a video of channelID its caption tracks.
func (s *Server) AddCaptions(channelID, videoID string, tracks ...CaptionTrack) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.owner()
	st.videos[videoID] = channelID
	st.tracks[videoID] = append(st.tracks[videoID], tracks...)
}

// SetTokenUpstream names the token endpoint /token forwards to.
func (s *Server) SetTokenUpstream(endpoint string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.owner().upstream = endpoint
}

// OmitRefreshTokens makes /token answer without refresh_token (as Google does when the user granted access
// before and consent was not prompted).
func (s *Server) OmitRefreshTokens(omit bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.owner().noRefresh = omit
}

// RevokeIssued revokes every refresh and access token /token has passed on, as an owner removing the app's
// access in their Google account would: an access token still cached then answers 401.
func (s *Server) RevokeIssued() {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.owner()
	st.revoked = append(st.revoked, st.issued...)
	st.revoked = append(st.revoked, st.access...)
}

// RevokeAccessTokens makes every access token /token has passed on answer 401, the grants standing (as
// when Google ends access tokens early).
func (s *Server) RevokeAccessTokens() {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.owner()
	st.revoked = append(st.revoked, st.access...)
}

// Revoked returns the tokens /revoke received, in order.
func (s *Server) Revoked() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.owner().revoked)
}

// RevokeURL and TokenURL are the OAuth endpoints this server stands in for.
func (s *Server) RevokeURL() string { return s.URL + "/revoke" }
func (s *Server) TokenURL() string  { return s.URL + "/token" }

// ownerRoutes adds the owner's endpoints to the server's mux.
func (s *Server) ownerRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /youtube/v3/captions", s.ownerMetered("captions.list", quota.CaptionsList, s.captionsList))
	mux.HandleFunc("GET /youtube/v3/captions/{id}", s.ownerMetered("captions.download", quota.CaptionsDownload, s.captionsDownload))
	mux.HandleFunc("POST /revoke", s.revoke)
	mux.HandleFunc("POST /token", s.token)
}

// bearerOwner returns the owner the request's bearer token acts as.
func (s *Server) bearerOwner(r *http.Request) (Owner, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.bearerOwnerLocked(r)
}

func (s *Server) bearerOwnerLocked(r *http.Request) (Owner, bool) {
	token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || token == "" {
		return Owner{}, false
	}
	st := s.owner()
	if o, ok := st.owners[token]; ok {
		return o, true
	}
	if slices.Contains(st.revoked, token) {
		return Owner{}, false
	}
	o, ok := st.owners[subjectOf(token)]
	return o, ok
}

// subjectOf reads the `sub` claim of a JWT without checking its signature (the token server is the
// test's own).
func subjectOf(token string) string {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return ""
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return ""
	}
	var claims struct {
		Sub string `json:"sub"`
	}
	_ = json.Unmarshal(payload, &claims)
	return claims.Sub
}

// ownerMetered is metered for the owner-only endpoints: an owner's bearer token is required (401 as the
// API answers without one), and the call's units are counted.
func (s *Server) ownerMetered(endpoint string, cost quota.Cost, h func(w http.ResponseWriter, r *http.Request, o Owner)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		o, ok := s.bearerOwner(r)
		s.mu.Lock()
		s.urls = append(s.urls, r.URL.RequestURI())
		if !ok {
			s.mu.Unlock()
			writeError(w, http.StatusUnauthorized, "unauthorized", "global", "Request is missing required authentication credential.")
			return
		}
		if !s.spendLocked(w, endpoint, cost) {
			return
		}
		h(w, r, o)
	}
}

// mine answers channels.list mine=true.
func (s *Server) mine(w http.ResponseWriter, r *http.Request) {
	o, ok := s.bearerOwner(r)
	if !ok {
		writeError(w, http.StatusUnauthorized, "unauthorized", "global", "Request is missing required authentication credential.")
		return
	}
	item := map[string]any{"kind": "youtube#channel", "etag": etag(o.ChannelID), "id": o.ChannelID,
		"snippet": map[string]any{"title": o.Title, "description": "", "publishedAt": "2015-01-01T00:00:00Z", "defaultLanguage": o.Language}}
	if c, ok := s.catalog.Channel(o.ChannelID); ok {
		item["contentDetails"] = map[string]any{"relatedPlaylists": map[string]string{"likes": "", "uploads": c.UploadsPlaylistID}}
	}
	writeJSON(w, http.StatusOK, map[string]any{"kind": "youtube#channelListResponse", "etag": etag(r.URL.RawQuery),
		"pageInfo": map[string]int{"totalResults": 1, "resultsPerPage": 1}, "items": []any{item}})
}

func (s *Server) captionsList(w http.ResponseWriter, r *http.Request, o Owner) {
	q := r.URL.Query()
	if q.Get("part") == "" {
		writeError(w, http.StatusBadRequest, "required", "global", "Required parameter: part")
		return
	}
	videoID := q.Get("videoId")
	s.mu.Lock()
	owner, known := s.owner().videos[videoID]
	tracks := slices.Clone(s.owner().tracks[videoID])
	s.mu.Unlock()
	if !known {
		writeError(w, http.StatusNotFound, "videoNotFound", "youtube.video", "The video identified by the <code>videoId</code> parameter could not be found.")
		return
	}
	if owner != o.ChannelID {
		writeError(w, http.StatusForbidden, "forbidden", "youtube.caption", "The permissions associated with the request are not sufficient to retrieve the caption tracks.")
		return
	}
	items := make([]map[string]any, 0, len(tracks))
	for _, t := range tracks {
		items = append(items, map[string]any{"kind": "youtube#caption", "etag": etag(t.ID), "id": t.ID,
			"snippet": map[string]any{"videoId": videoID, "lastUpdated": t.LastUpdated, "trackKind": t.Kind,
				"language": t.Language, "name": t.Name, "audioTrackType": "unknown", "isDraft": t.Draft, "status": "serving"}})
	}
	writeJSON(w, http.StatusOK, map[string]any{"kind": "youtube#captionListResponse", "etag": etag(r.URL.RawQuery), "items": items})
}

func (s *Server) captionsDownload(w http.ResponseWriter, r *http.Request, o Owner) {
	id := r.PathValue("id")
	if tf := r.URL.Query().Get("tfmt"); tf != "vtt" {
		writeError(w, http.StatusBadRequest, "invalidValue", "youtube.parameter", "this server serves tfmt=vtt only, not "+tf)
		return
	}
	s.mu.Lock()
	var found *CaptionTrack
	owner := ""
	for video, tracks := range s.owner().tracks {
		for i := range tracks {
			if tracks[i].ID == id {
				found, owner = &tracks[i], s.owner().videos[video]
			}
		}
	}
	s.mu.Unlock()
	if found == nil {
		writeError(w, http.StatusNotFound, "captionNotFound", "youtube.caption", "The caption track could not be found.")
		return
	}
	if owner != o.ChannelID {
		writeError(w, http.StatusForbidden, "forbidden", "youtube.caption", "The permissions associated with the request are not sufficient to download the caption track.")
		return
	}
	w.Header().Set("Content-Type", "text/vtt; charset=UTF-8")
	_, _ = io.WriteString(w, found.VTT)
}

// revoke stands in for Google's revocation endpoint: token in the form; 200, or 400 invalid_token.
func (s *Server) revoke(w http.ResponseWriter, r *http.Request) {
	token := r.PostFormValue("token")
	if token == "" {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, `{"error":"invalid_request","error_description":"Missing required parameter: token"}`)
		return
	}
	s.mu.Lock()
	s.owner().revoked = append(s.owner().revoked, token)
	s.mu.Unlock()
	w.WriteHeader(http.StatusOK)
}

// token forwards to the upstream token endpoint, except a refresh with a revoked refresh token, answered
// invalid_grant as Google does.
func (s *Server) token(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	upstream := s.owner().upstream
	revoked := r.PostForm.Get("grant_type") == "refresh_token" && slices.Contains(s.owner().revoked, r.PostForm.Get("refresh_token"))
	noRefresh := s.owner().noRefresh
	s.mu.Unlock()
	if revoked {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, `{"error":"invalid_grant","error_description":"Token has been expired or revoked."}`)
		return
	}
	if upstream == "" {
		http.Error(w, "no upstream token endpoint", http.StatusBadGateway)
		return
	}
	req, err := http.NewRequestWithContext(r.Context(), http.MethodPost, upstream, strings.NewReader(url.Values(r.PostForm).Encode()))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if a := r.Header.Get("Authorization"); a != "" {
		req.Header.Set("Authorization", a)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	var m map[string]any
	if json.Unmarshal(body, &m) == nil {
		s.mu.Lock()
		if rt, ok := m["refresh_token"].(string); ok && rt != "" {
			s.owner().issued = append(s.owner().issued, rt)
		}
		if at, ok := m["access_token"].(string); ok && at != "" {
			s.owner().access = append(s.owner().access, at)
		}
		s.mu.Unlock()
		if noRefresh {
			delete(m, "refresh_token")
			body, _ = json.Marshal(m)
		}
	}
	w.Header().Set("Content-Type", res.Header.Get("Content-Type"))
	w.WriteHeader(res.StatusCode)
	_, _ = w.Write(body)
}
