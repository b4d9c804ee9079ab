package ai

import (
	"strings"
	"testing"
)

func TestSize(t *testing.T) {
	for _, tc := range []struct {
		req   ImageRequest
		w, h  int
		valid bool
	}{
		{ImageRequest{Task: TaskThumbnail}, 2048, 1152, true},
		{ImageRequest{Task: TaskBanner}, 2560, 1440, true},
		{ImageRequest{Task: TaskBanner, Width: 2048, Height: 1152}, 2048, 1152, true},
		{ImageRequest{Task: "poster", Width: 100, Height: 100}, 0, 0, false},
		{ImageRequest{Task: "Thumbnail"}, 0, 0, false},
		{ImageRequest{Task: TaskThumbnail, Width: MinImageSide, Height: MaxImageSide}, MinImageSide, MaxImageSide, true},
		{ImageRequest{Task: "poster"}, 0, 0, false},
		{ImageRequest{}, 0, 0, false},
		{ImageRequest{Task: TaskThumbnail, Width: MinImageSide - 1, Height: 100}, 0, 0, false},
		{ImageRequest{Task: TaskThumbnail, Width: 100, Height: MaxImageSide + 1}, 0, 0, false},
		{ImageRequest{Task: TaskThumbnail, Width: 1280}, 0, 0, false},
		{ImageRequest{Task: TaskThumbnail, Height: 720}, 0, 0, false},
		{ImageRequest{Task: TaskThumbnail, Width: -1280, Height: -720}, 0, 0, false},
	} {
		w, h, err := tc.req.Size()
		if (err == nil) != tc.valid || w != tc.w || h != tc.h {
			t.Errorf("%+v: %dx%d, %v", tc.req, w, h, err)
		}
	}
}

// YouTube's channel-art template at 2560x1440: TV the whole image, desktop 2560x423 and mobile 1546x423,
// both centred. At the 2048x1152 minimum YouTube's help gives the safe area as 1235x338; scaling gives
// 1237x338.
func TestBannerSafeZones(t *testing.T) {
	for _, tc := range []struct {
		w, h int
		want SafeZones
	}{
		{2560, 1440, SafeZones{
			TV:      Zone{0, 0, 2560, 1440},
			Desktop: Zone{0, 508, 2560, 423},
			Mobile:  Zone{507, 508, 1546, 423},
		}},
		{2048, 1152, SafeZones{
			TV:      Zone{0, 0, 2048, 1152},
			Desktop: Zone{0, 407, 2048, 338},
			Mobile:  Zone{405, 407, 1237, 338},
		}},
	} {
		if got := BannerSafeZones(tc.w, tc.h); got != tc.want {
			t.Errorf("%dx%d: %+v, want %+v", tc.w, tc.h, got, tc.want)
		}
	}
	// Each zone lies within the next larger one, at every allowed size.
	for _, s := range [][2]int{{MinImageSide, MinImageSide}, {MaxImageSide, MinImageSide}, {MinImageSide, MaxImageSide}, {MaxImageSide, MaxImageSide}, {1280, 720}} {
		z := BannerSafeZones(s[0], s[1])
		in := func(a, b Zone) bool {
			return a.X >= b.X && a.Y >= b.Y && a.X+a.Width <= b.X+b.Width && a.Y+a.Height <= b.Y+b.Height && a.Width > 0 && a.Height > 0
		}
		if !in(z.Mobile, z.Desktop) || !in(z.Desktop, z.TV) {
			t.Errorf("%v: %+v", s, z)
		}
	}
}

func TestImageKey(t *testing.T) {
	const ch, id = "0193a7c4-5b1e-7f00-8000-000000000001", "0193a7c4-5b1e-7f00-8000-0000000000AA"
	for _, tc := range []struct {
		ch, id, ct, want string
	}{
		{ch, id, "image/png", "images/" + ch + "/" + id + ".png"},
		{ch, id, "image/jpeg", "images/" + ch + "/" + id + ".jpeg"},
		{"a", strings.Repeat("b", 64), "image/png", "images/a/" + strings.Repeat("b", 64) + ".png"},
		{ch, id, "image/gif", ""},
		{ch, id, "", ""},
		{"", id, "image/png", ""},
		{ch, "", "image/png", ""},
		{"..", id, "image/png", ""},
		{ch, "a/b", "image/png", ""},
		{ch, "a.b", "image/png", ""},
		{ch, strings.Repeat("b", 65), "image/png", ""},
		{"ch annel", id, "image/png", ""},
	} {
		got, err := ImageKey(tc.ch, tc.id, tc.ct)
		if got != tc.want || (err == nil) != (tc.want != "") {
			t.Errorf("ImageKey(%q, %q, %q) = %q, %v", tc.ch, tc.id, tc.ct, got, err)
		}
		if tc.want != "" && !ValidImageKey(got) {
			t.Errorf("%q: not valid", got)
		}
	}
}

func TestValidImageKey(t *testing.T) {
	long, tooLong := strings.Repeat("a", 64), strings.Repeat("a", 65)
	for _, tc := range []struct {
		key string
		ok  bool
	}{
		{"images/c/i.png", true},
		{"images/c/i.jpeg", true},
		{"images/AZ-az-09/AZ-az-09.png", true},
		{"images/" + long + "/" + long + ".png", true},
		{"images/" + tooLong + "/i.png", false},
		{"images/c/" + tooLong + ".png", false},
		{"images/c/i.jpg", false},
		{"images/c/i.PNG", false},
		{"images/c/i.png.png", false},
		{"images/c/i.", false},
		{"images/c/i", false},
		{"images/c/.png", false},
		{"images//i.png", false},
		{"images/c/", false},
		{"images/c", false},
		{"images/", false},
		{"", false},
		{"Images/c/i.png", false},
		{"./images/c/i.png", false},
		{"images/c/d/i.png", false},
		{"images/c/../i.png", false},
		{"images/c/i.png\n", false},
		{"images/c/i.png/", false},
		{"images/c_d/i.png", false},
		{"images/c/i d.png", false},
		{"images/c/\u00e9.png", false},
		{"images/c/i\x00.png", false},
	} {
		if got := ValidImageKey(tc.key); got != tc.ok {
			t.Errorf("ValidImageKey(%q) = %v, want %v", tc.key, got, tc.ok)
		}
	}
}

func TestCheckPut(t *testing.T) {
	png := Image{Data: []byte{1}, ContentType: "image/png"}
	for _, tc := range []struct {
		key string
		img Image
		ok  bool
	}{
		{"images/c/i.png", png, true},
		{"images/c/i.jpeg", Image{Data: []byte{1}, ContentType: "image/jpeg"}, true},
		{"images/c/i.jpeg", png, false},
		{"images/c/i.png", Image{ContentType: "image/png"}, false},
		{"images/c/i.png", Image{Data: []byte{1}, ContentType: "text/html"}, false},
		{"images/c/i.jpg", Image{Data: []byte{1}, ContentType: "image/jpeg"}, false},
		{"images/c/../i.png", png, false},
		{"/images/c/i.png", png, false},
		{"images/c/i.png\n", png, false},
		{"images/c/d/i.png", png, false},
		{"images//i.png", png, false},
	} {
		if err := CheckPut(tc.key, tc.img); (err == nil) != tc.ok {
			t.Errorf("CheckPut(%q, %s): %v", tc.key, tc.img.ContentType, err)
		}
	}
}
