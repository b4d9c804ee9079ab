package generation

import "github.com/creatorstrategy/css/shared/brief"

// The brief types live in shared/brief, below generation, so the model port can carry them typed without
// importing generation; these names keep generation's callers as they were.
type (
	// Brief is the material a prompt is written from (see brief.Brief).
	Brief = brief.Brief
	// BriefNote is a creator note as a prompt sees it.
	BriefNote = brief.Note
	// BriefSeries is the series a script follows.
	BriefSeries = brief.Series
	// ResearchVideo is a research video as pattern analysis reads it.
	ResearchVideo = brief.Video
	// Outlier is a research video that did far better than its channel's usual.
	Outlier = brief.Outlier
)
