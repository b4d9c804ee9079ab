package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// registryModule is the MCP registry's Go module, pinned: it ships the server.json schema
// (docs/reference/server-json) and the version the registry takes (pkg/model), so the Go module proxy serves
// what the registry checks a publication against.
const registryModule = "github.com/modelcontextprotocol/registry@v1.8.9"

// server.json, the entry for the MCP registry, holds to the registry's published schema, names the schema
// version the registry takes, and carries the API's version.
func TestServerJSONAgainstTheRegistrySchema(t *testing.T) {
	cmd := exec.Command("go", "mod", "download", "-json", registryModule)
	cmd.Dir = t.TempDir() // outside this module: go.mod stays as it is
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go mod download %s: %v\n%s", registryModule, err, out)
	}
	var mod struct{ Dir string }
	if err := json.Unmarshal(out, &mod); err != nil || mod.Dir == "" {
		t.Fatalf("go mod download: %s", out)
	}
	c := jsonschema.NewCompiler()
	schema, err := c.Compile(filepath.Join(mod.Dir, "docs", "reference", "server-json", "draft", "server.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile("server.json")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	if err := schema.Validate(doc); err != nil {
		t.Fatalf("server.json against the registry's schema: %v", err)
	}

	constants, err := os.ReadFile(filepath.Join(mod.Dir, "pkg", "model", "constants.go"))
	if err != nil {
		t.Fatal(err)
	}
	current := regexp.MustCompile(`CurrentSchemaVersion = "([0-9-]+)"`).FindSubmatch(constants)
	var entry struct {
		Schema  string `json:"$schema"`
		Version string
		Remotes []struct{ URL string }
	}
	if err := json.Unmarshal(raw, &entry); err != nil {
		t.Fatal(err)
	}
	if current == nil || entry.Schema != "https://static.modelcontextprotocol.io/schemas/"+string(current[1])+"/server.schema.json" {
		t.Fatalf("$schema %q; the registry takes %s", entry.Schema, current)
	}
	api, err := os.ReadFile(filepath.Join("..", "..", "shared", "contract", "openapi.json"))
	if err != nil {
		t.Fatal(err)
	}
	var openapi struct{ Info struct{ Version string } }
	if err := json.Unmarshal(api, &openapi); err != nil || openapi.Info.Version == "" || entry.Version != openapi.Info.Version {
		t.Fatalf("version %q; the API's is %q (%v)", entry.Version, openapi.Info.Version, err)
	}
	if len(entry.Remotes) != 1 || entry.Remotes[0].URL != "https://{host}/mcp" {
		t.Fatalf("remotes %+v: want the one /mcp endpoint", entry.Remotes)
	}
}
