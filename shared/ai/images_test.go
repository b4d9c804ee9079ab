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
	const ch, name = "0193a7c4-5b1e-7f00-8000-000000000001", "0123456789abcdef0123456789abcdef"
	for _, tc := range []struct {
		ch, name, ct, want string
	}{
		{ch, name, "image/png", "images/" + ch + "/" + name + ".png"},
		{ch, name, "image/jpeg", "images/" + ch + "/" + name + ".jpeg"},
		{"a", name, "image/png", "images/a/" + name + ".png"},
		{strings.Repeat("c", 64), name, "image/png", "images/" + strings.Repeat("c", 64) + "/" + name + ".png"},
		{strings.Repeat("c", 65), name, "image/png", ""},
		{ch, name, "image/gif", ""},
		{ch, name, "", ""},
		{"", name, "image/png", ""},
		{ch, "", "image/png", ""},
		{"..", name, "image/png", ""},
		{"ch annel", name, "image/png", ""},
		{"c/d", name, "image/png", ""},
		// The name is exactly 128 bits in lowercase hex.
		{ch, name[:31], "image/png", ""},
		{ch, name + "0", "image/png", ""},
		{ch, strings.ToUpper(name), "image/png", ""},
		{ch, "0193a7c4-5b1e-7f00-8000-0000000000aa", "image/png", ""},
		{ch, name[:30] + "/x", "image/png", ""},
		{ch, name[:30] + ".x", "image/png", ""},
		{ch, name[:31] + "g", "image/png", ""},
	} {
		got, err := ImageKey(tc.ch, tc.name, tc.ct)
		if got != tc.want || (err == nil) != (tc.want != "") {
			t.Errorf("ImageKey(%q, %q, %q) = %q, %v", tc.ch, tc.name, tc.ct, got, err)
		}
		if tc.want != "" && !ValidImageKey(got) {
			t.Errorf("%q: not valid", got)
		}
	}
}

// New keys are valid, carry the content type's extension, and differ every time.
func TestNewImageKey(t *testing.T) {
	const ch = "0193a7c4-5b1e-7f00-8000-000000000001"
	seen := map[string]bool{}
	for i := range 1000 {
		ct := []string{"image/png", "image/jpeg"}[i%2]
		key, err := NewImageKey(ch, ct)
		if err != nil || !ValidImageKey(key) || !strings.HasPrefix(key, "images/"+ch+"/") || ImageContentType(key) != ct {
			t.Fatalf("NewImageKey: %q, %v", key, err)
		}
		if seen[key[:len(key)-len(".jpeg")]] {
			t.Fatalf("%q twice", key)
		}
		seen[key[:len(key)-len(".jpeg")]] = true
	}
	for _, bad := range [][2]string{{"", "image/png"}, {"../x", "image/png"}, {ch, "image/gif"}} {
		if key, err := NewImageKey(bad[0], bad[1]); err == nil {
			t.Errorf("NewImageKey(%q, %q) = %q", bad[0], bad[1], key)
		}
	}
}

func TestImageURLAndContentType(t *testing.T) {
	const key = "images/c/0123456789abcdef0123456789abcdef.png"
	for _, base := range []string{"https://api.example.com", "https://api.example.com/"} {
		if got := ImageURL(base, key); got != "https://api.example.com/files/"+key {
			t.Errorf("ImageURL(%q): %s", base, got)
		}
	}
	for key, want := range map[string]string{
		key: "image/png", strings.TrimSuffix(key, ".png") + ".jpeg": "image/jpeg",
		strings.TrimSuffix(key, ".png") + ".jpg": "", strings.TrimSuffix(key, ".png") + ".gif": "", "": "",
		"images/c/notes.png": "", "other/c/0123456789abcdef0123456789abcdef.png": "",
	} {
		if got := ImageContentType(key); got != want {
			t.Errorf("ImageContentType(%q) = %q, want %q", key, got, want)
		}
	}
}

func TestValidImageKey(t *testing.T) {
	const tok = "0123456789abcdef0123456789abcdef"
	long, tooLong := strings.Repeat("a", 64), strings.Repeat("a", 65)
	for _, tc := range []struct {
		key string
		ok  bool
	}{
		{"images/c/" + tok + ".png", true},
		{"images/c/" + tok + ".jpeg", true},
		{"images/AZ-az-09/" + tok + ".png", true},
		{"images/" + long + "/" + tok + ".png", true},
		{"images/" + tooLong + "/" + tok + ".png", false},
		{"images/c/i.png", false},
		{"images/c/" + tok[:31] + ".png", false},
		{"images/c/" + tok + "0.png", false},
		{"images/c/" + strings.ToUpper(tok) + ".png", false},
		{"images/c/" + tok + ".jpg", false},
		{"images/c/" + tok + ".PNG", false},
		{"images/c/" + tok + ".png.png", false},
		{"images/c/" + tok + ".", false},
		{"images/c/" + tok, false},
		{"images/c/.png", false},
		{"images//" + tok + ".png", false},
		{"images/c/", false},
		{"images/c", false},
		{"images/", false},
		{"", false},
		{"Images/c/" + tok + ".png", false},
		{"./images/c/" + tok + ".png", false},
		{"images/c/d/" + tok + ".png", false},
		{"images/c/../" + tok + ".png", false},
		{"images/c/" + tok + ".png\n", false},
		{"images/c/" + tok + ".png/", false},
		{"images/c_d/" + tok + ".png", false},
		{"images/c d/" + tok + ".png", false},
		{"images/\u00e9/" + tok + ".png", false},
		{"images/c/" + tok[:31] + "\x00.png", false},
	} {
		if got := ValidImageKey(tc.key); got != tc.ok {
			t.Errorf("ValidImageKey(%q) = %v, want %v", tc.key, got, tc.ok)
		}
	}
}

func TestCheckPut(t *testing.T) {
	png := Image{Data: []byte{1}, ContentType: "image/png"}
	const i = "0123456789abcdef0123456789abcdef"
	for _, tc := range []struct {
		key string
		img Image
		ok  bool
	}{
		{"images/c/" + i + ".png", png, true},
		{"images/c/" + i + ".jpeg", Image{Data: []byte{1}, ContentType: "image/jpeg"}, true},
		{"images/c/" + i + ".jpeg", png, false},
		{"images/c/" + i + ".png", Image{ContentType: "image/png"}, false},
		{"images/c/" + i + ".png", Image{Data: []byte{1}, ContentType: "text/html"}, false},
		{"images/c/" + i + ".jpg", Image{Data: []byte{1}, ContentType: "image/jpeg"}, false},
		{"images/c/../" + i + ".png", png, false},
		{"/images/c/" + i + ".png", png, false},
		{"images/c/" + i + ".png\n", png, false},
		{"images/c/d/" + i + ".png", png, false},
		{"images//" + i + ".png", png, false},
	} {
		if err := CheckPut(tc.key, tc.img); (err == nil) != tc.ok {
			t.Errorf("CheckPut(%q, %s): %v", tc.key, tc.img.ContentType, err)
		}
	}
}
