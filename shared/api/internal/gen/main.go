// Command gen writes openapi.json from openapi.yaml (run by `go generate ./shared/api`).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/creatorstrategy/css/shared/api/internal/docgen"
)

func main() {
	in := flag.String("in", "openapi.yaml", "OpenAPI 3.0 YAML document to read")
	out := flag.String("out", "openapi.json", "JSON document to write")
	flag.Parse()
	if err := run(context.Background(), *in, *out); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, in, out string) error {
	src, err := os.ReadFile(in)
	if err != nil {
		return err
	}
	doc, err := docgen.Generate(ctx, src)
	if err != nil {
		return fmt.Errorf("%s: %w", in, err)
	}
	return os.WriteFile(out, doc, 0o644)
}
