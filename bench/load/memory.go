package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// runMemory measures brain's resident memory per running turn: o.running
// sessions are created through the API, each with a first message whose
// turn then waits on a slow model (the fake model holds every call for
// far longer than the run), beside the same process before any session.
// Memory per idle session is the startup mode's (100,000 sessions).
func runMemory(ctx context.Context, e *env, o options) error {
	n := o.memTurns
	fmt.Printf("\n== memory: %d sessions, each with a turn running and waiting on a slow model, beside the same process empty\n", n)
	model, err := startModel(time.Hour, 0)
	if err != nil {
		return err
	}
	defer model.close()
	for _, store := range o.stores {
		dsn := ""
		if store == "postgres" {
			if dsn, err = e.newDatabase(ctx); err != nil {
				return err
			}
		}
		cfg := fmt.Sprintf(`models:
  default: {provider: anthropic, model: bench, base_url: %s, api_key: bench, max_retries: 0, timeout: 2h}
agents:
  - name: default
limits: {max_running_turns: %d, max_queued_turns: %d}
log: {level: warn}
`, model.url, n, n) + storageConfig(store, dsn)
		r, err := e.startReplica(filepath.Join(e.dir, "memory-"+store), cfg)
		if err != nil {
			return err
		}
		if err := memoryOnce(ctx, r, model, store, n); err != nil {
			r.stop()
			return fmt.Errorf("%s: %w\n%s", store, err, r.logs.String())
		}
		r.stop()
	}
	return nil
}

func memoryOnce(ctx context.Context, r *replica, model *modelServer, store string, n int) error {
	if err := r.waitReady(ctx, time.Minute); err != nil {
		return err
	}
	time.Sleep(2 * time.Second) // let start-up settle, as startup does
	empty, err := r.rss()
	if err != nil {
		return err
	}
	before, err := model.stats(http.DefaultClient)
	if err != nil {
		return err
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 32}, Timeout: time.Minute}
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, 1)
	for range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				i := next.Add(1) - 1
				if i >= int64(n) {
					return
				}
				body := fmt.Sprintf(`{"message":"wait for it %d"}`, i)
				resp, err := client.Post(r.base+"/v1/sessions", "application/json", bytes.NewBufferString(body))
				if err == nil {
					resp.Body.Close()
					if resp.StatusCode >= 300 {
						err = fmt.Errorf("create session: HTTP %d", resp.StatusCode)
					}
				}
				if err != nil {
					select {
					case errs <- err:
					default:
					}
					return
				}
			}
		}()
	}
	wg.Wait()
	select {
	case err := <-errs:
		return err
	default:
	}
	// Every turn is running once the model holds n calls.
	for deadline := time.Now().Add(10 * time.Minute); ; {
		s, err := model.stats(http.DefaultClient)
		if err != nil {
			return err
		}
		if s.Calls-before.Calls >= int64(n) {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("only %d of %d turns reached the model", s.Calls-before.Calls, n)
		}
		time.Sleep(100 * time.Millisecond)
	}
	runtime.GC()
	time.Sleep(2 * time.Second)
	full, err := r.rss()
	if err != nil {
		return err
	}
	fmt.Printf("%-10s RSS empty %4d MiB, with %d running turns %4d MiB: %.1f KiB per running turn\n",
		store, empty>>20, n, full>>20, float64(full-empty)/1024/float64(n))
	return nil
}
