package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"brain/engine/model/fakemodel"
)

// modelServer is the fake model server (test double) behind a fixed
// latency per call: each turn asks for `rounds` tool calls, one per model
// call, and then answers with text.
type modelServer struct {
	srv    *http.Server
	url    string
	calls  atomic.Int64
	finals atomic.Int64
}

func startModel(latency time.Duration, rounds int) (*modelServer, error) {
	m := &modelServer{}
	h := fakemodel.NewHandler(fakemodel.WithRecordLimit(1), fakemodel.WithDefault(fakemodel.Func(func(req fakemodel.Request) fakemodel.Step {
		if bytes.Count(req.Messages, []byte(`"tool_result"`)) < rounds {
			return fakemodel.ToolCalls(fakemodel.Call{Name: "lookup", Input: `{"q":"bench"}`})
		}
		m.finals.Add(1)
		return fakemodel.Text("done")
	})))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	m.url = "http://" + ln.Addr().String()
	m.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m.calls.Add(1)
		time.Sleep(latency)
		h.ServeHTTP(w, r)
	})}
	go m.srv.Serve(ln) //nolint:errcheck // ends with Close
	return m, nil
}

func (m *modelServer) close() { m.srv.Close() }

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
}

func runTurns(ctx context.Context, e *env, o options) error {
	fmt.Printf("\n== turns: %d sessions x %d tool rounds, fake model %s per call (ideal = ceil(sessions / (max_running_turns x replicas)) x %d calls x latency)\n",
		o.sessions, o.rounds, o.latency, o.rounds+1)
	fmt.Printf("%-9s %8s %17s %9s %9s %8s %10s %11s %12s\n", "store", "replicas", "max_running_turns", "wall", "ideal", "of ideal", "turns/s", "model calls", "pg commits/turn")
	tools, toolURL, err := startToolServer()
	if err != nil {
		return err
	}
	defer tools.Close()
	for _, running := range o.concurrency {
		for _, store := range o.stores {
			counts := []int{1}
			if store == "postgres" {
				counts = o.replicas
			}
			for _, n := range counts {
				r, err := turnsOnce(ctx, e, o, store, n, running, toolURL)
				if err != nil {
					return fmt.Errorf("%s x%d, %d running: %w", store, n, running, err)
				}
				commits := "-"
				if r.commitsPerTurn > 0 {
					commits = fmt.Sprintf("%.1f", r.commitsPerTurn)
				}
				fmt.Printf("%-9s %8d %17d %8.2fs %8.2fs %7.0f%% %10.0f %5d/%d %12s\n", r.store, r.replicas, r.running,
					r.wall.Seconds(), r.ideal.Seconds(), 100*r.ideal.Seconds()/r.wall.Seconds(),
					float64(o.sessions)/r.wall.Seconds(), r.modelCalls, r.expects, commits)
			}
		}
	}
	return nil
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
	for {
		if model.finals.Load() >= int64(o.sessions) {
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
		case <-time.After(5 * time.Millisecond):
		}
		if time.Since(start) > 10*time.Minute {
			return res, fmt.Errorf("not done after 10 minutes: %d final answers", model.finals.Load())
		}
	}
	res.wall = time.Since(start)
	waves := (o.sessions + running*replicas - 1) / (running * replicas)
	res.ideal = time.Duration(waves*(o.rounds+1)) * o.latency
	res.modelCalls = model.calls.Load()
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
