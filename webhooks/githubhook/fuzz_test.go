package githubhook

import (
	"reflect"
	"strings"
	"testing"
)

func FuzzParseEvent(f *testing.F) {
	for _, ev := range []string{"issue_comment", "pull_request_review_comment", "issues", "pull_request"} {
		for _, ex := range examples(f, ev, "") {
			f.Add(ev, ex.Body)
		}
	}
	f.Add("issue_comment", []byte(`{"action":"created","comment":{"id":1},"issue":{"number":1}}`))
	f.Fuzz(func(t *testing.T, event string, body []byte) {
		it, ignored, err := ParseEvent(event, body)
		switch {
		case err != nil, ignored != "":
			if !reflect.DeepEqual(it, Item{}) || (err != nil && ignored != "") {
				t.Fatalf("err %v ignored %q with item %+v", err, ignored, it)
			}
		default:
			if it.Kind != KindComment && it.Kind != KindOpened {
				t.Fatalf("kind %q", it.Kind)
			}
			if !validName(it.Owner) || !validName(it.Repo) || !validName(it.Author) || it.Number <= 0 || it.CommentID <= 0 {
				t.Fatalf("malformed %+v", it)
			}
			if strings.ContainsAny(it.EventKey, " /#") {
				t.Fatalf("event key %q", it.EventKey)
			}
		}
	})
}

func FuzzVerify(f *testing.F) {
	f.Add("s", "sha256=00", []byte("{}"))
	f.Add("s", Signature("s", []byte("{}")), []byte("{}"))
	f.Fuzz(func(t *testing.T, secret, header string, body []byte) {
		err := Verify(secret, header, body)
		if err == nil && (secret == "" || strings.TrimSpace(header) != Signature(secret, body)) {
			t.Fatalf("accepted %q for %q", header, body)
		}
	})
}
