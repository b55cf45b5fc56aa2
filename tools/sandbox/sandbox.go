// Package sandbox is the sandbox_exec tool: shell commands run for a
// session in a bubblewrap (bwrap) sandbox.
//
// Each session gets a workspace directory, Root/<session>/workspace, made
// on its first command and bound read-write, nosuid and nodev at
// /workspace, which is also the working directory and HOME. Every command
// runs in a fresh bwrap with new user, pid, mount, ipc, uts and cgroup
// namespaces (and a new network namespace, with only its own loopback,
// unless Config.Network), as an unprivileged user with no capabilities,
// and sees: the host's /usr (and /bin, /lib... or their usrmerge symlinks)
// read-only; a short allow-list of /etc entries (see etcFiles) plus a
// generated passwd, group, hosts and hostname; its own /proc and a minimal
// /dev; an empty /tmp that lasts one command; and an environment of PATH,
// HOME and LANG only. Brain's environment, data directory, other sessions'
// workspaces, /home, /root and the rest of the host's file system are not
// visible; only /workspace and /tmp are writable.
//
// Outside, the sandbox user is brain's own user, or, when brain runs as
// root, Config.RunAs (nobody by default), which then owns the workspaces:
// nothing a command leaves in /workspace is root's on the host (see
// runas.go).
//
// Each command is bounded (see Config and limits.go): processes and
// threads at once, and per process memory, CPU time and file size, as
// rlimits; and the workspace's size on disk, measured after each command:
// over budget, the call is a tool error that names the budget.
//
// A command's processes live in its pid namespace and end with it: when
// the command exits, anything it left running in the background is
// killed, and on a timeout, a cancelled turn or Close, the command and
// every process it started are killed and that is confirmed (see proc).
// What persists between commands is /workspace, nothing else.
//
// When a stop cannot be confirmed, the call fails with an unknown outcome
// and that session's sandbox is marked broken: its next command gets a
// fresh sandbox (a new bwrap on the same workspace, reported in the
// result's notice) while brain keeps the unconfirmed one to kill at Close.
//
// What it does not guarantee: it is no stronger than the kernel's
// namespaces and its seccomp filter (seccomp.go; the kernel is shared); with Network on the
// sandbox shares brain's network namespace, host loopback included, so it
// can reach brain's own HTTP API and every local service; files under /usr
// (including /usr/local) are readable. The limits are rlimits: memory and
// CPU time bind each process, not the command as a whole (up to
// MaxProcesses times as much in all), nothing bounds /tmp (a tmpfs, in
// memory) beyond the file size, and before Linux 5.14 MaxProcesses counts
// every process of the host user; for hard totals run brain in a cgroup
// (systemd's MemoryMax=, TasksMax=, CPUQuota=). The workspace can grow past
// its budget during a command; the next ones fail until files are deleted.
// When brain runs as root, bwrap's --disable-userns cannot be used (it
// needs a user namespace of bwrap's own, which would map the sandbox user
// to root): the seccomp filter alone refuses nested user namespaces there,
// and other host processes running as RunAs
// could signal or trace the sandbox's processes: a dedicated user is
// better than nobody.
//
// It imports only the standard library and brain/tools.
package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"brain/internal/egress"
	"brain/tools"
)

// Config configures sandbox_exec.
type Config struct {
	// Root holds the per-session workspaces (data_dir/sandboxes). Required.
	Root string
	// Network lets commands use the host's network; off by default.
	Network bool
	// Egress, when set, is network mode "proxy" (egress.go); not with Network.
	Egress *Egress
	// DefaultTimeout applies when a call gives no timeoutSeconds (120s).
	DefaultTimeout time.Duration
	// MaxTimeout is the largest timeoutSeconds a call may ask (1800s, the
	// most allowed).
	MaxTimeout time.Duration
	// MaxOutputBytes caps a result's JSON (64 KiB): stdout and stderr keep
	// their head and tail to fit. Pass the engine's limits.max_output_bytes.
	MaxOutputBytes int
	// Bwrap is the bwrap binary; default "bwrap" on PATH.
	Bwrap string

	// RunAs is the host user commands run as when brain runs as root:
	// "uid", "uid:gid" or user names; a uid alone takes that user's
	// primary group. Default nobody (65534 and its group). Workspaces
	// belong to it. Set while brain is not root, New fails: commands
	// then run as brain's own user.
	RunAs string

	// The limits below bind each command; a negative value turns one off.
	// All but the workspace's are rlimits set with prlimit (util-linux).

	// MaxProcesses bounds the processes and threads a command runs at
	// once (RLIMIT_NPROC, counted in the sandbox's user namespace on Linux
	// 5.14+; before, over every process of the host user); default 1024.
	MaxProcesses int
	// MaxMemoryBytes bounds each process's memory (RLIMIT_DATA: heap and
	// other private writable mappings, not reserved address space);
	// default 4 GiB.
	MaxMemoryBytes int64
	// MaxCPUSeconds bounds each process's CPU time (RLIMIT_CPU): SIGXCPU,
	// then SIGKILL a second later; default 600.
	MaxCPUSeconds int
	// MaxFileBytes bounds the size of each file a command writes
	// (RLIMIT_FSIZE), in /tmp too; default 1 GiB.
	MaxFileBytes int64
	// MaxWorkspaceBytes bounds a session's /workspace on disk, measured
	// after each command; over it, the call is a tool error naming the
	// budget; default 2 GiB.
	MaxWorkspaceBytes int64

	// Binds, when set, gives the host folders a command sees read-only,
	// by the call's agent (its skills, at /skills/<name>). Targets must be
	// absolute and outside /workspace, /tmp, /proc, /dev, /etc and /usr.
	Binds func(agent string) []Bind

	// ModCacheRoot, when set, keeps each agent's Go module downloads
	// (modcache.go); ModCacheBytes bounds each agent's (<= 0: no limit).
	ModCacheRoot  string
	ModCacheBytes int64

	runAs *hostUser // resolved from RunAs; nil unless brain runs as root
}

// ToolName is the name the sandbox's tool is offered under.
const ToolName = "sandbox_exec"

const (
	defaultTimeout = 120 * time.Second
	maxTimeout     = 1800 * time.Second
	defaultOutput  = 64 << 10
	minOutput      = 1 << 10
	// argMax is the kernel's limit on one exec argument (MAX_ARG_STRLEN).
	argMax = 128<<10 - 1
	// killGrace bounds each wait while a sandbox is being stopped.
	killGrace = 5 * time.Second
	// progressEvery is how often a long command reports that it still runs.
	progressEvery = 30 * time.Second
)

// Sandboxes runs sandbox_exec for every session.
type Sandboxes struct {
	cfg     Config
	bwrap   string
	prlimit string // found by New; see Config.rlimits
	setpriv string // found by New when root; see runas.go
	feat    features
	seccomp []byte // the filter bwrap loads (seccomp.go); nil without one
	etcDir  string
	sockDir string // the proxies' sockets, in proxy mode
	grace   time.Duration

	mu      sync.Mutex
	closed  bool
	boxes   map[string]*box
	running map[*proc]struct{}
	strays  []*proc // could not be confirmed stopped; killed again at Close
	calls   sync.WaitGroup
}

// box is one session's sandbox.
type box struct {
	sem       chan struct{} // one command at a time
	workspace string
	broken    bool          // guarded by sem: the last stop was not confirmed
	proxy     *egress.Proxy // in proxy mode
	sock      string        // the proxy's socket on the host
}

// New checks cfg, creates Root and checks that bwrap can create a sandbox
// here; the error says which package to install when it cannot.
func New(cfg Config) (*Sandboxes, error) {
	cfg, err := withDefaults(cfg)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(cfg.Root, 0o700); err != nil {
		return nil, fmt.Errorf("sandbox: create root: %w", err)
	}
	s := newSandboxes(cfg)
	s.seccomp = seccompProgram()
	if s.feat, err = s.probe(); err != nil {
		return nil, err
	}
	if err := s.writeEtc(s.etcDir, s.feat); err != nil {
		return nil, fmt.Errorf("sandbox: write /etc files: %w", err)
	}
	if cfg.Egress != nil {
		if err := s.probeEgress(); err != nil {
			s.Close()
			return nil, err
		}
	}
	return s, nil
}

func withDefaults(cfg Config) (Config, error) {
	if cfg.Root == "" {
		return cfg, errors.New("sandbox: root directory is not set")
	}
	root, err := filepath.Abs(cfg.Root)
	if err != nil {
		return cfg, fmt.Errorf("sandbox: root: %w", err)
	}
	cfg.Root = root
	if cfg.Bwrap == "" {
		cfg.Bwrap = "bwrap"
	}
	if cfg.DefaultTimeout == 0 {
		cfg.DefaultTimeout = defaultTimeout
	}
	if cfg.MaxTimeout == 0 {
		cfg.MaxTimeout = maxTimeout
	}
	if cfg.MaxOutputBytes == 0 {
		cfg.MaxOutputBytes = defaultOutput
	}
	switch {
	case cfg.MaxTimeout < time.Second || cfg.MaxTimeout > maxTimeout:
		return cfg, fmt.Errorf("sandbox: max timeout %s is not between 1s and %s", cfg.MaxTimeout, maxTimeout)
	case cfg.DefaultTimeout < time.Second || cfg.DefaultTimeout > cfg.MaxTimeout:
		return cfg, fmt.Errorf("sandbox: default timeout %s is not between 1s and the max timeout %s", cfg.DefaultTimeout, cfg.MaxTimeout)
	case cfg.MaxOutputBytes < minOutput:
		return cfg, fmt.Errorf("sandbox: max output bytes %d is under %d", cfg.MaxOutputBytes, minOutput)
	}
	limitDefaults(&cfg)
	if cfg.Egress != nil {
		if cfg.Network {
			return cfg, errors.New("sandbox: network is either the host's or the egress proxy, not both")
		}
		e := *cfg.Egress
		if err := checkEgress(&e); err != nil {
			return cfg, err
		}
		cfg.Egress = &e
	}
	cfg.runAs, err = resolveRunAs(cfg.RunAs)
	return cfg, err
}

func newSandboxes(cfg Config) *Sandboxes {
	return &Sandboxes{
		cfg:     cfg,
		bwrap:   cfg.Bwrap,
		prlimit: "prlimit",
		setpriv: "setpriv",
		etcDir:  filepath.Join(cfg.Root, ".etc"), // session dirs never start with '.'
		grace:   killGrace,
		boxes:   map[string]*box{},
		running: map[*proc]struct{}{},
	}
}

// Close stops every command still running, waits for their calls to
// return, and kills whatever could not be confirmed stopped. New commands
// are refused. Safe to call twice.
func (s *Sandboxes) Close() error {
	s.mu.Lock()
	s.closed = true
	for p := range s.running {
		p.shutdown()
	}
	s.mu.Unlock()
	done := make(chan struct{})
	go func() { s.calls.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(3 * s.grace):
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for p := range s.running {
		p.kill()
	}
	for _, p := range s.strays {
		p.kill()
	}
	s.closeProxies()
	return nil
}

type input struct {
	Command        string `json:"command"`
	TimeoutSeconds *int   `json:"timeoutSeconds"`
}

// Tool is the sandbox_exec definition.
func (s *Sandboxes) Tool() tools.Definition {
	net := "The network is off."
	if s.cfg.Network {
		net = "The network is on."
	} else if s.cfg.Egress != nil {
		net = egressText(s.cfg.Egress)
	}
	maxSec := int(s.cfg.MaxTimeout / time.Second)
	defSec := int(s.cfg.DefaultTimeout / time.Second)
	in := fmt.Sprintf(`{"type":"object","properties":{`+
		`"command":{"type":"string","minLength":1,"maxLength":100000,"description":"Shell command, run with /bin/sh -c in /workspace."},`+
		`"timeoutSeconds":{"type":"integer","minimum":1,"maximum":%d,"description":"Seconds before the command and everything it started are killed; default %d."}},`+
		`"required":["command"],"additionalProperties":false}`, maxSec, defSec)
	out := `{"type":"object","properties":{"exit_code":{"type":"integer"},"stdout":{"type":"string"},` +
		`"stderr":{"type":"string"},"truncated":{"type":"boolean"},"notice":{"type":"string"},"egress":{"type":"object"}},` +
		`"required":["exit_code","stdout","stderr","truncated"]}`
	return tools.Definition{
		Name: ToolName,
		Description: "Run a shell command in this session's Linux sandbox and get its exit_code, stdout and stderr " +
			"(long output keeps its head and tail). /workspace is the working directory and persists across " +
			"commands of this session; keep your files there. Everything else is read-only, except /tmp, which " +
			"is emptied after each command. Background processes end when the command ends. Installed tools " +
			"come from the host's /usr. " + net + s.cfg.limitsText(),
		Input:  json.RawMessage(in),
		Output: json.RawMessage(out),
		// Longer than any command may run, so the engine's deadline never
		// preempts this tool's own timeout and kill.
		Timeout: s.cfg.MaxTimeout + 4*s.grace + 30*time.Second,
		Run:     s.run,
	}
}

func (s *Sandboxes) run(ctx context.Context, call tools.Call) (json.RawMessage, error) {
	var in input
	if err := json.Unmarshal(call.Input, &in); err != nil {
		return nil, tools.Failed("sandbox_exec: input is not valid: %v", err)
	}
	timeout := s.cfg.DefaultTimeout
	if in.TimeoutSeconds != nil {
		t := time.Duration(*in.TimeoutSeconds) * time.Second
		if t < time.Second || t > s.cfg.MaxTimeout {
			return nil, tools.Failed("sandbox_exec: timeoutSeconds must be between 1 and %d", int(s.cfg.MaxTimeout/time.Second))
		}
		timeout = t
	}
	switch {
	case strings.TrimSpace(in.Command) == "":
		return nil, tools.Failed("sandbox_exec: command is empty")
	case strings.ContainsRune(in.Command, 0):
		return nil, tools.Failed("sandbox_exec: command contains a NUL byte")
	case len(in.Command) > argMax:
		return nil, tools.Failed("sandbox_exec: command is %d bytes, over the %d-byte limit; write a script to /workspace in smaller steps", len(in.Command), argMax)
	case call.SessionID == "":
		return nil, tools.Failed("sandbox_exec: the call has no session")
	}
	b, err := s.box(call.SessionID, call.Agent)
	if err != nil {
		return nil, err
	}
	select {
	case b.sem <- struct{}{}:
	case <-ctx.Done():
		return nil, tools.Failed("sandbox_exec: cancelled while waiting for this session's previous command; %s did not run", quote(in.Command))
	}
	defer func() { <-b.sem }()
	var notice string
	if b.broken {
		// The unconfirmed sandbox stays with s.strays; this command gets a
		// fresh one on the same workspace.
		b.broken = false
		notice = "the previous command's sandbox could not be confirmed stopped and was replaced by a fresh one; /workspace was kept, so files that command was still writing may be incomplete"
	}
	return s.exec(ctx, call, b, in.Command, timeout, notice)
}

// exec runs one command in a new bwrap and waits for it to exit, time
// out, be cancelled, or be stopped by Close.
func (s *Sandboxes) exec(ctx context.Context, call tools.Call, b *box, command string, timeout time.Duration, notice string) (json.RawMessage, error) {
	var binds []Bind
	if s.cfg.Binds != nil {
		binds = s.cfg.Binds(call.Agent)
		if err := checkBinds(binds); err != nil {
			return nil, tools.Failed("sandbox_exec: %v; %s did not run", err, quote(command))
		}
	}
	if bind, harvest, err := s.modCache(call.Agent, b.workspace); err != nil {
		return nil, tools.Failed("sandbox_exec: the module cache: %v; %s did not run", err, quote(command))
	} else if harvest != nil {
		binds = append(binds, bind)
		defer harvest()
	}
	args := s.args(s.feat, s.etcDir, b.workspace, b.sock, command, binds...)
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, tools.Failed("sandbox_exec: brain is shutting down; %s did not run", quote(command))
	}
	s.calls.Add(1)
	defer s.calls.Done()
	p, err := startProc(s.bwrap, args, s.sysProcAttr(s.feat), s.seccomp, s.cfg.MaxOutputBytes, s.grace)
	if err != nil {
		s.mu.Unlock()
		return nil, tools.Failed("sandbox_exec: could not start the sandbox: %v", err)
	}
	s.running[p] = struct{}{}
	s.mu.Unlock()

	began := time.Now()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	tick := time.NewTicker(progressEvery)
	defer tick.Stop()
	var why string // why the command was stopped; empty when it exited
wait:
	for {
		select {
		case <-p.exited:
			break wait
		case <-timer.C:
			why = fmt.Sprintf("timed out after %s", timeout)
		case <-ctx.Done():
			why = fmt.Sprintf("was cancelled after %s (%v)", since(began), context.Cause(ctx))
		case <-p.closing:
			why = fmt.Sprintf("was stopped after %s because brain is shutting down", since(began))
		case <-tick.C:
			_ = call.ReportProgress(ctx, map[string]any{"running_seconds": int(time.Since(began).Seconds()), "timeout_seconds": int(timeout.Seconds())})
			continue
		}
		break
	}
	if isClosed(p.exited) {
		// It exited as the timeout or cancel came: its result stands.
		why = ""
	}
	confirmed := p.stop()
	s.mu.Lock()
	delete(s.running, p)
	if !confirmed {
		s.strays = append(s.strays, p)
		b.broken = true
	}
	s.mu.Unlock()
	rep := b.report()
	if n := egressNote(rep); n != "" && why != "" {
		why += " (" + n + ")"
	}

	switch {
	case !confirmed && why == "":
		why = "ended"
		fallthrough
	case !confirmed:
		return nil, tools.Unknown("sandbox_exec: %s %s, and the sandbox could not be confirmed stopped: the outcome is unknown "+
			"and processes it started may still run. That sandbox runs no further command; the next command gets a fresh "+
			"sandbox with the same /workspace.\noutput so far: %s", quote(command), why, s.soFar(p))
	case why != "":
		return nil, tools.Failed("sandbox_exec: %s %s; it and every process it started were stopped. "+
			"Files it wrote in /workspace remain.\noutput so far: %s", quote(command), why, s.soFar(p))
	case !p.hasStarted():
		msg, _ := p.stderr.text(2000)
		return nil, tools.Failed("sandbox_exec: the sandbox could not be set up, %s did not run: %s", quote(command), strings.TrimSpace(msg))
	}
	r := result{ExitCode: p.exitCode(), Notice: notice, Egress: rep}
	over, err := s.overBudget(b.workspace)
	switch {
	case err != nil:
		return nil, tools.Failed("sandbox_exec: %s exited with %d, but the size of /workspace could not be measured against its budget: %v\noutput: %s",
			quote(command), r.ExitCode, err, s.soFar(p))
	case over != "":
		return nil, tools.Failed("sandbox_exec: %s exited with %d, but %s.\noutput: %s", quote(command), r.ExitCode, over, s.soFar(p))
	}
	return fit(&r, p.stdout, p.stderr, s.cfg.MaxOutputBytes), nil
}

// soFar is the output so far, for an error message.
func (s *Sandboxes) soFar(p *proc) string {
	return string(fit(&partial{}, p.stdout, p.stderr, s.cfg.MaxOutputBytes-1024))
}

// box returns the session's sandbox, creating its workspace (and, in
// proxy mode, its proxy) on first use.
func (s *Sandboxes) box(sessionID, agent string) (*box, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if b, ok := s.boxes[sessionID]; ok {
		return b, nil
	}
	ws := WorkspaceDir(s.cfg.Root, sessionID)
	if err := s.makeWorkspace(ws); err != nil {
		return nil, tools.Failed("sandbox_exec: could not create the session's workspace: %v", err)
	}
	b := &box{sem: make(chan struct{}, 1), workspace: ws}
	if s.cfg.Egress != nil && !s.closed {
		if err := s.startProxy(b, sessionID, agent); err != nil {
			return nil, tools.Failed("sandbox_exec: could not start the session's egress proxy: %v", err)
		}
	}
	s.boxes[sessionID] = b
	return b, nil
}
