// Package fileroute is what both /files/ handlers (ai/localimages, ai/s3images) answer before looking a
// picture up, in the API's Error shape: the same methods, the same keys, the same refusals.
package fileroute

import (
	"io"
	"net/http"
	"strings"

	"github.com/creatorstrategy/css/shared/ai"
)

// Key returns the image key a request names. When it names none it has answered already: 405 for a
// method other than GET and HEAD, 404 for a path that is not ai.FilesPath + a key ai.ValidImageKey takes.
func Key(w http.ResponseWriter, r *http.Request) (string, bool) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		Error(w, http.StatusMethodNotAllowed, "VALIDATION_ERROR", "method not allowed")
		return "", false
	}
	key, ok := strings.CutPrefix(r.URL.Path, ai.FilesPath)
	if !ok || !ai.ValidImageKey(key) {
		NotFound(w)
		return "", false
	}
	return key, true
}

// NotFound answers 404 NOT_FOUND.
func NotFound(w http.ResponseWriter) { Error(w, http.StatusNotFound, "NOT_FOUND", "image not found") }

// Error answers status with the Error shape; msg and code are constants of the callers (nothing from the
// request is echoed).
func Error(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	io.WriteString(w, `{"error":"`+msg+`","code":"`+code+`"}`+"\n")
}
