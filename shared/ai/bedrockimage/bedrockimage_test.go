package bedrockimage

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"

	"github.com/creatorstrategy/css/shared/ai"
	"github.com/creatorstrategy/css/shared/ai/retry"
)

// call is one request the loopback Bedrock Runtime received.
type call struct {
	method, path, contentType, accept, auth string
	body                                    request
}

// answer is what the server sends back to one call.
type answer struct {
	status     int
	errType    string // X-Amzn-ErrorType of an error answer
	retryAfter string // Retry-After, if any
	body       string
}

// server speaks Bedrock Runtime's InvokeModel wire protocol (POST /model/{modelId}/invoke, restJson1),
// answering the scripted answers in turn (the last one repeats).
type server struct {
	t       *testing.T
	mu      sync.Mutex
	calls   []call
	answers []answer
	srv     *httptest.Server
}

func newServer(t *testing.T, answers ...answer) *server {
	s := &server{t: t, answers: answers}
	s.srv = httptest.NewServer(s)
	t.Cleanup(s.srv.Close)
	return s
}

func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		s.t.Errorf("read body: %v", err)
	}
	c := call{method: r.Method, path: r.URL.Path, contentType: r.Header.Get("Content-Type"),
		accept: r.Header.Get("Accept"), auth: r.Header.Get("Authorization")}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c.body); err != nil {
		s.t.Errorf("request body %s: %v", raw, err)
	}
	s.mu.Lock()
	s.calls = append(s.calls, c)
	a := s.answers[min(len(s.calls), len(s.answers))-1]
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Amzn-RequestId", fmt.Sprintf("req-%d", len(s.calls)))
	if a.errType != "" {
		w.Header().Set("X-Amzn-ErrorType", a.errType)
	}
	if a.retryAfter != "" {
		w.Header().Set("Retry-After", a.retryAfter)
	}
	w.WriteHeader(a.status)
	io.WriteString(w, a.body)
}

func (s *server) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.calls)
}

// client is the real SDK pointed at the loopback server.
func (s *server) client() *bedrockruntime.Client {
	return bedrockruntime.New(bedrockruntime.Options{
		Region:       "us-west-2",
		BaseEndpoint: aws.String(s.srv.URL),
		Credentials:  credentials.NewStaticCredentialsProvider("AKIDEXAMPLE", "secret", ""),
	})
}

// clock records the adapter's waits instead of sleeping.
type clock struct {
	mu    sync.Mutex
	waits []time.Duration
	err   error // returned by Sleep, to play a context ending mid-wait
}

func (c *clock) Sleep(_ context.Context, d time.Duration) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.waits = append(c.waits, d)
	return c.err
}

// policy retries with clk's waits and a jitter of one half.
func policy(clk *clock) retry.Policy {
	return retry.Policy{Sleep: clk.Sleep, Rand: func() float64 { return 0.5 }}
}

func newModel(s *server, clk *clock) *Model {
	return New(s.client(), "", Options{Retry: policy(clk)})
}

// picture is a base64 PNG of w x h in one colour, as the models answer.
func picture(t *testing.T, w, h int, c color.RGBA) string {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for i := 0; i < len(img.Pix); i += 4 {
		img.Pix[i], img.Pix[i+1], img.Pix[i+2], img.Pix[i+3] = c.R, c.G, c.B, c.A
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(buf.Bytes())
}

func ok(t *testing.T, w, h int) answer {
	return answer{status: 200, body: fmt.Sprintf(`{"seeds":[2130420379],"finish_reasons":[null],"images":[%q]}`,
		picture(t, w, h, color.RGBA{0, 200, 0, 255}))}
}

var thumbnail = ai.ImageRequest{
	Task:    ai.TaskThumbnail,
	Prompt:  "A surprised cook holding a $3 receipt in a bright kitchen",
	Palette: []string{"#0f172a", "not a colour", "#DC2626"},
	Text:    "30 Days Of $3 Vegan\nMeals",
}

func TestRequestAndResponse(t *testing.T) {
	for _, tc := range []struct {
		name        string
		req         ai.ImageRequest
		model       string
		ratio       string
		w, h        int
		modelW      int
		modelH      int
		wantPath    string
		wantInBody  []string
		wantOutBody []string
	}{
		{name: "thumbnail, default model", req: thumbnail, ratio: "16:9", w: 2048, h: 1152, modelW: 1344, modelH: 768,
			wantPath: "/model/stability.stable-image-ultra-v1:1/invoke",
			wantInBody: []string{"A surprised cook", "YouTube video thumbnail", "Colour palette: #0F172A, #DC2626.",
				`headline text reading "30 Days Of $3 Vegan Meals"`}},
		// Smaller sizes from here on: scaling under the race detector is slow, and the size is not the point.
		{name: "banner, configured model", req: ai.ImageRequest{Task: ai.TaskBanner, Prompt: "Green kitchen", Width: 640, Height: 360},
			model: "stability.sd3-5-large-v1:0", ratio: "16:9", w: 640, h: 360, modelW: 672, modelH: 384,
			wantPath:    "/model/stability.sd3-5-large-v1:0/invoke",
			wantInBody:  []string{"Green kitchen", "YouTube channel banner"},
			wantOutBody: []string{"palette", "headline"}},
		{name: "picture already at the size", req: ai.ImageRequest{Task: ai.TaskThumbnail, Width: 256, Height: 256},
			ratio: "1:1", w: 256, h: 256, modelW: 256, modelH: 256,
			wantPath: "/model/stability.stable-image-ultra-v1:1/invoke", wantInBody: []string{"YouTube video thumbnail"}},
		{name: "portrait", req: ai.ImageRequest{Task: ai.TaskThumbnail, Width: 360, Height: 640},
			ratio: "9:16", w: 360, h: 640, modelW: 384, modelH: 672,
			wantPath: "/model/stability.stable-image-ultra-v1:1/invoke"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newServer(t, ok(t, tc.modelW, tc.modelH))
			clk := &clock{}
			m := New(s.client(), tc.model, Options{Retry: policy(clk)})
			got, err := m.Image(context.Background(), tc.req)
			if err != nil {
				t.Fatal(err)
			}
			if s.count() != 1 || len(clk.waits) != 0 {
				t.Fatalf("%d calls, waits %v", s.count(), clk.waits)
			}
			c := s.calls[0]
			if c.method != http.MethodPost || c.path != tc.wantPath {
				t.Errorf("%s %s, want POST %s", c.method, c.path, tc.wantPath)
			}
			if c.contentType != "application/json" || c.accept != "application/json" {
				t.Errorf("Content-Type %q, Accept %q", c.contentType, c.accept)
			}
			if !strings.HasPrefix(c.auth, "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/") || !strings.Contains(c.auth, "/us-west-2/bedrock/aws4_request") {
				t.Errorf("not signed for bedrock in us-west-2: %q", c.auth)
			}
			if c.body.AspectRatio != tc.ratio || c.body.OutputFormat != "png" || c.body.NegativePrompt == "" {
				t.Errorf("body %+v", c.body)
			}
			for _, s := range tc.wantInBody {
				if !strings.Contains(c.body.Prompt, s) {
					t.Errorf("prompt lacks %q: %q", s, c.body.Prompt)
				}
			}
			for _, s := range tc.wantOutBody {
				if strings.Contains(c.body.Prompt, s) {
					t.Errorf("prompt has %q: %q", s, c.body.Prompt)
				}
			}
			wantModel := tc.model
			if wantModel == "" {
				wantModel = DefaultModel
			}
			if got.ContentType != "image/jpeg" || got.Model != wantModel {
				t.Errorf("content type %q, model %q", got.ContentType, got.Model)
			}
			img, err := jpeg.Decode(bytes.NewReader(got.Data))
			if err != nil {
				t.Fatalf("not a JPEG: %v", err)
			}
			if b := img.Bounds(); b.Dx() != tc.w || b.Dy() != tc.h {
				t.Errorf("size %dx%d, want %dx%d", b.Dx(), b.Dy(), tc.w, tc.h)
			}
			// The model's green survives scaling and JPEG.
			if r, g, b, _ := img.At(tc.w/2, tc.h/2).RGBA(); r>>8 > 16 || g>>8 < 184 || b>>8 > 16 {
				t.Errorf("centre pixel %d,%d,%d, want green", r>>8, g>>8, b>>8)
			}
		})
	}
}

// Each row of the error table, played by the server on every call: the kind the caller gets and how many
// calls were made (retried errors run to MaxAttempts, 4).
func TestErrorMapping(t *testing.T) {
	for _, tc := range []struct {
		status  int
		errType string
		kind    error
		calls   int
	}{
		{429, "ThrottlingException", ai.ErrThrottled, 4},
		{429, "ModelNotReadyException", ai.ErrThrottled, 4},
		{400, "ServiceQuotaExceededException", ai.ErrThrottled, 1},
		{503, "ServiceUnavailableException", ai.ErrFailed, 4},
		{500, "InternalServerException", ai.ErrFailed, 4},
		{408, "ModelTimeoutException", ai.ErrFailed, 4},
		{424, "ModelErrorException", ai.ErrFailed, 1},
		{400, "ValidationException", ai.ErrFailed, 1},
		{403, "AccessDeniedException", ai.ErrFailed, 1},
		{404, "ResourceNotFoundException", ai.ErrFailed, 1},
		{409, "ConflictException", ai.ErrFailed, 1},
		{403, "UnrecognizedClientException", ai.ErrFailed, 1},
		{403, "ExpiredTokenException", ai.ErrFailed, 1},
		// Codes the table does not know go by their status.
		{429, "SomeNewLimitException", ai.ErrThrottled, 4},
		{502, "SomeNewOutageException", ai.ErrFailed, 4},
		{418, "SomeNewClientException", ai.ErrFailed, 1},
		{500, "", ai.ErrFailed, 4},
	} {
		t.Run(fmt.Sprintf("%d %s", tc.status, tc.errType), func(t *testing.T) {
			s := newServer(t, answer{status: tc.status, errType: tc.errType, body: `{"message":"no"}`})
			clk := &clock{}
			_, err := newModel(s, clk).Image(context.Background(), thumbnail)
			if !errors.Is(err, tc.kind) {
				t.Fatalf("got %v, want %v", err, tc.kind)
			}
			other := ai.ErrFailed
			if tc.kind == ai.ErrFailed {
				other = ai.ErrThrottled
			}
			if errors.Is(err, other) {
				t.Errorf("%v is also %v", err, other)
			}
			if s.count() != tc.calls || len(clk.waits) != tc.calls-1 {
				t.Errorf("%d calls and %d waits, want %d and %d", s.count(), len(clk.waits), tc.calls, tc.calls-1)
			}
			var e *ai.Error
			if !errors.As(err, &e) {
				t.Fatalf("%T is not an *ai.Error", err)
			}
			if (e.RetryAfter >= time.Second) != (tc.kind == ai.ErrThrottled) {
				t.Errorf("RetryAfter %v", e.RetryAfter)
			}
		})
	}
}

// The Retry-After the client is given: the provider's own when it sent one, the next backoff after the
// retries, a minute for a quota.
func TestRetryAfter(t *testing.T) {
	for _, tc := range []struct {
		name string
		a    answer
		want time.Duration
	}{
		{"provider's hint", answer{status: 429, errType: "ThrottlingException", retryAfter: "30", body: `{}`}, 30 * time.Second},
		{"next backoff", answer{status: 429, errType: "ThrottlingException", body: `{}`}, 2 * time.Second},
		{"quota", answer{status: 400, errType: "ServiceQuotaExceededException", body: `{}`}, time.Minute},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newServer(t, tc.a)
			_, err := newModel(s, &clock{}).Image(context.Background(), thumbnail)
			var e *ai.Error
			if !errors.As(err, &e) {
				t.Fatalf("%T is not an *ai.Error", err)
			}
			if e.Kind != ai.ErrThrottled || e.RetryAfter != tc.want {
				t.Errorf("got %v (Retry-After %v), want throttled with %v", err, e.RetryAfter, tc.want)
			}
		})
	}
}

func TestThrottledThenSucceeds(t *testing.T) {
	s := newServer(t,
		answer{status: 429, errType: "ThrottlingException", body: `{"message":"Too many requests"}`},
		answer{status: 503, errType: "ServiceUnavailableException", body: `{"message":"busy"}`},
		ok(t, 336, 192))
	clk := &clock{}
	small := thumbnail
	small.Width, small.Height = 320, 180
	got, err := newModel(s, clk).Image(context.Background(), small)
	if err != nil {
		t.Fatal(err)
	}
	if s.count() != 3 || len(got.Data) == 0 {
		t.Errorf("%d calls", s.count())
	}
	// Full jitter at one half: half of 500 ms, then half of 1 s.
	if want := []time.Duration{250 * time.Millisecond, 500 * time.Millisecond}; fmt.Sprint(clk.waits) != fmt.Sprint(want) {
		t.Errorf("waits %v, want %v", clk.waits, want)
	}
}

func TestBadAnswers(t *testing.T) {
	notImage := base64.StdEncoding.EncodeToString([]byte("plain text, not a picture"))
	// A PNG header claiming 100000x100000 pixels.
	var huge bytes.Buffer
	png.Encode(&huge, image.NewGray(image.Rect(0, 0, 1, 1)))
	h := huge.Bytes()
	copy(h[16:24], []byte{0, 1, 0x86, 0xa0, 0, 1, 0x86, 0xa0}) // IHDR width and height
	binary.BigEndian.PutUint32(h[29:33], crc32.ChecksumIEEE(h[12:29]))
	if cfg, err := png.DecodeConfig(bytes.NewReader(h)); err != nil || cfg.Width != 100000 {
		t.Fatalf("the forged header reads as %+v, %v", cfg, err)
	}
	for name, body := range map[string]string{
		"filtered prompt":     `{"seeds":[1],"finish_reasons":["Filter reason: prompt"],"images":[]}`,
		"filtered output":     fmt.Sprintf(`{"seeds":[1],"finish_reasons":["Filter reason: output image"],"images":[%q]}`, picture(t, 64, 64, color.RGBA{A: 255})),
		"inference error":     `{"finish_reasons":["Inference error"]}`,
		"no images":           `{"seeds":[1],"finish_reasons":[null],"images":[]}`,
		"not base64":          `{"finish_reasons":[null],"images":["***"]}`,
		"not a picture":       fmt.Sprintf(`{"finish_reasons":[null],"images":[%q]}`, notImage),
		"a bomb of a picture": fmt.Sprintf(`{"finish_reasons":[null],"images":[%q]}`, base64.StdEncoding.EncodeToString(h)),
		"not JSON":            `<html>`,
		"empty":               ``,
	} {
		t.Run(name, func(t *testing.T) {
			s := newServer(t, answer{status: 200, body: body})
			_, err := newModel(s, &clock{}).Image(context.Background(), thumbnail)
			if !errors.Is(err, ai.ErrFailed) || s.count() != 1 {
				t.Errorf("got %v after %d calls, want ai.ErrFailed after 1", err, s.count())
			}
		})
	}
}

func TestBadRequestsAreNotSent(t *testing.T) {
	s := newServer(t, ok(t, 64, 64))
	for _, req := range []ai.ImageRequest{
		{Task: "poster"},
		{Task: "poster", Width: 1280, Height: 720},
		{Task: ai.TaskThumbnail, Width: ai.MaxImageSide + 1, Height: 100},
		{Task: ai.TaskBanner, Width: 100},
	} {
		if _, err := newModel(s, &clock{}).Image(context.Background(), req); !errors.Is(err, ai.ErrFailed) {
			t.Errorf("%+v: %v", req, err)
		}
	}
	if s.count() != 0 {
		t.Errorf("%d calls", s.count())
	}
}

func TestContextEndingStopsTheRetries(t *testing.T) {
	s := newServer(t, answer{status: 429, errType: "ThrottlingException", body: `{}`})
	clk := &clock{err: context.Canceled}
	_, err := newModel(s, clk).Image(context.Background(), thumbnail)
	if !errors.Is(err, ai.ErrFailed) || !errors.Is(err, context.Canceled) || s.count() != 1 {
		t.Errorf("got %v after %d calls", err, s.count())
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	s2 := newServer(t, ok(t, 64, 64))
	if _, err := newModel(s2, &clock{}).Image(ctx, thumbnail); !errors.Is(err, ai.ErrFailed) {
		t.Errorf("cancelled: %v", err)
	}
}

func TestUnreachableServiceIsRetriedThenFails(t *testing.T) {
	s := newServer(t, ok(t, 64, 64))
	c := s.client()
	s.srv.Close()
	clk := &clock{}
	m := New(c, "", Options{Retry: policy(clk)})
	if _, err := m.Image(context.Background(), thumbnail); !errors.Is(err, ai.ErrFailed) {
		t.Errorf("got %v", err)
	}
	if len(clk.waits) != 3 {
		t.Errorf("waits %v, want 3", clk.waits)
	}
}

func TestAspectRatio(t *testing.T) {
	for _, tc := range []struct {
		w, h int
		want string
	}{
		{2048, 1152, "16:9"}, {2560, 1440, "16:9"}, {1280, 720, "16:9"}, {1920, 1080, "16:9"},
		{1080, 1920, "9:16"}, {1000, 1000, "1:1"}, {2100, 900, "21:9"}, {4096, 64, "21:9"},
		{64, 4096, "9:21"}, {1200, 800, "3:2"}, {800, 1200, "2:3"}, {1250, 1000, "5:4"}, {800, 1000, "4:5"},
	} {
		if got := aspectRatio(tc.w, tc.h); got != tc.want {
			t.Errorf("%dx%d: %s, want %s", tc.w, tc.h, got, tc.want)
		}
	}
}

func TestPromptStaysWithinTheLimit(t *testing.T) {
	req := thumbnail
	req.Prompt = strings.Repeat("a vivid kitchen scene ", 1000) // 22,000 runes
	req.Text = strings.Repeat("é", 5000)
	req.Palette = strings.Split(strings.Repeat("#FFFFFF,", 50), ",")
	p := prompt(req)
	if n := utf8.RuneCountInString(p); n > MaxPromptRunes {
		t.Errorf("%d runes", n)
	}
	// The pipeline's prompt gives way; what the picture is for, its palette and headline stay.
	if !strings.HasPrefix(p, "a vivid kitchen scene") || !strings.Contains(p, "YouTube video thumbnail") ||
		!strings.Contains(p, strings.Repeat("é", MaxTextRunes)+`"`) || strings.Contains(p, strings.Repeat("é", MaxTextRunes+1)) ||
		strings.Count(p, "#FFFFFF") != MaxColours {
		t.Errorf("prompt %q…%q", p[:40], p[len(p)-600:])
	}
	if got := prompt(ai.ImageRequest{Task: ai.TaskBanner}); strings.HasPrefix(got, "\n") || !strings.HasPrefix(got, "A YouTube channel banner") {
		t.Errorf("no pipeline prompt: %q", got)
	}
}
