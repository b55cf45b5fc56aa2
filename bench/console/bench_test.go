package consolebench

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // database/sql's "pgx", for the bulk copy

	"brain/bot/web"
	"brain/engine"
	"brain/store"
	"brain/store/postgres"
	"brain/store/postgres/pgtest"
	"brain/store/sqlite"
	"brain/store/storetest/bulk"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

const (
	// sessions is how many sessions the store holds.
	sessions = 100_000
	// bigEvents is the length of the log of the session whose page is timed.
	bigEvents = 100_000
	// word is in the template session's first message; copy i has word+i.
	word = "zqxorder"
)

// echo is a model that is never called: the benchmark reads, it runs no turn.
type echo struct{}

func (echo) Generate(context.Context, engine.ModelRequest) (engine.ModelResponse, error) {
	return engine.ModelResponse{Text: "noted"}, nil
}

// consoleEngine is the engine as the console asks for it (bot/console.go).
type consoleEngine struct{ *engine.Engine }

func (e consoleEngine) Deltas(id string) web.DeltaFeed { return e.WatchDeltas(id) }

// BenchmarkConsole_100kSessions times the first byte of the console's
// sessions list, a search by a word of one message among 100,000 sessions,
// and the page of a session of 100,000 events, over real HTTP on each
// store. The floors (html/template writing the same pages' templates with
// the rows in memory) are bot/web's BenchmarkFloor_* run beside it.
func BenchmarkConsole_100kSessions(b *testing.B) {
	for _, driver := range []string{"sqlite", "postgres"} {
		b.Run("store="+driver, func(b *testing.B) {
			base, tmpl, big := build(b, driver)
			pages := []struct{ name, path, want string }{
				{"list", "/sessions", big},
				{"search", "/sessions?q=" + word + "4242", tmpl + "_4242"},
				// A word every session has: the newest 25 of 100,000 matches.
				{"search_common", "/sessions?q=refund", big},
				{"session_100k_events", "/sessions/" + big, "turn 14284"},
			}
			for _, p := range pages {
				b.Run("page="+p.name, func(b *testing.B) { timeFirstByte(b, base+p.path, p.want) })
			}
		})
	}
}

// timeFirstByte GETs url b.N times, checking each answer, and reports the
// median and slowest time to the first byte of the response.
func timeFirstByte(b *testing.B, url, want string) {
	var firsts []time.Duration
	for i := 0; i < b.N; i++ {
		var start time.Time
		var first time.Duration
		trace := &httptrace.ClientTrace{GotFirstResponseByte: func() { first = time.Since(start) }}
		req, err := http.NewRequestWithContext(httptrace.WithClientTrace(context.Background(), trace), "GET", url, nil)
		if err != nil {
			b.Fatal(err)
		}
		start = time.Now()
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			b.Fatal(err)
		}
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), want) {
			b.Fatalf("GET %s: %d, %d bytes, no %q", url, resp.StatusCode, len(body), want)
		}
		firsts = append(firsts, first)
		b.SetBytes(int64(len(body)))
	}
	slices.Sort(firsts)
	b.ReportMetric(float64(firsts[len(firsts)/2].Microseconds())/1000, "ms-first-byte-p50")
	b.ReportMetric(float64(firsts[len(firsts)-1].Microseconds())/1000, "ms-first-byte-max")
}

// build fills a store of driver with 100,000 sessions and one of 100,000
// events and serves the console over it; it returns the console's URL
// and the ids of the template session and the long one.
func build(b *testing.B, driver string) (base, tmpl, big string) {
	b.Helper()
	ctx := context.Background()
	var (
		st      store.Store
		db      *sql.DB
		dialect bulk.Dialect
		err     error
	)
	switch driver {
	case "sqlite":
		path := filepath.Join(b.TempDir(), "b.db")
		if st, err = sqlite.Open(ctx, path); err == nil {
			db, err = sql.Open("sqlite3", "file:"+path+"?_busy_timeout=10000")
		}
	default:
		dsn := pgtest.NewDatabase(b)
		if st, err = postgres.Open(ctx, dsn); err == nil {
			db, err = sql.Open("pgx", dsn)
		}
		dialect = bulk.Postgres
	}
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	defer db.Close()

	var ids atomic.Int64
	eng, err := engine.New(engine.Config{
		Store: st, Clock: time.Now,
		NewID:  func(p string) string { return fmt.Sprintf("%s_%d", p, ids.Add(1)) },
		Agents: []*engine.Agent{{Name: "a", Model: echo{}, ContextWindow: 4096, MaxTokens: 1024}},
	})
	if err != nil {
		b.Fatal(err)
	}
	if err := eng.Start(ctx); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { eng.Stop(context.Background()) })

	started := time.Now()
	tmpl = create(b, eng, st, "tmpl", 1)
	if err := bulk.CopySession(ctx, db, dialect, tmpl, sessions-2, word); err != nil {
		b.Fatal(err)
	}
	copied := time.Since(started)
	big = create(b, eng, st, "big", bigEvents/eventsPerTurn)
	b.Logf("%s: %d sessions copied in %s, %d events in %s", driver, sessions-2, copied.Round(time.Millisecond),
		bigEvents, (time.Since(started) - copied).Round(time.Millisecond))

	srv, err := web.New(web.Config{Engine: consoleEngine{eng}, Search: st})
	if err != nil {
		b.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	b.Cleanup(hs.Close)
	return hs.URL, tmpl, big
}

// eventsPerTurn is how many events seedTurns writes a turn.
const eventsPerTurn = 7

// create makes a session through the engine and writes turns of
// completed one-tool turns to it through the store, as the engine would
// have, 500 events a commit.
func create(b *testing.B, eng *engine.Engine, st store.Store, name string, turns int) string {
	b.Helper()
	ctx := context.Background()
	ss, _, err := eng.CreateSession(ctx, engine.NewSession{Agent: "a", Origin: engine.OriginAPI, StartedBy: "ada", IdempotencyKey: name})
	if err != nil {
		b.Fatal(err)
	}
	id := ss.ID
	var batch []engine.Event
	var seq, checkpoint, cursor int64
	add := func(turnID string, p engine.Payload) {
		ev, err := engine.NewEvent(p)
		if err != nil {
			b.Fatal(err)
		}
		seq++
		ev.ID, ev.TurnID = fmt.Sprintf("%s_ev_%d", name, seq), turnID
		batch = append(batch, ev)
	}
	flush := func() {
		if len(batch) == 0 {
			return
		}
		cp, cur := checkpoint, cursor
		if _, err := st.Commit(ctx, engine.Commit{SessionID: id, Now: time.Now(), Events: batch, Update: func(s *engine.Session) error {
			s.Checkpoint, s.InputCursor = cp, cur
			return nil
		}}); err != nil {
			b.Fatal(err)
		}
		batch = batch[:0]
	}
	for t := 0; t < turns; t++ {
		tid := fmt.Sprintf("%s_turn_%d", name, t)
		add("", engine.Input{Text: fmt.Sprintf("Please look at the refund of %s (turn %d).", word, t), Author: "ada"})
		cursor = seq
		add(tid, engine.TurnStarted{InputIDs: []string{fmt.Sprintf("%s_ev_%d", name, seq)}})
		call := fmt.Sprintf("call_%d", t)
		add(tid, engine.ToolCall{ID: call, Name: "lookup", Input: []byte(fmt.Sprintf(`{"order":%d,"deep":true}`, t))})
		add(tid, engine.ToolCallResult{CallID: call, Name: "lookup", Result: engine.ToolResultBody{Content: []engine.TextPart{{Type: "text", Text: `{"status":"open","owner":"ada"}`}}}})
		add(tid, engine.AgentMessage{Text: fmt.Sprintf("Order %d is *open*; the owner is ada.", t)})
		add(tid, engine.TurnCompleted{Outcome: engine.OutcomeCompleted, Rounds: 1, Usage: engine.Usage{InputTokens: 100, OutputTokens: 20}})
		checkpoint = seq
		add(tid, engine.SessionStatus{Status: engine.StatusIdle, Reason: "turn_completed"})
		if len(batch) >= 500 {
			flush()
		}
	}
	flush()
	return id
}
