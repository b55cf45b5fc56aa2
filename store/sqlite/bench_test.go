package sqlite_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"

	"brain/engine"
	"brain/store"
	"brain/store/sqlite"
	"brain/store/storetest"
)

func benchStore(b *testing.B, opts sqlite.Options) *sqlite.Store {
	b.Helper()
	st, err := sqlite.OpenWithOptions(context.Background(), filepath.Join(b.TempDir(), "bench.db"), opts)
	if err != nil {
		b.Fatalf("Open: %v", err)
	}
	b.Cleanup(func() { st.Close() })
	return st
}

// benchData is a typical agent.message payload.
var benchData = json.RawMessage(`{"text":"Here is what I found in the three tickets you mentioned: two are duplicates."}`)

// BenchmarkStore_CommitEvent measures one commit appending one event, the
// shape of most engine writes, at both durability levels.
func BenchmarkStore_CommitEvent(b *testing.B) {
	for _, level := range []string{"full", "normal"} {
		b.Run("sync="+level, func(b *testing.B) {
			ctx := context.Background()
			st := benchStore(b, sqlite.Options{Synchronous: level})
			storetest.CreateSession(b, st, storetest.Session("s1", storetest.T0))
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				_, err := st.Commit(ctx, engine.Commit{
					SessionID: "s1",
					Now:       storetest.T0,
					Events:    []engine.Event{{ID: storetest.EventID("e", i), Type: engine.EventAgentMessage, Data: benchData}},
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

// BenchmarkStore_CommitParallel measures commits from many goroutines over
// several sessions: they all queue on the single writer connection.
func BenchmarkStore_CommitParallel(b *testing.B) {
	for _, level := range []string{"full", "normal"} {
		b.Run("sync="+level, func(b *testing.B) {
			ctx := context.Background()
			st := benchStore(b, sqlite.Options{Synchronous: level})
			const sessions = 8
			for i := range sessions {
				storetest.CreateSession(b, st, storetest.Session(fmt.Sprintf("s%d", i), storetest.T0))
			}
			var next atomic.Int64
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					n := next.Add(1)
					_, err := st.Commit(ctx, engine.Commit{
						SessionID: fmt.Sprintf("s%d", n%sessions),
						Now:       storetest.T0,
						Events:    []engine.Event{{ID: fmt.Sprintf("e%d", n), Type: engine.EventAgentMessage, Data: benchData}},
					})
					if err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "commits/s")
		})
	}
}

// BenchmarkStore_RecordInbound measures the intake's write: batches of
// new Slack mentions, each with its two dedupe keys, as the inbox's group
// commit hands them over. sync=normal leaves out the fsync, so ns/item is
// the statements' CPU.
func BenchmarkStore_RecordInbound(b *testing.B) {
	for _, batch := range []int{1, 16, 64} {
		b.Run(fmt.Sprintf("batch=%d", batch), func(b *testing.B) {
			ctx := context.Background()
			st := benchStore(b, sqlite.Options{Synchronous: "normal"})
			payload := []byte(`{"kind":"message","dedupe_keys":["event:Ev1","msg:C1:1700000000.000300"],"thread_key":"slack:T1:C1:1700000000.000300","message":{"event_id":"Ev1","event_type":"app_mention","team":"T1","channel":"C1","user":"U1","text":"please summarise the incident","ts":"1700000000.000300","thread_ts":"1700000000.000300","mention":true}}`)
			n := 0
			items := make([]store.Inbound, batch)
			b.ReportAllocs()
			for b.Loop() {
				for i := range items {
					n++
					items[i] = store.Inbound{Source: "slack", ThreadKey: fmt.Sprintf("slack:T1:C1:%d", n), Kind: "message", Payload: payload,
						DedupeKeys: []string{fmt.Sprintf("event:Ev%d", n), fmt.Sprintf("msg:C1:%d", n)}}
				}
				if _, err := st.RecordInbound(ctx, storetest.T0, items); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n), "ns/item")
		})
	}
}

// BenchmarkStore_RecordInboundParallel measures durable intake writes as
// the acks make them: 64 writers, one item each, sharing group commits,
// at synchronous=full.
func BenchmarkStore_RecordInboundParallel(b *testing.B) {
	ctx := context.Background()
	st := benchStore(b, sqlite.Options{})
	payload := []byte(`{"kind":"message","dedupe_keys":["event:Ev1","msg:C1:1700000000.000300"],"thread_key":"slack:T1:C1:1700000000.000300","message":{"event_id":"Ev1","event_type":"app_mention","team":"T1","channel":"C1","user":"U1","text":"please summarise the incident","ts":"1700000000.000300","thread_ts":"1700000000.000300","mention":true}}`)
	var n atomic.Int64
	b.SetParallelism(32)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			i := n.Add(1)
			it := store.Inbound{Source: "slack", ThreadKey: fmt.Sprintf("slack:T1:C1:%d", i), Kind: "message", Payload: payload,
				DedupeKeys: []string{fmt.Sprintf("event:Ev%d", i), fmt.Sprintf("msg:C1:%d", i)}}
			if _, err := st.RecordInbound(ctx, storetest.T0, []store.Inbound{it}); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(n.Load())/b.Elapsed().Seconds(), "items/s")
}
