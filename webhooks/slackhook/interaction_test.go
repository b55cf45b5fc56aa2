package slackhook

import (
	"net/url"
	"reflect"
	"strings"
	"testing"
)

// blockActionsJSON is a block_actions payload as Slack sends it for a button
// on a bot message inside a thread.
const blockActionsJSON = `{"type":"block_actions","user":{"id":"U1","username":"ann","name":"ann","team_id":"T1"},` +
	`"api_app_id":"A1","token":"x","container":{"type":"message","message_ts":"9.5","channel_id":"C1","is_ephemeral":false,"thread_ts":"9.0"},` +
	`"trigger_id":"123.456.abc","team":{"id":"T1","domain":"acme"},"enterprise":null,"is_enterprise_install":false,` +
	`"channel":{"id":"C1","name":"general"},"message":{"bot_id":"B1","type":"message","text":"Approve?","user":"UBOT","ts":"9.5","thread_ts":"9.0"},` +
	`"state":{"values":{}},"response_url":"https://hooks.slack.com/actions/T1/1/abc",` +
	`"actions":[{"action_id":"approval","block_id":"b1","text":{"type":"plain_text","text":"Approve","emoji":true},"value":"appr_123:approve","style":"primary","type":"button","action_ts":"9.6"}]}`

func formBody(t testing.TB, payload string) []byte {
	t.Helper()
	return []byte(url.Values{"payload": {payload}}.Encode())
}

func TestParseInteraction_BlockActions(t *testing.T) {
	items, err := ParseInteraction(formBody(t, blockActionsJSON))
	if err != nil {
		t.Fatal(err)
	}
	want := []Item{{
		DedupeKeys: []string{"action:9.5:9.6:U1:approval"},
		ThreadKey:  "slack:T1:C1:9.0",
		Body: &Action{ActionID: "approval", BlockID: "b1", Value: "appr_123:approve", ActionTS: "9.6", User: "U1", Team: "T1",
			Channel: "C1", MessageTS: "9.5", ThreadTS: "9.0", ResponseURL: "https://hooks.slack.com/actions/T1/1/abc", TriggerID: "123.456.abc"},
	}}
	if !reflect.DeepEqual(items, want) {
		t.Fatalf("items\n got %s\nwant %s", mustJSON(t, items), mustJSON(t, want))
	}
	checkWellFormed(t, items[0])
}

func TestParseInteraction_Shapes(t *testing.T) {
	tests := []struct {
		name, payload string
		wantThread    string
		wantValues    []string
	}{
		{
			name:       "top-level message: thread is the message itself",
			payload:    `{"type":"block_actions","user":{"id":"U1"},"team":{"id":"T1"},"container":{"type":"message","message_ts":"9.5","channel_id":"D1"},"message":{"ts":"9.5"},"actions":[{"action_id":"q","value":"a","action_ts":"9.6"}]}`,
			wantThread: "slack:T1:D1:9.5", wantValues: []string{"a"},
		},
		{
			name:       "thread from message when container lacks it; select value",
			payload:    `{"type":"block_actions","user":{"id":"U1","team_id":"T9"},"team":null,"channel":{"id":"C1"},"message":{"ts":"9.5","thread_ts":"9.1"},"actions":[{"action_id":"pick","type":"static_select","selected_option":{"value":"opt2"},"action_ts":"9.6"}]}`,
			wantThread: "slack:T9:C1:9.1", wantValues: []string{"opt2"},
		},
		{
			name:       "several actions, one without an id skipped",
			payload:    `{"type":"block_actions","user":{"id":"U1"},"team":{"id":"T1"},"container":{"message_ts":"9.5","channel_id":"C1"},"trigger_id":"1.2.3","actions":[{"action_id":"a","value":"1"},{"value":"2"},{"action_id":"c","value":"3"}]}`,
			wantThread: "slack:T1:C1:9.5", wantValues: []string{"1", "3"},
		},
		{name: "modal click", payload: `{"type":"block_actions","user":{"id":"U1"},"team":{"id":"T1"},"container":{"type":"view","view_id":"V1"},"view":{"id":"V1"},"actions":[{"action_id":"a","value":"1","action_ts":"1.1"}]}`},
		{name: "view_submission", payload: `{"type":"view_submission","team":{"id":"T1"},"user":{"id":"U1"},"view":{"id":"V1","state":{"values":{}}}}`},
		{name: "shortcut with odd shapes", payload: `{"type":"shortcut","team":"T1","user":["U1"],"callback_id":"x"}`},
		{name: "no actions", payload: `{"type":"block_actions","user":{"id":"U1"},"team":{"id":"T1"},"container":{"message_ts":"9.5","channel_id":"C1"},"actions":[]}`},
		{name: "no click id", payload: `{"type":"block_actions","user":{"id":"U1"},"team":{"id":"T1"},"container":{"message_ts":"9.5","channel_id":"C1"},"actions":[{"action_id":"a"}]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			items, err := ParseInteraction(formBody(t, tt.payload))
			if err != nil {
				t.Fatal(err)
			}
			var values []string
			for _, it := range items {
				checkWellFormed(t, it)
				if it.ThreadKey != tt.wantThread {
					t.Errorf("thread key %q, want %q", it.ThreadKey, tt.wantThread)
				}
				values = append(values, it.Action().Value)
			}
			if !reflect.DeepEqual(values, tt.wantValues) {
				t.Fatalf("values %v, want %v", values, tt.wantValues)
			}
		})
	}
}

func TestParseInteraction_Errors(t *testing.T) {
	for _, body := range []string{
		``, `payload=`, `nopayload=1`, `payload=%zz`, `payload=not+json`,
		string(formBody(t, `{"type":"block_actions","actions":{"a":1}}`)),
	} {
		if items, err := ParseInteraction([]byte(body)); err == nil {
			t.Errorf("ParseInteraction(%q) = %+v, want error", body, items)
		}
	}
}

// viewSubmissionJSON is a view_submission as Slack sends it for a modal
// with one plain_text_input.
const viewSubmissionJSON = `{"type":"view_submission","team":{"id":"T1","domain":"acme"},"user":{"id":"U2","username":"bob","team_id":"T1"},` +
	`"api_app_id":"A1","token":"x","trigger_id":"1.2.x","view":{"id":"V123","team_id":"T1","type":"modal","callback_id":"brain_decision",` +
	`"private_metadata":"{\"a\":\"apr_1\"}","blocks":[],"state":{"values":{"brain_comment":{"comment":{"type":"plain_text_input","value":"not on a Friday"}}}},` +
	`"hash":"1.abc","title":{"type":"plain_text","text":"Deny"}},"response_urls":[]}`

func TestParseInteraction_ViewSubmission(t *testing.T) {
	items, err := ParseInteraction(formBody(t, viewSubmissionJSON))
	if err != nil {
		t.Fatal(err)
	}
	want := []Item{{
		DedupeKeys: []string{"view:V123:U2"},
		ThreadKey:  "slack:T1:view:U2",
		Body: &Submission{CallbackID: "brain_decision", Metadata: `{"a":"apr_1"}`, ViewID: "V123", User: "U2", Team: "T1",
			Values: map[string]string{"brain_comment.comment": "not on a Friday"}},
	}}
	if !reflect.DeepEqual(items, want) {
		t.Fatalf("items\n got %s\nwant %s", mustJSON(t, items), mustJSON(t, want))
	}
	checkWellFormed(t, items[0])

	// Oversized input is refused, not cut; no ids, no item.
	big := strings.Replace(viewSubmissionJSON, "not on a Friday", strings.Repeat("x", maxInputValue+1), 1)
	noUser := strings.Replace(viewSubmissionJSON, `"id":"U2"`, `"id":""`, 1)
	for _, payload := range []string{big, noUser} {
		if items, err := ParseInteraction(formBody(t, payload)); err != nil || len(items) != 0 {
			t.Errorf("items %+v, %v; want none", items, err)
		}
	}
}
