package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// toolCalls counts the lookup tool's calls, to check every round ran.
var toolCalls atomic.Int64

// toolServer answers the lookup tool at once.
func startToolServer() (*http.Server, string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, "", err
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		toolCalls.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"answer":"42"}`)) //nolint:errcheck // the client sees a short body
	})}
	go srv.Serve(ln) //nolint:errcheck // ends with Close
	return srv, "http://" + ln.Addr().String() + "/lookup", nil
}

func agentConfig(modelURL, toolURL string, running int) string {
	return fmt.Sprintf(`models:
  default: {provider: anthropic, model: bench, base_url: %s, api_key: bench, max_retries: 0}
agents:
  - name: default
    instructions: Look things up.
    tools: [lookup]
tools:
  http:
    - name: lookup
      description: Look something up
      input: {type: object, properties: {q: {type: string}}}
      method: GET
      url: %s
limits: {max_running_turns: %d, max_queued_turns: 100000}
log: {level: warn}
`, modelURL, toolURL, running)
}

func storageConfig(store, dsn string) string {
	if store == "postgres" {
		return fmt.Sprintf("storage: {driver: postgres, dsn: %q}\n", dsn)
	}
	return "storage: {synchronous: full}\n"
}

type turnsResult struct {
	store               string
	replicas, running   int
	wall, ideal         time.Duration
	modelCalls, expects int64
	// commitsPerTurn is PostgreSQL's committed transactions per turn
	// (0 on SQLite).
	commitsPerTurn float64
	cpu            cpuUse
}

func runTurns(ctx context.Context, e *env, o options) error {
	fmt.Printf("\n== turns: %d sessions x %d tool rounds, fake model %s per call (ideal = ceil(sessions / (max_running_turns x replicas)) x %d calls x latency)\n",
		o.sessions, o.rounds, o.latency, o.rounds+1)
	fmt.Printf("%-9s %8s %17s %9s %9s %8s %10s %13s %11s %12s\n", "store", "replicas", "max_running_turns", "wall", "ideal", "of ideal", "turns/s", "ideal turns/s", "model calls", "pg commits/turn")
	tools, toolURL, err := startToolServer()
	if err != nil {
		return err
	}
	defer tools.Close()
	var all []turnsResult
	for _, running := range o.concurrency {
		for _, store := range o.stores {
			counts := []int{1}
			if store == "postgres" {
				counts = o.replicas
			}
			for _, n := range counts {
				r, err := turnsOnce(ctx, e, o, store, n, running, toolURL)
				if err != nil {
					if ctx.Err() != nil {
						return err
					}
					// One broken run does not cost the others.
					fmt.Printf("%-9s %8d %17d FAILED: %v\n", store, n, running, err)
					continue
				}
				commits := "-"
				if r.commitsPerTurn > 0 {
					commits = fmt.Sprintf("%.1f", r.commitsPerTurn)
				}
				// The ideal rate: every running turn waits only on the
				// model, (rounds+1) calls of latency each.
				idealRate := float64(running*n) / (float64(o.rounds+1) * o.latency.Seconds())
				fmt.Printf("%-9s %8d %17d %8.2fs %8.2fs %7.0f%% %10.0f %13.0f %5d/%d %12s\n", r.store, r.replicas, r.running,
					r.wall.Seconds(), r.ideal.Seconds(), 100*r.ideal.Seconds()/r.wall.Seconds(),
					float64(o.sessions)/r.wall.Seconds(), idealRate, r.modelCalls, r.expects, commits)
				all = append(all, r)
			}
		}
	}
	printCPU(all, o.sessions)
	return nil
}

// printCPU is the CPU table of the turns runs: milliseconds of CPU per
// turn on each side, the turns per second the machine's cores would allow
// at that cost (cores / CPU per turn), and utilisation: of the run's
// processes over cores x wall, and of the whole machine (other work
// included; steal is the part the hypervisor gave to other machines) from
// /proc/stat.
func printCPU(rs []turnsResult, turns int) {
	cores := runtime.NumCPU()
	fmt.Printf("\nCPU per turn (ms; brain = all replicas, per replica in brackets; driver = load generator + tool server), %d cores:\n", cores)
	fmt.Printf("%-9s %8s %17s %8s %8s %8s %8s %8s %14s %9s %9s %7s  %s\n", "store", "replicas", "max_running_turns",
		"brain", "pg", "model", "driver", "total", "CPU-bound t/s", "util", "machine", "steal", "brain CPU s per replica")
	for _, r := range rs {
		u := r.cpu
		per := make([]string, len(u.replicas))
		for i, d := range u.replicas {
			per[i] = fmt.Sprintf("%.2f", d.Seconds())
		}
		bound := "-"
		if u.total() > 0 {
			bound = fmt.Sprintf("%.0f", float64(cores)/(u.total().Seconds()/float64(turns)))
		}
		busy, steal := u.busy()
		fmt.Printf("%-9s %8d %17d %8.2f %8.2f %8.2f %8.2f %8.2f %14s %8.0f%% %8.0f%% %6.0f%%  [%s]\n", r.store, r.replicas, r.running,
			perTurn(u.brain, turns), perTurn(u.pg, turns), perTurn(u.model, turns), perTurn(u.driver, turns), perTurn(u.total(), turns),
			bound, 100*u.utilisation(r.wall, cores), 100*busy, 100*steal, strings.Join(per, " "))
	}
}

func turnsOnce(ctx context.Context, e *env, o options, store string, replicas, running int, toolURL string) (turnsResult, error) {
	res := turnsResult{store: store, replicas: replicas, running: running, expects: int64(o.sessions * (o.rounds + 1))}
	toolCalls.Store(0)
	model, err := startModel(o.latency, o.rounds)
	if err != nil {
		return res, err
	}
	defer model.close()
	dsn, dbName := "", ""
	if store == "postgres" {
		if dbName, dsn, err = e.newNamedDatabase(ctx); err != nil {
			return res, err
		}
	}
	cfg := agentConfig(model.url, toolURL, running) + storageConfig(store, dsn)
	var rs []*replica
	defer func() { stopAll(rs) }()
	for i := range replicas {
		r, err := e.startReplica(filepath.Join(e.dir, fmt.Sprintf("turns-%s-%d-%d-%d", store, replicas, running, i)), cfg)
		if err != nil {
			return res, err
		}
		rs = append(rs, r)
	}
	for _, r := range rs {
		if err := r.waitReady(ctx, time.Minute); err != nil {
			return res, err
		}
	}

	sides := cpuSides{model: model.pid}
	for _, r := range rs {
		sides.replicas = append(sides.replicas, r.cmd.Process.Pid)
	}
	if dbName != "" {
		sides.pg = e.pg.pid()
	}

	var commitsBefore int64
	if dbName != "" {
		time.Sleep(1500 * time.Millisecond) // the statistics lag
		if commitsBefore, err = e.pg.commits(ctx, dbName); err != nil {
			return res, err
		}
		if o.statements > 0 {
			if err := e.pg.resetStatements(ctx); err != nil {
				return res, err
			}
		}
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	cpuBefore := sides.sample()
	start := time.Now()
	var wg sync.WaitGroup
	var next atomic.Int64
	errs := make(chan error, 1)
	for range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= o.sessions {
					return
				}
				body := fmt.Sprintf(`{"message":"look it up %d"}`, i)
				resp, err := client.Post(rs[i%len(rs)].base+"/v1/sessions", "application/json", bytes.NewBufferString(body))
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
		return res, err
	default:
	}
	// Done when every turn gave its final answer and no session runs.
	var stats modelStats
	for polls := 1; ; polls++ {
		if stats, err = model.stats(client); err != nil {
			return res, err
		}
		if polls%100 == 0 {
			// A session that stopped will never answer: say so at once.
			stopped, err := countSessions(client, rs[0].base, "interrupted,failed")
			if err != nil {
				return res, err
			}
			if stopped > 0 {
				return res, fmt.Errorf("%d sessions interrupted or failed (%d of %d final answers)", stopped, stats.Finals, o.sessions)
			}
		}
		if stats.Finals >= int64(o.sessions) {
			n, err := countSessions(client, rs[0].base, "running")
			if err != nil {
				return res, err
			}
			if n == 0 {
				break
			}
		}
		select {
		case <-ctx.Done():
			return res, ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
		if time.Since(start) > 10*time.Minute {
			return res, fmt.Errorf("not done after 10 minutes: %d final answers", stats.Finals)
		}
	}
	res.wall = time.Since(start)
	res.cpu = sides.sample().since(cpuBefore)
	waves := (o.sessions + running*replicas - 1) / (running * replicas)
	res.ideal = time.Duration(waves*(o.rounds+1)) * o.latency
	res.modelCalls = stats.Calls
	idle, err := countSessions(client, rs[0].base, "idle")
	if err != nil {
		return res, err
	}
	if got, want := toolCalls.Load(), int64(o.sessions*o.rounds); got != want {
		return res, fmt.Errorf("the tool ran %d times, want %d", got, want)
	}
	if idle != min(o.sessions, 1000) {
		return res, fmt.Errorf("%d of %d sessions idle at the end", idle, o.sessions)
	}
	if dbName != "" {
		// Counted over the run plus the statistics' lag: includes the
		// replicas' idle heartbeats and the API reads of that time.
		time.Sleep(1500 * time.Millisecond)
		after, err := e.pg.commits(ctx, dbName)
		if err != nil {
			return res, err
		}
		res.commitsPerTurn = float64(after-commitsBefore) / float64(o.sessions)
		if o.statements > 0 {
			top, err := e.pg.statements(ctx, dbName, o.statements, o.sessions)
			if err != nil {
				return res, err
			}
			fmt.Printf("statements per turn, %d replicas, %d running:\n%s", replicas, running, top)
		}
	}
	return res, nil
}

// countSessions counts sessions with status through the API, a page of
// 1,000 at a time.
func countSessions(client *http.Client, base, status string) (int, error) {
	resp, err := client.Get(base + "/v1/sessions?limit=1000&status=" + status)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	var page struct {
		Sessions []json.RawMessage `json:"sessions"`
		Data     []json.RawMessage `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&page); err != nil {
		return 0, fmt.Errorf("list sessions: %w", err)
	}
	return len(page.Sessions) + len(page.Data), nil
}
