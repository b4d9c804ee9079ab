package wiretest

import (
	"context"
	"testing"
	"testing/fstest"

	"github.com/creatorstrategy/css/shared/ai/s3images"
	"github.com/creatorstrategy/css/shared/apidocs"
	"github.com/creatorstrategy/css/shared/contract"
	"github.com/creatorstrategy/css/shared/generation"
	"github.com/creatorstrategy/css/shared/rest"
	"github.com/creatorstrategy/css/shared/webhooks"
	"github.com/creatorstrategy/css/shared/webhooks/sealkey"
	"github.com/creatorstrategy/css/shared/wire"
	"github.com/creatorstrategy/css/shared/wire/connectionwire"
	"github.com/creatorstrategy/css/shared/wire/queues"
)

// API is a handler of fns' operations (every operation when none) built from env with every adapter an API
// function's main may build: the generation submitter and the research queue (when the environment names
// their queues), the webhook cipher, and the pictures at /files/. It is for the tests that run operations
// of other functions than the main under test (what a worker then does, the table calls each operation
// makes): which function serves an operation does not change what the operation does. What each main
// builds is checked by that main's own tests (CheckFunction).
func API(t testing.TB, env wire.Env, fns ...contract.Function) wire.APIHandler {
	t.Helper()
	api, _, err := APIServer(env, fns...)
	if err != nil {
		t.Fatal(err)
	}
	files, err := s3images.FilesHandler(env.Config, env.Log)
	if err != nil {
		t.Fatal(err)
	}
	return wire.HTTP(wire.ServeFiles(files, api))
}

// standInScript is an empty gzip stream.
var standInScript = []byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0}

// APIServer is API's rest.Server and its authenticator (for the MCP endpoint over them).
func APIServer(env wire.Env, fns ...contract.Function) (*rest.Server, rest.Authenticator, error) {
	st, err := wire.Store(env)
	if err != nil {
		return nil, nil, err
	}
	authn, err := wire.Authenticator(env, st)
	if err != nil {
		return nil, nil, err
	}
	sqsClient, err := queues.Client(env)
	if err != nil {
		return nil, nil, err
	}
	c := wire.APIConfig{Config: env.Config, Store: st, Auth: authn, Log: env.Log, Now: env.Now, RequestID: wire.RequestID,
		Functions: fns, Relay: queues.EventsRelay(env, st, sqsClient),
		// The reference page with a stand-in script: it touches no table or queue, and these tests need
		// not depend on the installed renderer (the browser test in functions/local serves the real one).
		Docs: apidocs.FromFS(fstest.MapFS{"bundle/redoc.standalone.js.gz": {Data: standInScript}})}
	// The YouTube connection and its transcripts, when the environment configures a Google client (as the
	// integrations and generation functions build them).
	var transcripts generation.Transcripts
	if len(env.Config.Research.Google.Missing()) == 0 {
		emitter := webhooks.NewEmitter(st, c.Relay, env.Now, st.NewID)
		ctx := context.Background()
		if c.Connections, err = connectionwire.FromConfig(ctx, env.Config, st, emitter, nil, env.Now, env.Log); err != nil {
			return nil, nil, err
		}
		tr, err := connectionwire.TranscriptsFromConfig(ctx, env.Config, st, emitter, env.Now, env.Log)
		if err != nil {
			return nil, nil, err
		}
		transcripts = tr
	}
	if env.Config.GenerationQueueURL != "" {
		if c.Generation, err = queues.GenerationSubmitter(env, st, sqsClient, func(gc *generation.Config) {
			if transcripts != nil {
				gc.Transcripts = transcripts
			}
		}); err != nil {
			return nil, nil, err
		}
	}
	if env.Config.Research.QueueURL != "" {
		if c.ResearchQueue, err = queues.Research(env, sqsClient); err != nil {
			return nil, nil, err
		}
	}
	if c.SecretCipher, err = sealkey.Cipher(env.Config); err != nil {
		return nil, nil, err
	}
	api, err := wire.NewAPI(c)
	return api, authn, err
}
