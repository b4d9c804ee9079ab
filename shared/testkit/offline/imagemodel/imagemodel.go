// Package imagemodel is the offline image model, a stand-in of the local stack and the tests that no
// Lambda links: it draws, without any network, a real PNG that previews the layout a network model would
// fill in. A thumbnail shows the palette as its background, the overlay text in Go Bold where a creator
// would put it, a subject placeholder and the corner YouTube's timestamp covers; a banner shows its safe
// zones (TV, desktop, mobile) with the text in the mobile one. Both say "offline preview" on their face.
// The same request always gives the same bytes.
package imagemodel

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"golang.org/x/image/font"
	"golang.org/x/image/font/gofont/gobold"
	"golang.org/x/image/font/gofont/goregular"
	"golang.org/x/image/font/opentype"
	"golang.org/x/image/font/sfnt"
	"golang.org/x/image/math/fixed"

	"github.com/creatorstrategy/css/shared/ai"
	"github.com/creatorstrategy/css/shared/ai/imaging"
)

// ModelName is the model every offline picture reports.
const ModelName = "offline"

// MaxTextRunes bounds the overlay text drawn; longer text ends in an ellipsis.
const MaxTextRunes = 200

// Label is written on every picture, so a preview is never taken for the real thing.
const Label = "OFFLINE PREVIEW"

// defaultPalette is used when a request brings no valid colour: deep blue, violet, amber.
var defaultPalette = []string{"#1E3A8A", "#7C3AED", "#F59E0B"}

// Colours of the safe-zone outlines, fixed so they read the same whatever the palette.
var (
	tvColour      = color.RGBA{0xFF, 0xD4, 0x00, 0xFF}
	desktopColour = color.RGBA{0x00, 0xC2, 0xFF, 0xFF}
	mobileColour  = color.RGBA{0xFF, 0x3B, 0x6B, 0xFF}
	white         = color.RGBA{0xFF, 0xFF, 0xFF, 0xFF}
	black         = color.RGBA{0x00, 0x00, 0x00, 0xFF}
)

// Model draws previews. Its zero value is not usable; New parses the fonts once.
type Model struct {
	regular, bold *sfnt.Font
	buffers       bufferPool
}

// New returns the offline image model.
func New() (*Model, error) {
	regular, err := opentype.Parse(goregular.TTF)
	if err != nil {
		return nil, fmt.Errorf("offline image model: Go Regular: %w", err)
	}
	bold, err := opentype.Parse(gobold.TTF)
	if err != nil {
		return nil, fmt.Errorf("offline image model: Go Bold: %w", err)
	}
	return &Model{regular: regular, bold: bold}, nil
}

// bufferPool lets the PNG encoder reuse its buffers across pictures.
type bufferPool struct{ p sync.Pool }

func (b *bufferPool) Get() *png.EncoderBuffer {
	v, _ := b.p.Get().(*png.EncoderBuffer)
	return v
}

func (b *bufferPool) Put(e *png.EncoderBuffer) { b.p.Put(e) }

// Image draws the picture req.Task names at req's size (the task's canonical one when none is given).
func (m *Model) Image(ctx context.Context, req ai.ImageRequest) (ai.Image, error) {
	if err := ctx.Err(); err != nil {
		return ai.Image{}, &ai.Error{Kind: ai.ErrFailed, Err: err}
	}
	w, h, err := req.Size() // also refuses an unknown task
	if err != nil {
		return ai.Image{}, &ai.Error{Kind: ai.ErrFailed, Err: err}
	}
	draw := m.banner
	if req.Task == ai.TaskThumbnail {
		draw = m.thumbnail
	}
	pal := imaging.Palette(req.Palette, 3)
	if len(pal) == 0 {
		pal = imaging.Palette(defaultPalette, 3)
	}
	c := &canvas{RGBA: image.NewRGBA(image.Rect(0, 0, w, h))}
	draw(c, pal, cleanText(req.Text))
	data, err := m.encode(c.RGBA)
	if err != nil {
		return ai.Image{}, &ai.Error{Kind: ai.ErrFailed, Err: err}
	}
	return ai.Image{Data: data, ContentType: "image/png", Model: ModelName}, nil
}

// encode writes the PNG at BestSpeed: a flat preview compresses well at any level, and the fastest
// keeps a generation's overhead small.
func (m *Model) encode(img image.Image) ([]byte, error) {
	var buf bytes.Buffer
	enc := png.Encoder{CompressionLevel: png.BestSpeed, BufferPool: &m.buffers}
	if err := enc.Encode(&buf, img); err != nil {
		return nil, fmt.Errorf("encode PNG: %w", err)
	}
	return buf.Bytes(), nil
}

// thumbnail lays out a 16:9 thumbnail: the headline on the left, a subject on the right third, the
// timestamp corner kept clear, the palette named at the bottom.
func (m *Model) thumbnail(c *canvas, pal []color.RGBA, text string) {
	w, h := c.Bounds().Dx(), c.Bounds().Dy()
	u := float64(h) / 1152 // layout unit: 1 at the canonical 2048x1152
	px := func(v float64) int { return int(v*u + 0.5) }
	c.gradient(pal[0], second(pal))

	// Subject placeholder: a head and shoulders in the third colour on the right third.
	accent := pal[len(pal)-1]
	cx, cy, r := w*3/4, h*2/5, px(170)
	c.fillCircle(cx, cy, r, accent, 200)
	c.fillRect(image.Rect(cx-px(300), cy+r+px(30), cx+px(300), h), accent, 200)
	m.label(c, m.regular, px(34), "SUBJECT", cx, cy+r+px(120), contrast(accent), true)

	// YouTube covers the bottom-right corner with the video's length.
	badge := image.Rect(w-px(250), h-px(110), w-px(30), h-px(30))
	c.fillRect(badge, black, 170)
	m.label(c, m.regular, px(40), "12:34", (badge.Min.X+badge.Max.X)/2, badge.Max.Y-px(24), white, true)

	// The headline: up to three lines in the left 55%, as large as fits.
	if text != "" {
		box := image.Rect(px(90), px(170), w*55/100, h-px(200))
		m.headline(c, text, box, px(190), px(72), 3)
	}

	m.swatches(c, pal, px(90), h-px(60), px(40))
	m.tag(c, px(40), px(30), px(30), Label+" · layout only")
}

// banner lays out channel art: the TV-only area dimmed, each safe zone outlined and named, the text in the
// mobile (text and logo) safe area.
func (m *Model) banner(c *canvas, pal []color.RGBA, text string) {
	w, h := c.Bounds().Dx(), c.Bounds().Dy()
	u := float64(h) / 1440
	px := func(v float64) int { return int(v*u + 0.5) }
	z := ai.BannerSafeZones(w, h)
	c.gradient(pal[0], second(pal))

	desktop, mobile := rect(z.Desktop), rect(z.Mobile)
	c.fillRect(image.Rect(0, 0, w, desktop.Min.Y), black, 110)
	c.fillRect(image.Rect(0, desktop.Max.Y, w, h), black, 110)

	stroke := max(px(6), 2)
	size := px(36)
	if text != "" {
		// Inside the mobile zone, below its name.
		box := image.Rect(mobile.Min.X+px(40), mobile.Min.Y+2*px(24)+size, mobile.Max.X-px(40), mobile.Max.Y-px(24))
		m.headline(c, text, box, px(150), px(48), 2)
	}
	c.strokeRect(rect(z.TV), stroke, tvColour)
	c.strokeRect(desktop, stroke, desktopColour)
	c.strokeRect(mobile, stroke, mobileColour)
	m.zoneName(c, fmt.Sprintf("TV %dx%d (whole image)", z.TV.Width, z.TV.Height), rect(z.TV), size, tvColour, px(24), px(60)+size)
	m.zoneName(c, fmt.Sprintf("DESKTOP %dx%d", z.Desktop.Width, z.Desktop.Height), desktop, size, desktopColour, px(24), 0)
	m.zoneName(c, fmt.Sprintf("MOBILE · TEXT AND LOGO SAFE AREA %dx%d", z.Mobile.Width, z.Mobile.Height), mobile, size, mobileColour, px(24), 0)

	m.swatches(c, pal, px(40), h-px(60), px(40))
	m.tag(c, px(44), px(40), px(40), Label+" · safe zones marked")
}

func rect(z ai.Zone) image.Rectangle { return image.Rect(z.X, z.Y, z.X+z.Width, z.Y+z.Height) }

func second(pal []color.RGBA) color.RGBA {
	if len(pal) > 1 {
		return pal[1]
	}
	return shade(pal[0], 0.45)
}

// headline draws text in bold inside box, wrapped to at most maxLines, at the largest size from maxSize
// down to minSize that fits, white on a dark outline (or dark on a light one over a light background).
func (m *Model) headline(c *canvas, text string, box image.Rectangle, maxSize, minSize, maxLines int) {
	face, lines := fit(m.bold, text, box.Dx(), box.Dy(), maxSize, minSize, maxLines)
	defer face.Close()
	metrics := face.Metrics()
	lineH := (metrics.Ascent + metrics.Descent).Ceil()
	total := lineH * len(lines)
	y := box.Min.Y + (box.Dy()-total)/2 + metrics.Ascent.Ceil()
	fill := contrast(c.RGBAAt(box.Min.X+box.Dx()/2, box.Min.Y+box.Dy()/2))
	outline := max(metrics.Ascent.Ceil()/14, 2)
	for _, line := range lines {
		x := box.Min.X + (box.Dx()-font.MeasureString(face, line).Ceil())/2
		c.outlinedText(face, x, y, line, fill, contrast(fill), outline)
		y += lineH
	}
}

// tag writes a label on a dark pill at (x, y), the pill's top-left corner.
func (m *Model) tag(c *canvas, size, x, y int, s string) {
	face := newFace(m.bold, size)
	defer face.Close()
	pad := size / 2
	tw := font.MeasureString(face, s).Ceil()
	metrics := face.Metrics()
	th := (metrics.Ascent + metrics.Descent).Ceil()
	c.fillRect(image.Rect(x, y, x+tw+2*pad, y+th+pad), black, 190)
	c.text(face, x+pad, y+pad/2+metrics.Ascent.Ceil(), s, white)
}

// zoneName writes a zone's name inside its top-left corner (dy lower, to keep clear of another name).
func (m *Model) zoneName(c *canvas, s string, r image.Rectangle, size int, col color.RGBA, inset, dy int) {
	face := newFace(m.bold, size)
	defer face.Close()
	c.outlinedText(face, r.Min.X+inset, r.Min.Y+inset+dy+face.Metrics().Ascent.Ceil(), s, col, black, max(size/16, 1))
}

// label writes s in face at size, centred on x when centred, with its baseline at y.
func (m *Model) label(c *canvas, f *sfnt.Font, size int, s string, x, y int, col color.RGBA, centred bool) {
	face := newFace(f, size)
	defer face.Close()
	if centred {
		x -= font.MeasureString(face, s).Ceil() / 2
	}
	c.text(face, x, y, s, col)
}

// swatches shows each palette colour with its hex code, left to right from (x, baseline).
func (m *Model) swatches(c *canvas, pal []color.RGBA, x, baseline, size int) {
	face := newFace(m.regular, size*3/4)
	defer face.Close()
	for _, p := range pal {
		sq := image.Rect(x, baseline-size, x+size, baseline)
		c.fillRect(sq.Inset(-2), contrast(p), 255)
		c.fillRect(sq, p, 255)
		s := fmt.Sprintf("#%02X%02X%02X", p.R, p.G, p.B)
		c.outlinedText(face, x+size+size/4, baseline-size/6, s, white, black, 2)
		x += size + size/4 + font.MeasureString(face, s).Ceil() + size
	}
}

// newFace is f at size px (at least 1). opentype.NewFace never fails: it only records the scale.
func newFace(f *sfnt.Font, size int) font.Face {
	face, _ := opentype.NewFace(f, &opentype.FaceOptions{Size: float64(max(size, 1)), DPI: 72, Hinting: font.HintingNone})
	return face
}

// fit finds the largest size from maxSize down to minSize (8% steps) at which text wraps into at most
// maxLines lines within w x h; at minSize it truncates the last line with an ellipsis.
func fit(f *sfnt.Font, text string, w, h, maxSize, minSize, maxLines int) (font.Face, []string) {
	size := maxSize
	for {
		face := newFace(f, size)
		lines := wrap(face, text, w)
		lineH := (face.Metrics().Ascent + face.Metrics().Descent).Ceil()
		if len(lines) <= maxLines && lineH*len(lines) <= h {
			return face, lines
		}
		next := size * 92 / 100
		if next < minSize || next == size {
			for len(lines) > 1 && (len(lines) > maxLines || lineH*len(lines) > h) {
				lines = lines[:len(lines)-1]
			}
			lines[len(lines)-1] = ellipsize(face, lines[len(lines)-1], w)
			return face, lines
		}
		face.Close()
		size = next
	}
}

// wrap breaks text into lines no wider than w, at spaces, and inside a word only when the word alone is
// wider than w.
func wrap(face font.Face, text string, w int) []string {
	fits := func(s string) bool { return font.MeasureString(face, s).Ceil() <= w }
	var lines []string
	line := ""
	for _, word := range strings.Fields(text) {
		if line != "" && fits(line+" "+word) {
			line += " " + word
			continue
		}
		if line != "" {
			lines = append(lines, line)
		}
		line = ""
		// A word wider than the line is cut; one rune always stays, however narrow the box.
		for utf8.RuneCountInString(word) > 1 && !fits(word) {
			rs := []rune(word)
			n := len(rs) - 1
			for n > 1 && !fits(string(rs[:n])) {
				n--
			}
			lines = append(lines, string(rs[:n]))
			word = string(rs[n:])
		}
		line = word
	}
	if line != "" {
		lines = append(lines, line)
	}
	return lines
}

// ellipsize ends line with "…", dropping runes until it fits w.
func ellipsize(face font.Face, line string, w int) string {
	rs := []rune(line)
	for len(rs) > 0 && font.MeasureString(face, string(rs)+"…").Ceil() > w {
		rs = rs[:len(rs)-1]
	}
	return strings.TrimRightFunc(string(rs), unicode.IsSpace) + "…"
}

// cleanText drops control characters, folds runs of white space into one space and keeps at most
// MaxTextRunes runes.
func cleanText(s string) string {
	s = strings.Join(strings.FieldsFunc(s, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }), " ")
	if rs := []rune(s); len(rs) > MaxTextRunes {
		s = strings.TrimRightFunc(string(rs[:MaxTextRunes-1]), unicode.IsSpace) + "…"
	}
	return s
}

// luminance is the relative luminance of c, 0 (black) to 1 (white), without gamma (enough to pick a
// text colour).
func luminance(c color.RGBA) float64 {
	return (0.2126*float64(c.R) + 0.7152*float64(c.G) + 0.0722*float64(c.B)) / 255
}

// contrast is black or white, whichever reads on c.
func contrast(c color.RGBA) color.RGBA {
	if luminance(c) > 0.6 {
		return black
	}
	return white
}

// shade darkens c by the fraction f.
func shade(c color.RGBA, f float64) color.RGBA {
	k := 1 - f
	return color.RGBA{uint8(float64(c.R) * k), uint8(float64(c.G) * k), uint8(float64(c.B) * k), 255}
}

// canvas is an opaque RGBA picture with the few drawing operations the layouts need.
type canvas struct{ *image.RGBA }

// gradient fills the canvas from a (top-left) to b (bottom-right): the colour of a pixel depends on x+y
// only, so each of those sums' colours is computed once.
func (c *canvas) gradient(a, b color.RGBA) {
	w, h := c.Bounds().Dx(), c.Bounds().Dy()
	span := max(w+h-2, 1)
	lut := make([]byte, 4*(span+1))
	for t := range span + 1 {
		copy(lut[4*t:], []byte{mix(a.R, b.R, t, span), mix(a.G, b.G, t, span), mix(a.B, b.B, t, span), 255})
	}
	for y := range h {
		copy(c.Pix[y*c.Stride:y*c.Stride+4*w], lut[4*y:4*(y+w)])
	}
}

func mix(a, b uint8, t, span int) uint8 {
	return uint8((int(a)*(span-t) + int(b)*t + span/2) / span)
}

// fillRect blends col over r at opacity alpha (255: opaque).
func (c *canvas) fillRect(r image.Rectangle, col color.RGBA, alpha uint8) {
	r = r.Intersect(c.Bounds())
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			c.blend(x, y, col, alpha)
		}
	}
}

// strokeRect outlines r inside its edges with lines t pixels thick.
func (c *canvas) strokeRect(r image.Rectangle, t int, col color.RGBA) {
	c.fillRect(image.Rect(r.Min.X, r.Min.Y, r.Max.X, r.Min.Y+t), col, 255)
	c.fillRect(image.Rect(r.Min.X, r.Max.Y-t, r.Max.X, r.Max.Y), col, 255)
	c.fillRect(image.Rect(r.Min.X, r.Min.Y, r.Min.X+t, r.Max.Y), col, 255)
	c.fillRect(image.Rect(r.Max.X-t, r.Min.Y, r.Max.X, r.Max.Y), col, 255)
}

// fillCircle blends a disc of radius r centred on (cx, cy).
func (c *canvas) fillCircle(cx, cy, r int, col color.RGBA, alpha uint8) {
	b := image.Rect(cx-r, cy-r, cx+r+1, cy+r+1).Intersect(c.Bounds())
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			if dx, dy := x-cx, y-cy; dx*dx+dy*dy <= r*r {
				c.blend(x, y, col, alpha)
			}
		}
	}
}

func (c *canvas) blend(x, y int, col color.RGBA, alpha uint8) {
	i := c.PixOffset(x, y)
	p := c.Pix[i : i+3 : i+3]
	a := int(alpha)
	p[0] = uint8((int(p[0])*(255-a) + int(col.R)*a + 127) / 255)
	p[1] = uint8((int(p[1])*(255-a) + int(col.G)*a + 127) / 255)
	p[2] = uint8((int(p[2])*(255-a) + int(col.B)*a + 127) / 255)
}

// text draws s with its baseline starting at (x, y).
func (c *canvas) text(face font.Face, x, y int, s string, col color.RGBA) {
	d := font.Drawer{Dst: c.RGBA, Src: image.NewUniform(col), Face: face, Dot: fixed.P(x, y)}
	d.DrawString(s)
}

// outlinedText draws s in fill over an outline t pixels wide, so it reads on any background.
func (c *canvas) outlinedText(face font.Face, x, y int, s string, fill, outline color.RGBA, t int) {
	for _, o := range []image.Point{{-t, 0}, {t, 0}, {0, -t}, {0, t}, {-t, -t}, {t, -t}, {-t, t}, {t, t}} {
		c.text(face, x+o.X, y+o.Y, s, outline)
	}
	c.text(face, x, y, s, fill)
}
