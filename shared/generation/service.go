package generation

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/creatorstrategy/css/shared/ai"
	"github.com/creatorstrategy/css/shared/apperr"
	"github.com/creatorstrategy/css/shared/contract"
	"github.com/creatorstrategy/css/shared/queue"
	transcriptsrc "github.com/creatorstrategy/css/shared/transcript"
)

// Decision 17: an endpoint waits for its job this long, then answers 202; an Idempotency-Key holds for a
// day.
const (
	DefaultWait    = 25 * time.Second
	IdempotencyTTL = 24 * time.Hour
	// storedTranscriptBytes bounds the transcript kept in a run's input (the history shows what was
	// asked, not the whole video); jobTranscriptBytes bounds the one a job carries, more than any prompt
	// budget uses and well under a queue message's 256 KiB.
	storedTranscriptBytes = 2000
	jobTranscriptBytes    = 64 << 10
)

// RunStore keeps tool runs (store.Store).
type RunStore interface {
	CreateRun(ctx context.Context, channelID string, r ToolRun) error
	GetRun(ctx context.Context, channelID, id string) (ToolRun, int64, error)
	UpdateRun(ctx context.Context, channelID string, r ToolRun, was int64) error
}

// IdempotencyStore remembers Idempotency-Keys (store.Store).
type IdempotencyStore interface {
	// ClaimIdempotencyKey records that key names the request with fingerprint, run runID, until the given
	// time, unless the key is held already: then it returns what it holds and claimed false.
	ClaimIdempotencyKey(ctx context.Context, channelID, key, fingerprint, runID string, until time.Time) (heldFingerprint, heldRunID string, claimed bool, err error)
}

// QuotaStore counts an account's generations per calendar month (store.Store).
type QuotaStore interface {
	// AddGeneration adds delta to the month's count unless that would pass max; it returns the count
	// and whether it was added.
	AddGeneration(ctx context.Context, accountID, month string, delta, max int64) (int64, bool, error)
}

// Emitter publishes the events of a generation (the webhooks issue's emitter).
type Emitter interface {
	Emit(ctx context.Context, channelID, event string, data any) error
}

// Transcripts fetches the transcript of one of the channel's own videos (decision 41: the connected YouTube
// channel's captions; shared/transcript). Any other video answers 400 VALIDATION_ERROR naming videoUrl.
type Transcripts interface {
	Transcript(ctx context.Context, channelID, videoURL string) (string, error)
}

// ErrNoTranscript is the answer of Transcripts when a video has none available.
var ErrNoTranscript = transcriptsrc.ErrNoTranscript

// Job is the message of the generation queue: everything but the input, which the run holds.
type Job struct {
	RunID      string `json:"runId"`
	ChannelID  string `json:"channelId"`
	AccountID  string `json:"accountId"`
	Operation  string `json:"operation"`
	Transcript string `json:"transcript,omitempty"`
}

// DefaultDeadline is Config.Deadline's default (config.DefaultGenerationDeadline).
const DefaultDeadline = 5 * time.Minute

// errTooLate is the reason of a run past its deadline.
const errTooLate = "the model did not answer in time"

// Config assembles a Generator.
type Config struct {
	Runs        RunStore
	Data        ChannelData
	Outliers    OutlierSource    // nil until research runs
	Own         OwnResultsSource // a connected channel's own results (nil: none)
	Idempotency IdempotencyStore
	Quota       QuotaStore
	Queue       queue.Sender
	Models      Models
	Answers     AnswerChecker // checks the models' answers (schemacheck.New()); the worker side (Handle) needs it
	Images      ai.ImageStore
	Backlog     Backlog     // the idea backlog POST /generate/ideas adds to (nil: that tool fails)
	Emitter     Emitter     // nil: events are not emitted
	Transcripts Transcripts // nil: no transcript is available
	Logger      *slog.Logger

	MonthlyQuota int // generations per account per month (decision 7)
	PromptBudget int // tokens; DefaultPromptBudget when 0
	// ContextWindow is the model's context window in tokens (CSS_MODEL_CONTEXT_TOKENS; 0: not set): prompts
	// get at most what it leaves after the answer, and Submit refuses, naming it, what cannot fit.
	ContextWindow int
	Wait          time.Duration // DefaultWait when 0
	// Deadline bounds a whole run (CSS_GENERATION_DEADLINE): past it the run fails GENERATION_FAILED
	// "the model did not answer in time". 0: DefaultDeadline.
	Deadline    time.Duration
	MaxAttempts int // deliveries of a job before it fails for good (the queue's max receive count)
	Now         func() time.Time
	NewID       func() string
}

// Generator runs generations: Submit on the API side, Handle on the worker side.
type Generator struct {
	cfg       Config
	assembler *Assembler
	models    Models
	images    ai.ImageStore
	log       *slog.Logger
}

// New returns a Generator.
func New(cfg Config) *Generator {
	cfg.Wait = cmp.Or(cfg.Wait, DefaultWait)
	cfg.MaxAttempts = cmp.Or(cfg.MaxAttempts, 3)
	cfg.Deadline = cmp.Or(cfg.Deadline, DefaultDeadline)
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	cfg.Logger = cmp.Or(cfg.Logger, slog.New(slog.DiscardHandler))
	return &Generator{
		cfg:       cfg,
		assembler: &Assembler{Data: cfg.Data, Outliers: cfg.Outliers, Own: cfg.Own, Budget: cfg.PromptBudget, Window: cfg.ContextWindow},
		models:    cfg.Models,
		images:    cfg.Images,
		log:       cfg.Logger,
	}
}

// Submission is one generation request, its body validated by the contract.
type Submission struct {
	Operation      string // the operation id of a generation of the contract's registry (a tool's, or refine's)
	ChannelID      string
	AccountID      string
	Body           any // the operation's typed request body, e.g. contract.TitlesRequest
	IdempotencyKey string
	Async          bool // Prefer: respond-async
}

// Outcome is what the API answers: the output when the run finished in time, else the run id to poll.
type Outcome struct {
	RunID  string
	Done   bool
	Output json.RawMessage
}

// Submit starts a generation and waits for it (decision 17).
func (g *Generator) Submit(ctx context.Context, s Submission) (Outcome, error) {
	now := g.cfg.Now()
	input, err := json.Marshal(s.Body)
	if err != nil {
		return Outcome{}, fmt.Errorf("generation: input: %w", err)
	}
	toolName, transcript, err := g.prepare(ctx, s, input)
	if err != nil {
		return Outcome{}, err
	}
	if err := g.checkBudget(ctx, s, toolName, input, transcript); err != nil {
		return Outcome{}, err
	}
	// From the key's claim to the job's queueing the submit runs to its end though the client leaves (its
	// request's context cancelled): the job is accepted or not, never counted and stored but not queued.
	// Only the wait for the answer stops with the client.
	work := context.WithoutCancel(ctx)
	runID := g.cfg.NewID()
	if s.IdempotencyKey != "" {
		sum := sha256.Sum256(append([]byte(s.Operation+"\x00"), input...))
		fp := hex.EncodeToString(sum[:])
		heldFP, heldRun, claimed, err := g.cfg.Idempotency.ClaimIdempotencyKey(work, s.ChannelID, s.IdempotencyKey, fp, runID, now.Add(IdempotencyTTL))
		if err != nil {
			return Outcome{}, err
		}
		if !claimed {
			if heldFP != fp {
				return Outcome{}, apperr.Conflictf("Idempotency-Key %q was used with a different request", s.IdempotencyKey)
			}
			if _, _, err := g.cfg.Runs.GetRun(work, s.ChannelID, heldRun); err == nil {
				return g.await(ctx, s.ChannelID, heldRun, s.Async)
			} else if apperr.CodeOf(err) != apperr.NotFound {
				return Outcome{}, err
			}
			// The first request stopped between claiming the key and storing its run: finish its work.
			runID = heldRun
		}
	}

	// After the key's claim, so the same request again answers its first result, whatever changed since.
	if toolName == ToolIdeas { // and a refinement of ideas, which adds its ideas too
		if err := g.admitIdeas(work, s.ChannelID); err != nil {
			return Outcome{}, err
		}
	}

	month := now.UTC().Format("2006-01")
	if _, ok, err := g.cfg.Quota.AddGeneration(work, s.AccountID, month, 1, int64(g.cfg.MonthlyQuota)); err != nil {
		return Outcome{}, err
	} else if !ok {
		next := time.Date(now.Year(), now.Month()+1, 1, 0, 0, 0, 0, time.UTC)
		return Outcome{}, &apperr.Error{Code: apperr.UsageLimit, RetryAfter: int(next.Sub(now).Seconds()) + 1,
			Message: fmt.Sprintf("the account's monthly quota of %d generations is used up; it renews on %s", g.cfg.MonthlyQuota, next.Format("2006-01-02"))}
	}

	run := ToolRun{ID: runID, ToolName: toolName, Status: Pending, Input: storedInput(input), GeneratedAt: now}
	if err := g.cfg.Runs.CreateRun(work, s.ChannelID, run); err != nil {
		g.refund(work, s.AccountID, month)
		if s.IdempotencyKey != "" && apperr.CodeOf(err) == apperr.Conflict {
			// The same request, racing: it stored the key's run first (issue 19 item 12). Its answer is ours.
			return g.await(ctx, s.ChannelID, runID, s.Async)
		}
		return Outcome{}, err
	}
	job, _ := json.Marshal(Job{RunID: runID, ChannelID: s.ChannelID, AccountID: s.AccountID, Operation: s.Operation, Transcript: cut(transcript, jobTranscriptBytes)})
	if err := g.cfg.Queue.Send(work, queue.Outgoing{Body: job}); err != nil {
		// Not acknowledged: the run is failed now rather than pending forever.
		g.fail(work, s.ChannelID, s.AccountID, run, "the job could not be queued", nil)
		return Outcome{}, fmt.Errorf("generation: queue: %w", err)
	}
	return g.await(ctx, s.ChannelID, runID, s.Async)
}

// prepare checks what can be checked before the job is queued, so a bad request is a 4xx now, not a
// failed run later: the tool exists, refine's original run is the channel's and succeeded, a transcript
// is at hand for the tools that need one.
func (g *Generator) prepare(ctx context.Context, s Submission, input json.RawMessage) (tool, transcript string, err error) {
	if _, refining := refineOf(s.Operation); refining {
		in, ok := s.Body.(*contract.RefineRequest)
		if !ok {
			return "", "", fmt.Errorf("generation: refine takes a *contract.RefineRequest, not %T", s.Body)
		}
		orig, _, err := g.cfg.Runs.GetRun(ctx, s.ChannelID, in.GenerationID)
		if err != nil {
			if apperr.CodeOf(err) == apperr.NotFound {
				return "", "", apperr.NotFoundf("generation %s not found", in.GenerationID)
			}
			return "", "", err
		}
		if orig.Status != Success {
			return "", "", apperr.Invalid("generationId", "generation %s is %s; only a successful generation can be refined", in.GenerationID, orig.Status)
		}
		if _, ok := ToolNamed(orig.ToolName); !ok {
			return "", "", apperr.Invalid("generationId", "a %s generation cannot be refined", orig.ToolName)
		}
		var t struct {
			Transcript string `json:"transcript"`
		}
		_ = json.Unmarshal(orig.Input, &t)
		return orig.ToolName, t.Transcript, nil
	}
	t, ok := ToolFor(s.Operation)
	if !ok {
		return "", "", fmt.Errorf("generation: no tool for operation %q", s.Operation)
	}
	if t.Transcript == "" {
		return t.Name, "", nil
	}
	var src struct {
		Transcript string `json:"transcript"`
		VideoURL   string `json:"videoUrl"`
	}
	_ = json.Unmarshal(input, &src)
	switch {
	case src.Transcript != "":
		// SRT and WebVTT become timed lines (cue times kept, for clips); plain text stays as sent.
		text := transcriptsrc.Normalize(src.Transcript)
		if t.Name == ToolClips && TranscriptSeconds(text) < MinClipSeconds {
			return "", "", apperr.Invalid("transcript", "runs about %d s; a clip needs at least %d s", TranscriptSeconds(text), MinClipSeconds)
		}
		return t.Name, text, nil
	case src.VideoURL != "":
		// A tool that needs the words refuses a video they cannot be fetched for (decision 41); one that
		// only benefits from them (description, reoptimize) goes on without them.
		required := t.Transcript == "required"
		if g.cfg.Transcripts == nil {
			if required {
				return "", "", apperr.Invalid("videoUrl", "%s (this deployment has no YouTube connection)", transcriptsrc.NotOwnMessage)
			}
			return t.Name, "", nil
		}
		text, err := g.cfg.Transcripts.Transcript(ctx, s.ChannelID, src.VideoURL)
		switch {
		case errors.Is(err, ErrNoTranscript):
			if required {
				return "", "", apperr.Invalid("transcript", "the video at videoUrl has no caption track; send the transcript instead")
			}
			return t.Name, "", nil
		case apperr.CodeOf(err) == apperr.Validation && !required:
			return t.Name, "", nil
		case err != nil:
			if _, ok := apperr.As(err); ok {
				return "", "", err // a refusal (400 naming videoUrl) or a limit (429)
			}
			return "", "", fmt.Errorf("generation: transcript: %w", err)
		}
		if t.Name == ToolClips && TranscriptSeconds(text) < MinClipSeconds {
			return "", "", apperr.Invalid("videoUrl", "the video's transcript runs about %d s; a clip needs at least %d s", TranscriptSeconds(text), MinClipSeconds)
		}
		return t.Name, text, nil
	}
	if t.Transcript == "required" {
		return "", "", apperr.Invalid("transcript", "is required when videoUrl is absent")
	}
	return t.Name, "", nil
}

// checkBudget refuses, before anything is queued or counted, a request whose main prompt cannot fit the
// prompt budget whatever the channel's optional data: 400 VALIDATION_ERROR naming the field to shorten
// (issue 19 item 5). A refinement is checked by its run (its original output is part of the prompt).
func (g *Generator) checkBudget(ctx context.Context, s Submission, toolName string, input json.RawMessage, transcript string) error {
	if _, refining := refineOf(s.Operation); refining || g.cfg.Data == nil {
		return nil
	}
	t, ok := ToolNamed(toolName)
	if !ok || t.task == nil {
		return nil
	}
	base := Brief{Task: t.task(s.Body), Input: input, Transcript: cut(transcript, jobTranscriptBytes)}
	if toolName == ToolTitles {
		base.VideoType = "Long"
	}
	return g.assembler.CheckBudget(ctx, s.ChannelID, toolName, seriesOf(s.Body), base)
}

// storedInput is the input a run keeps: the request, its transcript cut short.
func storedInput(input json.RawMessage) json.RawMessage {
	if string(input) == "null" {
		return json.RawMessage("{}") // an operation without a body (POST /niche-score): the contract's object
	}
	var m map[string]any
	if json.Unmarshal(input, &m) != nil {
		return input
	}
	if t, ok := m["transcript"].(string); ok && len(t) > storedTranscriptBytes {
		m["transcript"] = cut(t, storedTranscriptBytes)
		if b, err := json.Marshal(m); err == nil {
			return b
		}
	}
	return input
}

// await polls the run until it finishes or the wait is over.
func (g *Generator) await(ctx context.Context, channelID, runID string, async bool) (Outcome, error) {
	pending := Outcome{RunID: runID}
	if async {
		return pending, nil
	}
	ctx, cancel := context.WithTimeout(ctx, g.cfg.Wait)
	defer cancel()
	delay := 20 * time.Millisecond
	for {
		r, _, err := g.cfg.Runs.GetRun(ctx, channelID, runID)
		switch {
		case ctx.Err() != nil:
			return pending, nil
		case err != nil:
			return Outcome{}, err
		case r.Status == Success:
			return Outcome{RunID: runID, Done: true, Output: r.Output}, nil
		case r.Status == Failed:
			return Outcome{}, RunError(r)
		}
		select {
		case <-ctx.Done():
			return pending, nil
		case <-time.After(delay):
		}
		delay = min(delay*2, 500*time.Millisecond)
	}
}

// RunError is the API error of a failed run: its stored reason starts with the error code.
func RunError(r ToolRun) error {
	msg := Value(r.Error)
	code, text, ok := strings.Cut(msg, ": ")
	if !ok {
		code, text = string(apperr.GenerationFailed), msg
	}
	e := &apperr.Error{Code: apperr.Code(code), Message: text}
	switch e.Code {
	case apperr.RateLimit:
		e.RetryAfter = storedRetryAfter(text)
	case apperr.GenerationFailed, apperr.Validation, apperr.NotFound:
	default:
		e.Code = apperr.GenerationFailed
	}
	return e
}

// storedRetryAfter reads the hint modelError wrote into a throttled run's reason ("… retry after N s"),
// bounded; 30 s when there is none (a run stored before the hint was).
func storedRetryAfter(text string) int {
	_, after, ok := strings.Cut(text, "retry after ")
	if !ok {
		return 30
	}
	n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(after), " s"))
	if err != nil {
		return 30
	}
	return min(max(n, MinRetryAfter), MaxRetryAfter)
}

// Value returns *p, or "" for nil.
func Value(p *string) string { return contract.Value(p) }

func (g *Generator) refund(ctx context.Context, accountID, month string) {
	if _, _, err := g.cfg.Quota.AddGeneration(context.WithoutCancel(ctx), accountID, month, -1, int64(g.cfg.MonthlyQuota)); err != nil {
		g.log.WarnContext(ctx, "quota refund failed", "account", accountID, "err", err)
	}
}

// fail completes a pending run as failed (once), with the tokens its model calls were billed for (this
// attempt's usage, nil when none ran, plus what earlier attempts recorded on the run). The quota unit is
// given back only when no model call was billed: a run that paid for model calls spends its unit, failed
// or not, so a tenant cannot make failing runs cost nothing (issue 19 item 4).
func (g *Generator) fail(ctx context.Context, channelID, accountID string, r ToolRun, reason string, usage *Usage) {
	ctx = context.WithoutCancel(ctx)
	cur, version, err := g.cfg.Runs.GetRun(ctx, channelID, r.ID)
	if err != nil || cur.Status != Pending {
		return
	}
	c := Completion{Status: Failed, Error: &reason, InputTokens: cur.InputTokens, OutputTokens: cur.OutputTokens}
	if usage != nil && usage.Calls > 0 {
		model := usage.Model
		c.InputTokens, c.OutputTokens, c.Model = plus(cur.InputTokens, usage.InputTokens), plus(cur.OutputTokens, usage.OutputTokens), &model
	}
	billed := c.InputTokens != nil || c.OutputTokens != nil
	done, err := cur.Complete(c)
	if err != nil {
		return
	}
	if err := g.cfg.Runs.UpdateRun(ctx, channelID, done, version); err != nil {
		g.log.WarnContext(ctx, "failing a run failed", "run", r.ID, "err", err)
		return
	}
	if !billed {
		g.refund(ctx, accountID, cur.GeneratedAt.UTC().Format("2006-01"))
	}
}

// Run returns a run of the channel (GET /generations/{id}); another channel's run is NOT_FOUND.
func (g *Generator) Run(ctx context.Context, channelID, id string) (ToolRun, error) {
	r, _, err := g.cfg.Runs.GetRun(ctx, channelID, id)
	return r, err
}
