package youtubesample_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/creatorstrategy/css/shared/research"
	"github.com/creatorstrategy/css/shared/research/sourcetest"
	"github.com/creatorstrategy/css/shared/testkit/offline/youtubesample"
)

var now = time.Date(2026, 11, 20, 18, 0, 0, 0, time.UTC)

func TestConformance(t *testing.T) {
	sourcetest.Run(t, now, func(*testing.T, research.Niche) research.Source {
		return youtubesample.New(func() time.Time { return now })
	})
}

// The same niche and day give the same corpus; another niche another one; the next day the same channels
// with dates a day later.
func TestCorpusIsDeterministic(t *testing.T) {
	n := sourcetest.Niche()
	a, b := youtubesample.Corpus(n, now), youtubesample.Corpus(n, now.Add(5*time.Hour))
	if !reflect.DeepEqual(a.Channels, b.Channels) {
		t.Fatal("two corpora of the same niche and day differ")
	}
	other := n
	other.Keywords = []string{"woodworking", "tools", "diy", "joinery"}
	if c := youtubesample.Corpus(other, now); c.Channels[0].ID == a.Channels[0].ID {
		t.Fatal("another niche has the same channels")
	}
	next := youtubesample.Corpus(n, now.AddDate(0, 0, 1))
	if next.Channels[0].ID != a.Channels[0].ID || !next.Channels[0].Uploads[0].PublishedAt.Equal(a.Channels[0].Uploads[0].PublishedAt.AddDate(0, 0, 1)) {
		t.Fatal("the next day's corpus is not the same one a day later")
	}
}

// Every video and run of the sample says so: its channel title, its tags and its source label; its links
// point to a domain that never resolves.
func TestLabelledOfflineSample(t *testing.T) {
	src := youtubesample.New(func() time.Time { return now })
	if src.Label() != "offline sample" {
		t.Fatalf("label %q", src.Label())
	}
	c := youtubesample.Corpus(sourcetest.Niche(), now)
	for _, ch := range c.Channels {
		for _, v := range ch.Uploads {
			u := "https://" + youtubesample.Host + "/watch?v=" + v.ID
			if v.URL != u || len(v.ChannelTitle) < len("(offline sample)") || v.ChannelTitle[len(v.ChannelTitle)-16:] != "(offline sample)" {
				t.Fatalf("video %+v is not labelled", v)
			}
		}
	}
}

// A 500-video run needs the corpus to hold well over 500 videos of the last year across enough channels,
// some beyond the year (the window filters them), some Shorts.
func TestCorpusShape(t *testing.T) {
	c := youtubesample.Corpus(sourcetest.Niche(), now)
	inYear, old, shorts := 0, 0, 0
	for _, ch := range c.Channels {
		for _, v := range ch.Uploads {
			if v.PublishedAt.After(now.AddDate(-1, 0, 0)) {
				inYear++
			} else {
				old++
			}
			if v.DurationSeconds <= research.ShortMaxSeconds {
				shorts++
			}
		}
	}
	if len(c.Channels) != youtubesample.Channels || inYear < 800 || old == 0 || shorts < inYear/5 {
		t.Fatalf("%d channels, %d videos of the last year, %d older, %d shorts", len(c.Channels), inYear, old, shorts)
	}
}
