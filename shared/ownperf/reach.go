package ownperf

import (
	"cmp"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Reach (decision 51): impressions and impressions click-through rate per video and day, from the YouTube
// Reporting API's reach report. Analytics' reports.query does not have them.
const (
	// ReachReportType is the report type of the channel's reporting job.
	ReachReportType = "channel_reach_basic_a1"
	// ReachJobName names the job in the owner's account.
	ReachJobName = "Creator Strategy Service reach"
	// FirstReportAfter is about when YouTube makes a new job's first report (with 30 days of history).
	FirstReportAfter = 48 * time.Hour
	// reachKeepDays bounds what an upload keeps: its first 28 days (for its reviews) and the window's.
	reachKeepDays = 28
)

// ReachDay is one video's reach on one day (the report's date, Pacific time). CTR is a fraction (0.052 is
// 5.2%), as the report gives it.
type ReachDay struct {
	Date        string  `json:"date"` // YYYY-MM-DD
	Impressions int64   `json:"impressions"`
	CTR         float64 `json:"ctr"`
}

// ReachState is the channel's reporting job and how far its reports were read.
type ReachState struct {
	JobID        string     `json:"jobId,omitempty"`
	JobCreatedAt *time.Time `json:"jobCreatedAt,omitempty"`
	// LastReportCreated is the newest report read: the next sync lists the ones created after it.
	LastReportCreated *time.Time `json:"lastReportCreated,omitempty"`
	Reports           int        `json:"reports,omitempty"` // reports read so far
	// Unreadable counts reports whose CSV could not be read: skipped, as reading them again cannot help.
	Unreadable int `json:"unreadable,omitempty"`
	// Error says why the job could not be made; the next sync tries again.
	Error string `json:"error,omitempty"`
}

// ReportingJob is a reporting job of the owner's channel.
type ReportingJob struct {
	ID           string
	ReportTypeID string
	CreatedAt    time.Time
}

// ReportFile is one report of a job: a CSV to download.
type ReportFile struct {
	ID          string
	CreatedAt   time.Time
	DownloadURL string
}

// Refusals of the Reporting API that a retry cannot mend: the sync goes on without reach and says why.
var (
	// ErrReportingForbidden: the channel gives the token no reporting access (403).
	ErrReportingForbidden = errors.New("youtube reporting: the channel gives no reporting access")
	// ErrJobGone: the job is not there any more (404: deleted by the owner, or expired).
	ErrJobGone = errors.New("youtube reporting: the reach job is gone")
)

// ReportingAPI is the YouTube Reporting API for the token's own channel (the owner's yt-analytics.readonly
// grant). Its calls have their own quota, none of the Data API's buckets.
type ReportingAPI interface {
	Jobs(ctx context.Context) ([]ReportingJob, error)
	CreateJob(ctx context.Context, reportType, name string) (ReportingJob, error)
	// Reports lists a page of the job's reports created after the time (zero: all); next is the next
	// page's token ("" after the last).
	Reports(ctx context.Context, jobID string, createdAfter time.Time, pageToken string) (files []ReportFile, next string, err error)
	Download(ctx context.Context, r ReportFile) (io.ReadCloser, error)
}

// reach makes the channel's job once, reads the reports created since the last one read, and merges their
// rows into the uploads (next.Uploads, whose earlier days were carried over). A failure to make the job is
// kept to retry on the next sync; any other failure fails the sync (it is delivered again, and the reports
// are read again: the merge is idempotent). It returns the Reporting API calls made.
func reach(ctx context.Context, api ReportingAPI, st ReachState, next *Sync, now time.Time) (ReachState, int, error) {
	calls := 0
	if st.JobID == "" {
		made, n, err := ensureJob(ctx, api, &st, now)
		calls += n
		if err != nil {
			st.Error = "the YouTube Reporting API did not make the reach job (the next daily sync tries again): " + err.Error()
			return st, calls, nil
		}
		st.Error = ""
		if made {
			return st, calls, nil // a new job has no report yet; a found one's are read now
		}
	}
	var after time.Time
	if st.LastReportCreated != nil {
		after = *st.LastReportCreated
	}
	var files []ReportFile
	for token := ""; ; {
		page, next, err := api.Reports(ctx, st.JobID, after, token)
		calls++
		switch {
		case errors.Is(err, ErrJobGone):
			return ReachState{Error: "the reach job is gone (deleted, or expired); the next daily sync makes a new one"}, calls, nil
		case errors.Is(err, ErrReportingForbidden):
			st.Error = "YouTube refused the reach reports (403): " + err.Error()
			return st, calls, nil
		case err != nil:
			return st, calls, fmt.Errorf("ownperf: reach reports: %w", err)
		}
		files = append(files, page...)
		if token = next; token == "" {
			break
		}
	}
	st.Error = ""
	slices.SortFunc(files, func(a, b ReportFile) int { return a.CreatedAt.Compare(b.CreatedAt) })
	rows := map[string][]ReachDay{}
	for _, f := range files {
		if !f.CreatedAt.After(after) {
			continue // read already (createdAfter filters these out; this holds whatever a page lists)
		}
		body, err := api.Download(ctx, f)
		calls++
		if err != nil {
			return st, calls, fmt.Errorf("ownperf: reach report %s: %w", f.ID, err)
		}
		got, err := ParseReach(body)
		body.Close()
		var pe *ParseError
		switch {
		case errors.As(err, &pe):
			st.Unreadable++
			got = nil
		case err != nil:
			return st, calls, fmt.Errorf("ownperf: reach report %s: %w", f.ID, err)
		}
		for id, days := range got {
			rows[id] = append(rows[id], days...)
		}
		created := f.CreatedAt
		st.LastReportCreated = &created
		st.Reports++
	}
	for i := range next.Uploads {
		u := &next.Uploads[i]
		u.Reach = keepReach(mergeReach(u.Reach, rows[u.ID]), u.PublishedAt, now, u.Analytics != nil)
	}
	return st, calls, nil
}

// ensureJob sets the channel's job in st: a job of the report type already there (a reconnect, or an answer
// lost) is the channel's, never a second one; else it makes one (made). It returns the calls it made.
func ensureJob(ctx context.Context, api ReportingAPI, st *ReachState, now time.Time) (made bool, calls int, err error) {
	jobs, err := api.Jobs(ctx)
	if err != nil {
		return false, 1, err
	}
	if i := slices.IndexFunc(jobs, func(j ReportingJob) bool { return j.ReportTypeID == ReachReportType }); i >= 0 {
		st.JobID, st.JobCreatedAt = jobs[i].ID, &jobs[i].CreatedAt
		return false, 1, nil
	}
	j, err := api.CreateJob(ctx, ReachReportType, ReachJobName)
	if err != nil {
		return false, 2, err
	}
	if j.CreatedAt.IsZero() {
		j.CreatedAt = now
	}
	st.JobID, st.JobCreatedAt = j.ID, &j.CreatedAt
	return true, 2, nil
}

// mergeReach sets each day of add over have (a later report's figures of a day replace an earlier one's),
// sorted by date.
func mergeReach(have, add []ReachDay) []ReachDay {
	if len(add) == 0 {
		return have
	}
	byDate := make(map[string]ReachDay, len(have)+len(add))
	for _, d := range have {
		byDate[d.Date] = d
	}
	for _, d := range add {
		byDate[d.Date] = d
	}
	return slices.SortedFunc(maps.Values(byDate), func(a, b ReachDay) int { return cmp.Compare(a.Date, b.Date) })
}

// keepReach keeps the days a review or the window reads: the upload's first 28 days, and the last 28 when
// the upload is among the window's most viewed (ranked, the only uploads the top videos come from). That
// bounds a channel's reach to about 230 uploads' days however many it has: every upload's days would pass
// the 4 MB a save writes at a few thousand uploads.
func keepReach(days []ReachDay, published, now time.Time, ranked bool) []ReachDay {
	reviewEnd := published.AddDate(0, 0, reachKeepDays).Format(time.DateOnly)
	windowStart := now.AddDate(0, 0, -reachKeepDays-1).Format(time.DateOnly)
	return slices.DeleteFunc(days, func(d ReachDay) bool { return d.Date >= reviewEnd && (!ranked || d.Date < windowStart) })
}

// ReachOver sums days from..to (inclusive, YYYY-MM-DD): impressions, and their CTR weighted by
// impressions (to 4 decimals); ok is false when no day of the range is known.
func ReachOver(days []ReachDay, from, to string) (impressions int64, ctr float64, ok bool) {
	var clicks float64
	for _, d := range days {
		if d.Date < from || d.Date > to {
			continue
		}
		ok = true
		impressions += d.Impressions
		clicks += d.CTR * float64(d.Impressions)
	}
	if impressions > 0 {
		ctr = math.Round(clicks/float64(impressions)*1e4) / 1e4
	}
	return impressions, ctr, ok
}

// ReachColumns are the report's columns the service reads.
const (
	colDate        = "date"
	colVideo       = "video_id"
	colImpressions = "video_thumbnail_impressions"
	colCTR         = "video_thumbnail_impressions_ctr"
)

// ParseError is a report that is not a reach CSV (as opposed to a failed read).
type ParseError struct{ Reason string }

func (e *ParseError) Error() string { return "reach csv: " + e.Reason }

// ParseReach reads a reach report (CSV with a header row; date as YYYYMMDD) into days per video. Rows
// split by other dimensions (the report may add some) are added up per video and day, CTR weighted by
// impressions.
func ParseReach(r io.Reader) (map[string][]ReachDay, error) {
	cr := csv.NewReader(r)
	cr.ReuseRecord = true
	head, err := cr.Read()
	if errors.Is(err, io.EOF) {
		return map[string][]ReachDay{}, nil
	}
	if err != nil {
		return nil, csvErr(err)
	}
	idx := map[string]int{}
	for i, h := range head {
		idx[strings.TrimSpace(strings.TrimPrefix(h, "\ufeff"))] = i
	}
	for _, c := range []string{colDate, colVideo, colImpressions, colCTR} {
		if _, ok := idx[c]; !ok {
			return nil, &ParseError{"no " + c + " column"}
		}
	}
	type key struct{ video, date string }
	type sum struct {
		impressions int64
		clicks      float64
	}
	sums := map[key]*sum{}
	var order []key
	for line := 2; ; line++ {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, csvErr(err)
		}
		date, err := time.Parse("20060102", rec[idx[colDate]])
		if err != nil {
			return nil, &ParseError{fmt.Sprintf("line %d: date %q", line, rec[idx[colDate]])}
		}
		impr, err1 := strconv.ParseInt(rec[idx[colImpressions]], 10, 64)
		ctr, err2 := strconv.ParseFloat(rec[idx[colCTR]], 64)
		if err1 != nil || err2 != nil || impr < 0 || ctr < 0 || ctr > 1 || math.IsNaN(ctr) {
			return nil, &ParseError{fmt.Sprintf("line %d: impressions %q, ctr %q", line, rec[idx[colImpressions]], rec[idx[colCTR]])}
		}
		k := key{rec[idx[colVideo]], date.Format(time.DateOnly)}
		if k.video == "" {
			continue // the channel's row without a video
		}
		s, ok := sums[k]
		if !ok {
			s = &sum{}
			sums[k] = s
			order = append(order, k)
		}
		s.impressions += impr
		s.clicks += ctr * float64(impr)
	}
	out := map[string][]ReachDay{}
	for _, k := range order {
		s := sums[k]
		d := ReachDay{Date: k.date, Impressions: s.impressions}
		if s.impressions > 0 {
			d.CTR = math.Round(s.clicks/float64(s.impressions)*1e6) / 1e6
		}
		out[k.video] = append(out[k.video], d)
	}
	return out, nil
}

// csvErr is a CSV syntax error as a ParseError; a failed read stays what it is.
func csvErr(err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return &ParseError{pe.Error()}
	}
	return fmt.Errorf("reach csv: %w", err)
}

// ReachStatus is ownChannel.reach of GET /performance: whether impressions and CTR have arrived.
type ReachStatus struct {
	Status string `json:"status"` // "waiting", "available" or "unavailable"
	// JobCreatedAt is when the channel's reporting job was made; FirstReportExpectedAt 48 hours later.
	JobCreatedAt          *time.Time `json:"jobCreatedAt,omitempty"`
	FirstReportExpectedAt *time.Time `json:"firstReportExpectedAt,omitempty"`
	LastReportAt          *time.Time `json:"lastReportAt,omitempty"`
	Message               string     `json:"message,omitempty"`
}

// Reach states.
const (
	ReachWaiting     = "waiting"
	ReachAvailable   = "available"
	ReachUnavailable = "unavailable"
)

// Status says where the channel's reach stands, for /performance.
func (st *ReachState) Status() ReachStatus {
	switch {
	case st == nil || st.JobID == "" && st.Error == "":
		return ReachStatus{Status: ReachWaiting, Message: "the reach reporting job is made by the next daily sync"}
	case st.Error != "":
		return ReachStatus{Status: ReachUnavailable, JobCreatedAt: st.JobCreatedAt, Message: st.Error}
	case st.Reports == 0:
		at := st.JobCreatedAt.Add(FirstReportAfter)
		return ReachStatus{Status: ReachWaiting, JobCreatedAt: st.JobCreatedAt, FirstReportExpectedAt: &at,
			Message: fmt.Sprintf("YouTube makes the first reach report (impressions and click-through rate, with 30 days "+
				"of history) about 48 hours after the reporting job was made (%s): expect it from %s",
				st.JobCreatedAt.UTC().Format(time.RFC3339), at.UTC().Format(time.RFC3339))}
	}
	out := ReachStatus{Status: ReachAvailable, JobCreatedAt: st.JobCreatedAt, LastReportAt: st.LastReportCreated}
	if st.Unreadable > 0 {
		out.Message = fmt.Sprintf("%d of the %d reach reports read were not the expected CSV and were skipped", st.Unreadable, st.Reports)
	}
	return out
}
