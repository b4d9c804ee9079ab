// Command promptgen writes prompts_gen.go, the prompt templates (prompts/*.tmpl) compiled to Go, and
// constructs_gen_test.go, the test templates of every supported construct (testdata/constructs/*.tmpl)
// compiled the same way; `go generate ./shared/generation` runs it in shared/generation.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/creatorstrategy/css/shared/generation/internal/promptgen"
)

func main() {
	dir := flag.String("dir", ".", "folder of package generation")
	out := flag.String("out", "prompts_gen.go", "Go file to write the prompts to")
	constructs := flag.String("constructs", "constructs_gen_test.go", "Go test file to write the test templates to")
	flag.Parse()
	for _, w := range []struct {
		o    promptgen.Output
		file string
	}{{promptgen.Prompts, *out}, {promptgen.Constructs, *constructs}} {
		if err := run(*dir, w.o, w.file); err != nil {
			fmt.Fprintln(os.Stderr, "promptgen:", err)
			os.Exit(1)
		}
	}
}

func run(dir string, o promptgen.Output, file string) error {
	set, err := promptgen.Parse(os.DirFS(dir), o.Source)
	if err != nil {
		return err
	}
	src, err := promptgen.Generate(set, o)
	if err != nil {
		return err
	}
	return os.WriteFile(file, src, 0o644)
}
