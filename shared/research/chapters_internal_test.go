package research

import (
	"regexp"
	"testing"
)

// hasChapterLine says what the pattern it replaced said: on every string of up to five characters over an
// alphabet of the pattern's edges, and on description-like cases.
func TestHasChapterLineMatchesItsPattern(t *testing.T) {
	pattern := regexp.MustCompile(`(?m)^\s*\d{1,2}:\d{2}`)
	const alphabet = "0:9 \n\tx\r\v"
	var all []string
	var grow func(prefix string)
	grow = func(prefix string) {
		all = append(all, prefix)
		if len(prefix) < 5 {
			for i := range len(alphabet) {
				grow(prefix + alphabet[i:i+1])
			}
		}
	}
	grow("")
	all = append(all, "Intro\n0:00 Start\n1:23 Part two", "watch at 12:34", "123:45 too many digits",
		"  \n \t 09:59", "1:2", "1:234", "x\r\n12:00", "\v12:00", "١٢:٣٤ Arabic digits", "12:3x", "a\n\n\n5:55")
	for _, s := range all {
		if got, want := hasChapterLine(s), pattern.MatchString(s); got != want {
			t.Errorf("hasChapterLine(%q) = %v, the pattern says %v", s, got, want)
		}
	}
}
