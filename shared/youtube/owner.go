package youtube

// The channel owner's calls (decisions 41 and 42), made with the client connection.OwnerClient returns:
// channels.list mine=true (1 unit), captions.list (50) and captions.download (200), and the revocation
// of a grant at Google's OAuth endpoint.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"google.golang.org/api/googleapi"
	"google.golang.org/api/option"
	yt "google.golang.org/api/youtube/v3"

	"github.com/creatorstrategy/css/shared/connection"
	"github.com/creatorstrategy/css/shared/transcript"
)

// Owner makes the owner's calls on the Data API at Endpoint ("" for Google's).
type Owner struct {
	Endpoint string
}

// MaxCaptionBytes bounds a downloaded caption track (a 12-hour stream's WebVTT is a few MB at most).
const MaxCaptionBytes = 8 << 20

func (o Owner) service(ctx context.Context, client *http.Client) (*yt.Service, error) {
	opts := []option.ClientOption{option.WithHTTPClient(client), option.WithLogger(slog.New(slog.DiscardHandler))}
	if o.Endpoint != "" {
		opts = append(opts, option.WithEndpoint(o.Endpoint))
	}
	svc, err := yt.NewService(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("youtube: %w", err)
	}
	return svc, nil
}

// OwnedChannel reads the channel the client's token belongs to (channels.list mine=true).
func (o Owner) OwnedChannel(ctx context.Context, client *http.Client) (connection.OwnedChannel, error) {
	svc, err := o.service(ctx, client)
	if err != nil {
		return connection.OwnedChannel{}, err
	}
	res, err := svc.Channels.List([]string{"snippet"}).Mine(true).Context(ctx).Do()
	if err != nil {
		return connection.OwnedChannel{}, ownerError("channels.list", err)
	}
	if len(res.Items) == 0 || res.Items[0].Snippet == nil {
		return connection.OwnedChannel{}, errors.New("youtube: the account has no YouTube channel")
	}
	c := res.Items[0]
	return connection.OwnedChannel{ID: c.Id, Title: c.Snippet.Title, Language: c.Snippet.DefaultLanguage}, nil
}

// List lists a video's caption tracks (captions.list). A video the token's channel does not own answers
// transcript.ErrNotOwnVideo.
func (o Owner) List(ctx context.Context, client *http.Client, videoID string) ([]transcript.Track, error) {
	svc, err := o.service(ctx, client)
	if err != nil {
		return nil, err
	}
	res, err := svc.Captions.List([]string{"snippet"}, videoID).Context(ctx).Do()
	if err != nil {
		return nil, ownerError("captions.list", err)
	}
	out := make([]transcript.Track, 0, len(res.Items))
	for _, it := range res.Items {
		if it.Snippet == nil {
			continue
		}
		s := it.Snippet
		out = append(out, transcript.Track{ID: it.Id, Language: s.Language, Kind: strings.ToLower(s.TrackKind),
			Name: s.Name, LastUpdated: s.LastUpdated, Draft: s.IsDraft})
	}
	return out, nil
}

// Download fetches a caption track as WebVTT (captions.download tfmt=vtt).
func (o Owner) Download(ctx context.Context, client *http.Client, trackID string) ([]byte, error) {
	svc, err := o.service(ctx, client)
	if err != nil {
		return nil, err
	}
	res, err := svc.Captions.Download(trackID).Tfmt("vtt").Context(ctx).Download()
	if err != nil {
		return nil, ownerError("captions.download", err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(io.LimitReader(res.Body, MaxCaptionBytes+1))
	if err != nil {
		return nil, fmt.Errorf("youtube: captions.download: %w", err)
	}
	if len(body) > MaxCaptionBytes {
		return nil, fmt.Errorf("youtube: captions.download: the track is over %d bytes", MaxCaptionBytes)
	}
	return body, nil
}

// ownerError maps the API's refusal of another channel's video (403 forbidden, 404 not found) to
// transcript.ErrNotOwnVideo; anything else keeps the API's message (never the token).
func ownerError(call string, err error) error {
	var ge *googleapi.Error
	if errors.As(err, &ge) {
		if ge.Code == http.StatusForbidden && reasonOf(err) != "quotaExceeded" || ge.Code == http.StatusNotFound {
			return fmt.Errorf("%w: %s %d %s", transcript.ErrNotOwnVideo, call, ge.Code, reasonOf(err))
		}
		return fmt.Errorf("youtube: %s: %d %s: %s", call, ge.Code, reasonOf(err), ge.Message)
	}
	return fmt.Errorf("youtube: %s: %w", call, err)
}

// Revoker revokes grants at Google's revocation endpoint (RFC 7009 style: POST token=...).
type Revoker struct {
	// Endpoint is the revocation URL (default https://oauth2.googleapis.com/revoke).
	Endpoint   string
	HTTPClient *http.Client
}

// GoogleRevokeEndpoint is Google's revocation URL.
const GoogleRevokeEndpoint = "https://oauth2.googleapis.com/revoke"

// Revoke revokes token (refresh or access; Google revokes the whole grant). A token Google answers
// invalid_token for is gone already: not an error.
func (r Revoker) Revoke(ctx context.Context, token string) error {
	endpoint := r.Endpoint
	if endpoint == "" {
		endpoint = GoogleRevokeEndpoint
	}
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
