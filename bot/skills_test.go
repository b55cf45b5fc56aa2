package bot

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"brain/bot/config"
	"brain/engine"
	"brain/engine/model/fakemodel"
	"brain/tools/skills"
	"brain/tools/skills/skillstest"
)

const releaseSkill = `---
name: release-notes
description: Write release notes for a version. Use when asked for release notes or a changelog.
license: Apache-2.0
---
# Release notes

1. Read references/style.md for the house style.
2. Count the lines with scripts/count.sh.
`

// TestSkills_EndToEnd: an agent with two skills (one from a git
// repository, one from a folder) sees both listed, loads one, reads its
// reference file, runs its script in the real sandbox with the skill
// mounted read-only; the skill is edited and synced, and the next session
// records the new hash.
func TestSkills_EndToEnd(t *testing.T) {
	if os.Getenv("BRAIN_SKIP_BWRAP") == "1" {
		t.Skip("BRAIN_SKIP_BWRAP=1")
	}
	repo := skillstest.NewRepo(t)
	repo.Commit(map[string]string{
		"skills/release-notes/SKILL.md":            releaseSkill,
		"skills/release-notes/references/style.md": "Short lines.\nPast tense.\nNo emoji.\n",
		"skills/release-notes/scripts/count.sh":    "#!/bin/sh\necho \"lines: $(wc -l < \"$1\")\"\n",
	}, "release notes skill")
	local := t.TempDir()
	skillstest.Write(t, local, map[string]string{
		"triage/SKILL.md": "---\nname: triage\ndescription: Triage an incoming page. Use when someone reports an outage.\n---\nAsk for the service name first.\n",
	})
	extra := fmt.Sprintf(`    tools: [sandbox_exec]
    skills: [release-*, triage]
tools:
  sandbox_exec: {timeout_seconds: 30}
skills:
  sources:
    - name: team
      dir: %s
    - name: shared
      git: %s
      ref: main
      path: skills
`, local, repo.URL())
	ta := newTestApp(t, extra, Options{})
	ta.fake.Push(
		fakemodel.ToolCalls(fakemodel.Call{Name: "skill", Input: `{"name":"release-notes"}`}),
		fakemodel.ToolCalls(fakemodel.Call{Name: "skill", Input: `{"name":"release-notes","path":"references/style.md"}`}),
		fakemodel.ToolCalls(fakemodel.Call{Name: "skill", Input: `{"name":"release-notes","path":"../triage/SKILL.md"}`}),
		fakemodel.ToolCalls(fakemodel.Call{Name: "sandbox_exec", Input: `{"command":"sh /skills/release-notes/scripts/count.sh /skills/release-notes/references/style.md; touch /skills/release-notes/x 2>/dev/null && echo writable || echo read-only"}`}),
		fakemodel.Text("done"),
	)
	s := ta.createSession()
	ta.sendMessage(s.ID, "write the release notes")
	_, evs := ta.waitTurns(s.ID, 1)

	reqs := ta.fake.Requests()
	sys := reqs[0].System
	i, j := strings.Index(sys, "<name>release-notes</name>"), strings.Index(sys, "<name>triage</name>")
	if i < 0 || j < i || !strings.Contains(sys, "Triage an incoming page.") || !strings.Contains(sys, "You are a test agent.") {
		t.Fatalf("system prompt does not list both skills in order:\n%s", sys)
	}
	if !strings.Contains(strings.Join(reqs[0].Tools, ","), "skill") {
		t.Fatalf("tools offered %v", reqs[0].Tools)
	}
	for _, r := range reqs[1:] {
		if r.System != sys {
			t.Fatal("the system prompt changed between rounds: the cached prefix would break")
		}
	}
	results := toolResults(t, evs)
	if len(results) != 4 {
		t.Fatalf("tool results %d: %v", len(results), results)
	}
	var body skills.Loaded
	if err := json.Unmarshal([]byte(results[0].text), &body); err != nil || !strings.Contains(body.Body, "house style") || body.Mount != "/skills/release-notes" {
		t.Fatalf("loaded %s (%v)", results[0].text, err)
	}
	if !strings.Contains(results[1].text, "Past tense.") {
		t.Fatalf("reference file: %s", results[1].text)
	}
	if !results[2].isErr || !strings.Contains(results[2].text, "leaves the skill's folder") {
		t.Fatalf("a path leaving the folder was not refused: %+v", results[2])
	}
	if results[3].isErr || !strings.Contains(results[3].text, "lines: 3") || !strings.Contains(results[3].text, "read-only") {
		t.Fatalf("script in the sandbox: %+v", results[3])
	}
	first := skillLoads(t, evs)
	dir, err := ta.app.skills.Dir("release-notes")
	if err != nil {
		t.Fatal(err)
	}
	want, err := skills.Hash(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(first) != 1 || first[0].Name != "release-notes" || first[0].Hash != want {
		t.Fatalf("skill.loaded %+v, want one of release-notes at %s", first, want)
	}

	// Edit the skill upstream and sync, as brain skills sync does.
	repo.Commit(map[string]string{"skills/release-notes/SKILL.md": releaseSkill + "3. Link the milestone.\n"}, "edit")
	cfg, err := config.Load(filepath.Join(filepath.Dir(ta.app.cfg.DataDir), "config.yaml"), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	if err := SyncSkills(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	ta.fake.Push(fakemodel.ToolCalls(fakemodel.Call{Name: "skill", Input: `{"name":"release-notes"}`}), fakemodel.Text("done"))
	s2 := ta.createSession()
	ta.sendMessage(s2.ID, "again")
	_, evs2 := ta.waitTurns(s2.ID, 1)
	second := skillLoads(t, evs2)
	if len(second) != 1 || second[0].Hash == first[0].Hash {
		t.Fatalf("after the sync: skill.loaded %+v, first %+v", second, first)
	}
	if r := toolResults(t, evs2); len(r) != 1 || !strings.Contains(r[0].text, "Link the milestone") {
		t.Fatalf("after the sync the old body was loaded: %+v", r)
	}
}

type result struct {
	text  string
	isErr bool
}

func toolResults(t *testing.T, evs []engine.Event) []result {
	t.Helper()
	var out []result
	for _, ev := range evs {
		if ev.Type == engine.EventToolResult {
			d := payload[engine.ToolCallResult](t, ev)
			out = append(out, result{text: d.Result.Content[0].Text, isErr: d.Result.IsError})
		}
	}
	return out
}

func skillLoads(t *testing.T, evs []engine.Event) []engine.SkillLoaded {
	t.Helper()
	var out []engine.SkillLoaded
	for _, ev := range evs {
		if ev.Type == engine.EventSkillLoaded {
			out = append(out, payload[engine.SkillLoaded](t, ev))
		}
	}
	return out
}
