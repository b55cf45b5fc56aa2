package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestConfigCheck_ListsEveryProblemWithKeysAndLines(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "broken.yaml")
	if err := os.WriteFile(path, []byte(`listen: 127.0.0.1:0
models:
  default: {provider: fake}
agents:
  - name: default
    tools: [ask, web_fetch, creat_ticket, github_search]
limits:
  max_running_turns: many
tools:
  http:
    - {name: create_ticket, description: d, url: "http://127.0.0.1:1/", input: {type: object}}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	err := run(context.Background(), []string{"config", "check", "--config", path}, nil, &out, &out)
	if err == nil || exitCode(err) != 1 {
		t.Fatalf("err = %v, output:\n%s", err, out.String())
	}
	for _, want := range []string{
		`limits.max_running_turns (line 8): want an integer, got "many"`,
		`agents[0].tools[1] (line 6): unknown tool "web_fetch"`,
		`agents[0].tools[2] (line 6): unknown tool "creat_ticket"`,
		`agents[0].tools[3] (line 6): unknown tool "github_search"`,
		`valid tool names: ask, create_ticket`,
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

func TestConfigCheck_OkBindsNothing(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(path, []byte("listen: 127.0.0.1:1\nmodels:\n  default: {provider: anthropic, model: m, api_key: \"${NO_SUCH_KEY_FOR_TEST}\"}\nagents: [{name: default}]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := run(context.Background(), []string{"config", "check", "--config", path}, nil, &out, &out); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "config "+path+": ok") ||
		!strings.Contains(out.String(), "NO_SUCH_KEY_FOR_TEST (used by models.default.api_key)") {
		t.Fatalf("output:\n%s", out.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "data")); !os.IsNotExist(err) {
		t.Fatal("config check created the data directory")
	}
}

func TestConfig_MissingDefaultSaysToCopyTheExample(t *testing.T) {
	t.Chdir(t.TempDir())
	err := run(context.Background(), []string{"sessions", "list"}, nil, &bytes.Buffer{}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "cp config.example.yaml config.yaml") {
		t.Fatalf("err = %v", err)
	}
}

func TestParseFlags_AfterPositionals(t *testing.T) {
	fs, config := newFlags("x", "x", &bytes.Buffer{})
	limit := fs.Int("limit", 0, "")
	if err := parseFlags(fs, []string{"ID1", "--config", "c.yaml", "ID2", "--limit=3"}); err != nil {
		t.Fatal(err)
	}
	if *config != "c.yaml" || *limit != 3 || strings.Join(fs.Args(), " ") != "ID1 ID2" {
		t.Fatalf("config %q limit %d args %v", *config, *limit, fs.Args())
	}
}

func TestCompletion_BashScriptCompletesCommands(t *testing.T) {
	var out bytes.Buffer
	if err := run(context.Background(), []string{"completion", "bash"}, nil, &out, &out); err != nil {
		t.Fatal(err)
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	script := out.String() + `
COMP_WORDS=(brain appr); COMP_CWORD=1; _brain; echo "1:${COMPREPLY[*]}"
COMP_WORDS=(brain approvals ap); COMP_CWORD=2; _brain; echo "2:${COMPREPLY[*]}"
COMP_WORDS=(brain sessions list --js); COMP_CWORD=3; _brain; echo "3:${COMPREPLY[*]}"
`
	got, err := exec.Command(bash, "-c", script).CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, got)
	}
	for _, want := range []string{"1:approvals\n", "2:approve\n", "3:--json\n"} {
		if !strings.Contains(string(got), want) {
			t.Errorf("completion output lacks %q:\n%s", want, got)
		}
	}
	var zsh bytes.Buffer
	if err := run(context.Background(), []string{"completion", "zsh"}, nil, &zsh, &zsh); err != nil || !strings.Contains(zsh.String(), "compdef _brain brain") {
		t.Fatalf("zsh: %v %s", err, zsh.String())
	}
	if err := run(context.Background(), []string{"completion", "fish"}, nil, &out, &out); err == nil {
		t.Fatal("fish accepted")
	}
}
