package slack

import (
	"errors"
	"strings"
	"testing"
)

// TestCodeChannel_Calls: the code channel calls, through the real
// slack-go client against the fake (and, in TestMain, against
// @slack/web-api's request types): create is idempotent on the session
// id, the context bar keeps five items cut to Slack's limits, the diff
// view carries the diff and branches, the status is set without a
// thread, and archiving twice is not an error.
func TestCodeChannel_Calls(t *testing.T) {
	p, fake := newPoster(t)
	ctx := testCtx(t)
	id, err := p.CreateCodeChannel(ctx, "Fix the flaky test", testChannel, testThread, "ses-1")
	if err != nil {
		t.Fatalf("CreateCodeChannel: %v", err)
	}
	again, err := p.CreateCodeChannel(ctx, "Fix the flaky test", testChannel, testThread, "ses-1")
	if err != nil || again != id {
		t.Fatalf("a retry of the same session = %q, %v; want %q", again, err, id)
	}
	if n := len(fake.CodeChannels()); n != 1 {
		t.Fatalf("%d code channels, want 1", n)
	}
	c, _ := fake.CodeChannel(id)
	if c.OriginChannel != testChannel || c.OriginTS != testThread || c.SessionID != "ses-1" {
		t.Errorf("channel = %+v, want the origin message and the session id", c)
	}

	items := []ContextItem{{Key: "repo", Label: "acme/widgets", Icon: "folder", URL: "https://github.com/acme/widgets"}}
	for i := range 6 {
		items = append(items, ContextItem{Key: strings.Repeat("k", 70) + string(rune('a'+i)), Label: strings.Repeat("l", 200)})
	}
	if err := p.SetContextBar(ctx, id, items); err != nil {
		t.Fatalf("SetContextBar: %v", err)
	}
	c, _ = fake.CodeChannel(id)
	if len(c.ContextBar) != 5 || c.ContextBar[0].Label != "acme/widgets" || c.ContextBar[0].Icon != "folder" {
		t.Errorf("context bar = %+v, want the first five items", c.ContextBar)
	}

	diff := "diff --git a/x.go b/x.go\n--- a/x.go\n+++ b/x.go\n@@ -1 +1 @@\n-a\n+b\n"
	if err := p.SetDiffView(ctx, id, diff, "main", "brain/d1"); err != nil {
		t.Fatalf("SetDiffView: %v", err)
	}
	if c, _ = fake.CodeChannel(id); c.Diff != diff || c.DiffBase != "main" || c.DiffHead != "brain/d1" {
		t.Errorf("diff view = %q %q %q", c.Diff, c.DiffBase, c.DiffHead)
	}
	if err := p.SetDiffView(ctx, id, strings.Repeat("x", maxViewContent+1), "", ""); err != nil {
		t.Errorf("an oversized diff: %v, want it left out", err)
	}
	if c, _ = fake.CodeChannel(id); c.Diff != diff {
		t.Errorf("an oversized diff replaced the view")
	}

	if err := p.SetAgentStatus(ctx, id, "", AgentProcessing); err != nil {
		t.Fatalf("SetAgentStatus in the channel: %v", err)
	}
	if got := fake.AgentStatus(id, ""); got != AgentProcessing {
		t.Errorf("status = %q, want %q", got, AgentProcessing)
	}
	for range 2 {
		if err := p.ArchiveCodeChannel(ctx, id, ""); err != nil {
			t.Fatalf("ArchiveCodeChannel: %v", err)
		}
	}
	if c, _ = fake.CodeChannel(id); !c.Archived {
		t.Error("the channel is not archived")
	}
}

// TestCodeChannel_Refused: Slack's refusals (a missing scope, a method it
// does not know, not allowed) say "fall back to the thread"; a rate limit
// or a server error does not.
func TestCodeChannel_Refused(t *testing.T) {
	p, fake := newPoster(t)
	ctx := testCtx(t)
	for _, code := range []string{"missing_scope", "unknown_method", "not_allowed"} {
		fake.Fail("agents.conversations.create", 1, code)
		_, err := p.CreateCodeChannel(ctx, "x", testChannel, testThread, "ses-"+code)
		if err == nil || !CodeChannelsRefused(err) {
			t.Errorf("%s: err = %v, refused = %v; want refused", code, err, CodeChannelsRefused(err))
		}
	}
	fake.Fail("agents.conversations.create", 1, "internal_error")
	if _, err := p.CreateCodeChannel(ctx, "x", testChannel, testThread, "ses-x"); err == nil || CodeChannelsRefused(err) {
		t.Errorf("internal_error: err = %v; want an error worth retrying", err)
	}
	if CodeChannelsRefused(errors.New("connection reset")) {
		t.Error("a network error counted as a refusal")
	}
}
