package decode

import (
	"fmt"
	"strings"

	"github.com/go-json-experiment/json/jsontext"
)

// Scanner walks a document once, picking out what the contract needs and keeping the rest as raw JSON
// text, in document order (jsontext's decoder: a name given twice keeps its last value, as a JSON decoder
// would).
type Scanner struct{ dec *jsontext.Decoder }

// NewScanner returns a scanner at the start of data.
func NewScanner(data string) *Scanner {
	return &Scanner{dec: jsontext.NewDecoder(strings.NewReader(data), jsontext.AllowDuplicateNames(true))}
}

// token reads the next token and wants it of kind.
func (s *Scanner) token(kind jsontext.Kind) (jsontext.Token, error) {
	tok, err := s.dec.ReadToken()
	if err != nil {
		return tok, err
	}
	if tok.Kind() != kind {
		return tok, fmt.Errorf("offset %d: expected %v, found %v", s.dec.InputOffset(), kind, tok.Kind())
	}
	return tok, nil
}

// Str reads a string and returns its value.
func (s *Scanner) Str() (string, error) {
	tok, err := s.token('"')
	return tok.String(), err
}

// Skip passes over one value and returns its raw text.
func (s *Scanner) Skip() (string, error) {
	v, err := s.dec.ReadValue()
	return string(v), err
}

// Object reads an object, calling member for each key; member must consume the value.
func (s *Scanner) Object(member func(key string) error) error {
	if _, err := s.token('{'); err != nil {
		return err
	}
	for s.dec.PeekKind() != '}' {
		key, err := s.Str()
		if err != nil {
			return err
		}
		if err := member(key); err != nil {
			return err
		}
	}
	_, err := s.token('}')
	return err
}

// Array reads an array, calling item for each element; item must consume it.
func (s *Scanner) Array(item func() error) error {
	if _, err := s.token('['); err != nil {
		return err
	}
	for s.dec.PeekKind() != ']' {
		if s.dec.PeekKind() == 0 { // an error: the next read says it
			_, err := s.dec.ReadToken()
			return err
		}
		if err := item(); err != nil {
			return err
		}
	}
	_, err := s.token(']')
	return err
}

// RawMap reads an object of raw values, as components maps are kept until an operation needs them, into
// a Set. A name given twice keeps its last value.
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
