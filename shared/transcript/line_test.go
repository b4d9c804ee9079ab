package transcript

import (
	"testing"
	"time"
)

func TestLineAt(t *testing.T) {
	text := Text([]Cue{{Start: 0, End: 4 * time.Second, Text: "hi there"}, {Start: 65 * time.Second, End: 70 * time.Second, Text: "the recipe"},
		{Start: 3700 * time.Second, End: 3710 * time.Second, Text: "bye"}})
	for _, c := range []struct {
		at   time.Duration
		want string
	}{
		{0, "hi there"}, {64 * time.Second, "hi there"}, {65 * time.Second, "the recipe"}, {3699 * time.Second, "the recipe"},
		{3705 * time.Second, "bye"}, {4000 * time.Second, ""}, // past the last cue's end: the "(end of video)" line
	} {
		if got := LineAt(text, c.at); got != c.want {
			t.Errorf("LineAt(%v) = %q, want %q", c.at, got, c.want)
		}
	}
	if got := LineAt("not a transcript", time.Minute); got != "" {
		t.Errorf("plain text: %q", got)
	}
}
