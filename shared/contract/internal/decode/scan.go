package decode

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Scanner walks a document once, picking out what the contract needs and skipping the rest without
// decoding it: encoding/json would validate and rescan the ~160 KB document once per nesting level. It
// reads a string, so the raw pieces it returns share the document's memory. The documents are generated
// and checked by kin-openapi, so the scanner only has to be right on valid JSON; on anything else it
// returns an error rather than panicking.
type Scanner struct {
	data string
	pos  int
}

// NewScanner returns a scanner at the start of data.
func NewScanner(data string) *Scanner { return &Scanner{data: data} }

var errEOF = errors.New("unexpected end of document")

func (s *Scanner) ws() {
	for s.pos < len(s.data) {
		switch s.data[s.pos] {
		case ' ', '\t', '\r', '\n':
			s.pos++
		default:
			return
		}
	}
}

func (s *Scanner) peek() (byte, error) {
	s.ws()
	if s.pos >= len(s.data) {
		return 0, errEOF
	}
	return s.data[s.pos], nil
}

func (s *Scanner) expect(c byte) error {
	got, err := s.peek()
	if err != nil {
		return err
	}
	if got != c {
		return fmt.Errorf("offset %d: expected %q, found %q", s.pos, c, got)
	}
	s.pos++
	return nil
}

// Str reads a string and returns its value.
func (s *Scanner) Str() (string, error) {
	if err := s.expect('"'); err != nil {
		return "", err
	}
	start := s.pos
	end, escaped, err := s.stringEnd(start)
	if err != nil {
		return "", err
	}
	s.pos = end
	if !escaped {
		return s.data[start : end-1], nil
	}
	var v string
	if err := json.Unmarshal([]byte(s.data[start-1:end]), &v); err != nil {
		return "", fmt.Errorf("offset %d: %w", start, err)
	}
	return v, nil
}

// stringEnd finds the end of the string whose content starts at i: the index after its closing quote,
// and whether the string contains escapes. Document text is mostly strings (descriptions), so this
// jumps from quote to quote rather than looking at every byte.
func (s *Scanner) stringEnd(i int) (end int, escaped bool, err error) {
	for {
		j := strings.IndexByte(s.data[i:], '"')
		if j < 0 {
			return 0, false, errEOF
		}
		q := i + j
		// The quote is escaped when an odd run of backslashes precedes it (the run cannot reach back past
		// i: an escaped quote or the opening one stands there).
		odd := false
		for k := q - 1; k >= i && s.data[k] == '\\'; k-- {
			odd = !odd
		}
		escaped = escaped || strings.IndexByte(s.data[i:q], '\\') >= 0
		if !odd {
			return q + 1, escaped, nil
		}
		i = q + 1
	}
}

// Skip passes over one value and returns its raw text.
func (s *Scanner) Skip() (string, error) {
	c, err := s.peek()
	if err != nil {
		return "", err
	}
	start := s.pos
	switch c {
	case '"':
		if _, err := s.Str(); err != nil {
			return "", err
		}
	case '{', '[':
		depth := 0
		for ; s.pos < len(s.data); s.pos++ {
			switch s.data[s.pos] {
			case '"':
				end, _, err := s.stringEnd(s.pos + 1)
				if err != nil {
					return "", err
				}
				s.pos = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					s.pos++
					return s.data[start:s.pos], nil
				}
			}
		}
		return "", errEOF
	default:
		for s.pos < len(s.data) {
			switch s.data[s.pos] {
			case ',', '}', ']', ' ', '\t', '\r', '\n':
				return s.data[start:s.pos], nil
			}
			s.pos++
		}
	}
	return s.data[start:s.pos], nil
}

// Object reads an object, calling member for each key; member must consume the value.
func (s *Scanner) Object(member func(key string) error) error {
	if err := s.expect('{'); err != nil {
		return err
	}
	if c, err := s.peek(); err != nil {
		return err
	} else if c == '}' {
		s.pos++
		return nil
	}
	for {
		key, err := s.Str()
		if err != nil {
			return err
		}
		if err := s.expect(':'); err != nil {
			return err
		}
		if err := member(key); err != nil {
			return err
		}
		if done, err := s.next('}', "a member"); done || err != nil {
			return err
		}
	}
}

// Array reads an array, calling item for each element; item must consume it.
func (s *Scanner) Array(item func() error) error {
	if err := s.expect('['); err != nil {
		return err
	}
	if c, err := s.peek(); err != nil {
		return err
	} else if c == ']' {
		s.pos++
		return nil
	}
	for {
		if err := item(); err != nil {
			return err
		}
		if done, err := s.next(']', "an element"); done || err != nil {
			return err
		}
	}
}

// next reads the separator after a member or element: a comma (more follow) or close (done).
func (s *Scanner) next(close byte, after string) (done bool, err error) {
	c, err := s.peek()
	if err != nil {
		return false, err
	}
	s.pos++
	switch c {
	case ',':
		return false, nil
	case close:
		return true, nil
	default:
		return false, fmt.Errorf("offset %d: expected , or %c after %s", s.pos-1, close, after)
	}
}

// RawMap reads an object of raw values, as components maps are kept until an operation needs them, into
// a Set. A name given twice keeps its last value, as a JSON decoder would.
func (s *Scanner) RawMap() (Set, error) {
	var set Set
	err := s.Object(func(key string) error {
		raw, err := s.Skip()
		set = append(set, Raw{Name: key, JSON: raw})
		return err
	})
	return set.sorted(), err
}

// RawList reads an array of raw values.
func (s *Scanner) RawList() ([]string, error) {
	var list []string
	err := s.Array(func() error {
		raw, err := s.Skip()
		list = append(list, raw)
		return err
	})
	return list, err
}

// Security reads a list of security requirements and reports whether it asks for no credential: an
// empty list, or a requirement naming no scheme.
func (s *Scanner) Security() (public bool, err error) {
	none, anyEmpty := true, false
	err = s.Array(func() error {
		none = false
		empty := true
		err := s.Object(func(string) error {
			empty = false
			_, err := s.Skip()
			return err
		})
		anyEmpty = anyEmpty || empty
		return err
	})
	return none || anyEmpty, err
}
