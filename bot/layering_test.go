package bot

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// layers is the dependency direction DESIGN.md and the README's "Where
// things live" table set: for each package (exact, or a "/..." prefix),
// the project packages it may import, directly or through others. The
// first matching rule wins; "*" means anything. Packages under no rule are
// an error, so a new package has to be placed deliberately. Every package
// may import brain/internal/... (shared leaves such as the lifecycle
// helper); those import nothing of the project outside internal.
var layers = []struct {
	pkg     string
	imports []string
}{
	// The leaves.
	{"brain/tools", nil},
	// The platforms' published contracts, which the fakes check (tests only).
	{"brain/internal/contracts", nil},
	{"brain/internal/...", nil},
	// Config validation refers to the engine's defaults, not its runtime.
	{"brain/bot/config", []string{"brain/engine", "brain/tools"}},
	{"brain/bot/telemetry", []string{"brain/bot/config", "brain/engine", "brain/store", "brain/tools"}},
	// Tool families see only the tool contract.
	{"brain/tools/...", []string{"brain/tools"}},
	// The core sees only the tool contract; its leaves see only the core.
	{"brain/engine", []string{"brain/tools", "brain/engine/lease", "brain/engine/policy"}},
	// The engine's subsystems are leaves: whoever may import the engine
	// may import them (see engineLeaves).
	{"brain/engine/lease", nil},
	{"brain/engine/policy", nil},
	// The store contract sees only the core.
	{"brain/store", []string{"brain/engine", "brain/tools"}},
	// The adapters' conformance suite scripts the fake model server.
	{"brain/engine/model/modeltest", []string{"brain/engine", "brain/engine/model/fakemodel", "brain/tools"}},
	{"brain/engine/...", []string{"brain/engine", "brain/tools"}},
	// Adapters to the outside world: never each other, never bot.
	{"brain/store/...", []string{"brain/engine", "brain/store", "brain/tools"}},
	{"brain/channels/...", []string{"brain/engine", "brain/store", "brain/tools"}},
	{"brain/webhooks/...", []string{"brain/engine", "brain/store", "brain/tools"}},
	// The application layer works on interfaces: no concrete store. The
	// API shows the scheduler's own views, so it sees schedule (and what
	// schedule sees), but no store, channel, webhook or bot.
	{"brain/bot/api", []string{"brain/bot/schedule", "brain/bot/config", "brain/bot/telemetry", "brain/engine", "brain/store", "brain/tools"}},
	// The API's client (the CLI's commands against a running daemon)
	// speaks its wire types.
	{"brain/bot/api/client", []string{"brain/bot/api", "brain/bot/schedule", "brain/bot/config", "brain/bot/telemetry", "brain/engine", "brain/store", "brain/tools"}},
	// The terminal conversation prints through the console channel.
	{"brain/bot/chat", []string{"brain/bot/config", "brain/channels/console", "brain/engine", "brain/store", "brain/tools"}},
	// The web console, like the API, works on interfaces.
	{"brain/bot/web", []string{"brain/bot/schedule", "brain/bot/config", "brain/bot/bridge", "brain/engine", "brain/store", "brain/tools"}},
	// Its browser tests drive a whole brain, as a user would.
	{"brain/bot/web/webtest", []string{"*"}},
	{"brain/bot/schedule", []string{"brain/bot/config", "brain/engine", "brain/store", "brain/tools"}},
	{"brain/bot/bridge", []string{"brain/engine", "brain/store", "brain/tools"}},
	// Governance: the audit trail, budgets and retention, on the store
	// contract.
	{"brain/bot/audit", []string{"brain/engine", "brain/store", "brain/tools"}},
	{"brain/bot/connect", []string{"brain/engine", "brain/store", "brain/tools"}},
	{"brain/bot/governance", []string{"brain/bot/audit", "brain/bot/config", "brain/engine", "brain/store", "brain/tools"}},
	{"brain/bot/bridge/bridgetest", []string{"brain/engine", "brain/tools"}},
	{"brain/bot/filestore", []string{"brain/engine", "brain/tools"}},
	{"brain/bot/slackbridge", []string{"brain/bot/bridge", "brain/bot/config", "brain/bot/filestore", "brain/channels/slack", "brain/webhooks/slackhook", "brain/engine", "brain/store", "brain/tools"}},
	{"brain/bot/linearbridge", []string{"brain/bot/bridge", "brain/bot/config", "brain/channels/linear", "brain/webhooks/linearhook", "brain/engine", "brain/store", "brain/tools"}},
	{"brain/bot/githubbridge", []string{"brain/bot/bridge", "brain/bot/config", "brain/channels/github", "brain/webhooks/githubhook", "brain/engine", "brain/store", "brain/tools"}},
	// The context benchmarks drive the real engine, store and adapters.
	{"brain/bench/context", []string{"brain/engine", "brain/store", "brain/engine/model/anthropic", "brain/engine/model/fakemodel", "brain/store/sqlite", "brain/tools"}},
	// brain migrate copies between the two stores, so it sees both.
	{"brain/bot/migrate", []string{"brain/store/sqlite", "brain/store/postgres", "brain/engine", "brain/store", "brain/tools"}},
	// The load scripts drive brain from outside, as operators would.
	{"brain/bench/...", []string{"*"}},
	// Wiring knows everything; main only calls it. The replicas test rig
	// builds and drives the real binary (tests only).
	{"brain/bot", []string{"*"}},
	{"brain/bot/replicatest", []string{"*"}},
	{"brain/cmd/brain", []string{"*"}},
}

// engineLeaves are the engine's subsystem packages: leaves that come with
// the engine, so a package allowed the engine is allowed them.
var engineLeaves = []string{"brain/engine/lease", "brain/engine/policy"}

func layerFor(pkg string) ([]string, bool) {
	for _, l := range layers {
		if base, ok := strings.CutSuffix(l.pkg, "/..."); ok {
			if strings.HasPrefix(pkg, base+"/") {
				return l.imports, true
			}
		} else if pkg == l.pkg {
			return l.imports, true
		}
	}
	return nil, false
}

// TestLayering checks every project package's dependencies (direct and
// transitive) against layers.
func TestLayering(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go command not on PATH")
	}
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Deps}} {{.}}{{end}}`, "brain/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	checked := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg, deps := fields[0], fields[1:]
		allowed, ok := layerFor(pkg)
		if !ok {
			t.Errorf("%s has no layering rule; add it to layers (and to the README's table)", pkg)
			continue
		}
		if len(allowed) == 1 && allowed[0] == "*" {
			continue
		}
		if slices.Contains(allowed, "brain/engine") {
			allowed = append(slices.Clone(allowed), engineLeaves...)
		}
		checked++
		for _, d := range deps {
			if strings.HasPrefix(d, "brain/internal/") {
				continue // the shared leaves (their rule keeps them so)
			}
			if strings.HasPrefix(d, "brain/") && !slices.Contains(allowed, d) {
				t.Errorf("%s imports %s; allowed project imports: %v", pkg, d, allowed)
			}
		}
	}
	if checked == 0 {
		t.Fatal("no packages checked")
	}
}

func TestLayerFor(t *testing.T) {
	for pkg, want := range map[string]string{
		"brain/tools":                  "",
		"brain/tools/web":              "brain/tools",
		"brain/engine/model/openai":    "brain/engine brain/tools",
		"brain/engine/model/modeltest": "brain/engine brain/engine/model/fakemodel brain/tools",
		"brain/channels/slack":         "brain/engine brain/store brain/tools",
		"brain/bot":                    "*",
		"brain/internal/startstop":     "",
		"brain/store":                  "brain/engine brain/tools",
	} {
		got, ok := layerFor(pkg)
		if !ok || strings.Join(got, " ") != want {
			t.Errorf("layerFor(%s) = %v, %v; want %q", pkg, got, ok, want)
		}
	}
	if _, ok := layerFor("brain/newthing"); ok {
		t.Error("an unplaced package matched a rule")
	}
}

// TestLayering_CmdOnlyCallsBot keeps main thin: its only project imports are
// bot, bot/config (to load the file it is given), the API's client (the
// commands that act through a running daemon) and engine's types it prints.
func TestLayering_CmdOnlyCallsBot(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{join .Imports " "}}`, "brain/cmd/brain").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, imp := range strings.Fields(string(out)) {
		if strings.HasPrefix(imp, "brain/") && !slices.Contains([]string{"brain/bot", "brain/bot/config", "brain/bot/api/client", "brain/engine"}, imp) {
			t.Errorf("cmd/brain imports %s; it should only call bot", imp)
		}
	}
}

// TestLayering_DriversOnlyWiredByBot: a store driver (store/sqlite,
// store/postgres) is imported by the wiring only (bot, brain migrate's
// copier, the benchmarks and the driver's own test helpers); everything
// else works on the store contract's interfaces and asserts capabilities
// on them.
func TestLayering_DriversOnlyWiredByBot(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go command not on PATH")
	}
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, "brain/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	drivers := []string{"brain/store/sqlite", "brain/store/postgres"}
	wiring := func(pkg string) bool {
		return pkg == "brain/bot" || pkg == "brain/bot/migrate" || strings.HasPrefix(pkg, "brain/bench/")
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg, imports := fields[0], fields[1:]
		for _, imp := range imports {
			for _, d := range drivers {
				if imp != d && !strings.HasPrefix(imp, d+"/") || strings.HasPrefix(pkg, d) || wiring(pkg) {
					continue
				}
				t.Errorf("%s imports the store driver %s; only the wiring (bot) may", pkg, imp)
			}
		}
	}
}

// maxFileLines is where a non-test file is a prompt to split it by
// responsibility (STYLE.md: a file is one idea).
const maxFileLines = 500

// TestFileSizes: no non-test Go file of the module is over maxFileLines.
func TestFileSizes(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	err = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "node_modules" || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		n, err := countLines(path)
		if err != nil {
			return err
		}
		checked++
		if n > maxFileLines {
			rel, _ := filepath.Rel(root, path)
			t.Errorf("%s has %d lines (over %d): split it by responsibility", rel, n, maxFileLines)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 100 {
		t.Fatalf("checked %d files; is the module root %s?", checked, root)
	}
}

func countLines(path string) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	n := 0
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		n++
	}
	return n, sc.Err()
}
