package rest

import (
	"net/http"
	"strings"
)

// acceptsGzip reports whether the request's Accept-Encoding (RFC 9110, section 12.5.3) lets the response
// be gzip-compressed rather than sent as is: gzip (or its old name x-gzip) must be acceptable (q > 0),
// named or through `*`, and not ranked below identity (named, or through `*`). Codings are compared
// without regard to case; a named coding outranks `*`. Without the header the answer is no, and an
// element that cannot be read is skipped: identity is always safe to send. The header may come in
// several lines (the Lambda adapter splits a comma-separated value into one per element).
func acceptsGzip(h http.Header) bool {
	values := h.Values("Accept-Encoding")
	if len(values) == 0 {
		return false
	}
	gzipQ, identityQ, anyQ := -1, -1, -1 // in thousandths; -1 is "not named"
	for _, v := range values {
		for elem := range strings.SplitSeq(v, ",") {
			coding, q, ok := codingWeight(elem)
			if !ok {
				continue
			}
			switch {
			case strings.EqualFold(coding, "gzip"), strings.EqualFold(coding, "x-gzip"):
				gzipQ = max(gzipQ, q)
			case strings.EqualFold(coding, "identity"):
				identityQ = max(identityQ, q)
			case coding == "*":
				anyQ = max(anyQ, q)
			}
		}
	}
	if gzipQ < 0 {
		gzipQ = max(anyQ, 0)
	}
	if identityQ < 0 {
		// Not named: ranked by `*` if present, otherwise only the fallback it always is ("gzip;q=0.5"
		// alone still asks for gzip).
		identityQ = max(anyQ, 0)
	}
	return gzipQ > 0 && gzipQ >= identityQ
}

// codingWeight reads one element of Accept-Encoding, `coding [ OWS ";" OWS "q=" qvalue ]`, into the coding
// and its weight in thousandths (1000 without a q). ok is false for an empty or malformed element.
func codingWeight(elem string) (coding string, q int, ok bool) {
	coding, params, hasParams := strings.Cut(elem, ";")
	coding = strings.Trim(coding, " \t")
	if coding == "" || strings.ContainsAny(coding, " \t") {
		return "", 0, false
	}
	if !hasParams {
		return coding, 1000, true
	}
	name, value, _ := strings.Cut(strings.Trim(params, " \t"), "=")
	if !strings.EqualFold(strings.TrimRight(name, " \t"), "q") {
		return "", 0, false
	}
	q, ok = qvalue(strings.TrimLeft(value, " \t"))
	return coding, q, ok
}

// qvalue parses `( "0" [ "." 0*3DIGIT ] ) / ( "1" [ "." 0*3("0") ] )` into thousandths.
func qvalue(s string) (int, bool) {
	if s == "" || (s[0] != '0' && s[0] != '1') {
		return 0, false
	}
	whole := int(s[0] - '0')
	frac := s[1:]
	if frac != "" {
		if frac[0] != '.' || len(frac) > 4 {
			return 0, false
		}
		frac = frac[1:]
	}
	q := whole * 1000
	scale := 100
	for i := 0; i < len(frac); i++ {
		d := frac[i]
		if d < '0' || d > '9' || (whole == 1 && d != '0') {
			return 0, false
		}
		q += int(d-'0') * scale
		scale /= 10
	}
	return q, true
}
