package youtubetest

import (
	"crypto/sha256"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/creatorstrategy/css/shared/research"
)

// The YouTube Reporting API v1 on the Analytics server's loopback address (decision 51), with the same
// bearer tokens: jobs.list and jobs.create (GET, POST /v1/jobs), jobs.reports.list
// (GET /v1/jobs/{jobId}/reports, createdAfter, pageToken) and media.download
// (GET /v1/media/{resourceName}?alt=media, a report's downloadUrl). As Google does, a job's first reports
// exist 48 hours after it was made: one per day, from 30 days before the job to 2 days before now, each
// created when its day is 2 days old (the backfill at once at 48 hours). Each report is the reach CSV:
// per video and day its thumbnail impressions and their CTR, split by subscribed status.

// ReachReportTypes are the report types jobs.create accepts.
var ReachReportTypes = []string{"channel_reach_basic_a1"}

// reportingJob is a job of a channel.
type reportingJob struct {
	id, reportType, name, channelID string
	created                         time.Time
}

// reporting is the server's Reporting API state (under Analytics.mu).
type reporting struct {
	jobs      []reportingJob
	calls     int
	failJobs  map[string]int // channel -> jobs.create calls to answer 500
	corrupt   map[string]bool
	downloads int
}

// ReportsPageSize is how many reports a jobs.reports.list page holds.
const ReportsPageSize = 10

func (a *Analytics) reportingRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /v1/jobs", a.reportingCall(a.listJobs))
	mux.HandleFunc("POST /v1/jobs", a.reportingCall(a.createJob))
	mux.HandleFunc("GET /v1/jobs/{job}/reports", a.reportingCall(a.listReports))
	mux.HandleFunc("GET /v1/media/{name...}", a.reportingCall(a.media))
}

// ReportingCalls returns the Reporting API calls answered (refusals included), and the downloads among them.
func (a *Analytics) ReportingCalls() (calls, downloads int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.rep.calls, a.rep.downloads
}

// FailJobCreation makes the next n jobs.create calls of channelID answer 500.
func (a *Analytics) FailJobCreation(channelID string, n int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.rep.failJobs[channelID] = n
}

// CorruptReports makes channelID's reports CSV without the CTR column, as a changed report type would be.
func (a *Analytics) CorruptReports(channelID string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.rep.corrupt[channelID] = true
}

// DeleteJobs deletes channelID's jobs, as the owner can.
func (a *Analytics) DeleteJobs(channelID string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.rep.jobs = slices.DeleteFunc(a.rep.jobs, func(j reportingJob) bool { return j.channelID == channelID })
}

// Jobs returns the ids of channelID's jobs.
func (a *Analytics) Jobs(channelID string) []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	var ids []string
	for _, j := range a.rep.jobs {
		if j.channelID == channelID {
			ids = append(ids, j.id)
		}
	}
	return ids
}

// ReachCTR is a video's impressions CTR in the reach reports, 0.02..0.10, fixed per video.
func ReachCTR(videoID string) float64 {
	sum := sha256.Sum256([]byte("ctr " + videoID))
	return math.Round((0.02+float64(sum[1])/255*0.08)*1e4) / 1e4
}

// ReachImpressions is a video's impressions on day: its views that day ÷ its CTR.
func ReachImpressions(v research.SourceVideo, day, today time.Time) int64 {
	return int64(math.Round(float64(DayViews(v, day, today)) / ReachCTR(v.ID)))
}

// reportingCall authenticates the call with the token's channel and counts it.
func (a *Analytics) reportingCall(h func(w http.ResponseWriter, r *http.Request, channelID string)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		channelID, ok := a.channelOf(r)
		a.mu.Lock()
		a.rep.calls++
		forbidden := a.forbidden[channelID]
		a.mu.Unlock()
		if !ok {
			writeError(w, http.StatusUnauthorized, "required", "global", "Login Required.")
			return
		}
		if forbidden { // Forbid refuses the channel's reporting as its analytics
			writeError(w, http.StatusForbidden, "forbidden", "global", "The caller does not have permission")
			return
		}
		h(w, r, channelID)
	}
}

func jobJSON(j reportingJob) map[string]any {
	return map[string]any{"id": j.id, "reportTypeId": j.reportType, "name": j.name,
		"createTime": j.created.UTC().Format(time.RFC3339Nano)}
}

func (a *Analytics) listJobs(w http.ResponseWriter, _ *http.Request, channelID string) {
	a.mu.Lock()
	jobs := []map[string]any{}
	for _, j := range a.rep.jobs {
		if j.channelID == channelID {
			jobs = append(jobs, jobJSON(j))
		}
	}
	a.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{"jobs": jobs})
}

func (a *Analytics) createJob(w http.ResponseWriter, r *http.Request, channelID string) {
	var in struct {
		ReportTypeID string `json:"reportTypeId"`
		Name         string `json:"name"`
	}
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil || !slices.Contains(ReachReportTypes, in.ReportTypeID) {
		writeError(w, http.StatusBadRequest, "badRequest", "global", "Request contains an invalid argument.")
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.rep.failJobs[channelID] > 0 {
		a.rep.failJobs[channelID]--
		writeError(w, http.StatusInternalServerError, "backendError", "global", "Internal error encountered.")
		return
	}
	for _, j := range a.rep.jobs {
		if j.channelID == channelID && j.reportType == in.ReportTypeID {
			writeError(w, http.StatusConflict, "alreadyExists", "global", "Job for this report type already exists.")
			return
		}
	}
	j := reportingJob{id: fmt.Sprintf("job%d", len(a.rep.jobs)+1), reportType: in.ReportTypeID, name: in.Name,
		channelID: channelID, created: a.today().UTC()}
	a.rep.jobs = append(a.rep.jobs, j)
	writeJSON(w, http.StatusOK, jobJSON(j))
}

// job returns channelID's job id; another channel's is not found, as Google answers.
func (a *Analytics) job(channelID, id string) (reportingJob, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, j := range a.rep.jobs {
		if j.id == id && j.channelID == channelID {
			return j, true
		}
	}
	return reportingJob{}, false
}

// reportDays are the days of the job's reports existing now, with when each was created.
func reportDays(j reportingJob, now time.Time) (days, created []time.Time) {
	first := j.created.Add(48 * time.Hour)
	if now.Before(first) {
		return nil, nil
	}
	start := j.created.UTC().Truncate(24*time.Hour).AddDate(0, 0, -30)
	for d := start; !d.Add(48 * time.Hour).After(now); d = d.AddDate(0, 0, 1) {
		days = append(days, d)
		created = append(created, maxTime(first, d.Add(48*time.Hour)))
	}
	return days, created
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func (a *Analytics) listReports(w http.ResponseWriter, r *http.Request, channelID string) {
	j, ok := a.job(channelID, r.PathValue("job"))
	if !ok {
		writeError(w, http.StatusNotFound, "notFound", "global", "Requested entity was not found.")
		return
	}
	q := r.URL.Query()
	var after time.Time
	if v := q.Get("createdAfter"); v != "" {
		t, err := time.Parse(time.RFC3339Nano, v)
		if err != nil {
			writeError(w, http.StatusBadRequest, "badRequest", "global", "Invalid value at 'created_after'.")
			return
		}
		after = t
	}
	offset := 0
	if v := q.Get("pageToken"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			writeError(w, http.StatusBadRequest, "badRequest", "global", "Invalid page token.")
			return
		}
		offset = n
	}
	days, created := reportDays(j, a.today().UTC())
	reports := []map[string]any{}
	for i, d := range days {
		if !created[i].After(after) {
			continue
		}
		id := "rep" + d.Format("20060102")
		reports = append(reports, map[string]any{"id": id, "jobId": j.id,
			"startTime": d.Format(time.RFC3339), "endTime": d.AddDate(0, 0, 1).Format(time.RFC3339),
			"createTime":  created[i].Format(time.RFC3339Nano),
			"downloadUrl": a.URL + "/v1/media/CHANNEL/" + channelID + "/jobs/" + j.id + "/reports/" + id + "?alt=media"})
	}
	res := map[string]any{}
	end := min(offset+ReportsPageSize, len(reports))
	if offset < len(reports) {
		res["reports"] = reports[offset:end]
	}
	if end < len(reports) {
		res["nextPageToken"] = strconv.Itoa(end)
	}
	writeJSON(w, http.StatusOK, res)
}

func (a *Analytics) media(w http.ResponseWriter, r *http.Request, channelID string) {
	// CHANNEL/<channel>/jobs/<job>/reports/rep<yyyymmdd>
	parts := strings.Split(r.PathValue("name"), "/")
	if r.URL.Query().Get("alt") != "media" || len(parts) != 6 || parts[0] != "CHANNEL" || parts[2] != "jobs" || parts[4] != "reports" {
		writeError(w, http.StatusBadRequest, "badRequest", "global", "Invalid resource name.")
		return
	}
	j, ok := a.job(channelID, parts[3])
	if !ok || parts[1] != channelID {
		writeError(w, http.StatusNotFound, "notFound", "global", "Requested entity was not found.")
		return
	}
	now := a.today().UTC()
	days, _ := reportDays(j, now)
	day, err := time.Parse("20060102", strings.TrimPrefix(parts[5], "rep"))
	if err != nil || !slices.Contains(days, day) {
		writeError(w, http.StatusNotFound, "notFound", "global", "Requested entity was not found.")
		return
	}
	a.mu.Lock()
	a.rep.downloads++
	corrupt := a.rep.corrupt[channelID]
	a.mu.Unlock()
	w.Header().Set("Content-Type", "application/octet-stream")
	cw := csv.NewWriter(w)
	head := []string{"date", "channel_id", "video_id", "subscribed_status", "video_thumbnail_impressions", "video_thumbnail_impressions_ctr"}
	if corrupt {
		head[5] = "ctr_renamed"
	}
	_ = cw.Write(head)
	today := now.Truncate(24 * time.Hour)
	if ch, ok := a.catalog.Channel(channelID); ok {
		for _, v := range ch.Uploads {
			impr := ReachImpressions(v, day, today)
			if impr == 0 {
				continue
			}
			ctr := strconv.FormatFloat(ReachCTR(v.ID), 'f', -1, 64)
			sub := impr * 2 / 5
			for _, row := range [][2]any{{"subscribed", sub}, {"unsubscribed", impr - sub}} {
				_ = cw.Write([]string{day.Format("20060102"), channelID, v.ID, row[0].(string),
					strconv.FormatInt(row[1].(int64), 10), ctr})
			}
		}
	}
	cw.Flush()
}
