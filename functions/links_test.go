// Package functions holds tests over what each function's binary links: `go list -deps` of every
// functions/<name> main, as `make build` builds it for Lambda.
package functions

import (
	"fmt"
	"maps"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
)

const module = "github.com/creatorstrategy/css/"

// standIns are the offline stand-ins: they serve the local stack and tests, and no Lambda links them. A
// Lambda configured for one fails at start instead.
var standIns = []string{
	module + "shared/testkit/offline/textmodel",     // the offline text model
	module + "shared/testkit/offline/imagemodel",    // the offline image model
	module + "shared/testkit/offline/youtubesample", // the offline research sample
}

// lambdaEnv is the environment of make build's Lambda builds.
func lambdaEnv() []string { return append(os.Environ(), "GOOS=linux", "GOARCH=arm64", "CGO_ENABLED=0") }

// listing is what the link tests read of the build, as the Lambda build sees it (the tags, GOOS and
// GOARCH of make build).
type listing struct {
	deps    map[string][]string // main package → the packages it links
	imports map[string][]string // package → the packages it imports
}

// listed is one `go list -deps` of every function and of the local stack, shared by the tests, each of
// which listed them again (a clean clone's CI timed this package out at load 5-7: issue 32 item 15).
var listed = sync.OnceValues(func() (listing, error) {
	cmd := exec.Command("go", "list", "-deps", "-tags", "lambda.norpc",
		"-f", `{{.ImportPath}}|{{join .Imports " "}}|{{if eq .Name "main"}}{{join .Deps " "}}{{end}}`, "./...")
	cmd.Env = lambdaEnv()
	out, err := cmd.Output()
	if err != nil {
		return listing{}, fmt.Errorf("go list: %w", err)
	}
	l := listing{deps: map[string][]string{}, imports: map[string][]string{}}
	for line := range strings.Lines(string(out)) {
		f := strings.Split(strings.TrimSpace(line), "|")
		if len(f) != 3 {
			return listing{}, fmt.Errorf("go list: a line of %d fields: %q", len(f), line)
		}
		l.imports[f[0]] = strings.Fields(f[1])
		if deps := strings.Fields(f[2]); len(deps) > 0 {
			if len(deps) < 100 {
				return listing{}, fmt.Errorf("%s: only %d packages listed", f[0], len(deps))
			}
			l.deps[f[0]] = deps
		}
	}
	return l, nil
})

// localStack is the local stack's main: it sits beside the functions' mains but is no Lambda.
const localStack = module + "functions/local"

// links lists each function (a main package under functions/ other than the local stack) with the packages
// it links.
func links(t *testing.T) map[string][]string {
	t.Helper()
	l, err := listed()
	if err != nil {
		t.Fatal(err)
	}
	fns := map[string][]string{}
	for main, deps := range l.deps {
		if strings.HasPrefix(main, module+"functions/") && main != localStack {
			fns[main] = deps
		}
	}
	return fns
}

// linked names the stand-ins among deps.
func linked(deps []string) []string {
	var out []string
	for _, d := range deps {
		for _, s := range standIns {
			if d == s || strings.HasPrefix(d, s+"/") {
				out = append(out, d)
			}
		}
	}
	return out
}

// No Lambda binary links an offline stand-in. The local stack does: that proves the list names packages
// that exist and that the check sees them.
func TestNoFunctionLinksAnOfflineStandIn(t *testing.T) {
	fns := links(t)
	if len(fns) < 10 {
		t.Fatalf("only %d functions listed", len(fns))
	}
	for _, fn := range slices.Sorted(maps.Keys(fns)) {
		deps := fns[fn]
		if got := linked(deps); len(got) > 0 {
			t.Errorf("%s links %v: the offline stand-ins belong to the local stack", strings.TrimPrefix(fn, module), got)
		}
		for _, d := range deps {
			if strings.HasPrefix(d, localStack+"/") || strings.HasPrefix(d, module+"shared/testkit/") {
				t.Errorf("%s links %s, a package of the local stack or the test kit", strings.TrimPrefix(fn, module), d)
			}
		}
	}
	l, _ := listed()
	local := l.deps[localStack]
	if got := linked(local); len(got) != len(standIns) {
		t.Errorf("functions/local links %v of the stand-ins %v", got, standIns)
	}
}

// sendsNothing names the functions none of whose operations sends on a queue: no event, no job. They build
// no SQS client, and since the queue wiring lives in shared/wire/queues they do not link the SQS SDK, whose
// package initialisation (its endpoint table, about 0.1 ms) their every cold start would otherwise pay.
var sendsNothing = []string{"keys", "memory", "utility"}

func TestFunctionsThatSendNothingLinkNoSQS(t *testing.T) {
	fns := links(t)
	const sdk = "github.com/aws/aws-sdk-go-v2/service/sqs"
	for _, name := range sendsNothing {
		deps, ok := fns[module+"functions/"+name]
		if !ok {
			t.Fatalf("no function %s", name)
		}
		if slices.Contains(deps, sdk) {
			t.Errorf("%s links %s", name, sdk)
		}
	}
	// The check sees the SDK where it is linked.
	if !slices.Contains(fns[module+"functions/videos"], sdk) {
		t.Errorf("videos does not link %s: the check looks at the wrong name", sdk)
	}
}
