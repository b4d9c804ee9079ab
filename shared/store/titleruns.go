package store

import (
	"context"
	"encoding/json"

	"github.com/tidwall/gjson"

	"github.com/creatorstrategy/css/shared/generation"
)

// TitleRunOutputs returns the outputs of the channel's newest n title runs: where a linked video's title
// score is looked up (ownperf.TitleRuns, decision 52). The runs' search text holds only the first few
// hundred characters of an output, so the runs are read whole: one index query and a batch read.
func (s *Store) TitleRunOutputs(ctx context.Context, channelID string, n int) ([]json.RawMessage, error) {
	runs, _, err := s.RunPage(ctx, channelID, generation.ToolTitles, nil, n, 0)
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
