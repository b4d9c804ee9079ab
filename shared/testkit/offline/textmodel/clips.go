package textmodel

import (
	"strings"
)

type clipScript struct {
	Hook string `json:"hook"`
	Body string `json:"body"`
	CTA  string `json:"cta"`
}

type clipOut struct {
	StartTime   string     `json:"startTime"`
	EndTime     string     `json:"endTime"`
	Hook        string     `json:"hook"`
	TextOverlay string     `json:"textOverlay"`
	ClipScript  clipScript `json:"clipScript"`
	Platforms   []string   `json:"platforms"`
}

// Clip bounds: ClipsRequest.clipCount is 1..10, default 5; a clip runs 15 to 60 seconds (the short
// formats' limit), and a video with no transcript is taken to run 10 minutes.
const (
	defaultClipCount = 5
	maxClipCount     = 10
	minClipSeconds   = 15
	maxClipSeconds   = 60
	noTranscriptSecs = 600
)

// platforms are the Clip platforms, in the contract's order.
var platforms = []string{"YouTube Shorts", "TikTok", "Instagram Reels", "Facebook Reels", "LinkedIn"}

// clips cuts the video into clipCount windows of equal length and places one clip of 15 to 60 seconds in
// each, starting where a segment of the transcript starts when it has timestamps; so clips are in order,
// never overlap and stay inside the video. A video too short for clipCount clips of 15 seconds gets as
// many as fit.
func clips(w *writer) any {
	n := defaultClipCount
	if w.in.ClipCount != nil {
		n = min(max(*w.in.ClipCount, 1), maxClipCount)
	}
	t := readTranscript(w.transcriptText())
	dur := t.duration
	if len(t.segments) == 0 {
		dur = noTranscriptSecs
	}
	n = min(n, dur/minClipSeconds)
	out := struct {
		Clips []clipOut `json:"clips"`
	}{Clips: []clipOut{}}
	for i := 0; i < n; i++ {
		winStart, winEnd := dur*i/n, dur*(i+1)/n
		win := winEnd - winStart
		length := min(win, maxClipSeconds)
		if length > minClipSeconds {
			length = minClipSeconds + w.rng.IntN(length-minClipSeconds+1)
			length = max(length, min(win, 25)) // prefer at least 25 s when the window allows
		}
		start := winStart + w.rng.IntN(win-length+1)
		if t.timed {
			// Snap to the latest segment start that still leaves the clip inside its window.
			for _, seg := range t.segments {
				if seg.start >= winStart && seg.start+length <= winEnd && seg.start <= start+10 {
					start = seg.start
				}
			}
		}
		end := start + length
		quote := ""
		if len(t.segments) > 0 {
			quote = firstWords(t.at(start).text, 12)
		}
		hook := w.must(w.L.ClipOverlay, i)
		if quote != "" {
			hook = w.quote(strings.TrimRight(quote, ".,;:!?") + "…")
		}
		c := clipOut{
			StartTime:   hms(start),
			EndTime:     hms(end),
			Hook:        hook,
			TextOverlay: strings.ToUpper(clip(w.must(w.L.ClipOverlay, i+1), 40)),
			ClipScript: clipScript{
				Hook: hook,
				Body: w.must(w.L.ClipBody, i),
				CTA:  w.must(w.L.ClipCTA, i),
			},
			Platforms: w.clipPlatforms(length),
		}
		if i == 0 {
			c.ClipScript.Body = w.mark(c.ClipScript.Body)
		}
		out.Clips = append(out.Clips, c)
	}
	return out
}

// clipPlatforms: every clip suits the short formats; longer ones Facebook too, and LinkedIn when the
// channel earns from professionals (a profit model or sponsors).
func (w *writer) clipPlatforms(length int) []string {
	ps := []string{platforms[0], platforms[1], platforms[2]}
	if length >= 30 {
		ps = append(ps, platforms[3])
	}
	if w.b.Profile.ProfitModel != "" || len(w.b.Profile.Sponsors) > 0 {
		ps = append(ps, platforms[4])
	}
	return ps
}
