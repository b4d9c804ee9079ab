package transcript

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/creatorstrategy/css/shared/apperr"
	"github.com/creatorstrategy/css/shared/connection"
	"github.com/creatorstrategy/css/shared/quota"
)

// What the captions calls cost (the units bucket, shared/quota): one transcript spends both, at most.
var (
	ListCost     = quota.CaptionsList
	DownloadCost = quota.CaptionsDownload
)

// Track is a caption track of a video (captions.list).
type Track struct {
	ID, Language, Kind, Name string
	// LastUpdated is the track's version: a cached transcript of an older version is fetched again.
	LastUpdated string
	Draft       bool
}

// Kinds of track (the API's snippet.trackKind).
const (
	KindStandard = "standard"
	KindASR      = "asr"
	KindForced   = "forced"
)

// ErrNotOwnVideo is what Captions answers when the API refuses the video to the owner's token (another
// channel's video, or none at all).
var ErrNotOwnVideo = errors.New("transcript: not a video of the connected channel")

// Captions speaks the captions API with an owner's client (shared/youtube).
type Captions interface {
	List(ctx context.Context, client *http.Client, videoID string) ([]Track, error)
	Download(ctx context.Context, client *http.Client, trackID string) ([]byte, error)
}

// Connections is the channel's YouTube connection (*connection.Service).
type Connections interface {
	OwnerClient(ctx context.Context, channelID string) (*http.Client, string, error)
	Get(ctx context.Context, channelID string) (connection.Connection, error)
}

// Cache keeps fetched transcripts per channel, video and track version (*store.Store).
type Cache interface {
	CachedTranscript(ctx context.Context, channelID, videoID, trackID, version string) (string, bool, error)
	PutTranscript(ctx context.Context, channelID, videoID, trackID, version, text string) error
}

// Budget counts the quota spent in the day's budget and the account's share (*research.Service).
type Budget interface {
	SpendQuota(ctx context.Context, channelID string, cost quota.Cost) error
}

// Service fetches transcripts of the connected channel's own videos.
type Service struct {
	Connections Connections
	Captions    Captions
	Cache       Cache
	Budget      Budget
}

// ErrNoTranscript: the video is the channel's, but has no usable caption track.
var ErrNoTranscript = errors.New("transcript: the video has no caption track")

// NotOwnMessage is the refusal of decision 41.
const NotOwnMessage = "transcripts are fetched only for the connected channel's own videos; send transcript"

func notOwn(detail string) error {
	return apperr.Invalid("videoUrl", "%s (%s)", NotOwnMessage, detail)
}

// Transcript returns the timed text (Text) of the video at videoURL, which must be one of channelID's
// connected YouTube channel's own videos: else 400 VALIDATION_ERROR naming videoUrl. ErrNoTranscript when
// the video has no caption track.
func (s *Service) Transcript(ctx context.Context, channelID, videoURL string) (string, error) {
	videoID, ok := VideoID(videoURL)
	if !ok {
		return "", notOwn("not a YouTube video URL")
	}
	client, _, err := s.Connections.OwnerClient(ctx, channelID)
	switch {
	case errors.Is(err, connection.ErrNotConnected):
		return "", notOwn("this channel has no YouTube connection")
	case errors.Is(err, connection.ErrNeedsReconnect):
		return "", notOwn("the YouTube connection needs reconnecting")
	case apperr.CodeOf(err) == apperr.Unavailable:
		return "", notOwn("the YouTube connection is not configured")
	case err != nil:
		return "", err
	}
	if err := s.Budget.SpendQuota(ctx, channelID, ListCost); err != nil {
		return "", err
	}
	tracks, err := s.Captions.List(ctx, client, videoID)
	if errors.Is(err, ErrNotOwnVideo) {
		return "", notOwn("video " + videoID + " is not one of the connected channel's videos")
	}
	if errors.Is(err, connection.ErrNeedsReconnect) {
		return "", notOwn("the YouTube connection needs reconnecting")
	}
	if err != nil {
		return "", fmt.Errorf("transcript: captions.list: %w", err)
	}
	conn, err := s.Connections.Get(ctx, channelID)
	if err != nil {
		return "", err
	}
	track, ok := Pick(tracks, conn.Language)
	if !ok {
		return "", ErrNoTranscript
	}
	if text, hit, err := s.Cache.CachedTranscript(ctx, channelID, videoID, track.ID, track.LastUpdated); err != nil {
		return "", err
	} else if hit {
		return text, nil
	}
	if err := s.Budget.SpendQuota(ctx, channelID, DownloadCost); err != nil {
		return "", err
	}
	raw, err := s.Captions.Download(ctx, client, track.ID)
	if errors.Is(err, ErrNotOwnVideo) {
		return "", notOwn("the caption track of video " + videoID + " is not the connected channel's")
	}
	if errors.Is(err, connection.ErrNeedsReconnect) {
		return "", notOwn("the YouTube connection needs reconnecting")
	}
	if err != nil {
		return "", fmt.Errorf("transcript: captions.download: %w", err)
	}
	cues, ok := Parse(string(raw))
	if !ok {
		return "", ErrNoTranscript
	}
	text := Text(cues)
	if err := s.Cache.PutTranscript(ctx, channelID, videoID, track.ID, track.LastUpdated, text); err != nil {
		return "", err
	}
	return text, nil
}

// Pick chooses the track to read (decision 41): a manual (standard) track in the channel's language, then
// any manual track, then an automatic one in the channel's language, then any automatic one. Drafts and
// forced-subtitle tracks are never read.
func Pick(tracks []Track, language string) (Track, bool) {
	rank := func(t Track) int {
		same := language != "" && sameLanguage(t.Language, language)
		switch {
		case t.Draft || t.Kind == KindForced:
			return -1
		case t.Kind == KindStandard && same:
			return 4
		case t.Kind == KindStandard:
			return 3
		case same:
			return 2
		default:
			return 1
		}
	}
	best, bestRank := Track{}, 0
	for _, t := range tracks {
		if r := rank(t); r > bestRank {
			best, bestRank = t, r
		}
	}
	return best, bestRank > 0
}

// sameLanguage compares BCP-47 tags by their primary language ("en-GB" is "en").
func sameLanguage(a, b string) bool {
	p := func(s string) string { s, _, _ = strings.Cut(strings.ToLower(s), "-"); return s }
	return p(a) == p(b)
}

// validVideoID says whether id has the form of a video id: 11 characters of A-Z, a-z, 0-9, '_' and '-'.
// Checked by hand: a package-level regexp would be compiled in every API function's cold start.
func validVideoID(id string) bool {
	return len(id) == 11 && !strings.ContainsFunc(id, func(c rune) bool {
		return !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-')
	})
}

// VideoID reads the id of a YouTube video URL: youtube.com/watch?v=, youtu.be/, /shorts/, /live/, /embed/.
func VideoID(raw string) (string, bool) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") {
		return "", false
	}
	host := strings.TrimPrefix(strings.ToLower(u.Hostname()), "www.")
	host = strings.TrimPrefix(host, "m.")
	var id string
	switch host {
	case "youtu.be":
		id = strings.Trim(u.Path, "/")
	case "youtube.com", "music.youtube.com":
		if u.Path == "/watch" {
			id = u.Query().Get("v")
			break
		}
		for _, prefix := range []string{"/shorts/", "/live/", "/embed/"} {
			if rest, ok := strings.CutPrefix(u.Path, prefix); ok {
				id = strings.Trim(rest, "/")
			}
		}
	}
	return id, validVideoID(id)
}
