package inproc

import (
	"context"
	"log/slog"
	"path/filepath"

	"github.com/creatorstrategy/css/shared/queue"
)

// Options are the settings of OpenSpec beyond the spec.
type Options struct {
	// Dir, when set, makes both queues durable, in Dir/<name> and Dir/<name>-dlq (e.g. Dir .data/queues).
	Dir    string
	Clock  Clock
	Logger *slog.Logger
}

// OpenSpec opens the queue spec describes (one of queue.Specs, as template.yaml declares it) with its
// dead-letter queue, which DeadLetter returns and which the queue's Close closes after it.
func OpenSpec(spec queue.Spec, o Options) (*Queue, error) {
	dir := func(name string) string {
		if o.Dir == "" {
			return ""
		}
		return filepath.Join(o.Dir, name)
	}
	dlqName := queue.DeadLetterName(spec.Name)
	dlq, err := Open(Config{Name: dlqName, Retention: spec.DeadLetterRetention, Dir: dir(dlqName), Clock: o.Clock, Logger: o.Logger})
	if err != nil {
		return nil, err
	}
	q, err := Open(Config{
		Name: spec.Name, VisibilityTimeout: spec.VisibilityTimeout, DeadLetter: dlq, MaxReceiveCount: spec.MaxReceiveCount,
		Retention: spec.Retention, Dir: dir(spec.Name), Clock: o.Clock, Logger: o.Logger,
	})
	if err != nil {
		dlq.Close(context.Background())
		return nil, err
	}
	q.ownsDLQ = true
	return q, nil
}

// DeadLetter is the queue's dead-letter queue (nil without one).
func (q *Queue) DeadLetter() *Queue { return q.dlq }
