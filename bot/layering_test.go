package bot

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// layers is the dependency direction DESIGN.md and the README's "Where
// things live" table set: for each package (exact, or a "/..." prefix),
// the project packages it may import, directly or through others. The
// first matching rule wins; "*" means anything. Packages under no rule are
// an error, so a new package has to be placed deliberately.
var layers = []struct {
	pkg     string
	imports []string
}{
	// The leaves.
	{"brain/tools", nil},
	{"brain/bot/config", nil},
	{"brain/bot/metrics", nil},
	// The platforms' published contracts, which the fakes check (tests only).
	{"brain/internal/contracts", nil},
	// Tool families see only the tool contract.
	{"brain/tools/...", []string{"brain/tools"}},
	// The core sees only the tool contract; its leaves see only the core.
	{"brain/engine", []string{"brain/tools"}},
	{"brain/engine/durable", []string{"brain/engine", "brain/tools"}},
	// The adapters' conformance suite scripts the fake model server.
	{"brain/engine/model/modeltest", []string{"brain/engine", "brain/engine/model/fakemodel", "brain/tools"}},
	{"brain/engine/...", []string{"brain/engine", "brain/engine/durable", "brain/tools"}},
	// Adapters to the outside world: never each other, never bot.
	{"brain/store/...", []string{"brain/engine", "brain/engine/durable", "brain/tools"}},
	{"brain/channels/...", []string{"brain/engine", "brain/engine/durable", "brain/tools"}},
	{"brain/webhooks/...", []string{"brain/engine", "brain/engine/durable", "brain/tools"}},
	// The application layer works on interfaces: no concrete store. The
	// API shows the scheduler's own views, so it sees schedule (and what
	// schedule sees), but no store, channel, webhook or bot.
	{"brain/bot/api", []string{"brain/bot/schedule", "brain/bot/config", "brain/bot/metrics", "brain/engine", "brain/engine/durable", "brain/tools"}},
	// The web console, like the API, works on interfaces.
	{"brain/bot/web", []string{"brain/bot/schedule", "brain/bot/config", "brain/engine", "brain/engine/durable", "brain/tools"}},
	// Its browser tests drive a whole brain, as a user would.
	{"brain/bot/web/webtest", []string{"*"}},
	{"brain/bot/schedule", []string{"brain/bot/config", "brain/engine", "brain/engine/durable", "brain/tools"}},
	{"brain/bot/bridge", []string{"brain/engine", "brain/engine/durable", "brain/tools"}},
	{"brain/bot/filestore", []string{"brain/engine", "brain/tools"}},
	{"brain/bot/slackbridge", []string{"brain/bot/bridge", "brain/bot/config", "brain/bot/filestore", "brain/channels/slack", "brain/webhooks/slackhook", "brain/engine", "brain/engine/durable", "brain/tools"}},
	{"brain/bot/linearbridge", []string{"brain/bot/bridge", "brain/bot/config", "brain/channels/linear", "brain/webhooks/linearhook", "brain/engine", "brain/engine/durable", "brain/tools"}},
	// The context benchmarks drive the real engine, store and adapters.
	{"brain/bench/context", []string{"brain/engine", "brain/engine/durable", "brain/engine/model/anthropic", "brain/engine/model/fakemodel", "brain/store/sqlite", "brain/tools"}},
	// brain migrate copies between the two stores, so it sees both.
	{"brain/bot/migrate", []string{"brain/store/sqlite", "brain/store/postgres", "brain/engine", "brain/engine/durable", "brain/tools"}},
	// The load scripts drive brain from outside, as operators would.
	{"brain/bench/...", []string{"*"}},
	// Wiring knows everything; main only calls it. The replicas test rig
	// builds and drives the real binary (tests only).
	{"brain/bot", []string{"*"}},
	{"brain/bot/replicatest", []string{"*"}},
	{"brain/cmd/brain", []string{"*"}},
}

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
		checked++
		for _, d := range deps {
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
		"brain/engine/model/openai":    "brain/engine brain/engine/durable brain/tools",
		"brain/engine/model/modeltest": "brain/engine brain/engine/model/fakemodel brain/tools",
		"brain/channels/slack":         "brain/engine brain/engine/durable brain/tools",
		"brain/bot":                    "*",
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
// bot, bot/config (to load the file it is given) and engine's types it prints.
func TestLayering_CmdOnlyCallsBot(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{join .Imports " "}}`, "brain/cmd/brain").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, imp := range strings.Fields(string(out)) {
		if strings.HasPrefix(imp, "brain/") && imp != "brain/bot" && imp != "brain/bot/config" && imp != "brain/engine" {
			t.Errorf("cmd/brain imports %s; it should only call bot", imp)
		}
	}
}
