package slack

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"brain/engine"
	"brain/tools"
)

// TestHomeBlocks_Limit: however many approvals and sessions wait, the view
// stays within Slack's 100 blocks and counts what it leaves out.
func TestHomeBlocks_Limit(t *testing.T) {
	for _, tc := range []struct {
		approvals, sessions int
		wantMore            string
	}{
		{0, 0, ""},
		{3, 2, ""},
		{28, 10, ""},               // 1 notice + 2 headers + 1 divider + 10 sessions + 28*3 = 98
		{29, 10, "…and 1 more"},    // one more does not fit with its "more" line
		{200, 25, "…and 172 more"}, // a "more" line for sessions too
	} {
		t.Run(fmt.Sprintf("%d_%d", tc.approvals, tc.sessions), func(t *testing.T) {
			var v HomeView
			v.Notice = "Approved: x"
			for i := range tc.approvals {
				v.Approvals = append(v.Approvals, HomeApproval{Approval: engine.Approval{
					ID: fmt.Sprintf("apr_%d", i), Card: tools.Card{Title: "Deploy", Facts: []tools.Fact{{Label: "Service", Value: "api"}}},
				}, Link: "https://x.slack.com/archives/C1/p1"})
			}
			for i := range tc.sessions {
				v.Sessions = append(v.Sessions, HomeSession{Session: engine.Session{ID: fmt.Sprint(i), Status: engine.StatusIdle, UpdatedAt: time.Unix(0, 0)}})
			}
			blocks, err := HomeBlocks(v)
			if err != nil {
				t.Fatal(err)
			}
			if len(blocks) > maxHomeBlocks {
				t.Fatalf("%d blocks, Slack allows %d", len(blocks), maxHomeBlocks)
			}
			raw, _ := json.Marshal(blocks)
			if tc.wantMore != "" && !strings.Contains(string(raw), tc.wantMore) {
				t.Errorf("no %q in the %d blocks", tc.wantMore, len(blocks))
			}
			if tc.wantMore == "" && strings.Contains(string(raw), "more") {
				t.Errorf("unexpected \"more\" line in the %d blocks", len(blocks))
			}
			if got := strings.Count(string(raw), `"action_id":"brain_approve"`); tc.wantMore == "" && got != tc.approvals {
				t.Errorf("%d Approve buttons, want %d", got, tc.approvals)
			}
			if tc.sessions > maxHomeSessions && !strings.Contains(string(raw), fmt.Sprintf("…and %d more", tc.sessions-maxHomeSessions)) {
				t.Errorf("sessions beyond %d not counted", maxHomeSessions)
			}
		})
	}
}

func TestThreadLink(t *testing.T) {
	s := engine.Session{ThreadKey: "slack:T1:C9:1700000000.000100"}
	if got := ThreadLink("https://acme.slack.com/", s); got != "https://acme.slack.com/archives/C9/p1700000000000100" {
		t.Errorf("link = %q", got)
	}
	if got := ThreadLink("", s); got != "" {
		t.Errorf("link without workspace URL = %q", got)
	}
	if got := ThreadLink("https://acme.slack.com/", engine.Session{ThreadKey: "linear:x"}); got != "" {
		t.Errorf("link of a Linear session = %q", got)
	}
}
