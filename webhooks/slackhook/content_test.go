package slackhook

import (
	"net/url"
	"testing"
)

// TestParseEvent_FileShare: a file_share message carries its files;
// tombstoned files and files without a download URL are left out.
func TestParseEvent_FileShare(t *testing.T) {
	body := []byte(`{"type":"event_callback","team_id":"T1","event_id":"Ev1","event":{"type":"message","subtype":"file_share",
		"user":"U1","text":"<@UBOT> look","ts":"1.000100","channel":"C1","channel_type":"channel","files":[
		{"id":"F1","name":"shot.png","mimetype":"image/png","size":1234,"mode":"hosted","url_private_download":"https://files.slack.com/F1/shot.png"},
		{"id":"F2","name":"gone.txt","mode":"tombstone"},
		{"id":"F3","name":"nolink.txt","size":3},
		{"id":"bad id","name":"x","url_private_download":"https://files.slack.com/x"}]}}`)
	res, err := ParseEvent(body, "UBOT")
	if err != nil || res.Item == nil {
		t.Fatalf("parse: %+v %v", res, err)
	}
	files := res.Item.Message().Files
	if len(files) != 1 || files[0] != (File{ID: "F1", Name: "shot.png", Mimetype: "image/png", Size: 1234, URL: "https://files.slack.com/F1/shot.png"}) {
		t.Fatalf("files = %+v", files)
	}
	if !res.Item.Message().Mention || res.Item.Message().Text != "look" {
		t.Errorf("message = %+v", res.Item.Message())
	}
}

// TestParseEvent_AppHomeOpened: opening the Home tab is an Item; the
// Messages tab is not.
func TestParseEvent_AppHomeOpened(t *testing.T) {
	res, err := ParseEvent([]byte(`{"type":"event_callback","team_id":"T1","event_id":"Ev9","event":{"type":"app_home_opened","user":"U7","channel":"D1","tab":"home","view":{"id":"V1"}}}`), "UBOT")
	if err != nil || res.Item == nil || res.Item.Kind() != KindHome || res.Item.Home().User != "U7" || res.Item.ThreadKey != "slack:T1:home:U7" {
		t.Fatalf("home: %+v %v", res, err)
	}
	checkWellFormed(t, *res.Item)
	res, err = ParseEvent([]byte(`{"type":"event_callback","team_id":"T1","event_id":"Ev10","event":{"type":"app_home_opened","user":"U7","channel":"D1","tab":"messages"}}`), "UBOT")
	if err != nil || res.Item != nil || res.Ignored == "" {
		t.Fatalf("messages tab: %+v %v", res, err)
	}
}

// TestParseInteraction_HomeClick: a click on the Home tab is an action
// Item keyed by the person's Home; one in a modal is not.
func TestParseInteraction_HomeClick(t *testing.T) {
	payload := `{"type":"block_actions","user":{"id":"U7","team_id":"T1"},"team":{"id":"T1"},
		"container":{"type":"view","view_id":"V1"},"view":{"id":"V1","type":"home"},
		"actions":[{"action_id":"brain_approve","block_id":"b","value":"{\"a\":\"apr_1\"}","type":"button","action_ts":"2.5"}]}`
	items, err := ParseInteraction([]byte("payload=" + url.QueryEscape(payload)))
	if err != nil || len(items) != 1 {
		t.Fatalf("items %+v %v", items, err)
	}
	a := items[0].Action()
	if !a.Home || a.User != "U7" || a.Value != `{"a":"apr_1"}` || items[0].ThreadKey != "slack:T1:home:U7" {
		t.Fatalf("action %+v", a)
	}
	checkWellFormed(t, items[0])
	modal := `{"type":"block_actions","user":{"id":"U7"},"team":{"id":"T1"},"container":{"type":"view","view_id":"V1"},"view":{"type":"modal"},
		"actions":[{"action_id":"x","action_ts":"2.5"}]}`
	if items, _ := ParseInteraction([]byte("payload=" + url.QueryEscape(modal))); len(items) != 0 {
		t.Fatalf("modal click: %+v", items)
	}
}
