package main

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
	"syscall"
	"time"
)

// cluster is a PostgreSQL server for the load script. Unlike the tests'
// throwaway cluster (store/postgres/pgtest, fsync off) it keeps
// PostgreSQL's durable defaults (fsync, synchronous_commit on), so its
// numbers compare with SQLite at synchronous=full: every ack is on disk.
type cluster struct {
	dir, sock string
	bin       string
	cred      *syscall.Credential
	cmd       *exec.Cmd
}

// statements loads pg_stat_statements (it costs a little on every
// statement, so only when asked).
func startCluster(ctx context.Context, dir string, statements bool) (*cluster, error) {
	bins, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Strings(bins)
	if len(bins) == 0 {
		return nil, errors.New("no /usr/lib/postgresql/*/bin: install Debian's postgresql package")
	}
	c := &cluster{dir: dir, sock: filepath.Join(dir, "sock"), bin: bins[len(bins)-1]}
	if os.Geteuid() == 0 {
		// PostgreSQL refuses to run as root.
		u, err := user.Lookup("postgres")
		if err != nil {
			return nil, fmt.Errorf("running as root and no postgres user: %w", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		c.cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
	}
	if err := os.MkdirAll(c.sock, 0o700); err != nil {
		return nil, err
	}
	if c.cred != nil {
		for _, d := range []string{filepath.Dir(dir), dir, c.sock} {
			if err := os.Chown(d, int(c.cred.Uid), int(c.cred.Gid)); err != nil {
				return nil, err
			}
		}
	}
	data := filepath.Join(dir, "data")
	if out, err := c.command(ctx, "initdb", "-D", data, "-U", "postgres", "--auth=trust", "--encoding=UTF8", "--locale=C.UTF-8").CombinedOutput(); err != nil {
		return nil, fmt.Errorf("initdb: %w\n%s", err, out)
	}
	logf, err := os.Create(filepath.Join(dir, "postgres.log"))
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	args := []string{"-D", data, "-k", c.sock, "-c", "listen_addresses=", "-c", "max_connections=400", "-c", "shared_buffers=256MB"}
	if statements {
		args = append(args, "-c", "shared_preload_libraries=pg_stat_statements")
	}
	c.cmd = c.command(context.Background(), "postgres", args...)
	c.cmd.Stdout, c.cmd.Stderr = logf, logf
	c.cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	if err := c.cmd.Start(); err != nil {
		return nil, err
	}
	for i := 0; ; i++ {
		if err := c.psql(ctx, "SELECT 1"); err == nil {
			return c, nil
		} else if i > 300 {
			c.stop()
			log, _ := os.ReadFile(filepath.Join(dir, "postgres.log"))
			return nil, fmt.Errorf("postgres not ready: %v\n%s", err, log)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (c *cluster) command(ctx context.Context, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, filepath.Join(c.bin, name), args...)
	cmd.Dir = c.dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: c.cred}
	return cmd
}

func (c *cluster) psql(ctx context.Context, sql string) error {
	out, err := c.command(ctx, "psql", "-h", c.sock, "-U", "postgres", "-d", "postgres", "-v", "ON_ERROR_STOP=1", "-qAtc", sql).CombinedOutput()
	if err != nil {
		return fmt.Errorf("psql %q: %w: %s", sql, err, out)
	}
	return nil
}

// queryInt runs a query that returns one integer.
func (c *cluster) queryInt(ctx context.Context, sql string) (int64, error) {
	out, err := c.command(ctx, "psql", "-h", c.sock, "-U", "postgres", "-d", "postgres", "-v", "ON_ERROR_STOP=1", "-qAtc", sql).Output()
	if err != nil {
		return 0, fmt.Errorf("psql %q: %w", sql, err)
	}
	return strconv.ParseInt(strings.TrimSpace(string(out)), 10, 64)
}

// commits is how many transactions database name committed so far (the
// statistics lag by up to a second).
func (c *cluster) commits(ctx context.Context, name string) (int64, error) {
	return c.queryInt(ctx, "SELECT xact_commit FROM pg_stat_database WHERE datname = '"+name+"'")
}

// resetStatements starts pg_stat_statements afresh.
func (c *cluster) resetStatements(ctx context.Context) error {
	return c.psql(ctx, "CREATE EXTENSION IF NOT EXISTS pg_stat_statements; SELECT pg_stat_statements_reset()")
}

// statements is the top n statements database name ran since the last
// reset, by calls, each with its calls per turn.
func (c *cluster) statements(ctx context.Context, name string, n, turns int) (string, error) {
	sql := fmt.Sprintf(`SELECT round(s.calls::numeric / %d, 2) || '  ' || left(regexp_replace(s.query, '\s+', ' ', 'g'), 150)
		FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid
		WHERE d.datname = '%s' ORDER BY s.calls DESC LIMIT %d`, turns, name, n)
	out, err := c.command(ctx, "psql", "-h", c.sock, "-U", "postgres", "-d", "postgres", "-v", "ON_ERROR_STOP=1", "-qAtc", sql).Output()
	if err != nil {
		return "", fmt.Errorf("psql %q: %w", sql, err)
	}
	return string(out), nil
}

// dsn of database name; pool_max_conns sizes each replica's pgx pool.
func (c *cluster) dsn(name string) string {
	return fmt.Sprintf("host=%s user=postgres dbname=%s sslmode=disable pool_max_conns=32", c.sock, name)
}

// pid is the postmaster's: every server process of the cluster is its
// child.
func (c *cluster) pid() int { return c.cmd.Process.Pid }

func (c *cluster) stop() {
	if c.cmd != nil && c.cmd.Process != nil {
		c.cmd.Process.Signal(syscall.SIGQUIT) //nolint:errcheck // already gone is fine
		c.cmd.Wait()                          //nolint:errcheck // stopping
	}
}
