package generation_test

import (
	"context"
	"testing"

	"github.com/creatorstrategy/css/shared/contract"
	"github.com/creatorstrategy/css/shared/generation"
	transcriptsrc "github.com/creatorstrategy/css/shared/transcript"
)

// ownCaptions is the connection's transcript of one of the channel's videos: its caption track, read as
// transcript.Service reads one.
type ownCaptions string

func (c ownCaptions) Transcript(context.Context, string, string) (string, error) {
	cues, _ := transcriptsrc.Parse(string(c))
	return transcriptsrc.Text(cues), nil
}

// A video ends where its last cue ends, not where that cue starts (issue 32 item 12): a 40 s transcript
// whose last cue runs from 0:00:30 to 0:00:40 takes a clip ending at 0:00:36, from a sent SRT and from
// the owner's captions alike.
func TestClipsReachTheLastCuesEnd(t *testing.T) {
	const srt = "1\n00:00:00,000 --> 00:00:15,000\nwelcome to the kitchen\n\n" +
		"2\n00:00:15,000 --> 00:00:30,000\nthree cheap lunches\n\n" +
		"3\n00:00:30,000 --> 00:00:40,000\nand the one I make most\n"
	const vtt = "WEBVTT\n\n00:00:00.000 --> 00:00:15.000\nwelcome to the kitchen\n\n" +
		"00:00:15.000 --> 00:00:30.000\nthree cheap lunches\n\n00:00:30.000 --> 00:00:40.000\nand the one I make most\n"
	const answer = `{"clips":[` +
		`{"startTime":"0:00:00","endTime":"0:00:18","hook":"h","clipScript":{"hook":"h","body":"b","cta":"c"}},` +
		`{"startTime":"0:00:20","endTime":"0:00:36","hook":"h","clipScript":{"hook":"h","body":"b","cta":"c"}}]}`
	for _, c := range []struct {
		name     string
		in       contract.ClipsRequest
		captions ownCaptions
	}{
		{"sent SRT", contract.ClipsRequest{Title: "Cheap lunches", Transcript: contract.Ptr(srt)}, ""},
		{"owner's captions", contract.ClipsRequest{Title: "Cheap lunches", VideoURL: contract.Ptr("https://youtu.be/video000001")}, vtt},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t, 100, func(_ *env, cfg *generation.Config) {
				if c.captions != "" {
					cfg.Transcripts = c.captions
				}
			})
			e.writer.answers[generation.TaskClips] = []string{answer}
			if err := c.in.Validate(); err != nil {
				t.Fatal(err)
			}
			out, err := e.gen.Submit(context.Background(), generation.Submission{Operation: "generateClips",
				ChannelID: "ch1", AccountID: "acct1", Body: &c.in})
			if err != nil || !out.Done {
				t.Fatalf("clips: %v (done %v)", err, out.Done)
			}
			if _, err := contract.ValidateJSON("ClipsResult", out.Output); err != nil {
				t.Fatalf("%v\n%s", err, out.Output)
			}
		})
	}
}
