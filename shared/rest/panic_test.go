package rest

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/creatorstrategy/css/shared/auth"
	"github.com/creatorstrategy/css/shared/contract"
	"github.com/creatorstrategy/css/shared/health"
)

type panickingHealth struct{}

func (panickingHealth) Report(context.Context) health.Status { panic("boom: secret internals") }

type nobody struct{}

func (nobody) Authenticate(*http.Request) (auth.Principal, error) { return auth.Principal{}, nil }

func TestPanicsAnswer500WithoutInternals(t *testing.T) {
	c, err := contract.Load()
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	for _, dev := range []bool{false, true} {
		logs.Reset()
		h, err := New(Options{Contract: c, Auth: nobody{}, Dev: dev, Services: Services{Health: panickingHealth{}},
			Log: slog.New(slog.NewJSONHandler(&logs, nil))})
		if err != nil {
			t.Fatal(err)
		}
		rec := httptest.NewRecorder()
		req := httptest.NewRequest("GET", "/api/v1/health", nil)
		req.Header.Set("X-Request-Id", "req-123")
		h.ServeHTTP(rec, req)
		var body map[string]string
		if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || rec.Code != 500 || body["code"] != "INTERNAL" {
			t.Fatalf("dev=%v: %d %s", dev, rec.Code, rec.Body)
		}
		if strings.Contains(rec.Body.String(), "boom") || strings.Contains(rec.Body.String(), "goroutine") {
			t.Errorf("dev=%v: internals reach the client: %s", dev, rec.Body)
		}
		if rec.Header().Get("X-Request-Id") != "req-123" {
			t.Errorf("request id header %q", rec.Header().Get("X-Request-Id"))
		}
		if !strings.Contains(logs.String(), `"request_id":"req-123"`) || !strings.Contains(logs.String(), "boom") {
			t.Errorf("the panic is not logged with its request id: %s", logs.String())
		}
	}
}

func TestUnexpectedErrorsKeepTheirTextFromProductionClients(t *testing.T) {
	c, _ := contract.Load()
	for _, dev := range []bool{false, true} {
		s := &Server{opts: Options{Contract: c, Dev: dev}, log: slog.New(slog.DiscardHandler)}
		rec := httptest.NewRecorder()
		s.writeError(rec, httptest.NewRequest("GET", "/", nil), errString("dial tcp 10.0.0.1: refused"))
		leaked := strings.Contains(rec.Body.String(), "10.0.0.1")
		if rec.Code != 500 || leaked != dev {
			t.Errorf("dev=%v: %d %s (detail only in development mode)", dev, rec.Code, rec.Body)
		}
	}
}

type errString string

func (e errString) Error() string { return string(e) }
