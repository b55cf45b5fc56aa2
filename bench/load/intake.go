package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"brain/channels/slack/slackfake"
	"brain/webhooks/slackhook"
)

const (
	floorMode     = "floor"
	signingSecret = "bench-signing-secret"
)

// serveFloor is the floor: a bare net/http handler that reads the body and
// verifies the signature, nothing else.
func serveFloor(args []string) error {
	fs := flag.NewFlagSet(floorMode, flag.ContinueOnError)
	listen := fs.String("listen", "127.0.0.1:0", "address")
	if err := fs.Parse(args); err != nil {
		return err
	}
	return http.ListenAndServe(*listen, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var buf bytes.Buffer
		_, _ = buf.ReadFrom(http.MaxBytesReader(w, r.Body, 1<<20))
		if slackhook.Verify(signingSecret, r.Header, buf.Bytes(), time.Now()) != nil {
			w.WriteHeader(http.StatusUnauthorized)
		}
	}))
}

// target is one intake server under load.
type target struct {
	name string
	url  string
	pid  int
	stop func()
}

type intakeResult struct {
	reqs    int64
	elapsed time.Duration
	p50     time.Duration
	p99     time.Duration
}

func (r intakeResult) perSecond() float64 { return float64(r.reqs) / r.elapsed.Seconds() }

func runIntake(ctx context.Context, e *env, o options) error {
	fmt.Printf("\n== intake: signed Slack message events, %d keep-alive connections, %s per target, every event distinct\n", o.clients, o.duration)
	fake := slackfake.New()
	defer fake.Close()

	starters := []func() (*target, error){
		func() (*target, error) { return startFloor(e) },
		func() (*target, error) { return startBolt(o.bolt) },
	}
	for _, store := range o.stores {
		starters = append(starters, func() (*target, error) { return startBrainIntake(ctx, e, store, fake.URL()) })
	}
	var results []intakeResult
	var names []string
	for _, start := range starters {
		t, err := start()
		if err != nil {
			return err
		}
		// Warm up (connections, JIT, page cache), then measure.
		if _, err := intakeLoad(ctx, t.url, o.clients, time.Second, t.name+"-warm"); err != nil {
			t.stop()
			return fmt.Errorf("%s: %w", t.name, err)
		}
		r, err := intakeLoad(ctx, t.url, o.clients, o.duration, t.name)
		rss, _ := processRSS(t.pid)
		t.stop()
		if err != nil {
			return fmt.Errorf("%s: %w", t.name, err)
		}
		results = append(results, r)
		names = append(names, t.name)
		fmt.Printf("%-28s %9.0f req/s  p50 %6.2f ms  p99 %6.2f ms  RSS %4d MiB\n", t.name, r.perSecond(),
			ms(r.p50), ms(r.p99), rss>>20)
	}
	floor, bolt := results[0].perSecond(), results[1].perSecond()
	for i := 2; i < len(results); i++ {
		fmt.Printf("%-28s %4.0f%% of the floor, %.1fx Bolt\n", names[i], 100*results[i].perSecond()/floor, results[i].perSecond()/bolt)
	}
	return nil
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func startFloor(e *env) (*target, error) {
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(self, floorMode, "-listen", addr)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	return startProcess("floor (net/http, verify only)", cmd, "http://"+addr+"/slack/events")
}

func startBolt(dir string) (*target, error) {
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@slack", "bolt")); err != nil {
		return nil, fmt.Errorf("bolt for JavaScript is not installed: run npm ci --prefix %s", dir)
	}
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	_, port, _ := cutLast(addr, ":")
	cmd := exec.Command("node", filepath.Join(dir, "app.js"))
	cmd.Env = append(os.Environ(), "PORT="+port, "SLACK_SIGNING_SECRET="+signingSecret, "NODE_ENV=production")
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	return startProcess("Bolt for JavaScript", cmd, "http://"+addr+"/slack/events")
}

func cutLast(s, sep string) (string, string, bool) {
	for i := len(s) - len(sep); i >= 0; i-- {
		if s[i:i+len(sep)] == sep {
			return s[:i], s[i+len(sep):], true
		}
	}
	return s, "", false
}

// startProcess starts cmd and waits until url answers (any status).
func startProcess(name string, cmd *exec.Cmd, url string) (*target, error) {
	var logs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }() //nolint:errcheck // logs say why
	stop := func() {
		cmd.Process.Signal(syscall.SIGTERM) //nolint:errcheck // already gone is fine
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill() //nolint:errcheck // already gone is fine
			<-done
		}
	}
	for deadline := time.Now().Add(30 * time.Second); ; {
		resp, err := http.Post(url, "application/json", bytes.NewReader(nil))
		if err == nil {
			resp.Body.Close()
			return &target{name: name, url: url, pid: cmd.Process.Pid, stop: stop}, nil
		}
		select {
		case <-done:
			return nil, fmt.Errorf("%s exited: %s", name, logs.String())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			stop()
			return nil, fmt.Errorf("%s not answering: %s", name, logs.String())
		}
	}
}

func startBrainIntake(ctx context.Context, e *env, store, slackURL string) (*target, error) {
	dsn := ""
	if store == "postgres" {
		var err error
		if dsn, err = e.newDatabase(ctx); err != nil {
			return nil, err
		}
	}
	cfg := fmt.Sprintf(`models:
  default: {provider: fake, model: bench}
agents:
  - name: default
slack: {bot_token: xoxb-bench, signing_secret: %s, api_url: %s/api/}
log: {level: error}
`, signingSecret, slackURL) + storageConfig(store, dsn)
	r, err := e.startReplica(filepath.Join(e.dir, "intake-"+store), cfg)
	if err != nil {
		return nil, err
	}
	if err := r.waitReady(ctx, time.Minute); err != nil {
		r.stop()
		return nil, err
	}
	name := "brain, SQLite (sync=full)"
	if store == "postgres" {
		name = "brain, PostgreSQL (1 replica)"
	}
	return &target{name: name, url: r.base + "/slack/events", pid: r.cmd.Process.Pid, stop: r.stop}, nil
}

// intakeLoad sends distinct signed message events from clients
// connections for d and returns the count and latency percentiles.
func intakeLoad(ctx context.Context, url string, clients int, d time.Duration, prefix string) (intakeResult, error) {
	tr := &http.Transport{MaxIdleConnsPerHost: clients, MaxConnsPerHost: clients}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	var seq, failed atomic.Int64
	var firstErr atomic.Value
	var mu sync.Mutex
	var lat []time.Duration
	stopAt := time.Now().Add(d)
	start := time.Now()
	var wg sync.WaitGroup
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			mine := make([]time.Duration, 0, 4096)
			for time.Now().Before(stopAt) && ctx.Err() == nil {
				n := seq.Add(1)
				body := []byte(fmt.Sprintf(`{"type":"event_callback","team_id":"T0FAKE","api_app_id":"A1","event_id":"Ev%s%d","event_time":1700000000,"event":{"type":"message","user":"U1","text":"load %d","ts":"1700000000.%06d","channel":"C1","channel_type":"channel","event_ts":"1700000000.%06d"}}`, prefix, n, n, n, n))
				ts := strconv.FormatInt(time.Now().Unix(), 10)
				req, _ := http.NewRequest("POST", url, bytes.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set(slackhook.HeaderTimestamp, ts)
				req.Header.Set(slackhook.HeaderSignature, slackhook.Signature(signingSecret, ts, body))
				t0 := time.Now()
				resp, err := client.Do(req)
				if err == nil {
					_, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if resp.StatusCode != http.StatusOK {
						err = fmt.Errorf("HTTP %d", resp.StatusCode)
					}
				}
				if err != nil {
					failed.Add(1)
					firstErr.CompareAndSwap(nil, err)
					continue
				}
				mine = append(mine, time.Since(t0))
			}
			mu.Lock()
			lat = append(lat, mine...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	if n := failed.Load(); n > 0 {
		return intakeResult{}, fmt.Errorf("%d requests failed, first: %v", n, firstErr.Load())
	}
	if len(lat) == 0 {
		return intakeResult{}, errors.New("no request finished")
	}
	slices.Sort(lat)
	return intakeResult{reqs: int64(len(lat)), elapsed: elapsed, p50: lat[len(lat)/2], p99: lat[len(lat)*99/100]}, nil
}
