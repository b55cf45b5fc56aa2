package github

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"brain/tools"
	"brain/tools/toolstest"
)

// testClock is a clock a test moves by hand.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *testClock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func testKey(t *testing.T) (*rsa.PrivateKey, []byte) {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	return key, pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
}

func mintedToken(n int) string {
	return "ghs_16C7e42F292c6912E7710c838347Ae17" + []string{"", "0001", "0002", "0003"}[n]
}

// TestApp_TokenMintedOnceReusedUntilNearExpiry: the installation token is
// minted with a valid JWT on first use, reused by every request until
// shortly before it expires, then minted again.
func TestApp_TokenMintedOnceReusedUntilNearExpiry(t *testing.T) {
	key, keyPEM := testKey(t)
	clock := &testClock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	f := newFakeGitHub(t)
	f.appKey, f.clock = &key.PublicKey, clock.Now
	f.seed("acme/widgets", fakeIssue{number: 1, title: "Leak", body: "token " + mintedToken(1) + " pasted here"})
	fm := newFamily(t, f, func(c *Config) {
		c.Token = ""
		c.App = &App{AppID: 123, InstallationID: 456, PrivateKey: keyPEM}
		c.Now = clock.Now
	})
	for range 3 {
		out := fm.mustRun(t, "github_get_issue", `{"repo":"acme/widgets","number":1}`)
		if strings.Contains(str(out), "ghs_") || out["body"] != "token "+tools.Redacted+" pasted here" {
			t.Fatalf("the installation token reached a result: %v", out)
		}
	}
	clock.Add(54 * time.Minute) // the token expires at +60m; it is renewed from +55m
	fm.mustRun(t, "github_list_issues", `{"repo":"acme/widgets"}`)
	if f.minted != 1 {
		t.Fatalf("%d tokens minted before near expiry, want 1", f.minted)
	}
	clock.Add(2 * time.Minute)
	fm.mustRun(t, "github_list_issues", `{"repo":"acme/widgets"}`)
	if f.minted != 2 {
		t.Fatalf("%d tokens minted after near expiry, want 2", f.minted)
	}
	mints := 0
	for _, r := range f.log() {
		if r == "POST /app/installations/456/access_tokens" {
			mints++
		}
	}
	first, second := "Bearer "+mintedToken(1), "Bearer "+mintedToken(2)
	want := []string{first, first, first, first, second}
	if mints != 2 || str(f.auths) != str(want) {
		t.Fatalf("%d mints; API requests authorized with %q, want %q", mints, f.auths, want)
	}
}

func TestApp_MintFailureSendsNothing(t *testing.T) {
	key, keyPEM := testKey(t)
	f := newFakeGitHub(t)
	f.appKey = &key.PublicKey
	f.before = func(w http.ResponseWriter, r *http.Request) bool {
		if strings.HasPrefix(r.URL.Path, "/app/") {
			writeJSON(w, http.StatusNotFound, map[string]any{"message": "Not Found", "documentation_url": "https://docs.github.com/rest"})
			return true
		}
		return false
	}
	fm := newFamily(t, f, func(c *Config) {
		c.Token = ""
		c.App = &App{AppID: 123, InstallationID: 999, PrivateKey: keyPEM}
	})
	_, err := fm.apply(t, "github_create_issue", `{"repo":"acme/widgets","title":"t"}`, decision)
	te := toolstest.ToolError(t, err, false, "could not get an installation token for GitHub App 123, installation 999", "nothing was sent")
	if strings.Contains(te.Message, "eyJ") {
		t.Fatalf("a JWT reached the error: %s", te.Message)
	}
	for _, r := range f.log() {
		if !strings.HasPrefix(r, "POST /app/") {
			t.Fatalf("sent without a token: %s", r)
		}
	}
}

func TestParseKey(t *testing.T) {
	key, pkcs1 := testKey(t)
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	pkcs8 := pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
	for _, k := range [][]byte{pkcs1, pkcs8} {
		if got, err := parseKey(k); err != nil || !got.Equal(key) {
			t.Fatalf("parseKey: %v", err)
		}
	}
	for _, bad := range []string{"", "not a key", string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: []byte("x")}))} {
		if _, err := parseKey([]byte(bad)); err == nil || !strings.Contains(err.Error(), "app.private_key_file") {
			t.Errorf("parseKey(%q) = %v", bad, err)
		}
	}
}

// TestToken_NeverInResultsOrErrors: a result or an error echoing the
// configured token shows it redacted.
func TestToken_NeverInResultsOrErrors(t *testing.T) {
	f := newFakeGitHub(t)
	f.seed("acme/widgets", fakeIssue{number: 1, title: "Leak " + testToken, body: "Authorization: Bearer " + testToken})
	f.before = func(w http.ResponseWriter, r *http.Request) bool {
		if r.Method == http.MethodPost {
			writeJSON(w, http.StatusUnprocessableEntity, map[string]any{"message": "token " + testToken + " is not allowed here"})
			return true
		}
		return false
	}
	fm := newFamily(t, f)
	out := fm.mustRun(t, "github_get_issue", `{"repo":"acme/widgets","number":1}`)
	if strings.Contains(str(out), testToken) || !strings.Contains(str(out), tools.Redacted) {
		t.Fatalf("result %v", out)
	}
	card, err := fm.preview(t, "github_comment", `{"repo":"acme/widgets","number":1,"body":"b"}`)
	if err != nil || strings.Contains(str(card), testToken) {
		t.Fatalf("card %+v, %v", card, err)
	}
	_, err = fm.apply(t, "github_comment", `{"repo":"acme/widgets","number":1,"body":"b"}`, decision)
	te := toolstest.ToolError(t, err, false, "HTTP 422")
	if strings.Contains(te.Message, testToken) || !strings.Contains(te.Message, tools.Redacted) {
		t.Fatalf("error %q", te.Message)
	}
}
