package mcp

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
)

// Stopping a stdio child: its stdin is closed first (a well-behaved server
// exits), then its process group gets SIGTERM, then SIGKILL.
const (
	stdinGrace = time.Second
	termGrace  = time.Second
	// waitDelay bounds waiting for the child's stderr to close once it
	// exited, in case a process outside its group still holds it.
	waitDelay = 2 * time.Second
	// stderrTail is how much of the child's recent stderr is kept for the
	// log when connecting fails.
	stderrTail = 2048
)

// process is how a stdio child is started and stopped.
type process struct {
	path   string // the command, resolved in the child's PATH
	args   []string
	env    []string
	dir    string
	stderr *tailBuffer
	cmd    *exec.Cmd
	pid    int // the child's pid, which is also its process group id
}

func newProcess(cfg ServerConfig) (*process, error) {
	env := childEnv(cfg.Env)
	path, err := lookPath(cfg.Command, pathOf(env))
	if err != nil {
		return nil, err
	}
	return &process{path: path, args: cfg.Args, env: env, dir: cfg.Cwd, stderr: &tailBuffer{}}, nil
}

// command is the transport's CommandFunc. It ignores the transport's
// context on purpose: exec.CommandContext would kill the child when the
// connect timeout's context ends, and only the child, not its group.
func (p *process) command(context.Context, string, []string, []string) (*exec.Cmd, error) {
	cmd := exec.Command(p.path, p.args...)
	cmd.Env = p.env // set explicitly: nil would mean brain's whole environment
	cmd.Dir = p.dir
	cmd.Stderr = p.stderr
	cmd.WaitDelay = waitDelay
	setGroup(cmd)
	p.cmd = cmd
	return cmd, nil
}

// started records the child's pid once the transport started it.
func (p *process) started() {
	if p.cmd != nil && p.cmd.Process != nil {
		p.pid = p.cmd.Process.Pid
	}
}

// stop runs closeClient (which closes the child's stdin and reaps it) and
// makes sure the whole process group is gone.
func (p *process) stop(closeClient func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		closeClient()
	}()
	select {
	case <-done:
	case <-time.After(stdinGrace):
		terminateGroup(p.pid)
		select {
		case <-done:
		case <-time.After(termGrace):
		}
	}
	// Whatever is left of the group: children the server started.
	killGroup(p.pid)
	<-done
}

// childEnv is exactly the configured environment, plus DefaultPath when it
// names no PATH.
func childEnv(vars map[string]string) []string {
	keys := make([]string, 0, len(vars))
	for k := range vars {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	env := make([]string, 0, len(keys)+1)
	for _, k := range keys {
		env = append(env, k+"="+vars[k])
	}
	if _, ok := vars["PATH"]; !ok {
		env = append(env, "PATH="+DefaultPath)
	}
	return env
}

func pathOf(env []string) string {
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			return v
		}
	}
	return ""
}

// lookPath finds a command in the child's PATH (exec.Command would search
// brain's). A name with a slash is used as is, relative to the child's
// working directory. Relative PATH entries are ignored.
func lookPath(name, path string) (string, error) {
	if strings.Contains(name, "/") {
		return name, nil
	}
	for _, dir := range filepath.SplitList(path) {
		if !filepath.IsAbs(dir) {
			continue
		}
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("command %q not found in the server's PATH %q", name, path)
}

// tailBuffer keeps the last stderrTail bytes written to it.
type tailBuffer struct {
	mu sync.Mutex
	b  []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if over := len(t.b) - stderrTail; over > 0 {
		t.b = append(t.b[:0:0], t.b[over:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.TrimSpace(strings.ToValidUTF8(string(t.b), "\uFFFD"))
}
