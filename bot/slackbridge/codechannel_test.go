package slackbridge

import (
	"encoding/json"
	"testing"

	"brain/engine"
)

// TestStartsCoding: a clone (https or git@host:) or a proposal starts
// coding and names the channel; other commands and tools do not.
func TestStartsCoding(t *testing.T) {
	sandbox := func(cmd string) engine.ToolCall {
		in, _ := json.Marshal(map[string]string{"command": cmd})
		return engine.ToolCall{Name: toolSandbox, Input: in}
	}
	tests := []struct {
		call engine.ToolCall
		name string
		ok   bool
	}{
		{sandbox("git clone https://github.com/acme/widgets.git"), "work on acme/widgets", true},
		{sandbox("set -e; git clone -q --depth 1 https://x-access-token@github.com/acme/widgets widgets && cd widgets"), "work on acme/widgets", true},
		{sandbox("git -c http.proxy= clone git@github.com:acme/api.git"), "work on acme/api", true},
		{sandbox("test -d w || git clone https://ghe.example.com/team/w.git w; cd w"), "work on team/w", true},
		{sandbox("git status; ls"), "", false},
		{sandbox("echo git clone later"), "", false},
		{engine.ToolCall{Name: toolPropose, Input: json.RawMessage(`{"repo":"acme/widgets","title":"Say hello"}`)}, "acme/widgets: Say hello", true},
		{engine.ToolCall{Name: "github_get_file", Input: json.RawMessage(`{}`)}, "", false},
	}
	for _, tt := range tests {
		name, ok := startsCoding(tt.call)
		if ok != tt.ok || name != tt.name {
			t.Errorf("startsCoding(%s %s) = %q, %v; want %q, %v", tt.call.Name, tt.call.Input, name, ok, tt.name, tt.ok)
		}
	}
}

// TestContextBar: a clone sets the repository with its link; a proposal
// the base branch; its application the pushed branch, the pull request and
// its checks, in that order; a repeated call changes nothing.
func TestContextBar(t *testing.T) {
	var bar contextBar
	clone := engine.ToolCall{Name: toolSandbox, Input: json.RawMessage(`{"command":"git clone https://github.com/acme/widgets.git"}`)}
	bar, changed := bar.called(clone)
	if !changed || bar.Repo == nil || bar.Repo.URL != "https://github.com/acme/widgets" {
		t.Fatalf("after the clone: %+v, %v", bar.Repo, changed)
	}
	if _, changed := bar.called(clone); changed {
		t.Error("a second clone changed the bar")
	}
	bar, changed = bar.called(engine.ToolCall{Name: toolPropose, Input: json.RawMessage(`{"repo":"acme/widgets","base":"main"}`)})
	if !changed || bar.Branch == nil || bar.Branch.Label != "into main" || bar.Repo.URL == "" {
		t.Fatalf("after the proposal: %+v %+v", bar.Repo, bar.Branch)
	}
	bar = bar.applied(engine.ApplySucceeded{Tool: toolPropose, Output: json.RawMessage(
		`{"repo":"acme/widgets","branch":"brain/d1","number":7,"url":"https://github.com/acme/widgets/pull/7"}`)})
	var keys, labels []string
	for _, it := range bar.items() {
		keys, labels = append(keys, it.Key), append(labels, it.Label)
	}
	if len(keys) != 4 || keys[2] != "pr" || labels[1] != "brain/d1 → main" || labels[2] != "Pull request #7" ||
		bar.Checks.URL != "https://github.com/acme/widgets/pull/7/checks" || !bar.PROpened {
		t.Fatalf("after the application: %v %v %+v", keys, labels, bar)
	}
	if got := (contextBar{}).applied(engine.ApplySucceeded{Output: json.RawMessage(`{"url":""}`)}); got.PR != nil {
		t.Errorf("an output without a pull request set one: %+v", got)
	}
}
