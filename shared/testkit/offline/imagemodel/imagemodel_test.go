package imagemodel

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"strings"
	"sync"
	"testing"

	"golang.org/x/image/font"

	"github.com/creatorstrategy/css/shared/ai"
	"github.com/creatorstrategy/css/shared/ai/imaging"
)

func newModel(t testing.TB) *Model {
	t.Helper()
	m, err := New()
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// drawn keeps the pictures draw made, by request: the model is deterministic (TestDeterministic, which
// does not use it), and drawing each canonical picture once keeps the race detector's run short.
var drawn sync.Map

func draw(t testing.TB, m *Model, req ai.ImageRequest) (ai.Image, *image.RGBA) {
	t.Helper()
	key := fmt.Sprintf("%#v", req)
	if v, ok := drawn.Load(key); ok {
		p := v.(picture)
		return p.img, p.rgba
	}
	img, rgba := drawNew(t, m, req)
	drawn.Store(key, picture{img, rgba})
	return img, rgba
}

type picture struct {
	img  ai.Image
	rgba *image.RGBA
}

// drawNew draws req and checks it is an opaque PNG by the offline model.
func drawNew(t testing.TB, m *Model, req ai.ImageRequest) (ai.Image, *image.RGBA) {
	t.Helper()
	img, err := m.Image(context.Background(), req)
	if err != nil {
		t.Fatalf("%+v: %v", req, err)
	}
	if img.ContentType != "image/png" || img.Model != "offline" {
		t.Fatalf("content type %q, model %q", img.ContentType, img.Model)
	}
	dec, err := png.Decode(bytes.NewReader(img.Data))
	if err != nil {
		t.Fatalf("not a PNG: %v", err)
	}
	// An opaque 8-bit PNG decodes to RGBA.
	rgba, ok := dec.(*image.RGBA)
	if !ok {
		t.Fatalf("decoded as %T, want an opaque *image.RGBA", dec)
	}
	return img, rgba
}

var (
	thumb  = ai.ImageRequest{Task: ai.TaskThumbnail, Palette: []string{"#0F172A", "#DC2626", "#FACC15"}, Text: "I Cooked Vegan For 30 Days"}
	banner = ai.ImageRequest{Task: ai.TaskBanner, Palette: []string{"#14532D", "#22C55E"}, Text: "Budget Bites"}
)

func TestSizes(t *testing.T) {
	m := newModel(t)
	for _, tc := range []struct {
		name string
		req  ai.ImageRequest
		w, h int
	}{
		{"thumbnail is 2K 16:9", thumb, 2048, 1152},
		{"banner is YouTube's 2560x1440", banner, 2560, 1440},
		{"thumbnail at a given size", with(thumb, 1280, 720), 1280, 720},
		{"banner at YouTube's minimum", with(banner, 2048, 1152), 2048, 1152},
		{"smallest thumbnail", with(thumb, ai.MinImageSide, ai.MinImageSide), ai.MinImageSide, ai.MinImageSide},
		{"smallest banner", with(banner, ai.MinImageSide, ai.MinImageSide), ai.MinImageSide, ai.MinImageSide},
		{"widest", with(banner, ai.MaxImageSide, ai.MinImageSide), ai.MaxImageSide, ai.MinImageSide},
		{"tallest", with(thumb, ai.MinImageSide, ai.MaxImageSide), ai.MinImageSide, ai.MaxImageSide},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, img := draw(t, m, tc.req)
			if b := img.Bounds(); b.Dx() != tc.w || b.Dy() != tc.h {
				t.Errorf("size %dx%d, want %dx%d", b.Dx(), b.Dy(), tc.w, tc.h)
			}
		})
	}
}

func with(r ai.ImageRequest, w, h int) ai.ImageRequest {
	r.Width, r.Height = w, h
	return r
}

func TestRefusals(t *testing.T) {
	m := newModel(t)
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tc := range []struct {
		name string
		ctx  context.Context
		req  ai.ImageRequest
	}{
		{"unknown task", context.Background(), ai.ImageRequest{Task: "poster"}},
		{"unknown task with a size", context.Background(), ai.ImageRequest{Task: "poster", Width: 100, Height: 100}},
		{"too narrow", context.Background(), with(thumb, ai.MinImageSide-1, 720)},
		{"too tall", context.Background(), with(thumb, 1280, ai.MaxImageSide+1)},
		{"width without height", context.Background(), with(thumb, 1280, 0)},
		{"negative", context.Background(), with(banner, -2560, -1440)},
		{"cancelled", cancelled, thumb},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := m.Image(tc.ctx, tc.req)
			if !errors.Is(err, ai.ErrFailed) {
				t.Errorf("got %v, want ai.ErrFailed", err)
			}
		})
	}
}

func TestDeterministic(t *testing.T) {
	m := newModel(t)
	// The size does not matter to determinism; a smaller one keeps the race detector's run short.
	for _, req := range []ai.ImageRequest{with(thumb, 960, 540), with(banner, 960, 540)} {
		a, _ := drawNew(t, m, req)
		b, _ := drawNew(t, newModel(t), req)
		if !bytes.Equal(a.Data, b.Data) {
			t.Errorf("%s: two drawings differ", req.Task)
		}
		other := req
		other.Text += "!"
		c, _ := drawNew(t, m, other)
		if bytes.Equal(a.Data, c.Data) {
			t.Errorf("%s: another text gave the same picture", req.Task)
		}
	}
}

// Invalid colours are skipped; with none left the default palette is used. Whitespace and control
// characters in the text are folded.
func TestInputsAreNormalised(t *testing.T) {
	m := newModel(t)
	for _, tc := range []struct {
		name string
		a, b ai.ImageRequest
	}{
		{"invalid colours skipped", ai.ImageRequest{Task: ai.TaskThumbnail, Width: 640, Height: 360, Palette: []string{"red", "#0F172A", "#12345G", "#DC2626"}},
			ai.ImageRequest{Task: ai.TaskThumbnail, Width: 640, Height: 360, Palette: []string{"#0F172A", "#DC2626"}}},
		{"no valid colour is the default palette", ai.ImageRequest{Task: ai.TaskBanner, Width: 640, Height: 360, Palette: []string{"blue", ""}},
			ai.ImageRequest{Task: ai.TaskBanner, Width: 640, Height: 360, Palette: defaultPalette}},
		{"white space and control characters", ai.ImageRequest{Task: ai.TaskThumbnail, Width: 640, Height: 360, Text: " \tTop\x00 10\n\n Tips\u200b "},
			ai.ImageRequest{Task: ai.TaskThumbnail, Width: 640, Height: 360, Text: "Top 10 Tips\u200b"}},
		{"only control characters is no text", ai.ImageRequest{Task: ai.TaskBanner, Width: 640, Height: 360, Text: "\x00\x01\n\t"},
			ai.ImageRequest{Task: ai.TaskBanner, Width: 640, Height: 360}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, _ := draw(t, m, tc.a)
			b, _ := draw(t, m, tc.b)
			if !bytes.Equal(a.Data, b.Data) {
				t.Error("pictures differ")
			}
		})
	}
}

// The palette is the background: the first colour in the top-left corner, the second in the bottom-right.
func TestThumbnailBackgroundIsThePalette(t *testing.T) {
	_, img := draw(t, newModel(t), thumb)
	b := img.Bounds()
	for _, tc := range []struct {
		p    image.Point
		want color.RGBA
	}{
		{image.Pt(0, 0), color.RGBA{0x0F, 0x17, 0x2A, 255}},
		{image.Pt(b.Max.X-1, b.Max.Y-1), color.RGBA{0xDC, 0x26, 0x26, 255}},
	} {
		if got := img.RGBAAt(tc.p.X, tc.p.Y); got != tc.want {
			t.Errorf("pixel %v = %v, want %v", tc.p, got, tc.want)
		}
	}
}

// count counts the pixels of r close to c.
func count(img *image.RGBA, r image.Rectangle, c color.RGBA) int {
	n := 0
	near := func(a, b uint8) bool { return max(a, b)-min(a, b) < 24 }
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			if p := img.RGBAAt(x, y); near(p.R, c.R) && near(p.G, c.G) && near(p.B, c.B) {
				n++
			}
		}
	}
	return n
}

// The overlay text is drawn in white, where a thumbnail's headline goes and in a banner's mobile zone.
func TestTextIsDrawn(t *testing.T) {
	m := newModel(t)
	zones := ai.BannerSafeZones(ai.BannerWidth, ai.BannerHeight)
	for _, tc := range []struct {
		req  ai.ImageRequest
		area image.Rectangle
	}{
		{thumb, image.Rect(90, 170, 2048*55/100, 1152-200)},
		{banner, rect(zones.Mobile).Inset(10)},
	} {
		t.Run(tc.req.Task, func(t *testing.T) {
			_, with := draw(t, m, tc.req)
			blank := tc.req
			blank.Text = ""
			_, without := draw(t, m, blank)
			area := tc.area.Dx() * tc.area.Dy()
			if n := count(without, tc.area, white); n != 0 {
				t.Fatalf("%d white pixels without text", n)
			}
			// Glyphs of a large bold headline cover well over 2% of its box.
			if n := count(with, tc.area, white); n < area/50 {
				t.Errorf("%d white pixels of %d: no headline", n, area)
			}
		})
	}
}

// Both pictures carry the offline-preview tag in the top-left corner: white letters on a black pill.
func TestLabelled(t *testing.T) {
	m := newModel(t)
	for _, req := range []ai.ImageRequest{thumb, banner} {
		_, img := draw(t, m, req)
		tag := image.Rect(40, 40, 500, 80)
		area := tag.Dx() * tag.Dy()
		wn, bn := count(img, tag, white), count(img, tag, black)
		if wn < area/20 || bn < area/4 {
			t.Errorf("%s: %d white and %d black pixels of %d in the tag", req.Task, wn, bn, area)
		}
	}
}

// Each zone's outline runs along its edges: the mobile zone's left edge is at x=507, its top at y=508.
func TestBannerSafeZonesAreMarked(t *testing.T) {
	_, img := draw(t, newModel(t), banner)
	z := ai.BannerSafeZones(ai.BannerWidth, ai.BannerHeight)
	midY := z.Mobile.Y + z.Mobile.Height/2
	for _, tc := range []struct {
		name string
		p    image.Point
		want color.RGBA
		is   bool
	}{
		{"TV top edge", image.Pt(ai.BannerWidth/2, 1), tvColour, true},
		{"TV bottom edge", image.Pt(ai.BannerWidth/2, ai.BannerHeight-2), tvColour, true},
		{"desktop left edge", image.Pt(2, midY), desktopColour, true},
		{"desktop right edge", image.Pt(ai.BannerWidth-3, midY), desktopColour, true},
		{"desktop top edge", image.Pt(2300, z.Desktop.Y+1), desktopColour, true},
		{"above desktop top edge", image.Pt(2300, z.Desktop.Y-1), desktopColour, false},
		{"desktop bottom edge", image.Pt(2300, z.Desktop.Y+z.Desktop.Height-1), desktopColour, true},
		{"below desktop bottom edge", image.Pt(2300, z.Desktop.Y+z.Desktop.Height), desktopColour, false},
		{"mobile left edge", image.Pt(507, midY), mobileColour, true},
		{"left of mobile", image.Pt(506, midY), mobileColour, false},
		{"mobile right edge", image.Pt(507+1546-1, midY), mobileColour, true},
		{"right of mobile", image.Pt(507+1546, midY), mobileColour, false},
		{"mobile top edge", image.Pt(1280, 508), mobileColour, true},
		{"mobile bottom edge", image.Pt(1280, 508+423-1), mobileColour, true},
	} {
		if got := img.RGBAAt(tc.p.X, tc.p.Y); (got == tc.want) != tc.is {
			t.Errorf("%s %v = %v; want %v: %v", tc.name, tc.p, got, tc.want, tc.is)
		}
	}
}

func TestLongAndOddTextFits(t *testing.T) {
	m := newModel(t)
	for name, text := range map[string]string{
		"ten thousand runes":    strings.Repeat("Budget vegan meal prep ", 450),
		"one endless word":      strings.Repeat("W", 5000),
		"scripts Go fonts lack": "料理 🍜 وصفات",
		"one rune":              "W",
	} {
		t.Run(name, func(t *testing.T) {
			for _, req := range []ai.ImageRequest{with(thumb, 640, 360), with(banner, 640, 360), with(thumb, 64, 64), with(banner, 64, 64)} {
				req.Text = text
				draw(t, m, req)
			}
		})
	}
}

func TestWrap(t *testing.T) {
	m := newModel(t)
	face := newFace(m.bold, 40)
	for _, tc := range []struct {
		text string
		w    int
	}{
		{"I Cooked Vegan For 30 Days On $3 A Day", 300},
		{strings.Repeat("W", 60), 200},
		{"a " + strings.Repeat("W", 60) + " b", 200},
		{"WWW", 1},
	} {
		lines := wrap(face, tc.text, tc.w)
		if strings.ReplaceAll(strings.Join(lines, ""), " ", "") != strings.ReplaceAll(tc.text, " ", "") {
			t.Errorf("%q: lines %q lose or add text", tc.text, lines)
		}
		for _, l := range lines {
			if font.MeasureString(face, l).Ceil() > tc.w && len([]rune(l)) > 1 {
				t.Errorf("%q: line %q wider than %d", tc.text, l, tc.w)
			}
		}
	}
}

func TestCleanTextBoundsTheLength(t *testing.T) {
	got := cleanText(strings.Repeat("ab ", 1000))
	if n := len([]rune(got)); n > MaxTextRunes || !strings.HasSuffix(got, "…") {
		t.Errorf("%d runes, %q…", n, got[:20])
	}
	if got := cleanText(strings.Repeat("é", MaxTextRunes)); got != strings.Repeat("é", MaxTextRunes) {
		t.Errorf("exactly the bound was cut: %q", got)
	}
}

func TestConcurrentUse(t *testing.T) {
	m := newModel(t)
	want, _ := drawNew(t, m, with(thumb, 640, 360))
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			got, err := m.Image(context.Background(), with(thumb, 640, 360))
			if err != nil || !bytes.Equal(got.Data, want.Data) {
				t.Errorf("concurrent drawing differs (%v)", err)
			}
		})
	}
	wg.Wait()
}

// The whole call: drawing and encoding.
func BenchmarkImage(b *testing.B) {
	m := newModel(b)
	for _, req := range []ai.ImageRequest{thumb, banner} {
		b.Run(req.Task, func(b *testing.B) {
			b.ReportAllocs()
			var n int
			for b.Loop() {
				img, err := m.Image(context.Background(), req)
				if err != nil {
					b.Fatal(err)
				}
				n = len(img.Data)
			}
			b.ReportMetric(float64(n), "png-bytes")
		})
	}
}

// The PNG encoding alone (png.BestSpeed), of the same pictures.
func BenchmarkEncode(b *testing.B) {
	m := newModel(b)
	for _, req := range []ai.ImageRequest{thumb, banner} {
		b.Run(req.Task, func(b *testing.B) {
			w, h, _ := req.Size()
			c := &canvas{RGBA: image.NewRGBA(image.Rect(0, 0, w, h))}
			pal := imaging.Palette(req.Palette, 3)
			if req.Task == ai.TaskThumbnail {
				m.thumbnail(c, pal, req.Text)
			} else {
				m.banner(c, pal, req.Text)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := m.encode(c.RGBA); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
