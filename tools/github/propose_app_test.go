package github

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"brain/internal/egress"
	"brain/internal/gittest"
)

// TestPropose_AppTokens: with a GitHub App, the preview reads the git host
// with an installation token minted for that repository with
// contents:read, and the apply pushes with one minted with
// contents:write; the git host (granted exactly what each mint asked for)
// refuses a push with the read token. The sandbox's read broker mints
// contents:read the same way.
func TestPropose_AppTokens(t *testing.T) {
	key, keyPEM := testKey(t)
	clock := &testClock{t: time.Now()}
	// Neither static token works: only minted ones do.
	r := &proposeRig{git: gittest.New(t, "unused_read_token", "unused_write_token_0123456789"), gh: newFakeGitHub(t), ws: t.TempDir()}
	r.gh.appKey, r.gh.clock, r.gh.git = &key.PublicKey, clock.Now, r.git
	r.base = r.git.Create(t, "acme/widgets", map[string]string{"main.go": "package main\n\nfunc main() { println(\"hi\") }\n"})
	u := strings.Replace(r.git.URL, "http://", "http://x:unused_read_token@", 1) + "/acme/widgets.git"
	gittest.Git(t, r.ws, "clone", "-q", u, "widgets")
	r.head = r.commit(t, "main.go", "package main\n\nfunc main() { println(\"fixed\") }\n", "Fix the greeting")
	app := &App{AppID: 123, InstallationID: 456, PrivateKey: keyPEM}
	r.fm = newFamily(t, r.gh, func(c *Config) {
		c.Token, c.App, c.Now = "", app, clock.Now
		c.Workspace = func(string) string { return r.ws }
		c.GitURL = r.git.URL
	})
	before := len(r.git.Requests())
	card, err := r.fm.preview(t, proposeTool, proposeInput)
	if err != nil {
		t.Fatal(err)
	}
	out, err := r.apply(t, card)
	if err != nil {
		t.Fatal(err)
	}
	if out["created"] != true || out["pushed"] != true || r.hostRef(t, "brain/"+decision) != r.head {
		t.Fatalf("apply %v, branch at %q", out, r.hostRef(t, "brain/"+decision))
	}
	var mints []map[string]any
	r.gh.mu.Lock()
	for _, m := range r.gh.mints {
		var v map[string]any
		_ = json.Unmarshal([]byte(m), &v)
		mints = append(mints, v)
	}
	r.gh.mu.Unlock()
	perms := func(i int) string {
		b, _ := json.Marshal(map[string]any{"repositories": mints[i]["repositories"], "permissions": mints[i]["permissions"]})
		return string(b)
	}
	// The preview's read token, the apply's write token, and the
	// installation-wide token of the pull request API calls.
	if len(mints) != 3 || perms(0) != `{"permissions":{"contents":"read"},"repositories":["widgets"]}` ||
		perms(1) != `{"permissions":{"contents":"write"},"repositories":["widgets"]}` {
		t.Fatalf("token requests %v", mints)
	}
	var reads, writes int
	for _, q := range r.git.Requests()[before:] {
		switch {
		case strings.HasSuffix(q, " read"):
			reads++
		case strings.HasSuffix(q, " write"):
			writes++
			if strings.Contains(q, "upload-pack") && !strings.Contains(q, "receive-pack") {
				t.Errorf("the write token fetched: %q", q)
			}
		default:
			t.Errorf("the git host saw %q", q)
		}
		if strings.HasPrefix(q, "POST /acme/widgets.git/git-receive-pack") && !strings.HasSuffix(q, " write") {
			t.Errorf("pushed without the write token: %q", q)
		}
	}
	if reads == 0 || writes == 0 || r.pushes() != 1 {
		t.Fatalf("%d read and %d write requests, %d pushes", reads, writes, r.pushes())
	}

	// The read broker mints contents:read, and the git host refuses a
	// push with what it mints.
	rt, err := NewRepoTokens(Config{BaseURL: r.gh.url(), Repos: []string{"acme/*"}, Now: clock.Now, App: app})
	if err != nil {
		t.Fatal(err)
	}
	tok, err := rt.ReadToken(context.Background(), egress.TokenRequest{Repo: "acme/widgets"})
	if err != nil {
		t.Fatal(err)
	}
	dir := r.ws + "/widgets"
	push := strings.Replace(r.git.URL, "http://", "http://x:"+tok+"@", 1) + "/acme/widgets.git"
	if out, err := gitOut(dir, "push", "-q", push, "HEAD:refs/heads/sneaky"); err == nil || !strings.Contains(out, "403") {
		t.Fatalf("push with a read token: %v %s", err, out)
	}
	if r.hostRef(t, "sneaky") != "" {
		t.Fatal("a read token pushed")
	}
}

// gitOut runs git in dir without user or system config and returns what
// it printed.
func gitOut(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_TERMINAL_PROMPT=0")
	out, err := cmd.CombinedOutput()
	return string(out), err
}
