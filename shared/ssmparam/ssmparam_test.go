package ssmparam_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/creatorstrategy/css/shared/ssmparam"
)

// ssmServer answers GetParameter as SSM does (AWS JSON 1.1, X-Amz-Target AmazonSSM.GetParameter).
func ssmServer(t *testing.T, params map[string]string) (*httptest.Server, *[]map[string]any) {
	t.Helper()
	var seen []map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Amz-Target") != "AmazonSSM.GetParameter" || !strings.HasPrefix(r.Header.Get("Authorization"), "AWS4-HMAC-SHA256") {
			http.Error(w, "unexpected request", http.StatusBadRequest)
			return
		}
		var in map[string]any
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		seen = append(seen, in)
		w.Header().Set("Content-Type", "application/x-amz-json-1.1")
		name, _ := in["Name"].(string)
		v, ok := params[name]
		if !ok {
			w.Header().Set("X-Amzn-ErrorType", "ParameterNotFound")
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprint(w, `{"__type":"ParameterNotFound","message":"Parameter not found."}`)
			return
		}
		json.NewEncoder(w).Encode(map[string]any{"Parameter": map[string]any{"Name": name, "Type": "SecureString",
			"Value": v, "Version": 3, "ARN": "arn:aws:ssm:us-east-1:123456789012:parameter" + name}})
	}))
	t.Cleanup(srv.Close)
	return srv, &seen
}

func TestRead(t *testing.T) {
	srv, seen := ssmServer(t, map[string]string{"/css/dev/youtube-api-key": "AIza-secret", "/css/empty": ""})
	c, err := ssmparam.NewClient(srv.URL, "")
	if err != nil {
		t.Fatal(err)
	}
	got, err := ssmparam.Read(context.Background(), c, "/css/dev/youtube-api-key")
	if err != nil || got.Reveal() != "AIza-secret" {
		t.Fatalf("Read = %q, %v", got.Reveal(), err)
	}
	if fmt.Sprint(got) == "AIza-secret" {
		t.Fatal("the secret prints as itself")
	}
	if len(*seen) != 1 || (*seen)[0]["WithDecryption"] != true {
		t.Fatalf("requests %v; want one GetParameter WithDecryption", *seen)
	}
	for _, name := range []string{"/css/missing", "/css/empty"} {
		if _, err := ssmparam.Read(context.Background(), c, name); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("Read(%s) = %v; want an error naming it", name, err)
		}
	}
}
