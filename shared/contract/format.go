package contract

import (
	"net/url"
	"strings"
	"time"
)

// checkStringFormat returns what is wrong with v for a checked format, or "" when v conforms.
func checkStringFormat(format, v string) string {
	switch format {
	case "uuid":
		if !IsUUID(v) {
			return "must be a UUID"
		}
	case "date":
		if !isDate(v) {
			return "must be a date (YYYY-MM-DD)"
		}
		if v < minDate || v > maxDate {
			return "must be a date from " + minDate + " to " + maxDate
		}
	case "date-time":
		if !isDateTime(v) {
			return "must be a date-time (RFC 3339, e.g. 2025-03-09T14:00:00Z)"
		}
	case "uri":
		if !isHTTPURL(v) {
			return "must be an absolute http or https URL"
		}
	}
	return ""
}

// IsUUID accepts the canonical 8-4-4-4-12 hexadecimal form, in either case.
func IsUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
				return false
			}
		}
	}
	return true
}

// The dates a request may name: arithmetic on them (a week's Sunday, a week later) stays a four-digit
// year, so every date the service answers with is a valid format: date too.
const (
	minDate = "1900-01-01"
	maxDate = "9999-12-24"
)

// isDate accepts YYYY-MM-DD naming a real calendar date.
func isDate(s string) bool {
	if len(s) != 10 || s[4] != '-' || s[7] != '-' {
		return false
	}
	// digits gives 0 for anything but digits: no month or day is 0, so only the year needs its ok.
	year, ok := digits(s[0:4])
	month, _ := digits(s[5:7])
	day, _ := digits(s[8:10])
	if !ok || month < 1 || month > 12 || day < 1 {
		return false
	}
	// Day 0 of the next month is the last day of this one.
	last := time.Date(year, time.Month(month)+1, 0, 0, 0, 0, 0, time.UTC).Day()
	return day <= last
}

// isDateTime accepts an RFC 3339 date-time: time.Parse checks the calendar and the clock, and the shape and
// the offset are checked here because time.Parse lets a one-digit hour ("T0:00:00") and an offset hour of
// 24 through.
func isDateTime(s string) bool {
	if !dateTimeShape(s) {
		return false
	}
	if _, err := time.Parse(time.RFC3339, s); err != nil {
		return false
	}
	if s[len(s)-1] == 'Z' {
		return true
	}
	hours, _ := digits(s[len(s)-5 : len(s)-3])
	minutes, _ := digits(s[len(s)-2:])
	return hours <= 23 && minutes <= 59
}

// dateTimeShape reports whether s is laid out as RFC 3339's date-time: YYYY-MM-DDTHH:MM:SS, an optional
// fraction of one or more digits, then Z or an offset ±HH:MM, every field its full width.
func dateTimeShape(s string) bool {
	const clock = "0000-00-00T00:00:00"
	if len(s) < len(clock)+1 {
		return false
	}
	for i := 0; i < len(clock); i++ {
		if clock[i] == '0' {
			if s[i] < '0' || s[i] > '9' {
				return false
			}
		} else if s[i] != clock[i] {
			return false
		}
	}
	rest := s[len(clock):]
	if rest[0] == '.' {
		n := 1
		for n < len(rest) && rest[n] >= '0' && rest[n] <= '9' {
			n++
		}
		if n == 1 {
			return false
		}
		rest = rest[n:]
	}
	if rest == "Z" {
		return true
	}
	if len(rest) != 6 || (rest[0] != '+' && rest[0] != '-') || rest[3] != ':' {
		return false
	}
	_, okH := digits(rest[1:3])
	_, okM := digits(rest[4:6])
	return okH && okM
}

func digits(s string) (int, bool) {
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
		n = n*10 + int(s[i]-'0')
	}
	return n, true
}

// isHTTPURL accepts an absolute http or https URL with a host and without spaces or control characters.
func isHTTPURL(s string) bool {
	if strings.ContainsFunc(s, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
		return false
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Opaque != "" || u.Hostname() == "" {
		return false
	}
	// Also what a request to it would be: "http://0#" parses as a URL but its host would read "0#".
	_, err = url.ParseRequestURI(s)
	return err == nil
}
