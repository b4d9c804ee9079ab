// Package owner makes the channel owner's YouTube calls (decisions 41 and 42) with the client
// connection.OwnerClient returns: channels.list mine=true (1 unit), captions.list (50) and
// captions.download tfmt=vtt (200), and revokes grants at Google's OAuth endpoint. It speaks the Data
// API's wire format with net/http rather than through google.golang.org/api/youtube/v3, whose generated
// client would add about 12 MB to the API functions that link this (integrations, generation), past their
// 16 MB limit.
package owner

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/creatorstrategy/css/shared/connection"
	"github.com/creatorstrategy/css/shared/transcript"
)

// Client makes the owner's calls on the Data API at Endpoint ("" for Google's).
type Client struct {
	// Endpoint is the API's base URL, e.g. "http://127.0.0.1:8123/" (tests); default Google's.
	Endpoint string
}

// GoogleEndpoint is the Data API's base URL.
const GoogleEndpoint = "https://youtube.googleapis.com/"

// MaxCaptionBytes bounds a downloaded caption track (a 12-hour stream's WebVTT is a few MB at most);
// maxJSONBytes bounds a list answer.
const (
	MaxCaptionBytes = 8 << 20
	maxJSONBytes    = 4 << 20
)

// APIError is an error answer of the API: its status and first reason (never the token).
type APIError struct {
	Call    string
	Status  int
	Reason  string
	Message string
}

func (e *APIError) Error() string {
	return fmt.Sprintf("youtube: %s: %d %s: %s", e.Call, e.Status, e.Reason, e.Message)
}

// Is makes a refusal of another channel's video (403 forbidden, 404 not found) match
// transcript.ErrNotOwnVideo.
func (e *APIError) Is(target error) bool {
	return target == transcript.ErrNotOwnVideo &&
		(e.Status == http.StatusNotFound || e.Status == http.StatusForbidden && e.Reason != "quotaExceeded" && e.Reason != "rateLimitExceeded")
}

func (c Client) get(ctx context.Context, client *http.Client, call, path string, q url.Values, limit int64) ([]byte, error) {
	u := strings.TrimSuffix(cmp.Or(c.Endpoint, GoogleEndpoint), "/") + "/youtube/v3/" + path + "?" + q.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	res, err := client.Do(req)
	if err != nil {
		// The oauth2 transport's errors (a refused grant: connection.ErrNeedsReconnect) stay matchable.
		return nil, fmt.Errorf("youtube: %s: %w", call, err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(io.LimitReader(res.Body, limit+1))
	if err != nil {
		return nil, fmt.Errorf("youtube: %s: %w", call, err)
	}
	if res.StatusCode != http.StatusOK {
		var e struct {
			Error struct {
				Message string `json:"message"`
				Errors  []struct {
					Reason string `json:"reason"`
				} `json:"errors"`
			} `json:"error"`
		}
		_ = json.Unmarshal(body, &e)
		reason := ""
		if len(e.Error.Errors) > 0 {
			reason = e.Error.Errors[0].Reason
		}
		return nil, &APIError{Call: call, Status: res.StatusCode, Reason: reason, Message: e.Error.Message}
	}
	if int64(len(body)) > limit {
		return nil, fmt.Errorf("youtube: %s: the answer is over %d bytes", call, limit)
	}
	return body, nil
}

// OwnedChannel reads the channel the client's token belongs to (channels.list mine=true).
func (c Client) OwnedChannel(ctx context.Context, client *http.Client) (connection.OwnedChannel, error) {
	body, err := c.get(ctx, client, "channels.list", "channels", url.Values{"part": {"snippet"}, "mine": {"true"}}, maxJSONBytes)
	if err != nil {
		return connection.OwnedChannel{}, err
	}
	var res struct {
		Items []struct {
			ID      string `json:"id"`
			Snippet struct {
				Title           string `json:"title"`
				DefaultLanguage string `json:"defaultLanguage"`
			} `json:"snippet"`
		} `json:"items"`
	}
	if err := json.Unmarshal(body, &res); err != nil {
		return connection.OwnedChannel{}, fmt.Errorf("youtube: channels.list: %w", err)
	}
	if len(res.Items) == 0 || res.Items[0].ID == "" {
		return connection.OwnedChannel{}, errors.New("youtube: the account has no YouTube channel")
	}
	it := res.Items[0]
	return connection.OwnedChannel{ID: it.ID, Title: it.Snippet.Title, Language: it.Snippet.DefaultLanguage}, nil
}

// List lists a video's caption tracks (captions.list). A video the token's channel does not own answers
// an error matching transcript.ErrNotOwnVideo.
func (c Client) List(ctx context.Context, client *http.Client, videoID string) ([]transcript.Track, error) {
	body, err := c.get(ctx, client, "captions.list", "captions", url.Values{"part": {"snippet"}, "videoId": {videoID}}, maxJSONBytes)
	if err != nil {
		return nil, err
	}
	var res struct {
		Items []struct {
			ID      string `json:"id"`
			Snippet struct {
				Language    string `json:"language"`
				TrackKind   string `json:"trackKind"`
				Name        string `json:"name"`
				LastUpdated string `json:"lastUpdated"`
				IsDraft     bool   `json:"isDraft"`
			} `json:"snippet"`
		} `json:"items"`
	}
	if err := json.Unmarshal(body, &res); err != nil {
		return nil, fmt.Errorf("youtube: captions.list: %w", err)
	}
	out := make([]transcript.Track, 0, len(res.Items))
	for _, it := range res.Items {
		s := it.Snippet
		out = append(out, transcript.Track{ID: it.ID, Language: s.Language, Kind: strings.ToLower(s.TrackKind),
			Name: s.Name, LastUpdated: s.LastUpdated, Draft: s.IsDraft})
	}
	return out, nil
}

// Download fetches a caption track as WebVTT (captions.download tfmt=vtt).
func (c Client) Download(ctx context.Context, client *http.Client, trackID string) ([]byte, error) {
	return c.get(ctx, client, "captions.download", "captions/"+url.PathEscape(trackID), url.Values{"tfmt": {"vtt"}}, MaxCaptionBytes)
}

// Revoker revokes grants at Google's revocation endpoint (POST token=...).
type Revoker struct {
	// Endpoint is the revocation URL (default GoogleRevokeEndpoint).
	Endpoint   string
	HTTPClient *http.Client
}

// GoogleRevokeEndpoint is Google's revocation URL.
const GoogleRevokeEndpoint = "https://oauth2.googleapis.com/revoke"

// Revoke revokes token (Google revokes the whole grant). A token Google answers invalid_token for is gone
// already: not an error.
func (r Revoker) Revoke(ctx context.Context, token string) error {
	endpoint := cmp.Or(r.Endpoint, GoogleRevokeEndpoint)
	client := r.HTTPClient
	if client == nil {
		client = &http.Client{Timeout: 20 * time.Second}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, strings.NewReader(url.Values{"token": {token}}.Encode()))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	res, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("youtube: revoke: %w", err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(res.Body, 4096))
	if res.StatusCode == http.StatusOK {
		return nil
	}
	if res.StatusCode == http.StatusBadRequest && strings.Contains(string(body), "invalid_token") {
		return nil
	}
	return fmt.Errorf("youtube: revoke: Google answered %d", res.StatusCode)
}
