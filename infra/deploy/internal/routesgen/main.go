// Command routesgen writes each API function's HttpApi routes in template.yaml from the contract: one
// event per operation, named after its operationId, on the function its x-css-function names, in the
// document's order (`go generate ./infra/deploy`). Routes outside the contract (/mcp, /files/) and
// everything else in the template stay as they are, so adding an operation to openapi.yaml and
// regenerating routes it.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/creatorstrategy/css/shared/contract"
)

func main() {
	path := flag.String("template", "template.yaml", "the SAM template to rewrite")
	flag.Parse()
	if err := run(*path); err != nil {
		fmt.Fprintln(os.Stderr, "routesgen:", err)
		os.Exit(1)
	}
}

func run(path string) error {
	c, err := contract.Load()
	if err != nil {
		return err
	}
	tpl, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	out, err := rewrite(tpl, c.Operations)
	if err != nil {
		return err
	}
	if bytes.Equal(out, tpl) {
		return nil
	}
	return os.WriteFile(path, out, 0o644)
}

// Indentation of the template's resources, their events and the events' properties.
const (
	resourceIndent = "  "
	eventIndent    = "        "
)

// rewrite returns tpl with the contract's routes of every function in place of the ones it has: in each
// `<Name>Function` resource's Events, the HttpApi events under /api give way to the function's operations,
// written where the first of them was (or at the end of Events when it had none).
func rewrite(tpl []byte, ops []*contract.Operation) ([]byte, error) {
	byFunction := map[string][]*contract.Operation{}
	for _, op := range ops {
		id := logicalID(op.Function)
		byFunction[id] = append(byFunction[id], op)
	}
	lines := strings.SplitAfter(string(tpl), "\n")
	var out []string
	written := map[string]bool{}
	for i := 0; i < len(lines); {
		name, ok := resourceName(lines[i])
		if !ok || byFunction[name] == nil {
			out = append(out, lines[i])
			i++
			continue
		}
		end := i + 1
		for end < len(lines) && !isResource(lines[end]) {
			end++
		}
		body, err := rewriteResource(lines[i:end], byFunction[name])
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		out = append(out, body...)
		written[name] = true
		i = end
	}
	var missing []string
	for name := range byFunction {
		if !written[name] {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("the contract names functions the template does not declare: %s", strings.Join(missing, ", "))
	}
	return []byte(strings.Join(out, "")), nil
}

// rewriteResource rewrites one function resource's lines (its header first).
func rewriteResource(lines []string, ops []*contract.Operation) ([]string, error) {
	events := -1
	for i, l := range lines {
		if strings.TrimRight(l, "\n") == "      Events:" {
			events = i
			break
		}
	}
	if events < 0 {
		return nil, errors.New("no Events: to write its routes under")
	}
	end := events + 1
	for end < len(lines) && (strings.HasPrefix(lines[end], eventIndent) || strings.TrimSpace(lines[end]) == "") {
		end++
	}
	// Leave the blank lines that close the block where they are.
	for end > events+1 && strings.TrimSpace(lines[end-1]) == "" {
		end--
	}
	var kept []string
	insert := -1
	for i := events + 1; i < end; {
		j := i + 1
		for j < end && !strings.HasPrefix(lines[j], eventIndent) || j < end && strings.HasPrefix(lines[j], eventIndent+" ") {
			j++
		}
		entry := lines[i:j]
		if isContractRoute(entry) {
			if insert < 0 {
				insert = len(kept)
			}
		} else {
			kept = append(kept, entry...)
		}
		i = j
	}
	if insert < 0 {
		insert = len(kept)
	}
	var routes []string
	for _, op := range ops {
		routes = append(routes,
			eventIndent+strings.ToUpper(op.ID[:1])+op.ID[1:]+":\n",
			eventIndent+"  Type: HttpApi\n",
			eventIndent+"  Properties:\n",
			eventIndent+"    ApiId: !Ref HttpApi\n",
			eventIndent+"    Method: "+op.Method+"\n",
			eventIndent+"    Path: "+op.Path+"\n")
	}
	return slices.Concat(lines[:events+1], kept[:insert], routes, kept[insert:], lines[end:]), nil
}

// isContractRoute says whether an event entry is an HttpApi route under /api (the contract's paths).
func isContractRoute(entry []string) bool {
	var httpAPI, api bool
	for _, l := range entry {
		switch t := strings.TrimSpace(l); {
		case t == "Type: HttpApi":
			httpAPI = true
		case strings.HasPrefix(t, "Path: /api/"):
			api = true
		}
	}
	return httpAPI && api
}

// logicalID is the template resource of a function: its folder's name, each '-'-separated word
// title-cased, plus "Function" (the Makefile's build-%Function rule reads it back).
func logicalID(function string) string {
	var b strings.Builder
	for w := range strings.SplitSeq(function, "-") {
		if w != "" {
			b.WriteString(strings.ToUpper(w[:1]) + w[1:])
		}
	}
	return b.String() + "Function"
}

func isResource(line string) bool {
	_, ok := resourceName(line)
	return ok || (len(line) > 0 && line[0] != ' ' && line[0] != '#' && strings.TrimSpace(line) != "")
}

// resourceName reads "  <Name>:" at the resources' indentation.
func resourceName(line string) (string, bool) {
	rest, ok := strings.CutPrefix(strings.TrimRight(line, "\n"), resourceIndent)
	if !ok || rest == "" || rest[0] == ' ' || rest[0] == '#' || !strings.HasSuffix(rest, ":") {
		return "", false
	}
	return strings.TrimSuffix(rest, ":"), true
}
