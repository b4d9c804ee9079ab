package contract

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// scanner walks the embedded document once, picking out what Load needs and skipping the rest without
// decoding it: encoding/json would validate and rescan the ~160 KB document once per nesting level, and
// Load runs in every cold start. It reads a string, so the raw pieces it returns share the embedded
// document's memory. The document is generated and checked by kin-openapi, so the scanner only has to be
// right on valid JSON; on anything else it returns an error rather than panicking.
type scanner struct {
	data string
	pos  int
}

var errEOF = errors.New("unexpected end of document")

func (s *scanner) ws() {
	for s.pos < len(s.data) {
		switch s.data[s.pos] {
		case ' ', '\t', '\r', '\n':
			s.pos++
		default:
			return
		}
	}
}

func (s *scanner) peek() (byte, error) {
	s.ws()
	if s.pos >= len(s.data) {
		return 0, errEOF
	}
	return s.data[s.pos], nil
}

func (s *scanner) expect(c byte) error {
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

// str reads a string and returns its value.
func (s *scanner) str() (string, error) {
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
func (s *scanner) stringEnd(i int) (end int, escaped bool, err error) {
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

// skip passes over one value and returns its raw text.
func (s *scanner) skip() (string, error) {
	c, err := s.peek()
	if err != nil {
		return "", err
	}
	start := s.pos
	switch c {
	case '"':
		if _, err := s.str(); err != nil {
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

// object reads an object, calling member for each key; member must consume the value.
func (s *scanner) object(member func(key string) error) error {
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
		key, err := s.str()
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

// array reads an array, calling item for each element; item must consume it.
func (s *scanner) array(item func() error) error {
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
func (s *scanner) next(close byte, after string) (done bool, err error) {
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

// rawMap reads an object of raw values, as components maps are kept until an operation needs them.
func (s *scanner) rawMap() (map[string]string, error) {
	m := map[string]string{}
	err := s.object(func(key string) error {
		raw, err := s.skip()
		m[key] = raw
		return err
	})
	return m, err
}

// rawList reads an array of raw values.
func (s *scanner) rawList() ([]string, error) {
	var list []string
	err := s.array(func() error {
		raw, err := s.skip()
		list = append(list, raw)
		return err
	})
	return list, err
}

// security reads a list of security requirements and reports whether it asks for no credential: an
// empty list, or a requirement naming no scheme.
func (s *scanner) security() (public bool, err error) {
	none, anyEmpty := true, false
	err = s.array(func() error {
		none = false
		empty := true
		err := s.object(func(string) error {
			empty = false
			_, err := s.skip()
			return err
		})
		anyEmpty = anyEmpty || empty
		return err
	})
	return none || anyEmpty, err
}
