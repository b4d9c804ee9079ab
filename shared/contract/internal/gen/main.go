// Command gen writes openapi.json (the served document), openapi.json.gz (the same, gzip-compressed, served
// to clients that accept gzip), contract.json (the part of it routing and validation read) and
// static_gen.go (contract.json decoded, as static data: what Load returns), requests_gen.go and
// responses_gen.go (the Go request and response types), registry_gen.go (what runs each operation as a
// generation job and mirrors it as an MCP tool) and schemas.json (every component schema) from
// openapi.yaml; `go generate ./shared/contract` runs it.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/creatorstrategy/css/shared/contract/internal/decode"
	"github.com/creatorstrategy/css/shared/contract/internal/docgen"
	"github.com/creatorstrategy/css/shared/contract/internal/typegen"
)

func main() {
	in := flag.String("in", "openapi.yaml", "OpenAPI 3.0 YAML document to read")
	out := flag.String("out", "openapi.json", "JSON document to write")
	gz := flag.String("gzip", "openapi.json.gz", "gzip-compressed JSON document to write")
	runtime := flag.String("runtime", "contract.json", "runtime contract (what routing and validation read) to write")
	types := flag.String("types", "requests_gen.go", "Go request types to write")
	responses := flag.String("responses", "responses_gen.go", "Go response types to write")
	schemas := flag.String("schemas", "schemas.json", "every component schema (what other values validate against) to write")
	registry := flag.String("registry", "registry_gen.go", "Go registry of generation jobs and MCP mirrors to write")
	static := flag.String("static", "static_gen.go", "Go static data of the runtime contract (what Load returns) to write")
	flag.Parse()
	if err := run(context.Background(), *in, *out, *gz, *runtime, *types, *responses, *schemas, *registry, *static); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, in, out, gz, runtime, types, responses, schemas, registry, static string) error {
	src, err := os.ReadFile(in)
	if err != nil {
		return err
	}
	doc, err := docgen.Generate(ctx, src)
	if err != nil {
		return fmt.Errorf("%s: %w", in, err)
	}
	if err := os.WriteFile(out, doc, 0o644); err != nil {
		return err
	}
	compressed, err := docgen.Gzip(doc)
	if err != nil {
		return fmt.Errorf("%s: gzip: %w", out, err)
	}
	if err := os.WriteFile(gz, compressed, 0o644); err != nil {
		return err
	}
	contract, err := docgen.Runtime(src)
	if err != nil {
		return fmt.Errorf("%s: runtime contract: %w", in, err)
	}
	if err := os.WriteFile(runtime, contract, 0o644); err != nil {
		return err
	}
	decoded, err := decode.Decode(string(contract))
	if err != nil {
		return fmt.Errorf("%s: %w", runtime, err)
	}
	staticSrc, err := typegen.Static(decoded, "contract")
	if err != nil {
		return err
	}
	if err := os.WriteFile(static, staticSrc, 0o644); err != nil {
		return err
	}
	all, err := docgen.Schemas(src)
	if err != nil {
		return fmt.Errorf("%s: schemas: %w", in, err)
	}
	if err := os.WriteFile(schemas, all, 0o644); err != nil {
		return err
	}
	goSrc, err := typegen.Generate(contract, "contract")
	if err != nil {
		return err
	}
	if err := os.WriteFile(types, goSrc, 0o644); err != nil {
		return err
	}
	respSrc, err := typegen.Responses(contract, doc, "contract")
	if err != nil {
		return err
	}
	if err := os.WriteFile(responses, respSrc, 0o644); err != nil {
		return err
	}
	regs, err := docgen.Registry(src)
	if err != nil {
		return fmt.Errorf("%s: registry: %w", in, err)
	}
	regSrc, err := typegen.Registry(regs, "contract")
	if err != nil {
		return err
	}
	return os.WriteFile(registry, regSrc, 0o644)
}
