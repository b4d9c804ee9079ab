// Command promptgen writes prompts_gen.go, the prompt templates (prompts/*.tmpl) compiled to Go;
// `go generate ./shared/generation` runs it in shared/generation.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/creatorstrategy/css/shared/generation/internal/promptgen"
)

func main() {
	dir := flag.String("dir", ".", "folder holding prompts/*.tmpl")
	out := flag.String("out", "prompts_gen.go", "Go file to write")
	flag.Parse()
	if err := run(*dir, *out); err != nil {
		fmt.Fprintln(os.Stderr, "promptgen:", err)
		os.Exit(1)
	}
}

func run(dir, out string) error {
	set, err := promptgen.Parse(os.DirFS(dir), promptgen.Pattern)
	if err != nil {
		return err
	}
	src, err := promptgen.Generate(set)
	if err != nil {
		return err
	}
	return os.WriteFile(out, src, 0o644)
}
