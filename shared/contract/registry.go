package contract

import (
	"cmp"
	"fmt"
	"slices"
	"sync"
)

// The registry says what an operation is besides a REST route: the generation job it runs (x-css-tool)
// and the MCP tool that mirrors it (x-css-mcp). It is written in openapi.yaml beside the operation and
// generated into registry_gen.go (the served document leaves these extensions out), so the REST handlers,
// the generation tools and the MCP server all follow the one declaration.

// Registration is what the registry says of one operation.
type Registration struct {
	Operation  string      // operationId
	Generation *Generation // nil unless the operation runs as a generation job
	Mirror     *Mirror     // nil unless an MCP tool mirrors the operation
}

// Generation is an operation that runs as a generation job (decision 17).
type Generation struct {
	Operation string // operationId
	// Tool (x-css-tool) names the generation tool that runs the job: a history name, or the tool that
	// rewrites another run (refine, whose runs are filed under the tool of the run they refine).
	Tool string
	// Legacy (x-css-legacy-tool) is the `tool` of the unversioned POST /api/generate that maps to the
	// operation ("" when none; decision 26).
	Legacy string
	Body   string // the component of the request body
	Result string // the component of the 200 response body

	bind    func(p Params, body any) GenerationRequest
	newBody func() GenerationBody
}

// GenerationRequest is a validated request of a generation operation, as its handler passes it on.
type GenerationRequest struct {
	Body           any // a pointer to the operation's body type, e.g. *TitlesRequest
	IdempotencyKey *string
	Prefer         *string
}

// GenerationBody is a generation's request body type (*TitlesRequest, ...).
type GenerationBody interface{ Validate() error }

// Bind binds parameters and a body that op, g's operation, has validated into g's input type and returns
// the job's parts, as Operation.Bind does for a typed input.
func (g *Generation) Bind(op *Operation, params Params, body any) (GenerationRequest, error) {
	if op.ID != g.Operation {
		return GenerationRequest{}, fmt.Errorf("contract: a %s request bound to operation %s", g.Operation, op.ID)
	}
	return g.bind(params, body), nil
}

// NewBody returns a new zero value of g's body type, to decode a stored or queued body into.
func (g *Generation) NewBody() GenerationBody { return g.newBody() }

// Mirror is an MCP tool that runs one operation as a REST call would (decision 36).
type Mirror struct {
	Operation   string
	Name        string     // the tool's name
	Position    int        // its place in the tool list, from 1
	Title       string     // its annotations' title
	Kind        MirrorKind // what it does to data
	Description string
	Summary     MirrorSummary
}

// MirrorKind says what a mirrored tool does to data (its annotations follow from it).
type MirrorKind string

const (
	MirrorRead     MirrorKind = "read"     // reads only
	MirrorGenerate MirrorKind = "generate" // a generation: writes history, counts in the quota, calls a model
	MirrorWrite    MirrorKind = "write"    // adds or changes data, nothing lost
	MirrorReplace  MirrorKind = "replace"  // may overwrite data (idempotent)
	MirrorRemove   MirrorKind = "remove"   // deletes (idempotent)
)

// MirrorSummary picks the line a mirrored tool writes before its JSON.
type MirrorSummary struct {
	// Style is profile, schedule, list (a count and the first titles), generated, text (a fixed sentence)
	// or video (a verb and the video).
	Style string
	Arg   string // list: the items' field; generated: what was generated; text: the sentence; video: the verb
	Noun  string // list: what one item is called
}

// Registrations lists the registry in document order. The caller must not change it.
func Registrations() []Registration { return registry }

var indexes = sync.OnceValues(func() (map[string]*Generation, []*Mirror) {
	gens := map[string]*Generation{}
	var mirrors []*Mirror
	for _, r := range registry {
		if r.Generation != nil {
			gens[r.Operation] = r.Generation
		}
		if r.Mirror != nil {
			mirrors = append(mirrors, r.Mirror)
		}
	}
	slices.SortFunc(mirrors, func(a, b *Mirror) int { return cmp.Compare(a.Position, b.Position) })
	return gens, mirrors
})

// Generations lists the operations that run as generation jobs, in document order.
func Generations() []*Generation {
	var out []*Generation
	for _, r := range registry {
		if r.Generation != nil {
			out = append(out, r.Generation)
		}
	}
	return out
}

// GenerationOf returns the generation of the operation id, false when it is not one.
func GenerationOf(operation string) (*Generation, bool) {
	gens, _ := indexes()
	g, ok := gens[operation]
	return g, ok
}

// LegacyGeneration returns the generation the unversioned POST /api/generate's `tool` maps to.
func LegacyGeneration(tool string) (*Generation, bool) {
	for _, r := range registry {
		if g := r.Generation; g != nil && g.Legacy != "" && g.Legacy == tool {
			return g, true
		}
	}
	return nil, false
}

// Mirrors lists the mirrored MCP tools in the order the tool list publishes them.
func Mirrors() []*Mirror {
	_, mirrors := indexes()
	return mirrors
}
