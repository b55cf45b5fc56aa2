package postgres_test

import (
	"context"
	"testing"
	"time"

	"brain/engine"
	"brain/store/postgres/pgtest"
	"brain/store/storetest"
)

// BenchmarkStore_CommitFenced measures what the fence costs a commit of
// one event, the shape of most of a turn's writes: plain, and fenced by
// the session's lease (one more statement in the transaction, the lease
// row read FOR SHARE).
func BenchmarkStore_CommitFenced(b *testing.B) {
	for _, fenced := range []bool{false, true} {
		name := "plain"
		if fenced {
			name = "fenced"
		}
		b.Run(name, func(b *testing.B) {
			ctx := context.Background()
			st := openAt(b, pgtest.NewDatabase(b))
			storetest.CreateSession(b, st, storetest.Session("s1", storetest.T0))
			var fence *engine.Fence
			if fenced {
				now := time.Now()
				if ok, err := st.ClaimLease(ctx, "session:s1", "r1", now, now.Add(time.Hour)); err != nil || !ok {
					b.Fatalf("claim: %v %v", ok, err)
				}
				fence = &engine.Fence{Key: "session:s1", Owner: "r1"}
			}
			data := []byte(`{"text":"Here is what I found in the three tickets you mentioned: two are duplicates."}`)
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				_, err := st.Commit(ctx, engine.Commit{
					SessionID: "s1", Now: storetest.T0, Fence: fence,
					Events: []engine.Event{{ID: storetest.EventID("e", i), Type: engine.EventAgentMessage, Data: data}},
				})
				if err != nil {
					b.Fatal(err)
				}
				i++
			}
			b.ReportMetric(float64(i)/b.Elapsed().Seconds(), "commits/s")
		})
	}
}
