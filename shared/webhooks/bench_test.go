package webhooks_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/creatorstrategy/css/shared/contract"
	"github.com/creatorstrategy/css/shared/queue/inproc"
	"github.com/creatorstrategy/css/shared/store"
	"github.com/creatorstrategy/css/shared/store/pebble"
	"github.com/creatorstrategy/css/shared/testkit/memstore"
	"github.com/creatorstrategy/css/shared/webhooks"
	"github.com/creatorstrategy/css/shared/webhooks/httppost"
)

// BenchmarkDispatch measures one dispatcher (one process, the local stack's worker counts) delivering
// signed events to a receiver on loopback, on the wall clock: events go through the outbox, the events
// queue, the fan-out and the deliveries queue. b.N events, each to `fanout` registrations;
// deliveries/s is the figure.
func BenchmarkDispatch(b *testing.B) {
	for _, table := range []string{"memory", "pebble"} {
		for _, fanout := range []int{1, 10} {
			b.Run(fmt.Sprintf("%s/fanout=%d", table, fanout), func(b *testing.B) { benchDispatch(b, table, fanout) })
		}
	}
}

func benchDispatch(b *testing.B, table string, fanout int) {
	var delivered atomic.Int64
	done := make(chan struct{}, 1)
	var want atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNoContent)
		if delivered.Add(1) == want.Load() {
			done <- struct{}{}
		}
	}))
	defer srv.Close()

	var tbl store.Table = memstore.New(b)
	if table == "pebble" {
		p, err := pebble.Open(filepath.Join(b.TempDir(), "table"))
		if err != nil {
			b.Fatal(err)
		}
		defer p.Close()
		tbl = p
	}
	st := store.New(tbl)
	open := func(name string, maxReceives int) *inproc.Queue {
		dlq, err := inproc.Open(inproc.Config{Name: name + "-dlq"})
		if err != nil {
			b.Fatal(err)
		}
		q, err := inproc.Open(inproc.Config{Name: name, DeadLetter: dlq, MaxReceiveCount: maxReceives})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { q.Close(context.Background()); dlq.Close(context.Background()) })
		return q
	}
	events, deliveries := open("events", 5), open("deliveries", 4)
	key, _ := webhooks.DeriveKey("a benchmark key of at least thirty-two characters")
	cipher, _ := webhooks.NewAESGCM(key)
	relay := webhooks.NewRelay(st, events, deliveries, time.Now, nil)
	emitter := webhooks.NewEmitter(st, relay, time.Now, st.NewID)
	svc := webhooks.NewService(webhooks.Config{Store: st, Cipher: cipher,
		Rules: webhooks.URLRules{AllowHTTP: true, Policy: webhooks.AddressPolicy{AllowLoopback: true}}})
	d, err := webhooks.NewDispatcher(webhooks.DispatcherConfig{Store: st, Deliveries: deliveries, Cipher: cipher,
		Poster: httppost.New(httppost.Options{Policy: webhooks.AddressPolicy{AllowLoopback: true}})})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	// One URL per registration: a receiver URL is registered once (the duplicate-URL rule).
	for i := range fanout {
		url := fmt.Sprintf("%s/hook/%d", srv.URL, i)
		if _, err := svc.Create(ctx, chA, contract.WebhookCreate{URL: url, Events: []contract.EventName{webhooks.VideoCommitted}}); err != nil {
			b.Fatal(err)
		}
	}
	if err := events.Start(d.HandleEvent, 4); err != nil {
		b.Fatal(err)
	}
	if err := deliveries.Start(d.HandleDelivery, 32); err != nil {
		b.Fatal(err)
	}
	data := sampleData(webhooks.VideoCommitted)
	want.Store(int64(b.N * fanout))
	b.ResetTimer()
	start := time.Now()
	for range b.N {
		if err := emitter.Emit(ctx, chA, webhooks.VideoCommitted, data); err != nil {
			b.Fatal(err)
		}
	}
	select {
	case <-done:
	case <-time.After(5 * time.Minute):
		b.Fatalf("%d of %d delivered", delivered.Load(), want.Load())
	}
	elapsed := time.Since(start)
	b.StopTimer()
	b.ReportMetric(float64(b.N*fanout)/elapsed.Seconds(), "deliveries/s")
}
