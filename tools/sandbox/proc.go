package sandbox

import (
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// proc is one bwrap process: the sandbox one command runs in.
//
// How stopping is confirmed: bwrap runs the command under its own pid 1 in
// a new pid namespace and reports that pid 1 on the info fd. Killing pid 1
// makes the kernel kill every process in the namespace, detached ones
// included, and pid 1 does not finish exiting (becomes a zombie, or is
// reaped) until they are all gone. So once pid 1 is seen gone, every
// process the command started is gone.
type proc struct {
	cmd   *exec.Cmd
	grace time.Duration

	stdout, stderr *stream
	readers        sync.WaitGroup
	readEnds       []*os.File

	infoReady chan struct{} // closed once init is known, or known absent
	init      *os.Process   // the sandbox's pid 1 (pidfd-backed), or nil

	startDone chan struct{} // closed once the start byte came, or never will
	started   bool          // the sandbox was set up and the command began

	exited  chan struct{} // closed when bwrap exited
	closing chan struct{} // closed when brain shuts down
	once    sync.Once
}

// startProc starts bwrap with args and attr, capturing each output stream
// up to limit bytes. attr must put bwrap in its own process group, so the
// whole group can be killed at once.
// A non-nil seccomp is the filter program, on fd 5 (--seccomp 5).
func startProc(path string, args []string, attr *syscall.SysProcAttr, seccomp []byte, limit int, grace time.Duration) (*proc, error) {
	var files []*os.File // every pipe end, to close on failure
	pipe := func() (r, w *os.File, err error) {
		r, w, err = os.Pipe()
		if err == nil {
			files = append(files, r, w)
		}
		return r, w, err
	}
	fail := func(err error) (*proc, error) {
		for _, f := range files {
			f.Close()
		}
		return nil, err
	}
	outR, outW, err := pipe()
	if err != nil {
		return fail(err)
	}
	errR, errW, err := pipe()
	if err != nil {
		return fail(err)
	}
	infoR, infoW, err := pipe()
	if err != nil {
		return fail(err)
	}
	startR, startW, err := pipe()
	if err != nil {
		return fail(err)
	}
	cmd := exec.Command(path, args...)
	cmd.Env = []string{} // bwrap itself gets none of brain's environment either
	cmd.Stdout, cmd.Stderr = outW, errW
	cmd.ExtraFiles = []*os.File{infoW, startW} // fds 3 and 4
	parentEnds := []*os.File{outW, errW, infoW, startW}
	if seccomp != nil {
		filter, err := seccompFile(seccomp)
		if err != nil {
			return fail(err)
		}
		files = append(files, filter)
		cmd.ExtraFiles = append(cmd.ExtraFiles, filter) // fd 5
		parentEnds = append(parentEnds, filter)
	}
	cmd.SysProcAttr = attr
	if err := cmd.Start(); err != nil {
		return fail(err)
	}
	for _, w := range parentEnds {
		w.Close()
	}
	p := &proc{
		cmd: cmd, grace: grace,
		stdout: newStream(limit), stderr: newStream(limit),
		readEnds:  []*os.File{outR, errR},
		infoReady: make(chan struct{}),
		startDone: make(chan struct{}),
		exited:    make(chan struct{}),
		closing:   make(chan struct{}),
	}
	p.readers.Add(2)
	go p.copy(p.stdout, outR)
	go p.copy(p.stderr, errR)
	go p.readInfo(infoR)
	go p.readStart(startR)
	go func() {
		_ = cmd.Wait() // the exit status is read from cmd.ProcessState
		close(p.exited)
	}()
	return p, nil
}

func (p *proc) copy(dst *stream, src *os.File) {
	defer p.readers.Done()
	_, _ = io.Copy(dst, src) // ends at EOF, or when stop closes src
}

func (p *proc) readInfo(r *os.File) {
	defer r.Close()
	var info struct {
		ChildPID int `json:"child-pid"`
	}
	// Decode returns at the end of the first object, without waiting for
	// EOF (pid 1 keeps the fd open).
	if err := json.NewDecoder(io.LimitReader(r, 64<<10)).Decode(&info); err == nil && info.ChildPID > 0 {
		if init, err := os.FindProcess(info.ChildPID); err == nil {
			p.init = init
		}
	}
	close(p.infoReady)
}

func (p *proc) readStart(r *os.File) {
	defer r.Close()
	var b [1]byte
	n, _ := r.Read(b[:])
	p.started = n == 1
	close(p.startDone)
}

// hasStarted reports whether the command began running. When that cannot
// be told it says yes, the cautious answer.
func (p *proc) hasStarted() bool {
	select {
	case <-p.startDone:
		return p.started
	case <-time.After(p.grace):
		return true
	}
}

// exitCode is the command's exit status as a shell reports it.
func (p *proc) exitCode() int {
	st := p.cmd.ProcessState
	if st == nil {
		return -1
	}
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return st.ExitCode()
}

// stop kills the sandbox and everything in it, and reports whether that is
// confirmed. It is also the clean-up after a command exits on its own:
// background processes it left behind end with it. Call it once.
func (p *proc) stop() (confirmed bool) {
	select {
	case <-p.infoReady:
	case <-time.After(p.grace):
	}
	var init *os.Process
	select {
	case <-p.infoReady:
		init = p.init
	default:
	}
	exitedByItself := isClosed(p.exited)
	if init != nil {
		_ = init.Kill() // fails only when it is gone already
	}
	p.killBwrap()
	if init != nil {
		confirmed = p.waitGone(init)
	} else {
		// No pid 1 reported: bwrap stopped before it released a sandbox,
		// or it is stuck and nothing can be said about what runs.
		confirmed = exitedByItself
	}
	p.wait(p.exited)
	if confirmed {
		// Every writer is gone: the readers reach EOF.
		done := make(chan struct{})
		go func() { p.readers.Wait(); close(done) }()
		p.wait(done)
	}
	for _, r := range p.readEnds {
		r.Close()
	}
	if confirmed && init != nil {
		_ = init.Release()
	}
	return confirmed
}

// kill is the last resort for a sandbox that could not be confirmed
// stopped: kill what can be reached, without waiting.
func (p *proc) kill() {
	select {
	case <-p.infoReady:
		if p.init != nil {
			_ = p.init.Kill()
		}
	default:
	}
	p.killBwrap()
}

// killBwrap kills bwrap and its process group. The group is only killed
// while bwrap is not yet reaped: after that its number may be reused.
// Losing bwrap kills the sandbox too (--die-with-parent).
func (p *proc) killBwrap() {
	if !isClosed(p.exited) {
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	}
	_ = p.cmd.Process.Kill() // a pidfd: safe after reaping
}

func (p *proc) shutdown() { p.once.Do(func() { close(p.closing) }) }

func (p *proc) wait(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	case <-time.After(p.grace):
		return false
	}
}

// waitGone polls until init is gone or a zombie, for at most the grace.
func (p *proc) waitGone(init *os.Process) bool {
	deadline := time.Now().Add(p.grace)
	for {
		if gone(init) {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// gone reports whether a process has finished: reaped, or a zombie. The
// handle is a pidfd on Linux 5.3+, so a reused pid cannot be mistaken
// for it: the second Signal(0) proves the pid was still this process when
// its state was read.
func gone(p *os.Process) bool {
	if err := p.Signal(syscall.Signal(0)); err != nil {
		return errors.Is(err, os.ErrProcessDone) || errors.Is(err, syscall.ESRCH)
	}
	zombie := procState(p.Pid) == 'Z'
	if err := p.Signal(syscall.Signal(0)); err != nil {
		return errors.Is(err, os.ErrProcessDone) || errors.Is(err, syscall.ESRCH)
	}
	return zombie
}

// procState is the state letter of /proc/<pid>/stat, 0 if unreadable.
func procState(pid int) byte {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	// The command name is in parentheses and may hold anything; the state
	// follows the last ')'.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 || i+2 >= len(s) {
		return 0
	}
	return s[i+2]
}

func isClosed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}
