package connect_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"brain/bot/connect"
	"brain/internal/oauthclient"
	"brain/internal/startstop/startstoptest"
	"brain/store"
	"brain/store/postgres"
	"brain/store/postgres/pgtest"
	"brain/store/sqlite"
)

// tokenServer is GitHub's token endpoint for GitHub App user tokens:
// refresh tokens rotate (a used one is refused with 200
// bad_refresh_token, as GitHub answers), and it counts the refreshes of
// each person's grant.
type tokenServer struct {
	srv *httptest.Server

	mu        sync.Mutex
	n         int
	live      map[string]string // live refresh token -> person
	refreshes map[string]int    // person -> refreshes
}

func newTokenServer(t *testing.T) *tokenServer {
	t.Helper()
	ts := &tokenServer{live: map[string]string{}, refreshes: map[string]int{}}
	ts.srv = httptest.NewServer(http.HandlerFunc(ts.token))
	t.Cleanup(ts.srv.Close)
	return ts
}

func (ts *tokenServer) token(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	if err := r.ParseForm(); err != nil || r.PostForm.Get("grant_type") != "refresh_token" || r.PostForm.Get("client_id") != "Iv1.client" {
		_ = json.NewEncoder(w).Encode(map[string]any{"error": "incorrect_client_credentials"})
		return
	}
	ts.mu.Lock()
	defer ts.mu.Unlock()
	person, ok := ts.live[r.PostForm.Get("refresh_token")]
	if !ok {
		_ = json.NewEncoder(w).Encode(map[string]any{"error": "bad_refresh_token", "error_description": "The refresh token passed is incorrect or expired."})
		return
	}
	delete(ts.live, r.PostForm.Get("refresh_token"))
	ts.refreshes[person]++
	ts.n++
	rt := fmt.Sprintf("ghr_%s_%d", person, ts.n)
	ts.live[rt] = person
	_ = json.NewEncoder(w).Encode(map[string]any{"access_token": fmt.Sprintf("ghu_%s_%d", person, ts.n), "expires_in": 28800,
		"refresh_token": rt, "refresh_token_expires_in": 15897600, "scope": "", "token_type": "bearer"})
}

// grant makes a live refresh token for person, as a finished connect flow.
func (ts *tokenServer) grant(person string) string {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	ts.n++
	rt := fmt.Sprintf("ghr_%s_%d", person, ts.n)
	ts.live[rt] = person
	return rt
}

func (ts *tokenServer) counts() map[string]int {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	out := map[string]int{}
	for k, v := range ts.refreshes {
		out[k] = v
	}
	return out
}

// clock is a settable clock shared by the replicas.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// syncBuffer is a log both replicas write to.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// replica is one process's connect service and refresh worker over its
// own handle on the shared database.
func replica(ts *tokenServer, st store.Connections, clk *clock, logs *syncBuffer, n int) *connect.Refresher {
	log := slog.New(slog.NewTextHandler(logs, nil))
	svc := &connect.Service{Store: st, Now: clk.Now, Log: log, Providers: map[string]connect.Provider{
		"github": {Name: "github", PerPerson: true,
			Client:    &oauthclient.Client{ClientID: "Iv1.client", ClientSecret: "secret", Now: clk.Now},
			Endpoints: &connect.Endpoints{Issuer: ts.srv.URL, AuthorizeURL: ts.srv.URL + "/authorize", TokenURL: ts.srv.URL + "/token"}},
	}}
	id := 0
	svc.NewID = func() string { id++; return fmt.Sprintf("conn-%d-%d", n, id) }
	return &connect.Refresher{Service: svc, Log: log}
}

var people = []string{"alice", "bob", "carol", "dan", "erin"}

// testRefreshAcrossReplicas: two workers on one database refresh each
// connection about to expire exactly once between them (the token
// server counts); a connection whose refresh token expired is revoked
// without a request, logged once, and its person is told why.
func testRefreshAcrossReplicas(t *testing.T, open func() store.Connections) {
	ctx := context.Background()
	ts := newTokenServer(t)
	clk := &clock{now: time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC)}
	logs := &syncBuffer{}
	workers := []*connect.Refresher{replica(ts, open(), clk, logs, 1), replica(ts, open(), clk, logs, 2)}
	for _, p := range people {
		tok := oauthclient.Token{AccessToken: "ghu_first_" + p, RefreshToken: ts.grant(p), ExpiresAt: clk.Now().Add(8 * time.Hour),
			RefreshExpiresAt: clk.Now().Add(180 * 24 * time.Hour)}
		if err := workers[0].Service.Tokens(p, "github").Save(ctx, tok); err != nil {
			t.Fatal(err)
		}
	}
	// Nothing is due yet.
	if n, err := workers[1].RefreshDue(ctx); n != 0 || err != nil {
		t.Fatalf("a pass 8 hours ahead refreshed %d (%v)", n, err)
	}
	if len(ts.counts()) != 0 {
		t.Fatal("refreshed a token far from expiry")
	}

	// Ten minutes before expiry both workers pass at once, several times.
	clk.add(8*time.Hour - 10*time.Minute)
	var wg sync.WaitGroup
	total := make([]int, 2*len(workers))
	for i := range total {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n, err := workers[i%2].RefreshDue(ctx)
			if err != nil {
				t.Errorf("worker %d: %v", i%2, err)
			}
			total[i] = n
		}()
	}
	wg.Wait()
	sum := 0
	for _, n := range total {
		sum += n
	}
	counts := ts.counts()
	for _, p := range people {
		if counts[p] != 1 {
			t.Errorf("%s refreshed %d times, want 1 (all: %v)", p, counts[p], counts)
		}
	}
	if sum != len(people) {
		t.Errorf("the workers report %d refreshes, want %d", sum, len(people))
	}
	for _, w := range workers {
		for _, p := range people {
			tok, err := w.Service.AccessToken(ctx, p, "github")
			if err != nil || !strings.HasPrefix(tok, "ghu_"+p+"_") {
				t.Fatalf("%s's token after the refresh: %q %v", p, tok, err)
			}
		}
	}
	if c := ts.counts(); len(c) != len(people) || c["alice"] != 1 {
		t.Fatalf("reading the tokens refreshed again: %v", c)
	}

	// Past the refresh tokens' lifetime (nobody used them): revoked, no
	// request sent, logged once; the person is told why.
	clk.add(200 * 24 * time.Hour)
	for _, w := range workers {
		if _, err := w.RefreshDue(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if c := ts.counts(); c["alice"] != 1 {
		t.Fatalf("an expired refresh token was sent: %v", c)
	}
	var nc *connect.NotConnectedError
	if _, err := workers[1].Service.AccessToken(ctx, "alice", "github"); !errors.As(err, &nc) || !strings.Contains(nc.Problem, "refresh token expired") {
		t.Fatalf("after expiry: %v, want NotConnectedError saying the refresh token expired", err)
	}
	if n := strings.Count(logs.String(), "connection expired: its refresh token expired"); n != len(people) {
		t.Fatalf("expiry logged %d times, want once per connection (%d)", n, len(people))
	}
	if strings.Contains(logs.String(), "ghu_") || strings.Contains(logs.String(), "ghr_") {
		t.Fatal("a token reached the log")
	}
}

func TestMain(m *testing.M) { pgtest.Main(m) }

func TestRefresher_OnePerConnectionAcrossReplicas_SQLite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "brain.db")
	testRefreshAcrossReplicas(t, func() store.Connections {
		st, err := sqlite.Open(context.Background(), path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		return st
	})
}

func TestRefresher_OnePerConnectionAcrossReplicas_PostgreSQL(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	testRefreshAcrossReplicas(t, func() store.Connections {
		st, err := postgres.Open(context.Background(), dsn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		return st
	})
}

func TestRefresher_StartStop(t *testing.T) {
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "brain.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	ts := newTokenServer(t)
	startstoptest.Stress(t, replica(ts, st, &clock{now: time.Now()}, &syncBuffer{}, 1))
}
