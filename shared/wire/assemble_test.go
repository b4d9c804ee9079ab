package wire_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/creatorstrategy/css/shared/auth"
	"github.com/creatorstrategy/css/shared/config"
	"github.com/creatorstrategy/css/shared/contract"
	"github.com/creatorstrategy/css/shared/store"
	"github.com/creatorstrategy/css/shared/store/pebble"
	"github.com/creatorstrategy/css/shared/wire"
)

type sessionOnChannel struct{ channel string }

func (s sessionOnChannel) Authenticate(*http.Request) (auth.Principal, error) {
	return auth.Principal{AccountID: "acct", ChannelID: s.channel, Method: auth.MethodSession}, nil
}

// TestEachFunctionServesItsOwnOperations builds every function's handler as its Lambda does and checks
// it routes exactly the operations the document gives that function: its own are answered (whatever the
// status, never "no such path"), every other operation is unknown to it.
func TestEachFunctionServesItsOwnOperations(t *testing.T) {
	c, err := contract.Load()
	if err != nil {
		t.Fatal(err)
	}
	tb, err := pebble.Open(filepath.Join(t.TempDir(), "db"))
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	st := store.New(tb)
	functions := map[contract.Function]bool{}
	for _, op := range c.Operations {
		functions[contract.Function(op.Function)] = true
	}
	for _, want := range contract.Functions() {
		if !functions[want] {
			t.Errorf("no operation is served by function %s", want)
		}
	}
	for fn := range functions {
		h, err := wire.NewAPI(wire.APIConfig{Config: config.Config{Mode: config.Production}, Store: st,
			Auth: sessionOnChannel{channel: st.NewID()}, Functions: []contract.Function{fn}})
		if err != nil {
			t.Fatal(err)
		}
		for _, op := range c.Operations {
			path := strings.ReplaceAll(op.Path, "{id}", "0193f3a0-0000-7000-8000-000000000001")
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(op.Method, path, nil))
			var body struct{ Code, Error string }
			_ = json.Unmarshal(rec.Body.Bytes(), &body)
			unknown := rec.Code == http.StatusNotFound && strings.HasPrefix(body.Error, "no such path")
			if own := contract.Function(op.Function) == fn; own == unknown {
				t.Errorf("function %s, %s %s (served by %s): status %d %s", fn, op.Method, op.Path, op.Function, rec.Code, rec.Body.String())
			}
		}
	}
}
