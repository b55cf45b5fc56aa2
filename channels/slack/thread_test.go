package slack

import "testing"

func TestThread_KeyParseURL(t *testing.T) {
	th := Thread{Team: "T1", Channel: "C1", TS: "1700000000.0001"}
	if th.Key() != "slack:T1:C1:1700000000.0001" {
		t.Fatalf("key %q", th.Key())
	}
	back, ok := ParseThread(th.Key())
	if !ok || back != th {
		t.Fatalf("parse: %+v %v", back, ok)
	}
	if th.URL() != "https://app.slack.com/client/T1/C1/thread/C1-1700000000.0001" {
		t.Fatalf("url %q", th.URL())
	}
	for _, key := range []string{"", "linear:abc", "slack:T1:home:U1:x", "slack:T1:C1", "github:o:r:1"} {
		if _, ok := ParseThread(key); ok {
			t.Errorf("ParseThread(%q) ok", key)
		}
	}
}
