package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"brain/bot/migrate"
	"brain/engine"
	"brain/store/sqlite"
)

// runStartup measures start-to-ready (exec to the first 200 from
// /readyz) and resident memory, with an empty database beside one holding
// o.idle idle sessions, on each store. The PostgreSQL database is filled
// by brain migrate from the SQLite one, which is timed too.
func runStartup(ctx context.Context, e *env, o options) error {
	fmt.Printf("\n== startup: %d idle sessions (a message and an answer each) beside an empty database; best and median of 3 starts\n", o.idle)
	full := filepath.Join(e.dir, "startup-full", "data", "brain.db")
	t0 := time.Now()
	if err := fillSessions(ctx, full, o.idle); err != nil {
		return err
	}
	fmt.Printf("filled SQLite in %.1fs\n", time.Since(t0).Seconds())
	dsns := map[string]string{}
	if slices.Contains(o.stores, "postgres") {
		empty, err := e.newDatabase(ctx)
		if err != nil {
			return err
		}
		filled, err := e.newDatabase(ctx)
		if err != nil {
			return err
		}
		t0 := time.Now()
		if _, err := migrate.ToPostgres(ctx, migrate.Options{From: full, DSN: filled}); err != nil {
			return err
		}
		fmt.Printf("brain migrate --to postgres of that database: %.1fs\n", time.Since(t0).Seconds())
		dsns["empty"], dsns["full"] = empty, filled
	}
	cfg := "models:\n  default: {provider: fake, model: bench}\nagents:\n  - name: default\nlog: {level: warn}\n"
	fmt.Printf("%-10s %-9s %10s %10s %10s\n", "store", "sessions", "ready best", "median", "RSS")
	type rssAt struct{ empty, full int64 }
	for _, store := range o.stores {
		var rss rssAt
		for _, which := range []string{"empty", "full"} {
			dir := filepath.Join(e.dir, "startup-"+which)
			if store == "postgres" {
				dir = filepath.Join(e.dir, "startup-pg-"+which)
			}
			var times []time.Duration
			var mem int64
			for range 3 {
				start := time.Now()
				r, err := e.startReplica(dir, cfg+storageConfig(store, dsns[which]))
				if err != nil {
					return err
				}
				if err := r.waitReady(ctx, 5*time.Minute); err != nil {
					r.stop()
					return err
				}
				times = append(times, time.Since(start))
				time.Sleep(2 * time.Second) // let start-up scans and GC settle
				if mem, err = r.rss(); err != nil {
					r.stop()
					return err
				}
				r.stop()
			}
			slices.Sort(times)
			n := 0
			if which == "full" {
				n, rss.full = o.idle, mem
			} else {
				rss.empty = mem
			}
			fmt.Printf("%-10s %-9d %9.0fms %9.0fms %7d MiB\n", store, n, ms(times[0]), ms(times[1]), mem>>20)
		}
		// Negative differences are noise: brain holds nothing per idle
		// session in memory.
		fmt.Printf("%-10s resident memory per idle session: %.0f bytes (RSS full - RSS empty = %d KiB, / %d)\n",
			store, max(0, float64(rss.full-rss.empty))/float64(o.idle), (rss.full-rss.empty)>>10, o.idle)
	}
	return nil
}

// fillSessions writes n idle API sessions, each with a user.message and
// an agent.message, through the store (synchronous=normal: filling is
// not what is measured).
func fillSessions(ctx context.Context, path string, n int) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	st, err := sqlite.OpenWithOptions(ctx, path, sqlite.Options{Synchronous: "normal"})
	if err != nil {
		return err
	}
	defer st.Close()
	base := time.Now().Add(-time.Duration(n) * time.Second)
	for i := range n {
		at := base.Add(time.Duration(i) * time.Second)
		id := fmt.Sprintf("ses_load%07d", i)
		s := engine.Session{ID: id, Agent: "default", Origin: engine.OriginAPI, Interactive: true, Status: engine.StatusIdle, CreatedAt: at, UpdatedAt: at}
		if _, _, err := st.CreateSession(ctx, s, ""); err != nil {
			return err
		}
		_, err := st.Commit(ctx, engine.Commit{SessionID: id, Now: at,
			Update: func(s *engine.Session) error { s.InputCursor, s.Checkpoint = 1, 2; return nil },
			Events: []engine.Event{
				{ID: id + "-1", Type: engine.EventUserMessage, Data: json.RawMessage(`{"text":"hello there"}`)},
				{ID: id + "-2", Type: engine.EventAgentMessage, TurnID: "t1", Data: json.RawMessage(`{"text":"hello, how can I help?"}`)},
			}})
		if err != nil {
			return err
		}
	}
	return nil
}
