package webtest

import (
	"context"
	"database/sql"
	"fmt"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"brain/engine"
	"brain/store/sqlite"
	"brain/store/storetest/bulk"
)

// searchSessions is how many sessions the search test's store holds.
const searchSessions = 100_000

// seedSessions writes n sessions to the SQLite database at path, each
// with one answered message of its own: "…refund of zqxorder<i>…"
// (the template's is plain "zqxorder"). One session is made through the
// store's API, then copied in one transaction (store/storetest/bulk).
func seedSessions(t *testing.T, path string, n int) {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	if _, _, err := st.CreateSession(ctx, engine.Session{ID: "ses_seed", Agent: "default", Origin: engine.OriginAPI,
		Status: engine.StatusIdle, StartedBy: "ops", CreatedAt: at}, ""); err != nil {
		t.Fatal(err)
	}
	ev, err := engine.NewEvent(engine.Input{Text: "Please look at the refund of zqxorder before Friday.", Author: "ops"})
	if err != nil {
		t.Fatal(err)
	}
	ev.ID = "ev_seed"
	// The input is taken (cursor past it), so brain runs no turn for it.
	if _, err := st.Commit(ctx, engine.Commit{SessionID: "ses_seed", Now: at, Events: []engine.Event{ev},
		Update: func(s *engine.Session) error { s.InputCursor, s.Checkpoint = 1, 1; return nil }}); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite3", "file:"+path+"?_busy_timeout=10000")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	start := time.Now()
	if err := bulk.CopySession(ctx, db, bulk.SQLite, "ses_seed", n-1, "zqxorder"); err != nil {
		t.Fatal(err)
	}
	t.Logf("copied %d sessions in %s", n-1, time.Since(start).Round(time.Millisecond))
}

// TestConsole_SearchAmong100kSessions: typed into the sessions page's
// search box, a word of one message finds that one session among
// 100,000, and the list pages by cursor past the first 25.
func TestConsole_SearchAmong100kSessions(t *testing.T) {
	if testing.Short() {
		t.Skip("seeds 100,000 sessions")
	}
	r := newSeededRig(t, func(path string) { seedSessions(t, path, searchSessions) })
	const want = "ses_seed_77777"
	r.do("sign in and search",
		chromedp.Navigate(r.base+"/login?next=/sessions"),
		chromedp.WaitVisible(chromedp.CSS(`input[name=key]`)),
		chromedp.SendKeys(chromedp.CSS(`input[name=key]`), apiKey),
		chromedp.Submit(chromedp.CSS(`form.login`)),
		chromedp.WaitVisible(`//h1[text()="Sessions"]`),
		chromedp.WaitVisible(chromedp.CSS(`nav.pager a[rel=next]`)),
		chromedp.SendKeys(chromedp.CSS(`form.filters input[name=q]`), "ZQXORDER77777"),
		chromedp.Submit(chromedp.CSS(`form.filters`)),
		chromedp.WaitVisible(chromedp.CSS(fmt.Sprintf(`table.sessions a[href="/sessions/%s"]`, want))),
	)
	rows := get(r, "count the rows", chromedp.Evaluate[int](`document.querySelectorAll('table.sessions tbody tr').length`))
	title := get(r, "read the row's title", chromedp.Text(chromedp.CSS(`table.sessions tbody tr a`)))
	if rows != 1 || title != "Please look at the refund of zqxorder77777 before Friday." {
		t.Fatalf("the search shows %d rows, the first titled %q; want only %s", rows, title, want)
	}
	if next := get(r, "look for a next page", chromedp.Evaluate[int](`document.querySelectorAll('nav.pager a').length`)); next != 0 {
		t.Fatalf("one match, yet %d pager links", next)
	}
	// The word alone, without its number, is only the template's.
	r.do("a word no copy has",
		chromedp.Navigate(r.base+"/sessions?q=zqxorder"),
		chromedp.WaitVisible(chromedp.CSS(`table.sessions a[href="/sessions/ses_seed"]`)))
	if rows := get(r, "count the rows", chromedp.Evaluate[int](`document.querySelectorAll('table.sessions tbody tr').length`)); rows != 1 {
		t.Fatalf("zqxorder shows %d rows, want the template's only", rows)
	}
	// Paging by cursor: the second page follows the first, no overlap.
	const ids = `[...document.querySelectorAll('table.sessions tbody code')].map(c => c.textContent)`
	r.do("the first page", chromedp.Navigate(r.base+"/sessions"), chromedp.WaitVisible(chromedp.CSS(`nav.pager a[rel=next]`)))
	first := get(r, "read the first page", chromedp.Evaluate[[]string](ids))
	r.do("the second page", chromedp.Click(chromedp.CSS(`nav.pager a[rel=next]`)), chromedp.WaitVisible(`//nav[@class="pager"]//a[text()="← newest"]`))
	second := get(r, "read the second page", chromedp.Evaluate[[]string](ids))
	seen := map[string]bool{}
	for _, id := range append(first, second...) {
		seen[id] = true
	}
	if len(first) != 25 || len(second) != 25 || len(seen) != 50 {
		t.Fatalf("pages of %d and %d sessions, %d distinct; want 25, 25, 50", len(first), len(second), len(seen))
	}
}
