package mcp

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/creatorstrategy/css/shared/apperr"
	"github.com/creatorstrategy/css/shared/auth"
	"github.com/creatorstrategy/css/shared/contract"
)

// Scheme is the URI scheme of the resources (decision 39).
const Scheme = "css"

const jsonMIME = "application/json"

// fixedResources are the resources in the REST shapes of the operations they read (decision 39).
var fixedResources = []struct {
	name, op, title, description string
}{
	{"niche-profile", "getNicheProfile", "Niche profile", "The channel's niche profile (NicheProfile)."},
	{"research-insights", "getResearchInsights", "Research insights", "Pattern insights of the niche's research (ResearchInsights: the ResearchPatterns and derivedMetrics)."},
	{"my-videos", "listMyVideos", "My videos", "Every video in the pipeline ({videos, total})."},
	{"schedule", "getSchedule", "This week's schedule", "The schedule of the current week (WeekSchedule)."},
}

// fixedURIs are the fixed resources' URIs: reading one runs its operation, which counts the call.
var fixedURIs = func() map[string]bool {
	m := map[string]bool{}
	for _, r := range fixedResources {
		m[Scheme+"://"+r.name] = true
	}
	return m
}()

func (s *server) addResources(srv *sdk.Server) {
	for _, r := range fixedResources {
		uri := Scheme + "://" + r.name
		op := r.op
		srv.AddResource(&sdk.Resource{URI: uri, Name: r.name, Title: r.title, Description: r.description, MIMEType: jsonMIME},
			func(ctx context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
				p, err := resourcePrincipal(req.Extra)
				if err != nil {
					return nil, err
				}
				body, _, err := s.call(ctx, p, op, nil)
				if err != nil {
					return nil, resourceError(uri, err)
				}
				return contents(uri, body), nil
			})
	}
	srv.AddResourceTemplate(&sdk.ResourceTemplate{URITemplate: Scheme + "://video/{id}", Name: "video", Title: "Video",
		Description: "One video of the pipeline with its status history (MyVideo).", MIMEType: jsonMIME},
		s.readOne("video/", func(ctx context.Context, p auth.Principal, id string) (any, error) {
			return s.cfg.Videos.Get(ctx, p.ChannelID, id)
		}))
	srv.AddResourceTemplate(&sdk.ResourceTemplate{URITemplate: Scheme + "://series/{id}", Name: "series", Title: "Series",
		Description: "One content series with its script formula (Series).", MIMEType: jsonMIME},
		s.readOne("series/", func(ctx context.Context, p auth.Principal, id string) (any, error) {
			return s.cfg.Series.Get(ctx, p.ChannelID, id)
		}))
}

// readOne serves a template resource css://<prefix>{id}: an id that is not a UUID, unknown, or another
// channel's is a not-found error. countReads has counted the read, found or not, as REST counts a 404.
func (s *server) readOne(prefix string, get func(ctx context.Context, p auth.Principal, id string) (any, error)) sdk.ResourceHandler {
	return func(ctx context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
		uri := req.Params.URI
		p, err := resourcePrincipal(req.Extra)
		if err != nil {
			return nil, err
		}
		id, ok := strings.CutPrefix(uri, Scheme+"://"+prefix)
		if !ok || !contract.IsUUID(id) {
			return nil, resourceNotFound(uri)
		}
		v, err := get(ctx, p, strings.ToLower(id))
		if err != nil {
			return nil, resourceError(uri, err)
		}
		body, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		return contents(uri, body), nil
	}
}

func contents(uri string, body []byte) *sdk.ReadResourceResult {
	return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: uri, MIMEType: jsonMIME, Text: string(body)}}}
}

func resourcePrincipal(extra *sdk.RequestExtra) (auth.Principal, error) {
	p, ok := principal(extra)
	if !ok {
		return auth.Principal{}, &jsonrpc.Error{Code: codeUnauthorized, Message: "UNAUTHORIZED: no API key"}
	}
	return p, nil
}

// resourceNotFound is the protocol's resource-not-found error, its uri cut to maxEchoedName characters (the
// SDK's own repeats the whole URI the caller sent, quoted by fmt rather than as JSON).
func resourceNotFound(uri string) error {
	data, _ := json.Marshal(map[string]string{"uri": clipName(uri)})
	return &jsonrpc.Error{Code: sdk.CodeResourceNotFound, Message: "Resource not found", Data: data}
}

// codeUnauthorized is the JSON-RPC error code of a resource read without a principal (an
// implementation-defined server error, -32000 to -32099).
const codeUnauthorized = -32001

// resourceError maps a failed read: NOT_FOUND to the protocol's resource-not-found error, anything else to
// an error whose message starts with the REST code.
func resourceError(uri string, err error) error {
	e, ok := apperr.As(err)
	if ok && e.Code == apperr.NotFound {
		return resourceNotFound(uri)
	}
	if !ok || e.Code == apperr.Internal {
		return &jsonrpc.Error{Code: -32603, Message: "INTERNAL: internal error"}
	}
	return &jsonrpc.Error{Code: -32000, Message: string(e.Code) + ": " + e.Message}
}
