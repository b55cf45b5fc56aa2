package api

import (
	"net/http/httptest"
	"strings"
	"testing"

	"brain/bot/config"
	"brain/engine"
)

func TestKeyring(t *testing.T) {
	k := newCallerKeys([]config.APIKey{{Name: "one", Key: "key-one"}, {Name: "two", Key: "key-two", ActFor: true}})
	cases := []struct {
		header string
		want   string // the caller's name; "" = refused
	}{
		{"Bearer key-one", "one"},
		{"Bearer key-two", "two"},
		{"Bearer key-three", ""},
		{"Bearer key-on", ""},
		{"Bearer ", ""},
		{"bearer key-one", ""},
		{"key-one", ""},
		{"", ""},
	}
	for _, c := range cases {
		got, ok := k.find(c.header)
		if ok != (c.want != "") || got.name != c.want {
			t.Errorf("find(%q) = %+v, %v, want %q", c.header, got, ok, c.want)
		}
	}
	if two, _ := k.find("Bearer key-two"); !two.actFor {
		t.Error("key two lost act_for")
	}
	if k.empty() || !newCallerKeys(nil).empty() {
		t.Fatal("empty() is wrong")
	}
}

func TestDecodeJSON(t *testing.T) {
	type body struct {
		Name  string `json:"name"`
		Count int    `json:"count"`
	}
	cases := []struct {
		name, body, wantErr string
	}{
		{"ok", `{"name":"a","count":1}`, ""},
		{"ok with space", " {\"name\":\"a\"}\n", ""},
		{"empty", "  ", "request body is empty; send a JSON object"},
		{"syntax", `{"name":`, "body is not valid JSON"},
		{"type", `{"count":"x"}`, `field "count" must be a number`},
		{"unknown", `{"bogus":1}`, `unknown field "bogus"`},
		{"trailing object", `{} {}`, "body has data after the JSON object"},
		{"stray delimiter", `{}}`, "body has data after the JSON object"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var dst body
			err := decodeJSON([]byte(c.body), &dst)
			if c.wantErr == "" {
				if err != nil {
					t.Fatalf("decode: %v", err)
				}
				return
			}
			if engine.CodeOf(err) != engine.CodeInvalid || !strings.Contains(engine.ErrorMessage(err), c.wantErr) {
				t.Fatalf("error %v (code %s), want invalid_request containing %q", err, engine.CodeOf(err), c.wantErr)
			}
		})
	}
}

func TestDecodeBody_TooLarge(t *testing.T) {
	r := httptest.NewRequest("POST", "/v1/sessions", strings.NewReader(`{"name":"`+strings.Repeat("x", 100)+`"}`))
	var dst map[string]any
	err := decodeBody(httptest.NewRecorder(), r, 64, &dst)
	if engine.CodeOf(err) != engine.CodeTooLarge || engine.ErrorMessage(err) != "request body is over the 64-byte limit" {
		t.Fatalf("error %v (code %s)", err, engine.CodeOf(err))
	}
}

func TestNewRequestID(t *testing.T) {
	a, b := newRequestID(), newRequestID()
	if len(a) != 32 || strings.Trim(a, "0123456789abcdef") != "" || a == b {
		t.Fatalf("request ids %q %q", a, b)
	}
}
