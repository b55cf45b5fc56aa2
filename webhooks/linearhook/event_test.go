package linearhook

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

var testNow = time.Unix(1_700_000_000, 0)

func TestParseEvent_Created(t *testing.T) {
	it, ignored, err := ParseEvent(mustJSON(t, createdEvent(t, testNow)))
	if err != nil || ignored != "" {
		t.Fatalf("ParseEvent: ignored %q err %v", ignored, err)
	}
	checkWellFormed(t, it)
	want := Item{
		Kind:             KindCreated,
		DeliveryID:       "created:" + sessionID,
		EventKey:         "created:" + sessionID,
		OrganizationID:   "org-1",
		SessionID:        sessionID,
		ThreadKey:        "linear:" + sessionID,
		Text:             "@brain please implement this",
		Context:          "<issue identifier=\"ENG-123\"><title>Fix checkout</title></issue>\n<primary-directive-thread>Please implement this</primary-directive-thread>",
		Guidance:         "Always follow coding standards",
		PreviousComments: []Comment{{ID: "c-0", Body: "Earlier note", UserID: "u-9"}},
		UserID:           creatorID,
		UserName:         "John Doe",
		IssueID:          issueID,
		IssueIdentifier:  "ENG-123",
		IssueTitle:       "Fix checkout",
		IssueURL:         "https://linear.app/acme/issue/ENG-123/fix-checkout",
		TeamID:           "team-1",
	}
	if !reflect.DeepEqual(it, want) {
		t.Fatalf("item\n got %+v\nwant %+v", it, want)
	}
	if it.Prompt() != want.Context {
		t.Fatalf("Prompt = %q", it.Prompt())
	}
}

// Delegation by assignment: no comment, no creator object, only creatorId.
func TestParseEvent_CreatedByDelegation(t *testing.T) {
	ev := createdEvent(t, testNow)
	s := ev["agentSession"].(map[string]any)
	delete(s, "comment")
	delete(s, "commentId")
	delete(s, "creator")
	ev["promptContext"] = nil
	delete(ev, "previousComments")
	it, ignored, err := ParseEvent(mustJSON(t, ev))
	if err != nil || ignored != "" {
		t.Fatalf("ParseEvent: ignored %q err %v", ignored, err)
	}
	checkWellFormed(t, it)
	if it.Text != "" || it.Context != "" || it.UserID != creatorID || it.UserName != "" || it.IssueIdentifier != "ENG-123" {
		t.Fatalf("item %+v", it)
	}
	if p := it.Prompt(); p != "ENG-123 Fix checkout" {
		t.Fatalf("Prompt = %q", p)
	}
}

func TestParseEvent_Prompted(t *testing.T) {
	tests := []struct {
		name, body, signal string
		wantText           string
		wantStop           bool
	}{
		{"reply", "  also update the docs ", "", "also update the docs", false},
		{"select choice", "src/packages/frontend", "", "src/packages/frontend", false},
		{"stop", "", "stop", "", true},
		{"stop with text", "Stop request", "stop", "Stop request", true},
		{"continue signal", "go on", "continue", "go on", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			it, ignored, err := ParseEvent(mustJSON(t, promptedEvent(t, testNow, tt.body, tt.signal)))
			if err != nil || ignored != "" {
				t.Fatalf("ParseEvent: ignored %q err %v", ignored, err)
			}
			checkWellFormed(t, it)
			if it.Text != tt.wantText || it.Stop != tt.wantStop || it.ActivityID != activityID ||
				it.EventKey != "prompted:"+activityID || it.UserID != creatorID || it.UserName != "John Doe" ||
				it.IssueURL == "" || it.Prompt() != tt.wantText {
				t.Fatalf("item %+v", it)
			}
		})
	}
}

// The guide names agentActivity.body; the schema says content.body. Both
// are read, content first.
func TestParseEvent_PromptedBodyFallback(t *testing.T) {
	ev := promptedEvent(t, testNow, "", "")
	ev["agentActivity"].(map[string]any)["body"] = "legacy body"
	it, ignored, err := ParseEvent(mustJSON(t, ev))
	if err != nil || ignored != "" || it.Text != "legacy body" {
		t.Fatalf("item %+v ignored %q err %v", it, ignored, err)
	}
}

// Someone other than the session's creator prompts: their id, no name.
func TestParseEvent_PromptedByAnotherUser(t *testing.T) {
	ev := promptedEvent(t, testNow, "me too", "")
	ev["agentActivity"].(map[string]any)["userId"] = "other-user"
	it, _, err := ParseEvent(mustJSON(t, ev))
	if err != nil || it.UserID != "other-user" || it.UserName != "" {
		t.Fatalf("item %+v err %v", it, err)
	}
}

func TestParseEvent_Ignored(t *testing.T) {
	noSession := createdEvent(t, testNow)
	noSession["agentSession"].(map[string]any)["id"] = ""
	badSession := createdEvent(t, testNow)
	badSession["agentSession"].(map[string]any)["id"] = "a:b"
	noActivity := promptedEvent(t, testNow, "hi", "")
	delete(noActivity, "agentActivity")
	emptyPrompt := promptedEvent(t, testNow, "   ", "")
	tests := map[string][]byte{
		"issue webhook":    []byte(`{"type":"Issue","action":"update","data":{"id":"x","title":{"nested":true}},"webhookTimestamp":1}`),
		"comment webhook":  []byte(`{"type":"Comment","action":"create","data":[]}`),
		"no type":          []byte(`{}`),
		"other action":     []byte(`{"type":"AgentSessionEvent","action":"updated","agentSession":"not even an object"}`),
		"no session id":    mustJSON(t, noSession),
		"bad session id":   mustJSON(t, badSession),
		"prompt no act":    mustJSON(t, noActivity),
		"empty prompt":     mustJSON(t, emptyPrompt),
		"null session":     []byte(`{"type":"AgentSessionEvent","action":"created","agentSession":null}`),
		"null activity id": []byte(`{"type":"AgentSessionEvent","action":"prompted","agentSession":{"id":"s1"},"agentActivity":{"id":null,"content":{"body":"x"}}}`),
	}
	for name, body := range tests {
		t.Run(name, func(t *testing.T) {
			it, ignored, err := ParseEvent(body)
			if err != nil || ignored == "" || !reflect.DeepEqual(it, Item{}) {
				t.Fatalf("item %+v ignored %q err %v", it, ignored, err)
			}
		})
	}
}

func TestParseEvent_Errors(t *testing.T) {
	tests := map[string]string{
		"not json":          `{not json`,
		"array":             `[1,2]`,
		"truncated":         `{"type":"AgentSessionEvent","action":"created","agentSession":{"id":"s1"`,
		"session as string": `{"type":"AgentSessionEvent","action":"created","agentSession":"s1"}`,
		"body as object":    `{"type":"AgentSessionEvent","action":"prompted","agentSession":{"id":"s1"},"agentActivity":{"id":"a1","content":{"body":{}}}}`,
		"type as number":    `{"type":7}`,
	}
	for name, body := range tests {
		t.Run(name, func(t *testing.T) {
			it, ignored, err := ParseEvent([]byte(body))
			if err == nil || ignored != "" || !reflect.DeepEqual(it, Item{}) {
				t.Fatalf("item %+v ignored %q err %v", it, ignored, err)
			}
		})
	}
}

func TestQuote_Bounded(t *testing.T) {
	if q := quote(strings.Repeat("x", 1000)); len(q) > 50 {
		t.Fatalf("quote length %d", len(q))
	}
}

func TestGuidance(t *testing.T) {
	tests := []struct{ raw, want string }{
		{``, ""},
		{`null`, ""},
		{`"Be brief."`, "Be brief."},
		{`[{"body":"Use TDD."},{"body":" "},{"body":"Ship small.","origin":{"__typename":"Team","name":"Backend"}}]`, "Use TDD.\n\nFrom Backend:\nShip small."},
		{`42`, ""},
	}
	for _, tt := range tests {
		if got := guidance([]byte(tt.raw)); got != tt.want {
			t.Errorf("guidance(%s) = %q, want %q", tt.raw, got, tt.want)
		}
	}
}
