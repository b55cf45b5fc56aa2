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
	"strings"
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
	name    string
	url     string
	metrics string // brain's /metrics, "" for the others
	pid     int
	stop    func()
}

type intakeResult struct {
	reqs    int64
	elapsed time.Duration
	p50     time.Duration
	p99     time.Duration
}

func (r intakeResult) perSecond() float64 { return float64(r.reqs) / r.elapsed.Seconds() }

// The two kinds of traffic the intake is measured with (-kinds):
// mentions that each start a session (the realistic path), and channel
// messages that mention nobody, which brain records and then ignores.

const (
	kindMention = "mention"
	kindMessage = "message"
)

func runIntake(ctx context.Context, e *env, o options) error {
	fmt.Printf("\n== intake: signed Slack events, %d keep-alive connections, %s per target, every event distinct\n", o.clients, o.duration)
	fmt.Printf("mentions: app_mention events, each a new thread, so each starts a session (max_running_turns %d, fake model %s per call);\n"+
		"messages: channel messages that mention nobody (recorded, then ignored)\n", o.intakeRunning, o.intakeLatency)
	fake := slackfake.New()
	defer fake.Close()
	model, err := startModel(o.intakeLatency, 0)
	if err != nil {
		return err
	}
	defer model.close()

	for _, kind := range o.intakeKinds {
		fmt.Printf("\n-- %s\n", kind)
		starters := []func() (*target, error){
			func() (*target, error) { return startFloor(e) },
			func() (*target, error) { return startBolt(o.bolt) },
			func() (*target, error) { return startDurableFloor(e) },
		}
		for _, store := range o.stores {
			starters = append(starters, func() (*target, error) {
				return startBrainIntake(ctx, e, store, fake.URL(), model.url, kind, o.intakeRunning)
			})
		}
		var results []intakeResult
		var names []string
		for _, start := range starters {
			t, err := start()
			if err != nil {
				return err
			}
			r, err := measureTarget(ctx, t, kind, o)
			t.stop()
			if err != nil {
				return fmt.Errorf("%s, %s: %w", t.name, kind, err)
			}
			results = append(results, r)
			names = append(names, t.name)
		}
		floor, bolt, durable := results[0].perSecond(), results[1].perSecond(), results[2].perSecond()
		for i := 2; i < len(results); i++ {
			fmt.Printf("%-30s %4.0f%% of the floor, %4.0f%% of the durable floor, %.2fx Bolt (p99 %.1f ms; floor %.1f ms, Bolt %.1f ms)\n", names[i],
				100*results[i].perSecond()/floor, 100*results[i].perSecond()/durable, results[i].perSecond()/bolt,
				ms(results[i].p99), ms(results[0].p99), ms(results[1].p99))
		}
	}
	return nil
}

// measureTarget warms t up and measures it with kind's events; for brain
// with mentions it also reports the sessions started during the run and
// how long the rest took to start after it.
func measureTarget(ctx context.Context, t *target, kind string, o options) (intakeResult, error) {
	// Warm up (connections, JIT, page cache), then measure.
	if _, err := intakeLoad(ctx, t.url, o.clients, time.Second, kind, "w"); err != nil {
		return intakeResult{}, err
	}
	var before metricsSnapshot
	if t.metrics != "" {
		var err error
		if before, err = scrape(t.metrics); err != nil {
			return intakeResult{}, err
		}
	}
	cpu0 := processCPU(t.pid)
	r, err := intakeLoad(ctx, t.url, o.clients, o.duration, kind, "m")
	if err != nil {
		return r, err
	}
	cpu1 := processCPU(t.pid)
	rss, _ := processRSS(t.pid)
	fmt.Printf("%-30s %9.0f req/s  p50 %6.2f ms  p99 %6.2f ms  CPU %4.0f%% of a core  RSS %4d MiB\n", t.name, r.perSecond(),
		ms(r.p50), ms(r.p99), 100*(cpu1-cpu0).Seconds()/r.elapsed.Seconds(), rss>>20)
	if t.metrics == "" || kind != kindMention {
		return r, nil
	}
	after, err := scrape(t.metrics)
	if err != nil {
		return r, err
	}
	started := after.inputs - before.inputs
	fmt.Printf("%-30s   during the run: %d sessions started, %d turns completed, %d events waiting in the inbox\n", "",
		started, after.turns-before.turns, after.inbox)
	// The rest of the acknowledged mentions start after the load: wait
	// for every one, so no run counts an ack whose session never came.
	want := before.inputs + r.reqs
	t0 := time.Now()
	for after.inputs < want {
		if time.Since(t0) > 10*time.Minute {
			return r, fmt.Errorf("%d of %d acknowledged mentions never started a session", want-after.inputs, r.reqs)
		}
		select {
		case <-ctx.Done():
			return r, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		if after, err = scrape(t.metrics); err != nil {
			return r, err
		}
	}
	fmt.Printf("%-30s   every acknowledged mention had its session %.1f s after the load\n", "", time.Since(t0).Seconds())
	return r, nil
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func startFloor(e *env) (*target, error) {
	return startSelf("floor (net/http, verify only)", floorMode)
}

// startSelf runs this binary in mode (a floor) on a free address, with
// args after -listen.
func startSelf(name, mode string, args ...string) (*target, error) {
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(self, append([]string{mode, "-listen", addr}, args...)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	return startProcess(name, cmd, "http://"+addr+"/slack/events")
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

func startBrainIntake(ctx context.Context, e *env, store, slackURL, modelURL, kind string, running int) (*target, error) {
	dsn := ""
	if store == "postgres" {
		var err error
		if dsn, err = e.newDatabase(ctx); err != nil {
			return nil, err
		}
	}
	cfg := fmt.Sprintf(`models:
  default: {provider: anthropic, model: bench, base_url: %s, api_key: bench, max_retries: 0}
agents:
  - name: default
slack: {bot_token: xoxb-bench, signing_secret: %s, api_url: %s/api/}
limits: {max_running_turns: %d}
log: {level: error}
`, modelURL, signingSecret, slackURL, running) + storageConfig(store, dsn)
	r, err := e.startReplica(filepath.Join(e.dir, "intake-"+store+"-"+kind), cfg)
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
	return &target{name: name, url: r.base + "/slack/events", metrics: r.base + "/metrics", pid: r.cmd.Process.Pid, stop: r.stop}, nil
}

// eventBody is one distinct signed-to-be event of kind: n numbers it, and
// phase keeps the warm-up's events apart from the measured ones (event
// ids, channels and timestamps all differ).
func eventBody(kind, phase string, n int64) []byte {
	ts := fmt.Sprintf("1700000000.%06d", n%1000000)
	channel := fmt.Sprintf("C%s%d", strings.ToUpper(phase), n/1000000)
	if kind == kindMention {
		return []byte(fmt.Sprintf(`{"type":"event_callback","team_id":"T0FAKE","api_app_id":"A1","event_id":"Ev%s%d","event_time":1700000000,"event":{"type":"app_mention","user":"U1","text":"<@%s> load %d","ts":"%s","channel":"%s","event_ts":"%s"}}`,
			phase, n, slackfake.BotUserID, n, ts, channel, ts))
	}
	return []byte(fmt.Sprintf(`{"type":"event_callback","team_id":"T0FAKE","api_app_id":"A1","event_id":"Ev%s%d","event_time":1700000000,"event":{"type":"message","user":"U1","text":"load %d","ts":"%s","channel":"%s","channel_type":"channel","event_ts":"%s"}}`,
		phase, n, n, ts, channel, ts))
}

// intakeLoad sends distinct signed events of kind from clients
// connections for d and returns the count and latency percentiles.
func intakeLoad(ctx context.Context, url string, clients int, d time.Duration, kind, phase string) (intakeResult, error) {
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
				body := eventBody(kind, phase, n)
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
