package keyguard

import (
	"testing"
	"time"
)

func TestGuard_Find(t *testing.T) {
	g := New([]Key{{Name: "one", Secret: "key-one"}, {Name: "two", Secret: "key-two", ActFor: true}}, nil)
	cases := []struct {
		secret string
		want   string // the caller's name; "" = refused
	}{
		{"key-one", "one"},
		{"key-two", "two"},
		{"key-three", ""},
		{"key-on", ""},
		{"Key-one", ""},
		{"", ""},
	}
	for i, c := range cases {
		// Each from its own address, so no case is throttled.
		got, wait, ok := g.Check("192.0.2."+string(rune('1'+i))+":1", c.secret)
		if ok != (c.want != "") || got.Name != c.want || wait != 0 {
			t.Errorf("Check(%q) = %+v, %s, %v, want %q", c.secret, got, wait, ok, c.want)
		}
	}
	if two, _, _ := g.Check("192.0.2.99:1", "key-two"); !two.ActFor {
		t.Error("key two lost act_for")
	}
	if g.Empty() || !New(nil, nil).Empty() {
		t.Fatal("Empty() is wrong")
	}
	if invalid, throttled := g.Refused(); invalid != 4 || throttled != 0 {
		t.Fatalf("refused %d invalid, %d throttled; want 4, 0", invalid, throttled)
	}
}

// Past the free guesses an address is refused unread, and counted so.
func TestGuard_Throttles(t *testing.T) {
	now := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	g := New([]Key{{Name: "one", Secret: "key-one"}}, func() time.Time { return now })
	for range freeGuesses + 1 {
		if _, wait, ok := g.Check("203.0.113.7:4000", "guess"); ok || wait != 0 {
			t.Fatal("a wrong guess passed or waited early")
		}
	}
	if _, wait, ok := g.Check("203.0.113.7:4001", "key-one"); ok || wait != time.Second {
		t.Fatalf("the right key while throttled: ok %v, wait %s; want refused unread, 1s", ok, wait)
	}
	if c, _, ok := g.Check("203.0.113.8:4000", "key-one"); !ok || c.Name != "one" {
		t.Fatal("another address is throttled too")
	}
	now = now.Add(time.Second)
	if _, _, ok := g.Check("203.0.113.7:4002", "key-one"); !ok {
		t.Fatal("the right key after the wait is refused")
	}
	if invalid, throttled := g.Refused(); invalid != freeGuesses+1 || throttled != 1 {
		t.Fatalf("refused %d invalid, %d throttled; want %d, 1", invalid, throttled, freeGuesses+1)
	}
}
