// Package secretstest serves the Secrets Manager GetSecretValue call on loopback, for tests of code that
// reads secrets with the real SDK (there is no Secrets Manager emulator among the project's).
package secretstest

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// Server holds secret strings by id (name or ARN) and counts the reads.
type Server struct {
	srv     *httptest.Server
	mu      sync.Mutex
	secrets map[string]string
	reads   int
}

// Start serves secrets until the test ends.
func Start(t testing.TB, secrets map[string]string) *Server {
	t.Helper()
	s := &Server{secrets: secrets}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.srv.Close)
	return s
}

// Endpoint is the server's URL, for the SDK's BaseEndpoint (CSS_SECRETS_ENDPOINT).
func (s *Server) Endpoint() string { return s.srv.URL }

// Reads counts the GetSecretValue calls answered.
func (s *Server) Reads() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reads
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	if r.Header.Get("X-Amz-Target") != "secretsmanager.GetSecretValue" || r.Header.Get("Authorization") == "" {
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(`{"__type":"InvalidRequestException","message":"unsupported call"}`))
		return
	}
	var in struct{ SecretId string }
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	v, ok := s.secrets[in.SecretId]
	if ok {
		s.reads++
	}
	s.mu.Unlock()
	if !ok {
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(`{"__type":"ResourceNotFoundException","message":"Secrets Manager can't find the specified secret."}`))
		return
	}
	_ = json.NewEncoder(w).Encode(map[string]any{"ARN": in.SecretId, "Name": in.SecretId, "SecretString": v, "VersionId": "v1",
		"VersionStages": []string{"AWSCURRENT"}, "CreatedDate": 1.7e9})
}
