package textmodel

import (
	"regexp"
	"strconv"
	"strings"
)

// segment is a stretch of a transcript: where it starts (seconds) and what is said.
type segment struct {
	start int
	text  string
}

// transcript is a video's words as the clips and chapters use them.
type transcript struct {
	segments []segment
	duration int  // seconds
	timed    bool // the segments' times come from the transcript's own timestamps
}

// stamp matches a timestamp opening a line: "0:00", "1:02:03", "[00:01:23]", "(12:05)", an SRT
// "00:00:01,000 --> 00:00:04,000" (its end time ignored).
var stamp = regexp.MustCompile(`^\s*[\[(]?((?:\d{1,2}:)?\d{1,2}:\d{2})(?:[.,]\d+)?[\])]?(?:\s*-->\s*[\d:.,]+)?\s*[-–—:]?\s*`)

// readTranscript reads a transcript with timestamps when its lines carry them, else spreads its words at
// 150 a minute over sentence-sized segments.
func readTranscript(text string) transcript {
	text = strings.TrimSpace(text)
	if text == "" {
		return transcript{}
	}
	var t transcript
	for _, ln := range strings.Split(text, "\n") {
		m := stamp.FindStringSubmatchIndex(ln)
		if m == nil {
			if len(t.segments) > 0 {
				// A line without a time continues the segment above (SRT text lines, wrapped lines);
				// SRT sequence numbers are dropped.
				if s := strings.TrimSpace(ln); s != "" && !isNumber(s) {
					last := &t.segments[len(t.segments)-1]
					last.text = strings.TrimSpace(last.text + " " + s)
				}
			}
			continue
		}
		sec := seconds(ln[m[2]:m[3]])
		if n := len(t.segments); n > 0 && sec < t.segments[n-1].start {
			continue // out of order: not a timeline
		}
		t.segments = append(t.segments, segment{start: sec, text: strings.TrimSpace(ln[m[1]:])})
	}
	if len(t.segments) >= 2 {
		t.timed = true
		last := t.segments[len(t.segments)-1]
		t.duration = last.start + max(2, countWords(last.text)*60/wordsPerMinute)
		return t
	}
	// No timeline: one segment every sentence (or every 25 words), timed by the words before it.
	t.segments = nil
	ws := strings.Fields(text)
	start := 0
	for i := range ws {
		end := strings.HasSuffix(ws[i], ".") || strings.HasSuffix(ws[i], "?") || strings.HasSuffix(ws[i], "!")
		if end || i-start >= 24 || i == len(ws)-1 {
			t.segments = append(t.segments, segment{start: start * 60 / wordsPerMinute, text: strings.Join(ws[start:i+1], " ")})
			start = i + 1
		}
	}
	t.duration = max(1, len(ws)*60/wordsPerMinute)
	return t
}

func isNumber(s string) bool {
	_, err := strconv.Atoi(s)
	return err == nil
}

func seconds(ts string) int {
	total := 0
	for _, p := range strings.Split(ts, ":") {
		n, _ := strconv.Atoi(p)
		total = total*60 + n
	}
	return total
}

// at returns the segment being said at second sec.
func (t transcript) at(sec int) segment {
	s := segment{}
	for _, seg := range t.segments {
		if seg.start > sec {
			break
		}
		s = seg
	}
	return s
}

// chapters are a video's chapters as YouTube reads them: the first at 0:00, at least three, each at least
// 10 seconds, titled by what is said there. None for a video under 30 seconds.
func (w *writer) chapters(t transcript) []string {
	if t.duration < 30 || len(t.segments) == 0 {
		return nil
	}
	n := min(max(t.duration/90, 3), 8, t.duration/10)
	var starts []int
	if t.timed {
		// Chapters start where the transcript's segments do, the nearest to an even split.
		for i := 0; i < n; i++ {
			goal := t.duration * i / n
			best := -1
			for _, seg := range t.segments {
				if best < 0 || abs(seg.start-goal) < abs(best-goal) {
					best = seg.start
				}
			}
			if i == 0 {
				best = 0
			}
			if len(starts) > 0 && best < starts[len(starts)-1]+10 {
				continue
			}
			if t.duration-best < 10 {
				continue
			}
			starts = append(starts, best)
		}
	} else {
		for i := 0; i < n; i++ {
			starts = append(starts, t.duration*i/n)
		}
	}
	if len(starts) < 3 {
		return nil
	}
	stop := stopwords(w.L)
	out := make([]string, len(starts))
	seen := map[string]bool{}
	for i, s := range starts {
		title := w.L.ChapterIntro
		if i > 0 {
			title = chapterTitle(t.at(s).text, stop)
			if title == "" || seen[strings.ToLower(title)] {
				// Said before (a transcript that repeats itself): name it by a keyword instead.
				title = upperFirst(w.f.kws[(i-1)%len(w.f.kws)])
				if seen[strings.ToLower(title)] {
					title += " (" + strconv.Itoa(i+1) + ")"
				}
			}
		}
		seen[strings.ToLower(title)] = true
		out[i] = clock(s) + " " + title
	}
	return out
}

// chapterTitle names a chapter by the first words of what is said, from its first content word.
func chapterTitle(text string, stop map[string]bool) string {
	f := strings.Fields(text)
	for i, word := range f {
		lw := strings.ToLower(strings.Trim(word, ".,;:!?\"'“”«»()"))
		if len([]rune(lw)) >= 3 && !stop[lw] {
			return upperFirst(strings.TrimRight(firstWords(strings.Join(f[i:], " "), 5), ".,;:!?"))
		}
	}
	return ""
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}
