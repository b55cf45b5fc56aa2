package slack

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"brain/channels/slack/slackfake"
)

func newReader(t *testing.T, token string) (*Reader, *slackfake.Server, *time.Time) {
	t.Helper()
	fake := slackfake.New()
	t.Cleanup(func() {
		fake.Close()
		recordSlack(t, fake)
	})
	now := time.Unix(1_700_000_000, 0)
	r := NewReader(slack.New(token, slack.OptionAPIURL(fake.URL()+"/api/")), func() time.Time { return now })
	return r, fake, &now
}

// TestReader_ThreadBefore: a long thread is read across pages, oldest
// first, up to (not including) the mention and nothing after it.
func TestReader_ThreadBefore(t *testing.T) {
	r, fake, _ := newReader(t, slackfake.BotToken)
	root := fake.AddMessage(slackfake.Message{Channel: "C1", Author: "U1", Text: "root"})
	var mention string
	for i := range 450 {
		m := fake.AddMessage(slackfake.Message{Channel: "C1", ThreadTS: root.TS, Author: "U2", Text: fmt.Sprint("m", i),
			Files: []slackfake.File{{ID: "F1", Name: "a.txt"}}})
		if i == 420 {
			mention = m.TS
		}
	}
	msgs, err := r.ThreadBefore(testCtx(t), "C1", root.TS, mention)
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 421 || msgs[0].Text != "root" || msgs[420].Text != "m419" || msgs[1].Files[0] != "a.txt" {
		t.Fatalf("%d messages, first %+v, last %+v", len(msgs), msgs[0], msgs[len(msgs)-1])
	}
	if n := len(fake.Calls("conversations.replies")); n != 3 {
		t.Errorf("%d pages read, want 3", n)
	}
	if _, err := r.ThreadBefore(testCtx(t), "C1", "1.000000", "2.000000"); err == nil {
		t.Error("a missing thread read without error")
	}
}

// TestReader_UserNameCached: names come from users.info once an hour; an
// unknown user reads as their id.
func TestReader_UserNameCached(t *testing.T) {
	r, fake, now := newReader(t, slackfake.BotToken)
	fake.AddUser(slackfake.User{ID: "U1", Name: "al", RealName: "Alice Liddell", DisplayName: "alice"})
	for range 3 {
		if got := r.UserName(testCtx(t), "U1"); got != "alice" {
			t.Fatalf("name = %q", got)
		}
	}
	*now = now.Add(2 * time.Hour)
	r.UserName(testCtx(t), "U1")
	if n := len(fake.Calls("users.info")); n != 2 {
		t.Errorf("users.info called %d times, want 2", n)
	}
	if got := r.UserName(testCtx(t), "U404"); got != "U404" {
		t.Errorf("unknown user = %q", got)
	}
}

// TestReader_Download: the bot token gets the file, a wrong token is
// refused (Slack redirects to sign-in), a file over the cap stops.
func TestReader_Download(t *testing.T) {
	r, fake, _ := newReader(t, slackfake.BotToken)
	f := fake.AddFile(slackfake.File{ID: "F1", Name: "a b.txt", Data: []byte("hello")})
	data, err := r.Download(testCtx(t), f.URL, 100)
	if err != nil || string(data) != "hello" {
		t.Fatalf("download = %q, %v", data, err)
	}
	if _, err := r.Download(testCtx(t), f.URL, 4); !errors.Is(err, ErrTooLarge) {
		t.Errorf("over the cap: %v", err)
	}
	if _, err := r.Download(testCtx(t), fake.URL()+"/files-pri/"+slackfake.TeamID+"-F404/download/x", 100); err == nil {
		t.Error("a missing file downloaded")
	}
	wrong := NewReader(slack.New("xoxb-other", slack.OptionAPIURL(fake.URL()+"/api/")), nil)
	if _, err := wrong.Download(testCtx(t), f.URL, 100); err == nil || !strings.Contains(err.Error(), "sign-in") {
		t.Errorf("wrong token: %v", err)
	}
	if _, err := r.Download(testCtx(t), "https://evil.example/steal", 100); err == nil || !strings.Contains(err.Error(), "refusing to send the token") {
		t.Errorf("foreign host: %v", err)
	}
	if n := fake.Downloads("F1"); n != 2 {
		t.Errorf("%d downloads served, want 2", n)
	}
}

// TestGroups_Members: members are read once per TTL and the last answer
// is kept when Slack fails; other entries are refused.
func TestGroups_Members(t *testing.T) {
	r, fake, now := newReader(t, slackfake.BotToken)
	g := NewGroups(r)
	fake.SetGroup("S1", "U1", "U2")
	for range 2 {
		m, err := g.Members(testCtx(t), "subteam:S1")
		if err != nil || strings.Join(m, ",") != "U1,U2" {
			t.Fatalf("members = %v, %v", m, err)
		}
	}
	fake.Fail("usergroups.users.list", 1, "ratelimited")
	*now = now.Add(time.Hour)
	if m, err := g.Members(testCtx(t), "subteam:S1"); err != nil || len(m) != 2 {
		t.Fatalf("stale members = %v, %v", m, err)
	}
	fake.SetGroup("S1", "U3")
	if m, _ := g.Members(testCtx(t), "subteam:S1"); strings.Join(m, ",") != "U3" {
		t.Errorf("refreshed members = %v", m)
	}
	if n := len(fake.Calls("usergroups.users.list")); n != 3 {
		t.Errorf("%d calls, want 3", n)
	}
	if _, err := g.Members(testCtx(t), "subteam:S404"); err == nil {
		t.Error("unknown group read")
	}
	if _, err := g.Members(testCtx(t), "team:X"); err == nil {
		t.Error("a non-Slack group entry read")
	}
}

// TestPublishHome_OverLimitRefused: the fake refuses views over Slack's
// 100 blocks, and HomeBlocks never sends one.
func TestPublishHome_OverLimitRefused(t *testing.T) {
	r, fake, _ := newReader(t, slackfake.BotToken)
	var v HomeView
	for i := range 60 {
		v.Approvals = append(v.Approvals, HomeApproval{})
		v.Approvals[i].Approval.ID = fmt.Sprint("apr_", i)
		v.Approvals[i].Approval.Card.Title = "Deploy"
	}
	if err := r.PublishHome(testCtx(t), "U1", v); err != nil {
		t.Fatal(err)
	}
	view, ok := fake.HomeView("U1")
	if !ok || !strings.Contains(string(view), "…and") {
		t.Fatalf("view = %s", view)
	}
	blocks := make([]slack.Block, 101)
	for i := range blocks {
		blocks[i] = slack.NewDividerBlock()
	}
	_, err := r.api.PublishViewContext(testCtx(t), slack.PublishViewContextRequest{UserID: "U1",
		View: slack.HomeTabViewRequest{Type: slack.VTHomeTab, Blocks: slack.Blocks{BlockSet: blocks}}})
	if err == nil || !strings.Contains(err.Error(), "invalid_blocks") {
		t.Errorf("101 blocks: %v", err)
	}
}
