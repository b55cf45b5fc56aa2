package bot

import (
	"os/exec"
	"strings"
	"testing"
)

// TestLayering checks the dependency direction DESIGN.md sets: tools is a
// leaf; engine imports only tools of the project; tool families import only
// tools; store, channels and webhooks import engine/tools (and the leaf
// engine/durable, the records kept beside the log) but never each other;
// bot/config imports nothing of the project; bot/api works on interfaces
// and plain values, so it imports engine (for its types) and nothing of the
// store, channels, webhooks or the rest of bot; bot/schedule works on
// interfaces too, with the run records of engine/durable and its config
// types.
func TestLayering(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go command not on PATH")
	}
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Deps}} {{.}}{{end}}`, "brain/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	allowed := func(pkg string) []string {
		switch {
		case pkg == "brain/tools", pkg == "brain/bot/config":
			return nil
		case strings.HasPrefix(pkg, "brain/tools/"):
			return []string{"brain/tools"}
		case pkg == "brain/engine":
			return []string{"brain/tools"}
		case pkg == "brain/engine/durable":
			return []string{"brain/engine", "brain/tools"}
		case strings.HasPrefix(pkg, "brain/engine/"):
			return []string{"brain/engine", "brain/engine/durable", "brain/tools"}
		case strings.HasPrefix(pkg, "brain/store/"), strings.HasPrefix(pkg, "brain/channels/"), strings.HasPrefix(pkg, "brain/webhooks/"):
			return []string{"brain/engine", "brain/engine/durable", "brain/tools"}
		case pkg == "brain/bot/api":
			return []string{"brain/engine", "brain/tools"}
		case pkg == "brain/bot/schedule":
			return []string{"brain/engine", "brain/engine/durable", "brain/tools", "brain/bot/config"}
		case pkg == "brain/bot":
			return []string{"*"}
		case pkg == "brain/cmd/brain":
			return []string{"brain/bot", "*"}
		}
		return []string{"*"}
	}
	checked := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg, deps := fields[0], fields[1:]
		ok := allowed(pkg)
		if len(ok) > 0 && ok[len(ok)-1] == "*" {
			continue
		}
		checked++
		for _, d := range deps {
			if !strings.HasPrefix(d, "brain/") {
				continue
			}
			legal := false
			for _, a := range ok {
				// engine/model adapters may import engine, not each other.
				if d == a {
					legal = true
				}
			}
			if !legal {
				t.Errorf("%s imports %s; allowed project imports: %v", pkg, d, ok)
			}
		}
	}
	if checked == 0 {
		t.Fatal("no packages checked")
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
