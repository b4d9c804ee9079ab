package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/creatorstrategy/css/shared/config"
	"github.com/creatorstrategy/css/shared/queue"
	"github.com/creatorstrategy/css/shared/queue/inproc"
	"github.com/creatorstrategy/css/shared/store"
	"github.com/creatorstrategy/css/shared/webhooks"
	"github.com/creatorstrategy/css/shared/webhooks/httppost"
	"github.com/creatorstrategy/css/shared/webhooks/sealkey"
)

// sweepEvery is how often the local stack sweeps the outbox (the cloud's schedule runs every minute; a
// local run is short, so sooner).
const sweepEvery = 10 * time.Second

// Workers of the local queues: a delivery mostly waits on its receiver, so many run at once.
const (
	eventWorkers    = 4
	deliveryWorkers = 32
)

// eventsStack is the events side of the local stack: the durable in-process events and webhook-deliveries
// queues (with their dead-letter queues, in DataDir/queues), the dispatcher working them, the relay and its
// periodic outbox sweep.
type eventsStack struct {
	events, deliveries *inproc.Queue
	relay              *webhooks.Relay
	cipher             webhooks.Cipher
	stopSweep          context.CancelFunc
	swept              chan struct{}
}

func openEvents(cfg config.Config, st *store.Store, logger *slog.Logger) (*eventsStack, error) {
	cipher, err := sealkey.Cipher(cfg)
	if err != nil {
		return nil, err
	}
	schedule, err := webhooks.CheckSchedule(cfg.WebhookRetrySchedule)
	if err != nil {
		return nil, err
	}
	opts := inproc.Options{Dir: filepath.Join(cfg.DataDir, "queues"), Logger: logger}
	specs := queue.Specs()
	events, err := inproc.OpenSpec(specs[queue.Events], opts)
	if err != nil {
		return nil, fmt.Errorf("events queue: %w", err)
	}
	deliveries, err := inproc.OpenSpec(specs[queue.WebhookDeliveries], opts)
	if err != nil {
		events.Close(context.Background())
		return nil, fmt.Errorf("webhook-deliveries queue: %w", err)
	}
	e := &eventsStack{events: events, deliveries: deliveries, cipher: cipher,
		relay: webhooks.NewRelay(st, events, deliveries, time.Now, logger)}
	d, err := webhooks.NewDispatcher(webhooks.DispatcherConfig{
		Store: st, Deliveries: deliveries, Cipher: cipher, Schedule: schedule, UserAgent: webhooks.UserAgent(cfg.Version), Log: logger,
		Poster: httppost.New(httppost.Options{Policy: webhooks.AddressPolicy{AllowLoopback: cfg.WebhookAllowLoopback}}),
	})
	if err == nil {
		err = errors.Join(events.Start(d.HandleEvent, eventWorkers), deliveries.Start(d.HandleDelivery, deliveryWorkers))
	}
	if err != nil {
		e.closeQueues()
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	e.stopSweep, e.swept = cancel, make(chan struct{})
	go e.sweep(ctx, logger)
	return e, nil
}

// sweep sends what the outbox holds (events of a previous run that died before publishing them, or whose
// publish failed) at start and then every sweepEvery.
func (e *eventsStack) sweep(ctx context.Context, logger *slog.Logger) {
	defer close(e.swept)
	t := time.NewTicker(sweepEvery)
	defer t.Stop()
	for {
		if n, err := e.relay.Sweep(ctx); err != nil && ctx.Err() == nil {
			logger.Warn("outbox sweep", "error", err.Error())
		} else if n > 0 {
			logger.Info("outbox sweep", "sent", n)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (e *eventsStack) closeQueues() error {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	// Events first: a fan-out still running sends to the deliveries queue.
	return errors.Join(e.events.Close(ctx), e.deliveries.Close(ctx))
}

// Close stops the sweep and the queues; messages not yet handled stay in their journals for the next run.
func (e *eventsStack) Close() error {
	e.stopSweep()
	<-e.swept
	return e.closeQueues()
}
