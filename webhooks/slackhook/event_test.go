package slackhook

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

const botID = "UBOT"

// envelopeJSON wraps an inner event the way the Events API delivers it.
func envelopeJSON(t testing.TB, eventID, inner string) []byte {
	t.Helper()
	return []byte(`{"token":"XXYYZZ","team_id":"T1","api_app_id":"A1","type":"event_callback",` +
		`"event_id":"` + eventID + `","event_time":1700000000,` +
		`"authorizations":[{"enterprise_id":null,"team_id":"T1","user_id":"UBOT","is_bot":true}],` +
		`"event":` + inner + `}`)
}

func TestParseEvent_Messages(t *testing.T) {
	tests := []struct {
		name  string
		inner string
		bot   string
		want  Item
	}{
		{
			name:  "app_mention at top level",
			inner: `{"type":"app_mention","user":"U1","text":"<@UBOT> deploy it","ts":"1700000000.000100","channel":"C1","event_ts":"1700000000.000100"}`,
			bot:   botID,
			want: Item{DedupeKeys: []string{"event:Ev1", "msg:C1:1700000000.000100"},
				ThreadKey: "slack:T1:C1:1700000000.000100",
				Body: &Message{EventID: "Ev1", EventType: "app_mention", Team: "T1", Channel: "C1", User: "U1",
					Text: "deploy it", TS: "1700000000.000100", ThreadTS: "1700000000.000100", Mention: true}},
		},
		{
			name:  "message in a thread mentioning the bot",
			inner: `{"type":"message","channel":"C1","channel_type":"channel","user":"U1","text":"  <@UBOT|brain>   and again ","ts":"1700000000.000300","thread_ts":"1700000000.000100"}`,
			bot:   botID,
			want: Item{DedupeKeys: []string{"event:Ev1", "msg:C1:1700000000.000300"},
				ThreadKey: "slack:T1:C1:1700000000.000100",
				Body: &Message{EventID: "Ev1", EventType: "message", Team: "T1", Channel: "C1", ChannelType: "channel", User: "U1",
					Text: "and again", TS: "1700000000.000300", ThreadTS: "1700000000.000100", Mention: true}},
		},
		{
			name:  "DM without mention",
			inner: `{"type":"message","channel":"D1","channel_type":"im","user":"U1","text":"hello <@U2>","ts":"5.1"}`,
			bot:   botID,
			want: Item{DedupeKeys: []string{"event:Ev1", "msg:D1:5.1"}, ThreadKey: "slack:T1:D1:5.1",
				Body: &Message{EventID: "Ev1", EventType: "message", Team: "T1", Channel: "D1", ChannelType: "im", User: "U1",
					Text: "hello <@U2>", TS: "5.1", ThreadTS: "5.1"}},
		},
		{
			name:  "thread_broadcast counts",
			inner: `{"type":"message","subtype":"thread_broadcast","channel":"C1","channel_type":"channel","user":"U1","text":"fyi","ts":"5.2","thread_ts":"5.0"}`,
			bot:   botID,
			want: Item{DedupeKeys: []string{"event:Ev1", "msg:C1:5.2"}, ThreadKey: "slack:T1:C1:5.0",
				Body: &Message{EventID: "Ev1", EventType: "message", Team: "T1", Channel: "C1", ChannelType: "channel", User: "U1",
					Text: "fyi", TS: "5.2", ThreadTS: "5.0"}},
		},
		{
			name:  "file_share counts; mention of another user starting with the bot id is not stripped",
			inner: `{"type":"message","subtype":"file_share","channel":"G1","channel_type":"group","user":"U1","text":"<@UBOTX> look","ts":"5.3","files":[{"id":"F1"}]}`,
			bot:   botID,
			want: Item{DedupeKeys: []string{"event:Ev1", "msg:G1:5.3"}, ThreadKey: "slack:T1:G1:5.3",
				Body: &Message{EventID: "Ev1", EventType: "message", Team: "T1", Channel: "G1", ChannelType: "group", User: "U1",
					Text: "<@UBOTX> look", TS: "5.3", ThreadTS: "5.3"}},
		},
		{
			name:  "bot id taken from authorizations when not configured",
			inner: `{"type":"app_mention","user":"U1","text":"<@UBOT> hi","ts":"5.4","channel":"C1"}`,
			bot:   "",
			want: Item{DedupeKeys: []string{"event:Ev1", "msg:C1:5.4"}, ThreadKey: "slack:T1:C1:5.4",
				Body: &Message{EventID: "Ev1", EventType: "app_mention", Team: "T1", Channel: "C1", User: "U1",
					Text: "hi", TS: "5.4", ThreadTS: "5.4", Mention: true}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := ParseEvent(envelopeJSON(t, "Ev1", tt.inner), tt.bot)
			if err != nil {
				t.Fatalf("ParseEvent: %v", err)
			}
			if res.Item == nil {
				t.Fatalf("no item, ignored: %s", res.Ignored)
			}
			checkWellFormed(t, *res.Item)
			if !reflect.DeepEqual(*res.Item, tt.want) {
				t.Fatalf("item\n got %s\nwant %s", mustJSON(t, *res.Item), mustJSON(t, tt.want))
			}
		})
	}
}

// The two deliveries of one mention share the msg key, so an Inbox drops
// the second whichever comes first.
func TestParseEvent_MentionTwiceSharesKey(t *testing.T) {
	a, err := ParseEvent(envelopeJSON(t, "EvA", `{"type":"app_mention","user":"U1","text":"<@UBOT> go","ts":"7.1","channel":"C1"}`), botID)
	if err != nil {
		t.Fatal(err)
	}
	m, err := ParseEvent(envelopeJSON(t, "EvM", `{"type":"message","channel_type":"channel","user":"U1","text":"<@UBOT> go","ts":"7.1","channel":"C1"}`), botID)
	if err != nil {
		t.Fatal(err)
	}
	if a.Item.DedupeKeys[1] != m.Item.DedupeKeys[1] || a.Item.DedupeKeys[0] == m.Item.DedupeKeys[0] {
		t.Fatalf("keys %v and %v", a.Item.DedupeKeys, m.Item.DedupeKeys)
	}
	if a.Item.ThreadKey != m.Item.ThreadKey || a.Item.Message().Text != m.Item.Message().Text || !m.Item.Message().Mention {
		t.Fatalf("items differ: %+v vs %+v", a.Item.Message(), m.Item.Message())
	}
}

func TestParseEvent_Ignored(t *testing.T) {
	tests := []struct {
		name, body string
	}{
		{"bot message with user", string(envelopeJSON(t, "Ev1", `{"type":"message","channel":"C1","channel_type":"channel","user":"U2","bot_id":"B1","text":"hi","ts":"1.1"}`))},
		{"bot_message subtype", string(envelopeJSON(t, "Ev1", `{"type":"message","subtype":"bot_message","channel":"C1","bot_id":"B1","text":"hi","ts":"1.1"}`))},
		{"own message", string(envelopeJSON(t, "Ev1", `{"type":"message","channel":"C1","channel_type":"channel","user":"UBOT","text":"hi","ts":"1.1"}`))},
		{"no user", string(envelopeJSON(t, "Ev1", `{"type":"message","channel":"C1","channel_type":"channel","text":"hi","ts":"1.1"}`))},
		{"edited", string(envelopeJSON(t, "Ev1", `{"type":"message","subtype":"message_changed","hidden":true,"channel":"C1","channel_type":"channel","ts":"1.2","message":{"type":"message","user":"U1","text":"<@UBOT> new","ts":"1.1","edited":{"user":"U1","ts":"1.2"}},"previous_message":{"type":"message","user":"U1","text":"old","ts":"1.1"}}`))},
		{"deleted", string(envelopeJSON(t, "Ev1", `{"type":"message","subtype":"message_deleted","hidden":true,"channel":"C1","channel_type":"channel","ts":"1.3","deleted_ts":"1.1","previous_message":{"type":"message","user":"U1","text":"old","ts":"1.1"}}`))},
		{"channel_join", string(envelopeJSON(t, "Ev1", `{"type":"message","subtype":"channel_join","channel":"C1","channel_type":"channel","user":"U1","text":"<@U1> has joined","ts":"1.1"}`))},
		{"app_home channel type", string(envelopeJSON(t, "Ev1", `{"type":"message","channel":"D1","channel_type":"app_home","user":"U1","text":"hi","ts":"1.1"}`))},
		{"other event type with object user", string(envelopeJSON(t, "Ev1", `{"type":"user_change","user":{"id":"U1","name":"x"}}`))},
		{"other event type", string(envelopeJSON(t, "Ev1", `{"type":"reaction_added","user":"U1","reaction":"+1","item":{"type":"message","channel":"C1","ts":"1.1"}}`))},
		{"malformed channel id", string(envelopeJSON(t, "Ev1", `{"type":"message","channel":"C1:x","channel_type":"channel","user":"U1","text":"hi","ts":"1.1"}`))},
		{"missing ts", string(envelopeJSON(t, "Ev1", `{"type":"app_mention","channel":"C1","user":"U1","text":"<@UBOT> hi"}`))},
		{"null event", `{"type":"event_callback","team_id":"T1","event_id":"Ev1","event":null}`},
		{"no event", `{"type":"event_callback","team_id":"T1","event_id":"Ev1"}`},
		{"app_rate_limited", `{"token":"x","type":"app_rate_limited","team_id":"T1","minute_rate_limited":1518467820,"api_app_id":"A1"}`},
		{"unknown envelope", `{"type":"something_new"}`},
		{"empty object", `{}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := ParseEvent([]byte(tt.body), botID)
			if err != nil {
				t.Fatalf("ParseEvent: %v", err)
			}
			if res.Item != nil || res.Challenge != "" {
				t.Fatalf("want nothing, got %+v", res)
			}
			if res.Ignored == "" {
				t.Fatal("no reason given")
			}
		})
	}
}

func TestParseEvent_Errors(t *testing.T) {
	for _, body := range []string{
		``, `not json`, `[]`, `{"type":"url_verification"}`,
		`{"type":"event_callback","event":{"type":"message","user":{"id":"U1"}}}`,
		`{"type":"event_callback","event":"a string"}`,
	} {
		if res, err := ParseEvent([]byte(body), botID); err == nil {
			t.Errorf("ParseEvent(%q) = %+v, want error", body, res)
		}
	}
}

func TestParseEvent_URLVerification(t *testing.T) {
	res, err := ParseEvent([]byte(`{"token":"Jhj5dZrVaK7ZwHHjRyZWjbDl","challenge":"3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P","type":"url_verification"}`), "")
	if err != nil {
		t.Fatal(err)
	}
	if res.Challenge != "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P" || res.Item != nil {
		t.Fatalf("got %+v", res)
	}
}

func TestStripMention(t *testing.T) {
	tests := []struct{ text, bot, want string }{
		{"<@UBOT> hi", "UBOT", "hi"},
		{"<@UBOT|brain>hi", "UBOT", "hi"},
		{"<@UBOT|brain hi", "UBOT", "<@UBOT|brain hi"},
		{"hi <@UBOT>", "UBOT", "hi <@UBOT>"},
		{"<@UBOTX> hi", "UBOT", "<@UBOTX> hi"},
		{"<@UBOT>", "UBOT", ""},
		{" <@U1> hi ", "", "<@U1> hi"},
	}
	for _, tt := range tests {
		if got := stripMention(tt.text, tt.bot); got != tt.want {
			t.Errorf("stripMention(%q, %q) = %q, want %q", tt.text, tt.bot, got, tt.want)
		}
	}
}

// Items are stored as JSON by the Inbox: they must survive a round trip.
func TestItem_JSONRoundTrip(t *testing.T) {
	res, err := ParseEvent(envelopeJSON(t, "Ev1", `{"type":"app_mention","user":"U1","text":"<@UBOT> hi","ts":"5.4","channel":"C1"}`), botID)
	if err != nil {
		t.Fatal(err)
	}
	var back Item
	if err := json.Unmarshal([]byte(mustJSON(t, *res.Item)), &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, *res.Item) {
		t.Fatalf("round trip: %+v", back)
	}
	if !strings.Contains(mustJSON(t, back), `"thread_key":"slack:T1:C1:5.4"`) {
		t.Fatalf("json: %s", mustJSON(t, back))
	}
}

func mustJSON(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestParseEvent_AgentEvents: Slack's Stop and a new assistant thread
// become items keyed by event id and naming the thread; malformed ids are
// ignored, not recorded.
func TestParseEvent_AgentEvents(t *testing.T) {
	stop := `{"team_id":"T1","type":"event_callback","event_id":"Ev9","event":{"type":"agent_session_stopped","channel":"C1","thread_ts":"1700000000.000100","user":"U1","streaming_message_ts":[],"event_ts":"1.1"}}`
	res, err := ParseEvent([]byte(stop), "UBOT")
	if err != nil || res.Item == nil {
		t.Fatalf("stop: %+v, %v", res, err)
	}
	if it := res.Item; it.Kind() != KindStop || it.ThreadKey != "slack:T1:C1:1700000000.000100" || it.Agent().User != "U1" || it.DedupeKeys[0] != "event:Ev9" {
		t.Errorf("stop item %+v %+v", it, it.Agent())
	}
	started := `{"team_id":"T1","type":"event_callback","event_id":"Ev8","event":{"type":"assistant_thread_started","assistant_thread":{"user_id":"U2","channel_id":"D1","thread_ts":"1700000000.000300"},"event_ts":"1.2"}}`
	res, err = ParseEvent([]byte(started), "UBOT")
	if err != nil || res.Item == nil || res.Item.Kind() != KindThreadStarted || res.Item.Agent().Channel != "D1" || res.Item.Agent().User != "U2" {
		t.Fatalf("thread started: %+v, %v", res, err)
	}
	for _, bad := range []string{
		`{"team_id":"T1","type":"event_callback","event_id":"Ev7","event":{"type":"agent_session_stopped","channel":"C:1","thread_ts":"1.0","user":"U1"}}`,
		`{"team_id":"T1","type":"event_callback","event_id":"Ev6","event":{"type":"assistant_thread_started"}}`,
		`{"team_id":"T1","type":"event_callback","event":{"type":"agent_session_stopped","channel":"C1","thread_ts":"1.0","user":"U1"}}`,
	} {
		res, err := ParseEvent([]byte(bad), "UBOT")
		if err != nil || res.Item != nil || res.Ignored == "" {
			t.Errorf("%s: %+v, %v; want ignored", bad, res, err)
		}
	}
}

// TestItem_StoredShapeKept: items recorded in the inbox by earlier
// versions (a kind beside one body field) still decode into the same
// body, and a stored item whose kind and body disagree is refused.
func TestItem_StoredShapeKept(t *testing.T) {
	for _, tt := range []struct{ stored, kind string }{
		{`{"kind":"message","dedupe_keys":["event:Ev1"],"thread_key":"slack:T1:C1:5.4","message":{"event_type":"app_mention","team":"T1","channel":"C1","user":"U1","text":"hi","ts":"5.4","thread_ts":"5.4","mention":true}}`, KindMessage},
		{`{"kind":"action","dedupe_keys":["action:9.5:9.6:U1:a"],"thread_key":"slack:T1:C1:9.0","action":{"action_id":"a","value":"v","user":"U1","team":"T1","channel":"C1","message_ts":"9.5","thread_ts":"9.0"}}`, KindAction},
		{`{"kind":"home","dedupe_keys":["event:Ev2"],"thread_key":"slack:T1:home:U7","home":{"user":"U7","team":"T1"}}`, KindHome},
		{`{"kind":"submission","dedupe_keys":["view:V1:U1"],"thread_key":"slack:T1:C1:9.0","submission":{"callback_id":"c","metadata":"m","view_id":"V1","user":"U1","team":"T1"}}`, KindSubmission},
		{`{"kind":"stop","dedupe_keys":["event:Ev9"],"thread_key":"slack:T1:C1:1.0","agent":{"user":"U1","team":"T1","channel":"C1","thread_ts":"1.0"}}`, KindStop},
		{`{"kind":"thread_started","dedupe_keys":["event:Ev8"],"thread_key":"slack:T1:D1:1.0","agent":{"user":"U2","team":"T1","channel":"D1","thread_ts":"1.0"}}`, KindThreadStarted},
	} {
		var it Item
		if err := json.Unmarshal([]byte(tt.stored), &it); err != nil {
			t.Fatalf("%s: %v", tt.kind, err)
		}
		if it.Kind() != tt.kind || len(it.DedupeKeys) != 1 || it.ThreadKey == "" {
			t.Fatalf("%s decoded as %+v", tt.kind, it)
		}
		var again, want map[string]any
		_ = json.Unmarshal([]byte(mustJSON(t, it)), &again)
		_ = json.Unmarshal([]byte(tt.stored), &want)
		if !reflect.DeepEqual(again["kind"], want["kind"]) || !reflect.DeepEqual(again[jsonBodyKey(tt.kind)], want[jsonBodyKey(tt.kind)]) {
			t.Errorf("%s re-encoded as %s", tt.kind, mustJSON(t, it))
		}
	}
	for _, bad := range []string{`{"kind":"message","action":{"action_id":"a"}}`, `{"kind":"stop"}`, `{"kind":"nope","message":{}}`, `{}`} {
		var it Item
		if err := json.Unmarshal([]byte(bad), &it); err == nil {
			t.Errorf("%s decoded as %+v; want an error", bad, it)
		}
	}
	if _, err := json.Marshal(Item{ThreadKey: "x"}); err == nil {
		t.Error("an item without a body encoded")
	}
}

func jsonBodyKey(kind string) string {
	if kind == KindStop || kind == KindThreadStarted {
		return "agent"
	}
	return kind
}
