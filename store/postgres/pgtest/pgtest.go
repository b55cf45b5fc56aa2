// Package pgtest starts a throwaway PostgreSQL cluster for tests: initdb
// in a temporary directory, postgres listening on a unix socket there only
// (no TCP port to collide on), stopped and deleted when the tests end. When
// the tests run as root it runs the server as the `postgres` system user
// the Debian package creates, since PostgreSQL refuses to run as root.
//
// A test package runs it from TestMain (pgtest.Main) and asks for a fresh
// database per test (pgtest.NewDatabase). When PostgreSQL cannot be
// started the tests skip, saying why, unless CI or BRAIN_REQUIRE_POSTGRES
// is set: then they fail, so CI never passes by skipping them.
//
// It imports no brain package.
package pgtest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

// Server is one running cluster. Its superuser is "postgres", trusted on
// the socket.
type Server struct {
	dir     string // removed by Stop
	dataDir string
	sockDir string
	cmd     *exec.Cmd
	exited  chan struct{} // closed when the postgres process ends
	bin     string
	cred    *syscall.Credential

	mu    sync.Mutex // serialises admin; a pgx.Conn is not concurrency-safe
	admin *pgx.Conn
	next  int // numbers databases

	// durable: commits are acknowledged only once their WAL reached the
	// kernel (synchronous_commit on), so Restart loses none (StartDurable).
	durable bool
}

// port names the socket file (.s.PGSQL.port); nothing listens on TCP.
const port = 5432

// Start runs initdb in a new temporary directory and starts postgres on a
// socket inside it, returning once it accepts connections.
func Start(ctx context.Context) (*Server, error) { return startServer(ctx, false) }

// StartDurable is Start for a server that Restart will stop: its commits
// are acknowledged only once their WAL was written. Start's servers run
// with synchronous_commit off, which acknowledges a commit before the WAL
// writer (every 200 ms) writes it; an immediate shutdown then loses the
// last acknowledged commits, and a test of outages would see acknowledged
// input vanish from the log, a loss a real server (synchronous_commit on)
// never makes.
func StartDurable(ctx context.Context) (*Server, error) { return startServer(ctx, true) }

func startServer(ctx context.Context, durable bool) (*Server, error) {
	bin, err := findBin()
	if err != nil {
		return nil, err
	}
	cred, err := credential()
	if err != nil {
		return nil, err
	}
	// A short path: the socket's full name must fit in 107 bytes.
	dir, err := os.MkdirTemp("", "brain-pg-")
	if err != nil {
		return nil, fmt.Errorf("pgtest: %w", err)
	}
	s := &Server{dir: dir, dataDir: filepath.Join(dir, "data"), sockDir: filepath.Join(dir, "sock"), exited: make(chan struct{}),
		bin: bin, cred: cred, durable: durable}
	if err := s.start(ctx, bin, cred); err != nil {
		s.Stop()
		return nil, err
	}
	return s, nil
}

func (s *Server) start(ctx context.Context, bin string, cred *syscall.Credential) error {
	if err := os.Mkdir(s.sockDir, 0o700); err != nil {
		return fmt.Errorf("pgtest: %w", err)
	}
	if cred != nil {
		for _, d := range []string{s.dir, s.sockDir} {
			if err := os.Chown(d, int(cred.Uid), int(cred.Gid)); err != nil {
				return fmt.Errorf("pgtest: give %s to postgres: %w", d, err)
			}
		}
	}
	initdb := s.command(ctx, cred, filepath.Join(bin, "initdb"),
		"-D", s.dataDir, "-U", "postgres", "--auth=trust", "--encoding=UTF8", "--locale=C.UTF-8", "--no-sync")
	if out, err := initdb.CombinedOutput(); err != nil {
		return fmt.Errorf("pgtest: initdb: %w\n%s", err, out)
	}

	return s.launch(ctx)
}

// launch starts postgres on the cluster initdb made and waits until it
// accepts connections.
func (s *Server) launch(ctx context.Context) error {
	bin, cred := s.bin, s.cred
	logPath := filepath.Join(s.dir, "postgres.log")
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("pgtest: %w", err)
	}
	defer logFile.Close()
	// Durability against a machine crash is not under test: fsync off
	// makes CREATE DATABASE and commits cheap (the kernel keeps what a
	// killed server wrote). max_connections covers every pool of a test run.
	syncCommit := "synchronous_commit=off"
	if s.durable {
		syncCommit = "synchronous_commit=on"
	}
	s.cmd = s.command(context.Background(), cred, filepath.Join(bin, "postgres"),
		"-D", s.dataDir, "-k", s.sockDir, "-p", strconv.Itoa(port),
		"-c", "listen_addresses=", "-c", "fsync=off", "-c", syncCommit,
		"-c", "full_page_writes=off", "-c", "max_connections=200")
	s.cmd.Stdout, s.cmd.Stderr = logFile, logFile
	// The server dies with the test binary, even when that is killed.
	s.cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	if err := s.cmd.Start(); err != nil {
		return fmt.Errorf("pgtest: start postgres: %w", err)
	}
	cmd, exited := s.cmd, s.exited
	go func() { cmd.Wait(); close(exited) }() //nolint:errcheck // a server that stops early is reported by the wait below

	deadline := time.Now().Add(30 * time.Second)
	for {
		conn, err := pgx.Connect(ctx, s.DSN("postgres"))
		if err == nil {
			s.admin = conn
			return nil
		}
		select {
		case <-exited:
			log, _ := os.ReadFile(logPath)
			return fmt.Errorf("pgtest: postgres exited: %s", log)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(logPath)
			return fmt.Errorf("pgtest: postgres not ready after 30s: %v\n%s", err, log)
		}
	}
}

// Restart stops the server at once (immediate shutdown: every connection
// is cut, as in a crash), keeps it down for down, and starts it again on
// the same data. It returns once the server accepts connections again.
// Not for the shared server of Main: other tests' stores would see the
// outage too.
func (s *Server) Restart(ctx context.Context, down time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.admin != nil {
		s.admin.Close(ctx) //nolint:errcheck // the server goes next
		s.admin = nil
	}
	s.cmd.Process.Signal(syscall.SIGQUIT) //nolint:errcheck // already gone is fine
	<-s.exited
	time.Sleep(down)
	s.exited = make(chan struct{})
	return s.launch(ctx)
}

// command runs name as the server's user: postgres when we are root.
func (s *Server) command(ctx context.Context, cred *syscall.Credential, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = s.dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	// libpq and initdb read PG* variables; none may point elsewhere.
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PG") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	return cmd
}

// DSN is the connection string of database name.
func (s *Server) DSN(name string) string {
	return fmt.Sprintf("host=%s port=%d user=postgres dbname=%s sslmode=disable", s.sockDir, port, name)
}

// CreateDatabase creates an empty database and returns its DSN.
func (s *Server) CreateDatabase(ctx context.Context) (name, dsn string, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.next++
	name = fmt.Sprintf("brain_test_%d", s.next)
	if _, err := s.admin.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		return "", "", fmt.Errorf("pgtest: create database %s: %w", name, err)
	}
	return name, s.DSN(name), nil
}

// DropDatabase drops a database CreateDatabase made, closing any
// connection still open on it.
func (s *Server) DropDatabase(ctx context.Context, name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := s.admin.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
		return fmt.Errorf("pgtest: drop database %s: %w", name, err)
	}
	return nil
}

// Stop stops the server at once (nothing in it is kept) and deletes its
// directory. It is safe to call on a server that failed to start.
func (s *Server) Stop() {
	if s.admin != nil {
		s.admin.Close(context.Background()) //nolint:errcheck // the server goes next
	}
	if s.cmd != nil && s.cmd.Process != nil {
		// SIGQUIT is PostgreSQL's immediate shutdown.
		s.cmd.Process.Signal(syscall.SIGQUIT) //nolint:errcheck // already gone is fine
		select {
		case <-s.exited:
		case <-time.After(10 * time.Second):
			s.cmd.Process.Kill() //nolint:errcheck // already gone is fine
			<-s.exited
		}
	}
	os.RemoveAll(s.dir)
}

// findBin returns the directory of initdb and postgres: the newest
// /usr/lib/postgresql/N/bin (Debian's layout; its binaries are not on PATH),
// else the directory of a postgres on PATH.
func findBin() (string, error) {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return version(dirs[i]) > version(dirs[j]) })
	for _, d := range dirs {
		if isFile(filepath.Join(d, "postgres")) && isFile(filepath.Join(d, "initdb")) {
			return d, nil
		}
	}
	if p, err := exec.LookPath("postgres"); err == nil {
		if real, err := filepath.EvalSymlinks(p); err == nil {
			p = real
		}
		d := filepath.Dir(p)
		if isFile(filepath.Join(d, "initdb")) {
			return d, nil
		}
	}
	return "", errors.New("pgtest: no PostgreSQL server binaries (initdb, postgres) in /usr/lib/postgresql/*/bin or on PATH; install Debian's postgresql package")
}

// version reads N from /usr/lib/postgresql/N/bin.
func version(binDir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return n
}

func isFile(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}

// credential is the postgres system user's when running as root, nil (run
// as ourselves) otherwise.
func credential() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("pgtest: running as root and there is no postgres user to run the server as: %w", err)
	}
	uid, err := strconv.ParseUint(u.Uid, 10, 32)
	if err != nil {
		return nil, fmt.Errorf("pgtest: postgres uid %q: %w", u.Uid, err)
	}
	gid, err := strconv.ParseUint(u.Gid, 10, 32)
	if err != nil {
		return nil, fmt.Errorf("pgtest: postgres gid %q: %w", u.Gid, err)
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}
