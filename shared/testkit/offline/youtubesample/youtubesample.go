// Package youtubesample is the offline research sample, a stand-in of the local stack and the tests that
// no Lambda links: the research source when no YouTube API key is configured. It is a deterministic
// sample corpus built from the niche's keywords (the same niche and day give the same channels, videos and
// statistics), labelled "offline sample" on every run and video, so a newcomer sees the whole pipeline work
// without a key. It spends no quota. Its videos link to offline-sample.invalid, a name that never
// resolves, so no one mistakes them for real ones.
package youtubesample

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/creatorstrategy/css/shared/research"
)

// Host is where the sample's videos and thumbnails "live": the .invalid top-level domain never resolves
// (RFC 2606).
const Host = "offline-sample.invalid"

// Sizes of a niche's corpus.
const (
	Channels   = 24
	minUploads = 40
	maxUploads = 80
)

// Source is the offline sample. The zero value is not usable; call New.
type Source struct {
	now func() time.Time

	mu      sync.Mutex
	catalog map[string]*Catalog // by niche key and day; a handful at most
}

// New returns the offline source; now is the clock the corpus's dates count back from (by whole days).
func New(now func() time.Time) *Source {
	if now == nil {
		now = time.Now
	}
	return &Source{now: now, catalog: map[string]*Catalog{}}
}

// Label implements research.Source.
func (*Source) Label() string { return research.SourceOffline }

// Metered implements research.Source: the sample costs no quota.
func (*Source) Metered() bool { return false }

// catalogsKept bounds the corpora kept in memory.
const catalogsKept = 8

func (s *Source) corpus(n research.Niche) *Catalog {
	day := s.now().UTC().Truncate(24 * time.Hour)
	key := n.Key(research.SourceOffline) + day.Format(time.DateOnly)
	s.mu.Lock()
	defer s.mu.Unlock()
	if c, ok := s.catalog[key]; ok {
		return c
	}
	if len(s.catalog) >= catalogsKept {
		clear(s.catalog)
	}
	c := Corpus(n, day)
	s.catalog[key] = c
	return c
}

// Search implements research.Source.
func (s *Source) Search(ctx context.Context, q research.SearchQuery) (research.SearchPage, error) {
	if err := ctx.Err(); err != nil {
		return research.SearchPage{}, err
	}
	c := s.corpus(q.Niche)
	return c.Search(q)
}

// Channels implements research.Source.
func (s *Source) Channels(ctx context.Context, q research.ChannelsQuery) (research.ChannelsPage, error) {
	if err := ctx.Err(); err != nil {
		return research.ChannelsPage{}, err
	}
	c := s.corpus(q.Niche)
	var out research.ChannelsPage
	for _, id := range q.IDs {
		if ch, ok := c.channel[id]; ok {
			out.Channels = append(out.Channels, ch.Channel)
		}
	}
	return out, nil
}

// Uploads implements research.Source.
func (s *Source) Uploads(ctx context.Context, q research.UploadsQuery) (research.UploadsPage, error) {
	if err := ctx.Err(); err != nil {
		return research.UploadsPage{}, err
	}
	return s.corpus(q.Niche).Uploads(q.PlaylistID, q.MaxResults, q.PageToken)
}

// Videos implements research.Source.
func (s *Source) Videos(ctx context.Context, q research.VideosQuery) (research.VideosPage, error) {
	if err := ctx.Err(); err != nil {
		return research.VideosPage{}, err
	}
	c := s.corpus(q.Niche)
	var out research.VideosPage
	for _, id := range q.IDs {
		if v, ok := c.video[id]; ok {
			out.Videos = append(out.Videos, v)
		}
	}
	return out, nil
}

// VideoStats implements research.Source: the statistics of the sample's videos.
func (s *Source) VideoStats(ctx context.Context, q research.VideosQuery) (research.StatsPage, error) {
	if err := ctx.Err(); err != nil {
		return research.StatsPage{}, err
	}
	c := s.corpus(q.Niche)
	var out research.StatsPage
	for _, id := range q.IDs {
		if v, ok := c.video[id]; ok {
			out.Stats = append(out.Stats, research.VideoStat{ID: v.ID, PublishedAt: v.PublishedAt,
				DurationSeconds: v.DurationSeconds, Views: v.Views, Likes: v.Likes, Comments: v.Comments})
		}
	}
	return out, nil
}

// Catalog is a niche's sample corpus: channels with their uploads, newest first. The YouTube adapter's
// tests serve one over the Data API's wire format.
type Catalog struct {
	Channels []CatalogChannel
	channel  map[string]*CatalogChannel
	video    map[string]research.SourceVideo
	playlist map[string]*CatalogChannel
}

// CatalogChannel is a channel and its uploads, newest first.
type CatalogChannel struct {
	research.Channel
	Uploads []research.SourceVideo
}

// Video returns a video of the catalog.
func (c *Catalog) Video(id string) (research.SourceVideo, bool) {
	v, ok := c.video[id]
	return v, ok
}

// Channel returns a channel of the catalog, with its uploads.
func (c *Catalog) Channel(id string) (*CatalogChannel, bool) {
	ch, ok := c.channel[id]
	return ch, ok
}

// Search returns a page of the videos matching any of the query's terms (in title or description),
// published after q.PublishedAfter, in q.Order; the page token is the offset.
func (c *Catalog) Search(q research.SearchQuery) (research.SearchPage, error) {
	if q.MaxResults < 1 || q.MaxResults > research.MaxResults {
		return research.SearchPage{}, &research.SourceError{Kind: research.ErrSourceFailed,
			Err: fmt.Errorf("maxResults must be 1..%d, not %d", research.MaxResults, q.MaxResults)}
	}
	offset, err := parseToken(q.PageToken)
	if err != nil {
		return research.SearchPage{}, err
	}
	type match struct {
		v     research.SourceVideo
		terms int
	}
	var ms []match
	for _, ch := range c.Channels {
		for _, v := range ch.Uploads {
			if !v.PublishedAt.After(q.PublishedAfter) {
				continue
			}
			text := strings.ToLower(v.Title + "\n" + v.Description)
			n := 0
			for _, t := range q.Terms {
				if t = strings.ToLower(strings.TrimSpace(t)); t != "" && strings.Contains(text, t) {
					n++
				}
			}
			if n > 0 {
				ms = append(ms, match{v, n})
			}
		}
	}
	slices.SortFunc(ms, func(a, b match) int {
		var r int
		switch q.Order {
		case research.OrderDate:
			r = b.v.PublishedAt.Compare(a.v.PublishedAt)
		case research.OrderRelevance:
			r = cmp.Compare(b.terms, a.terms)
		}
		return cmp.Or(r, cmp.Compare(b.v.Views, a.v.Views), cmp.Compare(a.v.ID, b.v.ID))
	})
	var out research.SearchPage
	for _, m := range ms[min(offset, len(ms)):min(offset+q.MaxResults, len(ms))] {
		out.Hits = append(out.Hits, research.SearchHit{VideoID: m.v.ID, ChannelID: m.v.ChannelID,
			ChannelTitle: m.v.ChannelTitle, Title: m.v.Title, PublishedAt: m.v.PublishedAt})
	}
	if offset+q.MaxResults < len(ms) {
		out.NextPageToken = token(offset + q.MaxResults)
	}
	return out, nil
}

// Uploads returns a page of an uploads playlist, newest first; an unknown playlist is an empty page.
func (c *Catalog) Uploads(playlistID string, maxResults int, pageToken string) (research.UploadsPage, error) {
	if maxResults < 1 || maxResults > research.MaxResults {
		return research.UploadsPage{}, &research.SourceError{Kind: research.ErrSourceFailed,
			Err: fmt.Errorf("maxResults must be 1..%d, not %d", research.MaxResults, maxResults)}
	}
	offset, err := parseToken(pageToken)
	if err != nil {
		return research.UploadsPage{}, err
	}
	ch, ok := c.playlist[playlistID]
	if !ok {
		return research.UploadsPage{}, nil
	}
	var out research.UploadsPage
	for _, v := range ch.Uploads[min(offset, len(ch.Uploads)):min(offset+maxResults, len(ch.Uploads))] {
		out.VideoIDs = append(out.VideoIDs, v.ID)
	}
	if offset+maxResults < len(ch.Uploads) {
		out.NextPageToken = token(offset + maxResults)
	}
	return out, nil
}

// Page tokens are opaque to callers; here they carry an offset.
func token(offset int) string { return "p" + strconv.Itoa(offset) }

func parseToken(t string) (int, error) {
	if t == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(strings.TrimPrefix(t, "p"))
	if err != nil || n < 0 || !strings.HasPrefix(t, "p") {
		return 0, &research.SourceError{Kind: research.ErrSourceFailed, Err: fmt.Errorf("invalid page token %q", t)}
	}
	return n, nil
}

// Corpus builds the niche's sample corpus as of day: Channels channels of minUploads..maxUploads uploads
// each, one every few days back from day, some beyond a year old; each channel with its own usual views
// and a few outliers far above them; about a third Shorts.
func Corpus(n research.Niche, day time.Time) *Catalog {
	sum := sha256.Sum256([]byte(n.Key(research.SourceOffline)))
	rng := rand.New(rand.NewPCG(binary.BigEndian.Uint64(sum[:8]), binary.BigEndian.Uint64(sum[8:16])))
	day = day.UTC().Truncate(24 * time.Hour)
	kws := n.Keywords
	if len(kws) == 0 {
		kws = []string{"video"}
	}
	channels := make([]CatalogChannel, Channels)
	suffixes, templates := channelSuffixes(), titleTemplates()
	for i := range channels {
		chID := "UC" + ident(sum[:], "channel", i, 22)
		title := fmt.Sprintf("%s %s (offline sample)", titleCase(kws[i%len(kws)]), suffixes[i%len(suffixes)])
		usual := math.Exp(math.Log(2_000) + rng.Float64()*(math.Log(400_000)-math.Log(2_000)))
		ch := CatalogChannel{Channel: research.Channel{ID: chID, Title: title, UploadsPlaylistID: "UU" + chID[2:],
			Subscribers: int64(usual * (10 + rng.Float64()*40))}}
		count := minUploads + rng.IntN(maxUploads-minUploads+1)
		age := rng.Float64() * 3 // days since the last upload
		for j := 0; j < count; j++ {
			v := sampleVideo(rng, sum[:], i, j, ch.Channel, kws, n.Focus, templates, usual, day, age)
			ch.Uploads = append(ch.Uploads, v)
			age += 2 + rng.Float64()*8
		}
		channels[i] = ch
	}
	return NewCatalog(channels...)
}

func sampleVideo(rng *rand.Rand, seed []byte, ch, j int, channel research.Channel, kws []string, focus string, templates []string, usual float64, day time.Time, ageDays float64) research.SourceVideo {
	kw := kws[rng.IntN(len(kws))]
	other := kws[(slices.Index(kws, kw)+1+rng.IntN(max(len(kws)-1, 1)))%len(kws)]
	tpl := templates[rng.IntN(len(templates))]
	title := strings.NewReplacer("{kw}", titleCase(kw), "{kw2}", titleCase(other), "{n}", strconv.Itoa(3+rng.IntN(9)),
		"{year}", strconv.Itoa(day.Year())).Replace(tpl)
	short := rng.Float64() < 0.33
	duration := 240 + rng.IntN(2160)
	if short {
		duration = 15 + rng.IntN(166)
	}
	published := day.Add(-time.Duration(ageDays * float64(24*time.Hour))).Truncate(time.Second)
	// Views grow over a video's first two weeks; a few videos break out far beyond the channel's usual.
	views := usual * math.Exp(rng.NormFloat64()*0.6) * math.Min(1, (ageDays+0.5)/14)
	if rng.Float64() < 0.06 {
		views *= 4 + rng.Float64()*21
	}
	id := ident(seed, "video", ch*1000+j, 11)
	desc := fmt.Sprintf("Everything about %s: %s. Part of our %s series.", kw, cmp.Or(focus, kw), strings.ToLower(channel.Title))
	if rng.Float64() < 0.5 {
		desc = "0:00 Intro\n1:12 " + titleCase(kw) + "\n4:30 Results\n\n" + desc
	}
	if rng.Float64() < 0.4 {
		desc += " Resources: https://" + Host + "/links/" + id
	}
	if rng.Float64() < 0.3 {
		desc += " #" + strings.ReplaceAll(kw, " ", "")
	}
	return research.SourceVideo{
		ID: id, ChannelID: channel.ID, ChannelTitle: channel.Title, Title: title, Description: desc,
		Tags:        []string{kw, other, "offline sample"},
		PublishedAt: published, DurationSeconds: duration, Views: int64(views),
		Likes: int64(views * (0.01 + rng.Float64()*0.04)), Comments: int64(views * rng.Float64() * 0.004),
		ThumbnailURL: "https://" + Host + "/thumbnails/" + id + ".jpg",
		URL:          "https://" + Host + "/watch?v=" + id,
	}
}

func channelSuffixes() []string {
	return []string{"Lab", "Kitchen", "Academy", "Daily", "Studio", "Explained", "Club", "Hub", "Weekly", "Works"}
}

func titleTemplates() []string {
	return []string{
		"{n} {kw} Mistakes Everyone Makes",
		"How to Get Started with {kw}",
		"{kw} vs {kw2}: Which Is Better?",
		"I Tried {kw} for 30 Days",
		"Why {kw} Is Harder Than You Think",
		"The Truth About {kw}",
		"{kw} for Beginners (Complete Guide)",
		"{n} {kw} Tips I Wish I Knew Sooner",
		"Is {kw} Worth It in {year}?",
		"My {kw} Routine",
		"{kw} on a Budget",
		"Stop Doing This With {kw}",
		"{kw} Explained in {n} Minutes",
		"Ranking Every {kw} Trick",
		"{kw} Review: An Honest Opinion",
	}
}

// ident derives an id of n characters of YouTube's alphabet from the corpus seed, a kind and an index.
func ident(seed []byte, kind string, i, n int) string {
	h := sha256.Sum256(fmt.Appendf(slices.Clone(seed), "/%s/%d", kind, i))
	return base64.RawURLEncoding.EncodeToString(h[:])[:n]
}

func titleCase(s string) string {
	words := strings.Fields(s)
	for i, w := range words {
		r := []rune(w)
		r[0] = unicode.ToUpper(r[0])
		words[i] = string(r)
	}
	return strings.Join(words, " ")
}
