package threadkey

import "testing"

// TestSlack_KeyParseRoundTrip: a thread's key parses back to the thread;
// keys of another platform or shape do not parse.
func TestSlack_KeyParseRoundTrip(t *testing.T) {
	th := Slack{Team: "T1", Channel: "C1", TS: "1700000000.000100"}
	if got := th.Key(); got != "slack:T1:C1:1700000000.000100" {
		t.Fatalf("Key() = %q", got)
	}
	if got, ok := ParseSlack(th.Key()); !ok || got != th {
		t.Fatalf("ParseSlack(Key()) = %+v, %v", got, ok)
	}
	if got, ok := ParseSlack(SlackHome("T1", "U1")); !ok || got.Channel != "home" || got.TS != "U1" {
		t.Fatalf("home key parsed as %+v, %v", got, ok)
	}
	if SlackView("T1", "U1") != "slack:T1:view:U1" {
		t.Fatalf("SlackView = %q", SlackView("T1", "U1"))
	}
	for _, bad := range []string{"", "linear:abc", "slack:T1:C1", "slack:T1:C1:1.2:x", "slock:T1:C1:1.2"} {
		if got, ok := ParseSlack(bad); ok {
			t.Errorf("ParseSlack(%q) = %+v, want no thread", bad, got)
		}
	}
}

// TestLinear_KeyParseRoundTrip: an agent session's key parses back to it;
// a Slack key or an empty session does not.
func TestLinear_KeyParseRoundTrip(t *testing.T) {
	th := Linear{Session: "3f1c-uuid"}
	if th.Key() != "linear:3f1c-uuid" {
		t.Fatalf("Key() = %q", th.Key())
	}
	if got, ok := ParseLinear(th.Key()); !ok || got != th {
		t.Fatalf("ParseLinear(Key()) = %+v, %v", got, ok)
	}
	for _, bad := range []string{"", "linear:", "slack:T:C:1", "3f1c-uuid"} {
		if got, ok := ParseLinear(bad); ok {
			t.Errorf("ParseLinear(%q) = %+v, want no thread", bad, got)
		}
	}
}

func TestPlace(t *testing.T) {
	for key, want := range map[string]string{
		"slack:T1:C1:1700000000.000100": "slack:T1:C1",
		"slack:T1:home:U1":              "",
		"slack:T1:view:U1":              "",
		"github:Acme/API#12":            "github:acme/api",
		"github:acme/api":               "",
		"github:acme#3":                 "",
		"linear:3f1c-uuid":              "",
		"":                              "",
	} {
		got, ok := Place(key)
		if got != want || ok != (want != "") {
			t.Errorf("Place(%q) = %q, %v; want %q", key, got, ok, want)
		}
	}
}
