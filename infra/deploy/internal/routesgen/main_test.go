package main

import (
	"os"
	"strings"
	"testing"

	"github.com/creatorstrategy/css/shared/contract"
)

const templatePath = "../../../../template.yaml"

// template.yaml routes what the contract declares: `go generate ./infra/deploy` after changing openapi.yaml.
func TestTemplateRoutesAreCurrent(t *testing.T) {
	c, err := contract.Load()
	if err != nil {
		t.Fatal(err)
	}
	tpl, err := os.ReadFile(templatePath)
	if err != nil {
		t.Fatal(err)
	}
	out, err := rewrite(tpl, c.Operations)
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != string(tpl) {
		t.Error("template.yaml's routes are not the contract's: run go generate ./infra/deploy")
	}
}

const sample = `Resources:
  VideosFunction:
    Type: AWS::Serverless::Function
    Properties:
      Events:
        Stale:
          Type: HttpApi
          Properties:
            ApiId: !Ref HttpApi
            Method: GET
            Path: /api/v1/gone
        Files:
          Type: HttpApi
          Properties:
            ApiId: !Ref HttpApi
            Method: GET
            Path: /files/{proxy+}

  VideosFunctionLogGroup:
    Type: AWS::Logs::LogGroup
`

// A new operation is routed, a route the contract no longer has goes, and routes outside /api stay.
func TestRewrite(t *testing.T) {
	ops := []*contract.Operation{{ID: "listMyVideos", Method: "GET", Path: "/api/v1/my-videos", Function: "videos"}}
	out, err := rewrite([]byte(sample), ops)
	if err != nil {
		t.Fatal(err)
	}
	got := string(out)
	for _, want := range []string{"        ListMyVideos:\n          Type: HttpApi\n", "Path: /api/v1/my-videos\n        Files:\n", "Path: /files/{proxy+}\n\n  VideosFunctionLogGroup:"} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in\n%s", want, got)
		}
	}
	if strings.Contains(got, "/api/v1/gone") {
		t.Errorf("a route the contract does not declare stayed:\n%s", got)
	}
	again, err := rewrite(out, ops)
	if err != nil || string(again) != got {
		t.Errorf("not idempotent: %v\n%s", err, again)
	}
	if _, err := rewrite([]byte(sample), []*contract.Operation{{ID: "x", Method: "GET", Path: "/api/v1/x", Function: "research-worker"}}); err == nil ||
		!strings.Contains(err.Error(), "ResearchWorkerFunction") {
		t.Errorf("a function the template lacks: %v", err)
	}
}
