package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"sync/atomic"
	"syscall"
	"time"

	"brain/engine/model/fakemodel"
)

// modelMode runs the fake model server as a process of its own (this
// binary), so that its CPU is counted apart from the load generator's.
const modelMode = "model"

// modelStatsPath answers the model process's counts as JSON.
const modelStatsPath = "/_bench/stats"

type modelStats struct {
	Calls  int64 `json:"calls"`
	Finals int64 `json:"finals"`
}

// serveModel is the fake model server (test double) behind a fixed
// latency per call: each turn asks for `rounds` tool calls, one per model
// call, and then answers with text.
func serveModel(args []string) error {
	fs := flag.NewFlagSet(modelMode, flag.ContinueOnError)
	listen := fs.String("listen", "127.0.0.1:0", "address")
	latency := fs.Duration("latency", 50*time.Millisecond, "latency per call")
	rounds := fs.Int("rounds", 3, "tool rounds per turn")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var calls, finals atomic.Int64
	h := fakemodel.NewHandler(fakemodel.WithRecordLimit(1), fakemodel.WithDefault(fakemodel.Func(func(req fakemodel.Request) fakemodel.Step {
		if bytes.Count(req.Messages, []byte(`"tool_result"`)) < *rounds {
			return fakemodel.ToolCalls(fakemodel.Call{Name: "lookup", Input: `{"q":"bench"}`})
		}
		finals.Add(1)
		return fakemodel.Text("done")
	})))
	return http.ListenAndServe(*listen, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == modelStatsPath {
			w.Header().Set("Content-Type", "application/json")
			json.NewEncoder(w).Encode(modelStats{Calls: calls.Load(), Finals: finals.Load()}) //nolint:errcheck // the client sees a short body
			return
		}
		calls.Add(1)
		time.Sleep(*latency)
		h.ServeHTTP(w, r)
	}))
}

// modelServer is the running fake model process.
type modelServer struct {
	url  string
	pid  int
	stop func()
}

func startModel(latency time.Duration, rounds int) (*modelServer, error) {
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(self, modelMode, "-listen", addr, "-latency", latency.String(), "-rounds", fmt.Sprint(rounds))
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	url := "http://" + addr
	t, err := startProcess("fake model", cmd, url+modelStatsPath)
	if err != nil {
		return nil, err
	}
	return &modelServer{url: url, pid: t.pid, stop: t.stop}, nil
}

func (m *modelServer) close() { m.stop() }

// stats reads the model process's counts.
func (m *modelServer) stats(client *http.Client) (modelStats, error) {
	var s modelStats
	resp, err := client.Get(m.url + modelStatsPath)
	if err != nil {
		return s, err
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(&s); err != nil {
		return s, fmt.Errorf("fake model stats: %w", err)
	}
	return s, nil
}
