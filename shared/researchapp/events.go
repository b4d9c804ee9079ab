package researchapp

import (
	"context"

	"github.com/creatorstrategy/css/shared/webhooks"
)

// Events gives research the webhooks outbox as its OnceEmitter: an event emitted with a key gets an id
// derived from it, and the fan-out records an event id once, so a step redone after a crash never
// delivers its event twice.
type Events struct{ *webhooks.OutboxEmitter }

// EmitOnce emits event with an id derived from key.
func (e Events) EmitOnce(ctx context.Context, channelID, event, key string, data any) error {
	return e.Emit(webhooks.WithEventKey(ctx, key), channelID, event, data)
}
