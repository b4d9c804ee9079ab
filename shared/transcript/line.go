package transcript

import (
	"strconv"
	"strings"
	"time"
)

// LineAt returns the text of the line of a transcript as Text writes it ("H:MM:SS text" per cue) that is
// being spoken at at: the last line starting at or before it ("" when none does, or past the end).
func LineAt(text string, at time.Duration) string {
	found := ""
	for line := range strings.Lines(text) {
		stamp, rest, ok := strings.Cut(strings.TrimSpace(line), " ")
		if !ok {
			continue
		}
		parts := strings.Split(stamp, ":")
		if len(parts) != 3 {
			continue
		}
		var secs int
		for _, p := range parts {
			n, err := strconv.Atoi(p)
			if err != nil || n < 0 {
				secs = -1
				break
			}
			secs = secs*60 + n
		}
		if secs < 0 || time.Duration(secs)*time.Second > at {
			if secs >= 0 {
				break // lines are in time order
			}
			continue
		}
		found = rest
	}
	if found == endOfVideo {
		return ""
	}
	return found
}
