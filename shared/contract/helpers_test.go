package contract

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"

	"github.com/creatorstrategy/css/shared/apperr"
	"github.com/creatorstrategy/css/shared/contract/internal/docgen"
)

// A suite is one document seen by both validators: this package's Contract and kin-openapi's.
type suite struct {
	name     string
	json     []byte
	contract *Contract
	kin      *openapi3.T
}

var (
	suitesOnce sync.Once
	suitesList []*suite
	suitesErr  error
)

// suites returns the fixture document (every keyword at its edges) and the service's document.
func suites(tb testing.TB) []*suite {
	tb.Helper()
	suitesOnce.Do(func() {
		src, err := os.ReadFile("testdata/fixture.yaml")
		if err != nil {
			suitesErr = err
			return
		}
		fixture, err := docgen.Generate(context.Background(), src)
		if err != nil {
			suitesErr = fmt.Errorf("fixture: %w", err)
			return
		}
		for _, s := range []*suite{{name: "fixture", json: fixture}, {name: "openapi", json: Document()}} {
			if s.contract, err = load(string(s.json)); err != nil {
				suitesErr = fmt.Errorf("%s: %w", s.name, err)
				return
			}
			loader := openapi3.NewLoader()
			if s.kin, err = loader.LoadFromData(s.json); err != nil {
				suitesErr = fmt.Errorf("%s: kin-openapi: %w", s.name, err)
				return
			}
			suitesList = append(suitesList, s)
		}
	})
	if suitesErr != nil {
		tb.Fatal(suitesErr)
	}
	return suitesList
}

func fixture(tb testing.TB) *suite { return suites(tb)[0] }
func service(tb testing.TB) *suite { return suites(tb)[1] }

func (s *suite) op(tb testing.TB, id string) *Operation {
	tb.Helper()
	op := s.contract.Operation(id)
	if op == nil {
		tb.Fatalf("%s: no operation %q", s.name, id)
	}
	return op
}

func (s *suite) route(tb testing.TB, id string) *routers.Route {
	tb.Helper()
	for path, item := range s.kin.Paths.Map() {
		for method, op := range item.Operations() {
			if op.OperationID == id {
				return &routers.Route{Spec: s.kin, Path: path, PathItem: item, Method: method, Operation: op}
			}
		}
	}
	tb.Fatalf("%s: kin-openapi has no operation %q", s.name, id)
	return nil
}

// kinFormats are the formats as this package defines them, written independently of format.go so the
// differential tests cross-check them too.
var kinFormats = map[string]openapi3.StringFormatValidator{
	"uuid": openapi3.NewRegexpFormatValidator(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`),
	"date": openapi3.NewCallbackValidator(func(s string) error {
		_, err := time.Parse(time.DateOnly, s)
		return err
	}),
	"date-time": openapi3.NewCallbackValidator(func(s string) error {
		if !rfc3339.MatchString(s) {
			return errors.New("not RFC 3339")
		}
		_, err := time.Parse(time.RFC3339Nano, s)
		return err
	}),
	"uri": openapi3.NewCallbackValidator(func(s string) error {
		u, err := url.ParseRequestURI(s)
		if err != nil {
			return err
		}
		if strings.ContainsAny(s, " \t\r\n") || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" {
			return errors.New("not an http(s) URL")
		}
		return nil
	}),
}

var rfc3339 = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]([01]\d|2[0-3]):[0-5]\d)$`)

func kinOptions() *openapi3filter.Options {
	return &openapi3filter.Options{
		AuthenticationFunc:      openapi3filter.NoopAuthenticationFunc,
		SchemaValidationOptions: []openapi3.SchemaValidationOption{openapi3.WithStringFormatValidators(kinFormats)},
	}
}

// kinBody validates a body with kin-openapi. Defaults are not set, so kin-openapi judges the body as sent,
// as this package does.
func (s *suite) kinBody(tb testing.TB, id string, body []byte) error {
	tb.Helper()
	route := s.route(tb, id)
	if route.Operation.RequestBody == nil {
		return nil
	}
	req := httptest.NewRequest(route.Method, "/", bytes.NewReader(normalizeNumbers(body)))
	req.Header.Set("Content-Type", "application/json")
	opts := kinOptions()
	opts.SkipSettingDefaults = true
	input := &openapi3filter.RequestValidationInput{Request: req, Route: route, Options: opts}
	return openapi3filter.ValidateRequestBody(context.Background(), input, route.Operation.RequestBody.Value)
}

// normalizeNumbers respells every number of a JSON body in its shortest form. kin-openapi compares
// uniqueItems by spelling (1 and 1.0 differ); JSON Schema, and this package, by value. Every other
// keyword reads numbers as float64, where the spelling makes no difference. Bodies that are not JSON
// are returned unchanged.
func normalizeNumbers(body []byte) []byte {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil || dec.More() {
		return body
	}
	out, err := json.Marshal(respell(v))
	if err != nil {
		return body
	}
	return out
}

func respell(v any) any {
	switch x := v.(type) {
	case json.Number:
		f, err := strconv.ParseFloat(string(x), 64)
		if err != nil {
			return x
		}
		return json.Number(strconv.FormatFloat(f, 'g', -1, 64))
	case []any:
		for i := range x {
			x[i] = respell(x[i])
		}
	case map[string]any:
		for k := range x {
			x[k] = respell(x[k])
		}
	}
	return v
}

// kinParams validates a request's parameters with kin-openapi (with its defaults, as ValidateParams).
func (s *suite) kinParams(tb testing.TB, id string, path map[string]string, query url.Values, header http.Header) error {
	tb.Helper()
	route := s.route(tb, id)
	req := httptest.NewRequest(route.Method, "/?"+query.Encode(), nil)
	for k, vs := range header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	opts := kinOptions()
	opts.ExcludeRequestBody = true
	input := &openapi3filter.RequestValidationInput{Request: req, PathParams: path, Route: route, Options: opts}
	return openapi3filter.ValidateRequest(context.Background(), input)
}

// wantError checks that err is the VALIDATION_ERROR naming field with message msg.
func wantError(tb testing.TB, err error, field, msg string) {
	tb.Helper()
	if err == nil {
		tb.Fatalf("no error, want %q", msg)
	}
	e, ok := apperr.As(err)
	if !ok {
		tb.Fatalf("error %v (%T) is not an *apperr.Error", err, err)
	}
	if e.Code != apperr.Validation || e.Field != field || e.Message != msg {
		tb.Fatalf("error = {%s %q %q}, want {%s %q %q}", e.Code, e.Field, e.Message, apperr.Validation, field, msg)
	}
}
