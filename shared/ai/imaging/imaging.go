// Package imaging holds the pixel work the image adapters share: palette colours and fitting a picture to
// the size asked for. It is not internal to shared/ai because the local stack's offline image model
// (shared/testkit/offline/imagemodel) uses it too.
package imaging

import (
	"image"
	"image/color"
	"strings"

	"golang.org/x/image/draw"
)

// ParseHex reads "#RRGGBB" (or "#RGB"), case-insensitive, into an opaque colour.
func ParseHex(s string) (color.RGBA, bool) {
	s, ok := strings.CutPrefix(strings.TrimSpace(s), "#")
	if !ok || (len(s) != 6 && len(s) != 3) {
		return color.RGBA{}, false
	}
	var v [6]byte
	for i := range len(s) {
		d, ok := hexDigit(s[i])
		if !ok {
			return color.RGBA{}, false
		}
		v[i] = d
	}
	if len(s) == 3 {
		return color.RGBA{v[0] * 17, v[1] * 17, v[2] * 17, 255}, true
	}
	return color.RGBA{v[0]<<4 | v[1], v[2]<<4 | v[3], v[4]<<4 | v[5], 255}, true
}

func hexDigit(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// Palette keeps the valid colours of hex, in order, at most max of them.
func Palette(hex []string, max int) []color.RGBA {
	var out []color.RGBA
	for _, h := range hex {
		if c, ok := ParseHex(h); ok && len(out) < max {
			out = append(out, c)
		}
	}
	return out
}

// Cover scales src to fill w x h without distortion, cropping what overflows evenly from both sides (CSS's
// object-fit: cover), with Catmull-Rom resampling.
func Cover(src image.Image, w, h int) *image.RGBA {
	dst := image.NewRGBA(image.Rect(0, 0, w, h))
	b := src.Bounds()
	sw, sh := b.Dx(), b.Dy()
	crop := b
	// Compare w/h with sw/sh without floating point: the wider one loses its sides.
	if sw*h > w*sh {
		cw := (w*sh + h/2) / h
		crop.Min.X += (sw - cw) / 2
		crop.Max.X = crop.Min.X + cw
	} else if sw*h < w*sh {
		ch := (h*sw + w/2) / w
		crop.Min.Y += (sh - ch) / 2
		crop.Max.Y = crop.Min.Y + ch
	}
	draw.CatmullRom.Scale(dst, dst.Bounds(), src, crop, draw.Src, nil)
	return dst
}
