package main

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"brain/bot/config"
)

// instruction is one Dockerfile instruction, continuation lines joined.
type instruction struct {
	cmd  string // upper case: FROM, RUN, USER ...
	args string
	line int
}

// parseDockerfile splits a Dockerfile into instructions (comments and
// blank lines dropped, backslash continuations joined).
func parseDockerfile(t *testing.T, path string) []instruction {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []instruction
	var cur strings.Builder
	start, n := 0, 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if cur.Len() == 0 && (line == "" || strings.HasPrefix(line, "#")) {
			continue
		}
		if cur.Len() == 0 {
			start = n
		}
		if body, more := strings.CutSuffix(line, `\`); more {
			cur.WriteString(body + " ")
			continue
		}
		cur.WriteString(line)
		cmd, args, _ := strings.Cut(cur.String(), " ")
		out = append(out, instruction{cmd: strings.ToUpper(cmd), args: strings.Join(strings.Fields(args), " "), line: start})
		cur.Reset()
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if cur.Len() > 0 {
		t.Fatalf("%s ends inside a continued instruction", path)
	}
	return out
}

func TestDockerfile_MultiStageNonRootVolumeHealthcheck(t *testing.T) {
	ins := parseDockerfile(t, filepath.Join("..", "..", "Dockerfile"))
	known := []string{"FROM", "RUN", "COPY", "ARG", "ENV", "WORKDIR", "USER", "VOLUME", "EXPOSE", "HEALTHCHECK", "ENTRYPOINT", "CMD", "LABEL"}
	var froms []int
	for i, in := range ins {
		if !slices.Contains(known, in.cmd) {
			t.Errorf("line %d: unknown instruction %s", in.line, in.cmd)
		}
		if in.cmd == "FROM" {
			froms = append(froms, i)
		}
	}
	if len(froms) < 2 {
		t.Fatalf("want a multi-stage build, got %d FROM", len(froms))
	}
	build, final := ins[froms[0]:froms[len(froms)-1]], ins[froms[len(froms)-1]:]
	if !strings.Contains(build[0].args, " AS ") {
		t.Errorf("the build stage is not named: FROM %s", build[0].args)
	}
	if !slices.ContainsFunc(build, func(in instruction) bool {
		return in.cmd == "RUN" && strings.Contains(in.args, "CGO_ENABLED=1") && strings.Contains(in.args, "./cmd/brain")
	}) {
		t.Error("no cgo build of ./cmd/brain in the build stage")
	}
	get := func(cmd string) []instruction {
		var out []instruction
		for _, in := range final {
			if in.cmd == cmd {
				out = append(out, in)
			}
		}
		return out
	}
	installs := ""
	for _, in := range get("RUN") {
		installs += in.args + " "
	}
	for _, pkg := range []string{"ca-certificates", "bubblewrap", "util-linux"} {
		if !strings.Contains(installs, pkg) {
			t.Errorf("the runtime image does not install %s", pkg)
		}
	}
	users := get("USER")
	if len(users) == 0 {
		t.Fatal("the runtime stage runs as root: no USER")
	}
	if u, _, _ := strings.Cut(users[len(users)-1].args, ":"); u == "root" || u == "0" {
		t.Errorf("USER %s is root", users[len(users)-1].args)
	}
	vols := get("VOLUME")
	if len(vols) != 1 || !strings.Contains(vols[0].args, "/data") {
		t.Errorf("VOLUME = %v, want /data", vols)
	}
	// /readyz: the database takes writes and brain is not draining (integrations never fail it).
	hc := get("HEALTHCHECK")
	if len(hc) != 1 || !strings.Contains(hc[0].args, "CMD") || !strings.Contains(hc[0].args, "/readyz") {
		t.Errorf("HEALTHCHECK = %v, want one probing /readyz", hc)
	}
	if copies := get("COPY"); !slices.ContainsFunc(copies, func(in instruction) bool { return strings.Contains(in.args, "--from=build") }) {
		t.Error("the runtime stage does not copy the binary from the build stage")
	}
	// The config the image ships loads, and its data_dir is the volume.
	env := func(k string) (string, bool) {
		if k == "BRAIN_API_KEY" {
			return "brain-key-0123456789abcdef0123456789", true
		}
		return "", false
	}
	cfg, err := config.Load(filepath.Join("..", "..", "deploy", "config.docker.yaml"), env)
	if err != nil {
		t.Fatalf("deploy/config.docker.yaml: %v", err)
	}
	if cfg.DataDir != "/data" {
		t.Errorf("config.docker.yaml data_dir = %s", cfg.DataDir)
	}
}

func TestCompose_BrainWithItsVolume(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "compose.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var c struct {
		Services map[string]struct {
			Build    any      `yaml:"build"`
			Volumes  []string `yaml:"volumes"`
			Profiles []string `yaml:"profiles"`
		} `yaml:"services"`
		Volumes map[string]any `yaml:"volumes"`
	}
	if err := yaml.Unmarshal(raw, &c); err != nil {
		t.Fatal(err)
	}
	b, ok := c.Services["brain"]
	if !ok || b.Build == nil || !slices.ContainsFunc(b.Volumes, func(v string) bool { return strings.HasSuffix(v, ":/data") }) {
		t.Fatalf("brain service %+v", b)
	}
	if pg := c.Services["postgres"]; !slices.Contains(pg.Profiles, "postgres") {
		t.Errorf("postgres should be opt-in (a profile): %+v", pg)
	}
}

func TestSystemdUnit_Sandboxed(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "deploy", "brain.service"))
	if err != nil {
		t.Fatal(err)
	}
	set := map[string]string{}
	for _, line := range strings.Split(string(raw), "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), "="); ok && !strings.HasPrefix(line, "#") {
			set[k] = v
		}
	}
	for k, want := range map[string]string{
		"User": "brain", "NoNewPrivileges": "yes", "ProtectSystem": "strict", "ProtectHome": "yes",
		"PrivateTmp": "yes", "CapabilityBoundingSet": "", "StateDirectory": "brain", "Restart": "on-failure",
	} {
		if got, ok := set[k]; !ok || got != want {
			t.Errorf("%s=%q, want %q", k, got, want)
		}
	}
	if !strings.HasPrefix(set["ExecStart"], "/usr/local/bin/brain serve --config ") {
		t.Errorf("ExecStart=%s", set["ExecStart"])
	}
}

func TestVersion_PrintsCommitDateAndGo(t *testing.T) {
	var out bytes.Buffer
	printVersion(&out)
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[0], "brain ") || !strings.HasPrefix(lines[1], "commit: ") ||
		!strings.HasPrefix(lines[2], "built: ") || !strings.HasPrefix(lines[3], "go: "+runtime.Version()) {
		t.Fatalf("version output:\n%s", out.String())
	}
}
