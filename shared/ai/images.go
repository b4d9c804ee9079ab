package ai

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

// The two pictures the product draws (ImageRequest.Task).
const (
	TaskThumbnail = "thumbnail"
	TaskBanner    = "banner"
)

// Canonical sizes. The thumbnail is 16:9 "2K": 2048 px wide, as DCI 2K is, so 2048x1152. The banner is
// YouTube's recommended channel-art upload, 2560x1440 (its minimum is 2048x1152).
const (
	ThumbnailWidth  = 2048
	ThumbnailHeight = 1152
	BannerWidth     = 2560
	BannerHeight    = 1440
)

// Bounds of an ImageRequest's Width and Height (0 means the task's canonical size).
const (
	MinImageSide = 64
	MaxImageSide = 4096
)

// Size is the width and height a request asks for: its own when given, else the task's canonical one. It
// fails for a task other than TaskThumbnail and TaskBanner, and for a size out of bounds.
func (r ImageRequest) Size() (w, h int, err error) {
	switch r.Task {
	case TaskThumbnail:
		w, h = ThumbnailWidth, ThumbnailHeight
	case TaskBanner:
		w, h = BannerWidth, BannerHeight
	default:
		return 0, 0, fmt.Errorf("image task %q: want %q or %q", r.Task, TaskThumbnail, TaskBanner)
	}
	if r.Width == 0 && r.Height == 0 {
		return w, h, nil
	}
	if r.Width < MinImageSide || r.Width > MaxImageSide || r.Height < MinImageSide || r.Height > MaxImageSide {
		return 0, 0, fmt.Errorf("image size %dx%d: each side must be %d..%d px", r.Width, r.Height, MinImageSide, MaxImageSide)
	}
	return r.Width, r.Height, nil
}

// Zone is a rectangle of an image, in pixels from its top-left corner (the contract's SafeZone).
type Zone struct {
	X, Y, Width, Height int
}

// SafeZones are the parts of a channel banner each kind of screen shows.
type SafeZones struct {
	// TV shows the whole image.
	TV Zone
	// Desktop shows a full-width strip across the middle (2560x423 at 2560x1440) on the widest browser
	// window, and less of its sides on narrower ones.
	Desktop Zone
	// Mobile is the centre of that strip (1546x423): what every device shows, YouTube's "safe area" for
	// text and logos.
	Mobile Zone
}

// BannerSafeZones gives the safe zones of a w x h banner. The numbers are YouTube's channel-art template
// for 2560x1440 (TV 2560x1440; desktop 2560x423; mobile, the text-and-logo safe area, 1546x423; all
// centred); other sizes scale them (YouTube's help gives 1235x338 at its 2048x1152 minimum, the same
// proportions rounded).
func BannerSafeZones(w, h int) SafeZones {
	scale := func(v, of, to int) int { return (v*to + of/2) / of }
	centred := func(zw, zh int) Zone { return Zone{X: (w - zw) / 2, Y: (h - zh) / 2, Width: zw, Height: zh} }
	stripH := scale(423, BannerHeight, h)
	return SafeZones{
		TV:      Zone{Width: w, Height: h},
		Desktop: centred(w, stripH),
		Mobile:  centred(scale(1546, BannerWidth, w), stripH),
	}
}

// ImageStore keeps generated pictures and says where clients fetch them. Adapters: ai/s3images (the
// cloud: a private bucket behind GET /files/, which redirects to a short-lived presigned URL) and
// ai/localimages (the local stack: files under the data folder, served at /files/).
type ImageStore interface {
	// Put stores img under key (made by NewImageKey) and returns the URL a client fetches it from.
	Put(ctx context.Context, key string, img Image) (url string, err error)
}

// FilesPath is where both stacks serve pictures: a key's URL is <public base URL>/files/<key>. It needs
// no credential (an <img> tag sends none): the key's 128 random bits are the capability, and a key is
// only ever given to the channel whose picture it names.
const FilesPath = "/files/"

// ImageURL is the lasting URL of key under the service's public base URL (e.g. https://api.example.com).
func ImageURL(base, key string) string { return strings.TrimSuffix(base, "/") + FilesPath + key }

// ImageTokenBytes is the randomness of a picture's name: 128 bits, written as 32 lowercase hex digits.
const ImageTokenBytes = 16

// keyPart says whether s is a channel id ImageKey takes: 1 to 64 ASCII letters, digits or '-'. Loops, not
// regexps: compiling the patterns these replaced at package init cost every Lambda's cold start about
// 0.4 ms.
func keyPart(s string) bool {
	if len(s) == 0 || len(s) > 64 {
		return false
	}
	for i := range len(s) {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// isToken says whether s is a picture's name: 32 lowercase hex digits.
func isToken(s string) bool {
	if len(s) != 2*ImageTokenBytes {
		return false
	}
	for i := range len(s) {
		if c := s[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// NewImageKey is the key of a new picture of a channel, named by 128 bits from crypto/rand.
func NewImageKey(channelID, contentType string) (string, error) {
	var b [ImageTokenBytes]byte
	rand.Read(b[:]) // never fails (crypto/rand: "Read ... never returns an error")
	return ImageKey(channelID, hex.EncodeToString(b[:]), contentType)
}

// ImageKey is the store key of a channel's picture: images/<channelID>/<name>.png (or .jpeg, by the
// image's content type), where name is 32 lowercase hex digits (NewImageKey draws them). The channel id is
// the service's UUID; anything else is refused, so a key never names a path outside its channel's folder.
func ImageKey(channelID, name, contentType string) (string, error) {
	if !keyPart(channelID) || !isToken(name) {
		return "", fmt.Errorf("image key: channel %q must be 1..64 letters, digits or '-', name %q 32 lowercase hex digits", channelID, name)
	}
	ext, err := ImageExtension(contentType)
	if err != nil {
		return "", err
	}
	return "images/" + channelID + "/" + name + "." + ext, nil
}

// ValidImageKey says whether key is one ImageKey could have made, and so what every store accepts and
// serves: images/<channel>/<32 hex digits>.<png|jpeg>.
func ValidImageKey(key string) bool {
	rest, ok := strings.CutPrefix(key, "images/")
	if !ok {
		return false
	}
	channel, file, ok := strings.Cut(rest, "/")
	if !ok {
		return false
	}
	name, ext, ok := strings.Cut(file, ".") // a name holds no '.', so this is the extension's
	return ok && keyPart(channel) && isToken(name) && (ext == "png" || ext == "jpeg")
}

// ImageContentType is the content type a key's extension says ("" for a key ValidImageKey refuses).
func ImageContentType(key string) string {
	if !ValidImageKey(key) {
		return ""
	}
	if strings.HasSuffix(key, ".png") {
		return "image/png"
	}
	return "image/jpeg"
}

// ImageExtension is the file extension of a picture's content type.
func ImageExtension(contentType string) (string, error) {
	switch contentType {
	case "image/png":
		return "png", nil
	case "image/jpeg":
		return "jpeg", nil
	}
	return "", fmt.Errorf("image content type %q: want image/png or image/jpeg", contentType)
}

// CheckPut is what every ImageStore refuses: a key ImageKey would not make, a content type other than PNG
// or JPEG or one the key's extension does not say, and a picture without bytes.
func CheckPut(key string, img Image) error {
	if !ValidImageKey(key) {
		return fmt.Errorf("%q is not an image key (images/<channel>/<32 hex digits>.png|jpeg)", key)
	}
	ext, err := ImageExtension(img.ContentType)
	if err != nil {
		return err
	}
	if !strings.HasSuffix(key, "."+ext) {
		return fmt.Errorf("a %s picture under %q, which does not end in .%s", img.ContentType, key, ext)
	}
	if len(img.Data) == 0 {
		return errors.New("no picture data")
	}
	return nil
}
