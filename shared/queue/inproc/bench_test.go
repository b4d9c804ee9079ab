package inproc_test

import (
	"context"
	"sync"
	"testing"

	"github.com/creatorstrategy/css/shared/queue"
	"github.com/creatorstrategy/css/shared/queue/inproc"
)

// BenchmarkSendAndHandle measures one message sent (one Send each, from 8 senders per CPU) and handled by
// 4 workers, on the wall clock: the in-process queue's share of a local delivery. Durable sends that arrive
// together share an fsync.
//
//	go test -run '^$' -bench SendAndHandle ./shared/queue/inproc
func BenchmarkSendAndHandle(b *testing.B) {
	for _, durable := range []bool{false, true} {
		name := "memory"
		if durable {
			name = "durable"
		}
		b.Run(name, func(b *testing.B) {
			cfg := inproc.Config{Name: "bench"}
			if durable {
				cfg.Dir = b.TempDir()
			}
			q, err := inproc.Open(cfg)
			if err != nil {
				b.Fatal(err)
			}
			var wg sync.WaitGroup
			wg.Add(b.N)
			if err := q.Start(func(context.Context, queue.Message) error { wg.Done(); return nil }, 4); err != nil {
				b.Fatal(err)
			}
			msg := queue.Outgoing{Body: []byte(`{"event":"titles.generated","id":"evt_0123456789"}`)}
			b.SetParallelism(8)
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if err := q.Send(context.Background(), msg); err != nil {
						b.Error(err)
						return
					}
				}
			})
			wg.Wait()
			b.StopTimer()
			if err := q.Close(context.Background()); err != nil {
				b.Fatal(err)
			}
		})
	}
}
