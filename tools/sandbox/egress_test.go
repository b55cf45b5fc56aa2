package sandbox

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"brain/internal/egress"
	"brain/internal/gittest"
)

// TestMain lets the test binary stand in for brain's as the in-sandbox
// helper, as cmd/brain does.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == HelperCommand {
		os.Exit(HelperMain(os.Args[2:]))
	}
	os.Exit(m.Run())
}

// repoTokens is the brokered credentials of the tests: one allow-listed
// repository, and a record of every token handed out.
type repoTokens struct {
	allowed string
	token   string
	mu      sync.Mutex
	asked   []egress.TokenRequest
}

func (r *repoTokens) AllowedRepo(repo string) bool { return repo == r.allowed }

func (r *repoTokens) ReadToken(_ context.Context, req egress.TokenRequest) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.asked = append(r.asked, req)
	return r.token, nil
}

type egressRig struct {
	s      *Sandboxes
	git    *gittest.Server
	api    *httptest.Server // stands for brain's own API
	tokens *repoTokens
}

func newEgressRig(t *testing.T, allow ...string) *egressRig {
	t.Helper()
	return newEgressRigWith(t, nil, allow...)
}

// newEgressRigWith is newEgressRig with edit applied to the egress config.
func newEgressRigWith(t *testing.T, edit func(*Egress), allow ...string) *egressRig {
	t.Helper()
	git := gittest.New(t, "ghs_read_"+t.Name(), "ghs_write_"+t.Name())
	git.Create(t, "acme/app", map[string]string{
		"go.mod":      "module example.com/app\n\ngo 1.21\n",
		"app.go":      "package app\n\nfunc Add(a, b int) int { return a + b }\n",
		"app_test.go": "package app\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(1, 2) != 3 {\n\t\tt.Fatal(\"bad\")\n\t}\n}\n",
	})
	git.Create(t, "acme/other", map[string]string{"README": "other\n"})
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("brain api")) }))
	t.Cleanup(api.Close)
	gitAddr := strings.TrimPrefix(git.URL, "http://")
	apiAddr := strings.TrimPrefix(api.URL, "http://")
	tokens := &repoTokens{allowed: "acme/app", token: git.ReadToken}
	e := &Egress{
		// brain's API is allowed and private-OK here, to show the
		// listener rule holds on its own.
		Allow:       append(allow, apiAddr),
		PrivateOK:   []string{gitAddr, apiAddr},
		Deny:        []netip.AddrPort{netip.MustParseAddrPort(apiAddr)},
		GitHosts:    map[string]string{"github.test": git.URL},
		Credentials: tokens,
	}
	if edit != nil {
		edit(e)
	}
	s := newTest(t, Config{Egress: e})
	return &egressRig{s: s, git: git, api: api, tokens: tokens}
}

func TestEgress_CloneThroughProxyWithBrokeredToken(t *testing.T) {
	rig := newEgressRig(t)
	r := sh(t, rig.s, "s1", "git clone -q https://github.test/acme/app.git && cat app/go.mod")
	if r.ExitCode != 0 || !strings.Contains(r.Stdout, "module example.com/app") {
		t.Fatalf("clone failed: %+v", r)
	}
	if r.Egress == nil || r.Egress.Allowed == 0 {
		t.Errorf("no allowed request counted: %+v", r.Egress)
	}
	if len(rig.tokens.asked) == 0 || rig.tokens.asked[0].Repo != "acme/app" || rig.tokens.asked[0].SessionID != "s1" {
		t.Errorf("token requests: %+v", rig.tokens.asked)
	}
	// The token reached the git server, and nothing in the sandbox.
	read := false
	for _, q := range rig.git.Requests() {
		read = read || strings.HasSuffix(q, " read")
	}
	if !read {
		t.Errorf("the server never saw the read token: %v", rig.git.Requests())
	}
	r = sh(t, rig.s, "s1", "env; cat /proc/*/environ 2>/dev/null; grep -rs '"+rig.git.ReadToken+"' /workspace /tmp /etc /run; git -C app config --list; true")
	if strings.Contains(r.Stdout+r.Stderr, rig.git.ReadToken) {
		t.Fatalf("the token is visible in the sandbox:\n%s", r.Stdout)
	}
	// A fetch later works too.
	if r := sh(t, rig.s, "s1", "cd app && git fetch -q origin && git log --oneline | wc -l"); r.ExitCode != 0 || strings.TrimSpace(r.Stdout) != "1" {
		t.Errorf("fetch: %+v", r)
	}
}

// TestEgress_Attacks: each attempt from inside is refused, counted, and its
// host named in the result the first time.
func TestEgress_Attacks(t *testing.T) {
	rig := newEgressRig(t, "169.254.169.254", "10.1.2.3")
	apiAddr := strings.TrimPrefix(rig.api.URL, "http://")
	_, apiPort, _ := net.SplitHostPort(apiAddr)
	if r := sh(t, rig.s, "a", "git clone -q https://github.test/acme/app.git"); r.ExitCode != 0 {
		t.Fatalf("clone: %+v", r)
	}
	cases := []struct{ name, cmd, refused string }{
		{"brain's API through the proxy", "curl -fsS -m 10 http://" + apiAddr + "/", "brain's own listeners"},
		{"brain's API directly", "curl -fsS -m 10 --noproxy '*' http://127.0.0.1:" + apiPort + "/", ""},
		{"link-local metadata address", "curl -fsS -m 10 http://169.254.169.254/latest/meta-data/", "link-local"},
		{"private address over TLS", "curl -fsS -m 10 https://10.1.2.3/", "private"},
		{"host not on the allow-list", "curl -fsS -m 10 https://example.com/", "not on this agent's egress allow-list"},
		{"git push", "cd app && echo x >> app.go && git -c user.name=a -c user.email=a@b commit -qam x && git push origin HEAD:main", "git push"},
		{"git push over TLS", "curl -fsS -m 10 https://github.test/acme/app.git/info/refs?service=git-receive-pack", "git host"},
		{"helper for a repository off the allow-list", "printf 'protocol=https\\nhost=github.test\\npath=acme/other.git\\n\\n' | " + helperPath + " " + helperArgs + " get", "allow-list"},
		{"clone off the allow-list", "git clone -q https://github.test/acme/other.git", "allow-list"},
	}
	for _, tc := range cases {
		r := sh(t, rig.s, "a", tc.cmd)
		out := r.Stdout + r.Stderr
		if strings.Contains(out, "brain api") || strings.Contains(out, "other\n") {
			t.Errorf("%s: reached: %+v", tc.name, r)
		}
		if tc.name == "helper for a repository off the allow-list" {
			if strings.Contains(r.Stdout, "password=") {
				t.Errorf("%s: the helper answered a credential: %q", tc.name, r.Stdout)
			}
		} else if r.ExitCode == 0 {
			t.Errorf("%s: the command succeeded: %+v", tc.name, r)
		}
		if tc.refused == "" {
			continue
		}
		t.Logf("%s: %s", tc.name, fmtRefusals(r.Egress.NewRefusals))
		if r.Egress == nil || !strings.Contains(fmtRefusals(r.Egress.NewRefusals)+out, tc.refused) {
			t.Errorf("%s: no refusal naming %q: %+v %+v", tc.name, tc.refused, r, r.Egress)
		}
	}
	r := sh(t, rig.s, "a", "true")
	if r.Egress.Refused < 7 {
		t.Errorf("refused %d, want every attempt counted: %+v", r.Egress.Refused, r.Egress)
	}
	for _, q := range rig.git.Requests() {
		// acme/other may be asked for without credentials (a public
		// repository would be fetched), never with.
		if strings.Contains(q, "receive-pack") || strings.Contains(q, "acme/other") && !strings.HasSuffix(q, " none") {
			t.Errorf("the git server was asked %q", q)
		}
	}
}

func fmtRefusals(rs []egress.Refusal) string {
	var b strings.Builder
	for _, r := range rs {
		b.WriteString(r.Host + ": " + r.Reason + "\n")
	}
	return b.String()
}

// TestEgress_EditTestCommit is the coding loop inside the sandbox: clone
// through the proxy, edit, run go test, commit; the second round, in the
// same workspace, fetches instead of cloning and reuses the build cache.
// The times are logged for docs/benchmarks.md.
func TestEgress_EditTestCommit(t *testing.T) {
	if testing.Short() {
		t.Skip("a cold go test compiles the standard library: minutes on a small machine")
	}
	goBin := "/usr/local/go/bin/go"
	if _, err := os.Stat(goBin); err != nil {
		t.Skip("no Go toolchain under /usr/local/go")
	}
	rig := newEgressRig(t)
	loop := "set -e; export GOTOOLCHAIN=local GOFLAGS=-mod=mod; " +
		"if [ -d app ]; then git -C app fetch -q origin; else git clone -q https://github.test/acme/app.git; fi; cd app; " +
		"sed -i 's/a + b/b + a/' app.go; " + goBin + " test ./... ; " +
		"git -c user.name=agent -c user.email=agent@example.com commit -qam 'swap operands' || true; git rev-parse HEAD"
	for _, round := range []string{"cold", "warm"} {
		began := time.Now()
		r, err := callTool(context.Background(), t, rig.s, "code", map[string]any{"command": loop, "timeoutSeconds": 600})
		if err != nil {
			t.Fatalf("%s: %v", round, err)
		}
		if r.ExitCode != 0 || !strings.Contains(r.Stdout, "ok") {
			t.Fatalf("%s: %+v", round, r)
		}
		t.Logf("%s: clone or fetch, go test, commit: %s", round, time.Since(began).Round(10*time.Millisecond))
	}
}
