package research

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strings"

	"github.com/creatorstrategy/css/shared/apperr"
	"github.com/creatorstrategy/css/shared/profile"
)

// Niche is what research studies: the profile's keywords, normalised, in the channel's content language,
// with the focused niche as one more search phrase. Channels with the same keywords and language share
// research (decision 29); the focused niche only widens the search and is not part of the key.
type Niche struct {
	Keywords []string // normalised: lower case, single spaces, no duplicates, sorted
	Language string   // the profile's contentLanguage (english, spanish, ...)
	Focus    string   // the profile's focusedNiche, trimmed; may be empty
}

// NicheOf returns the niche of a profile. A profile without keywords cannot be researched: the error is a
// VALIDATION_ERROR naming `keywords` (decision 30).
func NicheOf(p profile.NicheProfile) (Niche, error) {
	n := Niche{Language: cmp.Or(p.ContentLanguage, profile.DefaultLanguage), Focus: strings.Join(strings.Fields(p.FocusedNiche), " ")}
	for _, k := range p.Keywords {
		if k = normaliseKeyword(k); k != "" && !slices.Contains(n.Keywords, k) {
			n.Keywords = append(n.Keywords, k)
		}
	}
	if len(n.Keywords) == 0 {
		return Niche{}, apperr.Invalid("keywords", "the niche profile has no keywords; research starts from them (PUT /api/v1/niche-profile)")
	}
	slices.Sort(n.Keywords)
	return n, nil
}

func normaliseKeyword(k string) string { return strings.Join(strings.Fields(strings.ToLower(k)), " ") }

// Key identifies the niche's shared research for one source: a hash of the source, the language and the
// normalised keywords (the keywords may be long; the key stays 32 characters).
func (n Niche) Key(source string) string {
	h := sha256.New()
	h.Write([]byte(source + "\n" + n.Language))
	for _, k := range n.Keywords {
		h.Write([]byte("\n" + k))
	}
	return hex.EncodeToString(h.Sum(nil))[:32]
}

// LanguageCode is the ISO 639-1 code of a contentLanguage, as the search's relevanceLanguage wants it.
func LanguageCode(language string) string {
	if code, ok := map[string]string{"spanish": "es", "portuguese": "pt", "hindi": "hi", "arabic": "ar", "french": "fr",
		"japanese": "ja", "korean": "ko", "german": "de", "indonesian": "id"}[language]; ok {
		return code
	}
	return "en"
}
