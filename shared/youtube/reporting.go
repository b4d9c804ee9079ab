package youtube

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"google.golang.org/api/googleapi"
	yr "google.golang.org/api/youtubereporting/v1"

	"github.com/creatorstrategy/css/shared/ownperf"
)

// reporting is ownperf.ReportingAPI on the YouTube Reporting API v1 for the token's own channel
// (decision 51): jobs.list, jobs.create, jobs.reports.list and media.download. Its calls have their own
// quota, not the Data API's units.
type reporting struct{ svc *yr.Service }

// MaxReportBytes bounds a downloaded report (a daily reach report of a large channel is a few MB).
const MaxReportBytes = 64 << 20

// reportingErr names the call; a 403 other than quota is ownperf.ErrReportingForbidden, a 404
// ownperf.ErrJobGone.
func reportingErr(call string, err error) error {
	var ge *googleapi.Error
	if errors.As(err, &ge) {
		switch {
		case ge.Code == http.StatusNotFound:
			return fmt.Errorf("%w: %s: %s", ownperf.ErrJobGone, call, ge.Message)
		case ge.Code == http.StatusForbidden && !strings.Contains(strings.ToLower(reasonOf(err)), "quota"):
			return fmt.Errorf("%w: %s: %s", ownperf.ErrReportingForbidden, call, ge.Message)
		}
	}
	return fmt.Errorf("youtube reporting: %s: %w", call, err)
}

// Jobs implements ownperf.ReportingAPI (every page).
func (r reporting) Jobs(ctx context.Context) ([]ownperf.ReportingJob, error) {
	var out []ownperf.ReportingJob
	err := r.svc.Jobs.List().Pages(ctx, func(res *yr.ListJobsResponse) error {
		for _, j := range res.Jobs {
			out = append(out, ownperf.ReportingJob{ID: j.Id, ReportTypeID: j.ReportTypeId, CreatedAt: parseTime(j.CreateTime)})
		}
		return nil
	})
	if err != nil {
		return nil, reportingErr("jobs.list", err)
	}
	return out, nil
}

// CreateJob implements ownperf.ReportingAPI.
func (r reporting) CreateJob(ctx context.Context, reportType, name string) (ownperf.ReportingJob, error) {
	j, err := r.svc.Jobs.Create(&yr.Job{ReportTypeId: reportType, Name: name}).Context(ctx).Do()
	if err != nil {
		return ownperf.ReportingJob{}, reportingErr("jobs.create", err)
	}
	return ownperf.ReportingJob{ID: j.Id, ReportTypeID: j.ReportTypeId, CreatedAt: parseTime(j.CreateTime)}, nil
}

// Reports implements ownperf.ReportingAPI (one page, createdAfter).
func (r reporting) Reports(ctx context.Context, jobID string, createdAfter time.Time, pageToken string) ([]ownperf.ReportFile, string, error) {
	call := r.svc.Jobs.Reports.List(jobID).PageToken(pageToken)
	if !createdAfter.IsZero() {
		call.CreatedAfter(createdAfter.UTC().Format(time.RFC3339Nano))
	}
	res, err := call.Context(ctx).Do()
	if err != nil {
		return nil, "", reportingErr("jobs.reports.list", err)
	}
	out := make([]ownperf.ReportFile, 0, len(res.Reports))
	for _, rep := range res.Reports {
		out = append(out, ownperf.ReportFile{ID: rep.Id, CreatedAt: parseTime(rep.CreateTime), DownloadURL: rep.DownloadUrl})
	}
	return out, res.NextPageToken, nil
}

// Download implements ownperf.ReportingAPI: media.download of the report's downloadUrl, always at the
// configured endpoint (the token is never sent where an answer points), its size bounded.
func (r reporting) Download(ctx context.Context, f ownperf.ReportFile) (io.ReadCloser, error) {
	u, err := url.Parse(f.DownloadURL)
	if err != nil {
		return nil, reportingErr("media.download", err)
	}
	name, ok := strings.CutPrefix(u.Path, "/v1/media/")
	if !ok || name == "" {
		return nil, reportingErr("media.download", fmt.Errorf("downloadUrl %q is not a media URL", f.DownloadURL))
	}
	res, err := r.svc.Media.Download(name).Context(ctx).Download()
	if err != nil {
		return nil, reportingErr("media.download", err)
	}
	return struct {
		io.Reader
		io.Closer
	}{limitedReader(res.Body, MaxReportBytes), res.Body}, nil
}

// limitedReader reads r and fails past n bytes, rather than parsing a cut report.
func limitedReader(r io.Reader, n int64) io.Reader {
	return &capped{r: io.LimitReader(r, n+1), left: n}
}

type capped struct {
	r    io.Reader
	left int64
}

func (c *capped) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.left -= int64(n)
	if c.left < 0 {
		// Not a report the sync can read, however often it tries: skipped and counted, as a malformed one.
		return n, &ownperf.ParseError{Reason: fmt.Sprintf("the report is over %d bytes", MaxReportBytes)}
	}
	return n, err
}
