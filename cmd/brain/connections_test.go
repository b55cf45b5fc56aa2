package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"brain/bot"
	"brain/bot/config"
	"brain/engine/model/fakemodel"
	"brain/internal/oauthclient/oauthtest"
)

func TestConnections_HelpAndUsage(t *testing.T) {
	for _, args := range [][]string{{"connections", "--help"}, {"connections", "connect", "--help"}} {
		out, err := runCLI(t, args...)
		if err != nil && exitCode(err) != 0 {
			t.Errorf("%v: %v", args, err)
		}
		if !strings.Contains(out, "connect PROVIDER") && !strings.Contains(out, "PROVIDER [--person ID]") {
			t.Errorf("%v printed no usage of connect: %q", args, out)
		}
	}
	if _, err := runCLI(t, "connections", "connect", "--config", "x.yaml"); err == nil || !strings.Contains(err.Error(), "one provider") {
		t.Errorf("connect without a provider: %v", err)
	}
}

// TestConnections_ConnectListRevoke connects a person's account from the
// CLI through a running daemon (the URL it prints, followed at the fake
// authorization server), lists it, and revokes it.
func TestConnections_ConnectListRevoke(t *testing.T) {
	as := oauthtest.New()
	t.Cleanup(as.Close)
	var resource *httptest.Server
	resource = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		as.Protect(resource.URL+"/mcp", http.NotFoundHandler()).ServeHTTP(w, r)
	}))
	t.Cleanup(resource.Close)
	fake := fakemodel.New()
	t.Cleanup(fake.Close)
	dir := t.TempDir()
	addr := freeAddr(t)
	path := filepath.Join(dir, "config.yaml")
	cfgText := fmt.Sprintf(`listen: %[1]s
data_dir: %[2]s
public_url: http://%[1]s
api_keys: [cli-test-key-0f3c8e1d9a7b6c5d4e3f2a1b0c9d8e7f]
models:
  default: {provider: anthropic, model: claude-test, base_url: %[3]s, api_key: test-key, max_retries: 0}
agents:
  - name: default
    instructions: You are a test agent.
mcp_servers:
  - {id: notes, url: %[4]s/mcp, auth: oauth, per: person}
`, addr, filepath.Join(dir, "data"), fake.URL(), resource.URL)
	if err := os.WriteFile(path, []byte(cfgText), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(path, func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	app, err := bot.New(context.Background(), cfg, bot.Options{Stderr: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	if err := app.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = app.Shutdown(context.Background()) })
	api := func(method, p, body string) {
		req, _ := http.NewRequest(method, "http://"+addr+p, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer cli-test-key-0f3c8e1d9a7b6c5d4e3f2a1b0c9d8e7f")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode >= 300 {
			t.Fatalf("%s %s: %d", method, p, resp.StatusCode)
		}
	}
	api("POST", "/v1/people", `{"id":"alice","name":"Alice"}`)

	if _, err := runCLI(t, "connections", "connect", "mcp:nope", "--person", "alice", "--config", path); err == nil || !strings.Contains(err.Error(), "no provider") {
		t.Fatalf("connect to an unknown provider: %v", err)
	}
	if _, err := runCLI(t, "connections", "connect", "mcp:notes", "--config", path); err == nil || !strings.Contains(err.Error(), "per person") {
		t.Fatalf("connect a per-person provider for nobody: %v", err)
	}
	var out, errOut strings.Builder
	if err := run(context.Background(), []string{"connections", "connect", "mcp:notes", "--person", "alice", "--config", path}, strings.NewReader(""), &out, &errOut); err != nil {
		t.Fatalf("connect: %v %s", err, errOut.String())
	}
	link := strings.TrimSpace(out.String())
	if !strings.HasPrefix(link, as.URL+"/authorize?") || !strings.Contains(errOut.String(), "alice's account to mcp:notes") {
		t.Fatalf("connect printed %q, %q", link, errOut.String())
	}
	back, err := oauthtest.Follow(link, "alice")
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get("http://" + addr + "/oauth/callback?" + back.Encode())
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "Connected mcp:notes") {
		t.Fatalf("callback: %d %s", resp.StatusCode, body)
	}

	list, err := runCLI(t, "connections", "list", "--person", "alice", "--config", path)
	m := regexp.MustCompile(`(?m)^(conn\S+)\s+alice\s+mcp:notes\s+.*connected$`).FindStringSubmatch(list)
	if err != nil || m == nil {
		t.Fatalf("list: %v\n%s", err, list)
	}
	for _, secret := range as.Secrets() {
		if strings.Contains(list, secret) {
			t.Fatal("the list shows a token")
		}
	}
	out2, err := runCLI(t, "connections", "revoke", m[1], "--config", path)
	if err != nil || !strings.Contains(out2, "revoked") {
		t.Fatalf("revoke: %v %s", err, out2)
	}
	list, _ = runCLI(t, "connections", "list", "--config", path)
	if !regexp.MustCompile(`(?m)^` + m[1] + `\s+alice\s+mcp:notes\s+.*revoked$`).MatchString(list) {
		t.Fatalf("after revoke:\n%s", list)
	}
}
