// Package bedrockimage is the cloud image model: a Stability AI text-to-image model on Amazon Bedrock,
// called with bedrockruntime InvokeModel.
//
// The default is Stable Image Ultra 1.1. Amazon's own Nova Canvas is Legacy (end of life 2026-09-30) and
// the Stability generators are the Active text-to-image models on Bedrock: Stable Image Ultra
// (stability.stable-image-ultra-v1:1), Stable Image Core (stability.stable-image-core-v1:1) and Stable
// Diffusion 3.5 Large (stability.sd3-5-large-v1:0). All three take the same request body
//
//	{"prompt": "...", "negative_prompt": "...", "aspect_ratio": "16:9", "output_format": "png"}
//
// and answer {"seeds": [...], "finish_reasons": [null], "images": ["<base64>"]}, so any of them is a
// configuration change. Ultra is the best of them at photographic detail and legible lettering, which a
// thumbnail lives by; Core costs about half as much.
//
// The models draw about one megapixel at a fixed set of aspect ratios. The adapter asks for the ratio
// nearest the request's size, then scales the picture to exactly that size (cropping evenly what the
// ratios do not share) and encodes it as JPEG at quality 90: a 2K thumbnail then stays under YouTube's 2 MB
// thumbnail limit and a 2560x1440 banner under its 6 MB banner limit, which lossless PNG of a photograph
// would not.
package bedrockimage

import (
	"bytes"
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/jpeg"
	_ "image/png" // the models answer PNG
	"log/slog"
	"math"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"

	"github.com/creatorstrategy/css/shared/ai"
	"github.com/creatorstrategy/css/shared/ai/bedrock"
	"github.com/creatorstrategy/css/shared/ai/imaging"
	"github.com/creatorstrategy/css/shared/ai/retry"
	"github.com/creatorstrategy/css/shared/config"
)

// DefaultModel is the model id used when none is configured (config's CSS_IMAGE_MODEL default).
const DefaultModel = config.DefaultImageModel

// MaxPromptRunes is the models' prompt limit (10,000 characters), for the prompt and the negative prompt.
const MaxPromptRunes = 10_000

// MaxTextRunes bounds the overlay text quoted into the prompt: a headline, not a paragraph.
const MaxTextRunes = 200

// JPEGQuality is the quality of the pictures returned.
const JPEGQuality = 90

// negativePrompt steers away from what spoils a thumbnail or a banner.
const negativePrompt = "blurry, low resolution, jpeg artifacts, watermark, signature, misspelled text, garbled letters, distorted faces, extra fingers"

// aspectRatios are the ratios the Stability models accept (their aspect_ratio enum).
var aspectRatios = []struct {
	name string
	w, h int
}{
	{"21:9", 21, 9}, {"16:9", 16, 9}, {"3:2", 3, 2}, {"5:4", 5, 4}, {"1:1", 1, 1},
	{"4:5", 4, 5}, {"2:3", 2, 3}, {"9:16", 9, 16}, {"9:21", 9, 21},
}

// aspectRatio is the accepted ratio nearest w:h (by the log of the ratio, so 2:1 and 1:2 are as far from
// 1:1).
func aspectRatio(w, h int) string {
	want := math.Log(float64(w) / float64(h))
	best, bestD := "", math.Inf(1)
	for _, r := range aspectRatios {
		if d := math.Abs(math.Log(float64(r.w)/float64(r.h)) - want); d < bestD {
			best, bestD = r.name, d
		}
	}
	return best
}

// Invoker is the part of *bedrockruntime.Client the adapter calls.
type Invoker interface {
	InvokeModel(ctx context.Context, in *bedrockruntime.InvokeModelInput, optFns ...func(*bedrockruntime.Options)) (*bedrockruntime.InvokeModelOutput, error)
}

// Options configure the adapter; the zero value is the defaults.
type Options struct {
	// Retry bounds the retries of throttling and transient failures (retry's defaults: 4 attempts,
	// full-jitter backoff from 500 ms to 8 s); its Sleep, Rand and Now are there for tests.
	Retry retry.Policy
	// Log receives a line per failed attempt that may be retried (default: nowhere).
	Log *slog.Logger
}

// Model is the Bedrock image model.
type Model struct {
	client Invoker
	id     string
	opts   Options
}

// New returns the adapter calling modelID (DefaultModel when empty) through client (see bedrock.NewClient:
// the image model has its own region, config's ImageRegion).
func New(client Invoker, modelID string, opts Options) *Model {
	opts.Log = cmp.Or(opts.Log, slog.New(slog.DiscardHandler))
	return &Model{client: client, id: cmp.Or(modelID, DefaultModel), opts: opts}
}

// request is the models' InvokeModel body.
type request struct {
	Prompt         string `json:"prompt"`
	NegativePrompt string `json:"negative_prompt,omitempty"`
	AspectRatio    string `json:"aspect_ratio"`
	OutputFormat   string `json:"output_format"`
}

// response is their answer. A finish reason other than null means the picture was withheld ("Filter
// reason: prompt", "Filter reason: output image", "Inference error").
type response struct {
	Images        []string  `json:"images"`
	FinishReasons []*string `json:"finish_reasons"`
}

// Image draws req on Bedrock.
func (m *Model) Image(ctx context.Context, req ai.ImageRequest) (ai.Image, error) {
	w, h, err := req.Size()
	if err != nil {
		return ai.Image{}, m.fail(ai.ErrFailed, 0, err)
	}
	body, err := json.Marshal(request{
		Prompt:         prompt(req),
		NegativePrompt: negativePrompt,
		AspectRatio:    aspectRatio(w, h),
		OutputFormat:   "png",
	})
	if err != nil {
		return ai.Image{}, m.fail(ai.ErrFailed, 0, err)
	}
	out, err := m.invoke(ctx, body)
	if err != nil {
		return ai.Image{}, err
	}
	var resp response
	if err := json.Unmarshal(out, &resp); err != nil {
		return ai.Image{}, m.fail(ai.ErrFailed, 0, fmt.Errorf("response body: %w", err))
	}
	if len(resp.FinishReasons) > 0 && resp.FinishReasons[0] != nil {
		return ai.Image{}, m.fail(ai.ErrFailed, 0, fmt.Errorf("no picture: %s", *resp.FinishReasons[0]))
	}
	if len(resp.Images) == 0 {
		return ai.Image{}, m.fail(ai.ErrFailed, 0, errors.New("no picture in the response"))
	}
	raw, err := base64.StdEncoding.DecodeString(resp.Images[0])
	if err != nil {
		return ai.Image{}, m.fail(ai.ErrFailed, 0, fmt.Errorf("picture is not base64: %w", err))
	}
	data, err := fit(raw, w, h)
	if err != nil {
		return ai.Image{}, m.fail(ai.ErrFailed, 0, err)
	}
	return ai.Image{Data: data, ContentType: "image/jpeg", Model: m.id}, nil
}

// fit decodes the model's picture, scales it to w x h (cover) and encodes it as JPEG.
func fit(raw []byte, w, h int) ([]byte, error) {
	// Check the header before decoding: a picture is about a megapixel, and a bogus header must not make
	// the decoder allocate gigabytes.
	cfg, _, err := image.DecodeConfig(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("picture: %w", err)
	}
	if cfg.Width <= 0 || cfg.Height <= 0 || cfg.Width > ai.MaxImageSide || cfg.Height > ai.MaxImageSide {
		return nil, fmt.Errorf("picture is %dx%d", cfg.Width, cfg.Height)
	}
	src, _, err := image.Decode(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("picture: %w", err)
	}
	var img image.Image = src
	if b := src.Bounds(); b.Dx() != w || b.Dy() != h {
		img = imaging.Cover(src, w, h)
	}
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: JPEGQuality}); err != nil {
		return nil, fmt.Errorf("encode JPEG: %w", err)
	}
	return buf.Bytes(), nil
}

// invoke calls the model, retrying what may pass (throttling, a busy or failing service, a dropped
// connection) as retry's policy says, and returns the response body. Errors are judged by ai/bedrock's
// table: InvokeModel answers the same errors as Converse.
func (m *Model) invoke(ctx context.Context, body []byte) ([]byte, error) {
	in := &bedrockruntime.InvokeModelInput{
		ModelId:     aws.String(m.id),
		Body:        body,
		ContentType: aws.String("application/json"),
		Accept:      aws.String("application/json"),
	}
	var out *bedrockruntime.InvokeModelOutput
	res, err := m.opts.Retry.Do(ctx, func(ctx context.Context) (retry.Outcome, error) {
		var err error
		out, err = m.client.InvokeModel(ctx, in, noSDKRetries)
		if err == nil {
			return retry.Outcome{}, nil
		}
		c := bedrock.Classify(ctx, err)
		if c.Retry {
			m.opts.Log.WarnContext(ctx, "image model call failed, may retry", "model", m.id, "error", err)
		}
		return retry.Outcome{Retry: c.Retry, RetryAfter: c.RetryAfter}, err
	})
	if err == nil {
		return out.Body, nil
	}
	if ctx.Err() != nil {
		return nil, m.fail(ai.ErrFailed, 0, ctx.Err())
	}
	c := bedrock.Classify(ctx, err)
	var after time.Duration
	if c.Kind == ai.ErrThrottled { // a wait of 0: not retried, a quota
		after = cmp.Or(res.NextWait, c.RetryAfter, bedrock.QuotaRetryAfter)
	}
	return nil, m.fail(c.Kind, after, fmt.Errorf("after %d attempt(s): %w", res.Attempts, err))
}

// noSDKRetries leaves retrying to the adapter's policy, whose waits are injectable and bounded in time.
func noSDKRetries(o *bedrockruntime.Options) { o.Retryer = aws.NopRetryer{} }

func (m *Model) fail(kind error, after time.Duration, err error) error {
	return &ai.Error{Kind: kind, RetryAfter: after, Err: fmt.Errorf("bedrock image model %s: %w", m.id, err)}
}

// MaxColours bounds the palette colours named in the prompt.
const MaxColours = 8

// prompt writes what the model is asked to draw: the pipeline's prompt, then what the picture is for, its
// palette and its headline; the pipeline's prompt is cut short if all of it would pass the models'
// 10,000-character limit.
func prompt(req ai.ImageRequest) string {
	var tail []string
	switch req.Task {
	case ai.TaskThumbnail:
		tail = append(tail, "A YouTube video thumbnail: bold, high-contrast composition with one clear focal subject, readable at small sizes; keep the bottom-right corner free of important detail.")
	case ai.TaskBanner:
		tail = append(tail, "A YouTube channel banner: a wide panoramic background; keep every important element inside a horizontal strip across the middle third of the height and the central 60% of the width; the rest is backdrop that only large screens show.")
	}
	var colours []string
	for _, c := range req.Palette {
		if _, ok := imaging.ParseHex(c); ok && len(colours) < MaxColours {
			colours = append(colours, strings.ToUpper(strings.TrimSpace(c)))
		}
	}
	if len(colours) > 0 {
		tail = append(tail, "Colour palette: "+strings.Join(colours, ", ")+".")
	}
	if t := headline(req.Text); t != "" {
		tail = append(tail, fmt.Sprintf("Large bold headline text reading %q, spelled exactly, legible.", t))
	}
	end := strings.Join(tail, "\n")
	room := MaxPromptRunes - utf8.RuneCountInString(end) - 1
	if p := truncate(strings.TrimSpace(req.Prompt), room); p != "" {
		return p + "\n" + end
	}
	return end
}

// headline folds white space and control characters and bounds the length of the overlay text.
func headline(s string) string {
	s = strings.Join(strings.FieldsFunc(s, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }), " ")
	return truncate(s, MaxTextRunes)
}

// truncate keeps the first n runes of s (none when n < 1).
func truncate(s string, n int) string {
	if n < 1 {
		return ""
	}
	if rs := []rune(s); len(rs) > n {
		return string(rs[:n])
	}
	return s
}
