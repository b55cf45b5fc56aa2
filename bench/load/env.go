package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// env is one run's work directory, the brain binary built for it and,
// once asked for, a PostgreSQL cluster.
type env struct {
	dir   string
	brain string
	keep  bool
	// statements: the cluster loads pg_stat_statements.
	statements bool
	pg         *cluster
	dbs        int
}

func newEnv(ctx context.Context, keep bool, brain string, statements bool) (*env, error) {
	dir, err := os.MkdirTemp("", "brain-load-")
	if err != nil {
		return nil, err
	}
	e := &env{dir: dir, brain: filepath.Join(dir, "brain"), keep: keep, statements: statements}
	if brain != "" {
		if e.brain, err = filepath.Abs(brain); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
		return e, nil
	}
	build := exec.CommandContext(ctx, "go", "build", "-o", e.brain, "./cmd/brain")
	if out, err := build.CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("go build ./cmd/brain (run from the repository root): %w\n%s", err, out)
	}
	return e, nil
}

func (e *env) close() {
	if e.pg != nil {
		e.pg.stop()
	}
	if e.keep {
		fmt.Println("work directory kept:", e.dir)
		return
	}
	os.RemoveAll(e.dir)
}

// newDatabase returns the DSN of an empty PostgreSQL database, starting
// the cluster on first use.
func (e *env) newDatabase(ctx context.Context) (string, error) {
	_, dsn, err := e.newNamedDatabase(ctx)
	return dsn, err
}

// newNamedDatabase is newDatabase with the database's name.
func (e *env) newNamedDatabase(ctx context.Context) (name, dsn string, err error) {
	if e.pg == nil {
		pg, err := startCluster(ctx, filepath.Join(e.dir, "pg"), e.statements)
		if err != nil {
			return "", "", err
		}
		e.pg = pg
	}
	e.dbs++
	name = fmt.Sprintf("brain_load_%d", e.dbs)
	if err := e.pg.psql(ctx, "CREATE DATABASE "+name); err != nil {
		return "", "", err
	}
	return name, e.pg.dsn(name), nil
}

// replica is one `brain serve` process.
type replica struct {
	cmd  *exec.Cmd
	base string
	logs *bytes.Buffer
	done chan struct{}
}

// startReplica writes config (with listen and data_dir filled in) to dir
// and starts brain serve on it. It does not wait for readiness.
func (e *env) startReplica(dir, config string) (*replica, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	cfg := fmt.Sprintf("listen: %s\ndata_dir: %s\n%s", addr, filepath.Join(dir, "data"), config)
	path := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		return nil, err
	}
	r := &replica{base: "http://" + addr, logs: &bytes.Buffer{}, done: make(chan struct{})}
	r.cmd = exec.Command(e.brain, "serve", "--config", path, "--grace", "5s")
	r.cmd.Stdout, r.cmd.Stderr = r.logs, r.logs
	r.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := r.cmd.Start(); err != nil {
		return nil, err
	}
	go func() { r.cmd.Wait(); close(r.done) }() //nolint:errcheck // exit status is read from logs
	return r, nil
}

// waitReady polls /readyz until it answers 200.
func (r *replica) waitReady(ctx context.Context, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		resp, err := http.Get(r.base + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-r.done:
			return fmt.Errorf("brain serve exited: %s", r.logs.String())
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(2 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not ready after %s: %v\n%s", timeout, err, r.logs.String())
		}
	}
}

// rss is the process's resident memory in bytes (VmRSS).
func (r *replica) rss() (int64, error) {
	return processRSS(r.cmd.Process.Pid)
}

func processRSS(pid int) (int64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10, err
		}
	}
	return 0, errors.New("no VmRSS")
}

// stop ends the process with SIGTERM (a clean shutdown) and waits.
func (r *replica) stop() {
	r.cmd.Process.Signal(syscall.SIGTERM) //nolint:errcheck // already gone is fine
	select {
	case <-r.done:
	case <-time.After(15 * time.Second):
		r.cmd.Process.Kill() //nolint:errcheck // already gone is fine
		<-r.done
	}
}

func stopAll(rs []*replica) {
	for _, r := range rs {
		r.stop()
	}
}

func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}
