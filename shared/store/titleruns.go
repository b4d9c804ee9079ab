package store

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/creatorstrategy/css/shared/generation"
)

// TitleRunOutputs returns the outputs of the channel's newest n title runs whose search text holds text
// (lower case): where a linked video's title score is looked up (ownperf.TitleRuns, decision 52). It reads
// the channel's run summaries, as a history search does, once per video reviewed.
func (s *Store) TitleRunOutputs(ctx context.Context, channelID, text string, n int) ([]json.RawMessage, error) {
	runs, _, err := s.RunPage(ctx, channelID, generation.ToolTitles,
		func(sum generation.Summary) bool {
			return sum.Tool == generation.ToolTitles && strings.Contains(sum.Text, text)
		}, n, 0)
	if err != nil {
		return nil, err
	}
	out := make([]json.RawMessage, 0, len(runs))
	for _, r := range runs {
		if o := gjson.GetBytes(r, "output"); o.IsObject() {
			out = append(out, json.RawMessage(o.Raw))
		}
	}
	return out, nil
}
