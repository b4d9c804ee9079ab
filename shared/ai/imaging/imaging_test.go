package imaging

import (
	"image"
	"image/color"
	"testing"
)

func TestParseHex(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want color.RGBA
		ok   bool
	}{
		{"#FF0000", color.RGBA{255, 0, 0, 255}, true},
		{"#00ff7f", color.RGBA{0, 255, 127, 255}, true},
		{" #0A0b0C ", color.RGBA{10, 11, 12, 255}, true},
		{"#fff", color.RGBA{255, 255, 255, 255}, true},
		{"#1a2", color.RGBA{0x11, 0xaa, 0x22, 255}, true},
		{"FF0000", color.RGBA{}, false},   // no '#'
		{"#FF000", color.RGBA{}, false},   // 5 digits
		{"#FF00000", color.RGBA{}, false}, // 7 digits
		{"#GG0000", color.RGBA{}, false},  // not hex
		{"#", color.RGBA{}, false},        // empty
		{"", color.RGBA{}, false},         // nothing
		{"#ff00zz", color.RGBA{}, false},  // bad last digit
		{"#ＦＦ0000", color.RGBA{}, false},  // full-width letters
	} {
		got, ok := ParseHex(tc.in)
		if ok != tc.ok || got != tc.want {
			t.Errorf("ParseHex(%q) = %v, %v; want %v, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func TestPaletteKeepsValidColoursInOrderUpToMax(t *testing.T) {
	got := Palette([]string{"#000000", "red", "#FFFFFF", "#123", "#abcdef"}, 3)
	want := []color.RGBA{{0, 0, 0, 255}, {255, 255, 255, 255}, {0x11, 0x22, 0x33, 255}}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("[%d] = %v, want %v", i, got[i], want[i])
		}
	}
	if got := Palette(nil, 3); len(got) != 0 {
		t.Errorf("nil palette gave %v", got)
	}
}

// bands makes a w x h picture of n equal stripes (vertical when across, else horizontal) of the colours.
func bands(w, h int, across bool, cs ...color.RGBA) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			i := x * len(cs) / w
			if !across {
				i = y * len(cs) / h
			}
			img.SetRGBA(x, y, cs[i])
		}
	}
	return img
}

func TestCoverFillsTheSizeAndCropsEvenly(t *testing.T) {
	red, green, blue := color.RGBA{255, 0, 0, 255}, color.RGBA{0, 255, 0, 255}, color.RGBA{0, 0, 255, 255}
	for _, tc := range []struct {
		name string
		src  image.Image
		w, h int
	}{
		// A 3:1 source into a square keeps only its middle third, the green band.
		{"wider source loses its sides", bands(300, 100, true, red, green, blue), 90, 90},
		{"taller source loses top and bottom", bands(100, 300, false, red, green, blue), 90, 90},
		// 16:9-ish model output (1344x768 is 1.75) to 2K 16:9 (1.78): a few rows cropped, all green.
		{"upscale to 2K", bands(1344, 768, true, green), 2048, 1152},
		{"downscale", bands(400, 400, true, green), 64, 64},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Cover(tc.src, tc.w, tc.h)
			if b := got.Bounds(); b.Dx() != tc.w || b.Dy() != tc.h {
				t.Fatalf("size %v, want %dx%d", b, tc.w, tc.h)
			}
			// Every pixel is green: neither the red nor the blue band survived the crop.
			for _, p := range []image.Point{{0, 0}, {tc.w - 1, 0}, {0, tc.h - 1}, {tc.w - 1, tc.h - 1}, {tc.w / 2, tc.h / 2}} {
				if c := got.RGBAAt(p.X, p.Y); c.R > 8 || c.B > 8 || c.G < 247 {
					t.Errorf("pixel %v = %v, want green", p, c)
				}
			}
		})
	}
}
