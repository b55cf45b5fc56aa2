package web

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func jwtOf(claims map[string]any) string {
	b, _ := json.Marshal(claims)
	return "eyJhbGciOiJSUzI1NiJ9." + base64.RawURLEncoding.EncodeToString(b) + ".sig"
}

func TestParseIDToken(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	good := func() map[string]any {
		return map[string]any{"iss": "https://slack.com", "aud": "cid", "exp": now.Unix() + 60, "nonce": "n1",
			"sub": "U1", "https://slack.com/user_id": "U1", "https://slack.com/team_id": "T1", "name": "Ada"}
	}
	c, err := parseIDToken(jwtOf(good()), "cid", "n1", now)
	if err != nil || c.UserID != "U1" || c.TeamID != "T1" || c.Name != "Ada" {
		t.Fatalf("good token: %+v %v", c, err)
	}
	for name, tc := range map[string]struct {
		edit func(m map[string]any)
		want string
	}{
		"other issuer":   {func(m map[string]any) { m["iss"] = "https://evil.example" }, "issuer"},
		"other audience": {func(m map[string]any) { m["aud"] = []string{"x", "y"} }, "another client"},
		"expired":        {func(m map[string]any) { m["exp"] = now.Unix() }, "expired"},
		"no expiry":      {func(m map[string]any) { delete(m, "exp") }, "expired"},
		"other nonce":    {func(m map[string]any) { m["nonce"] = "n2" }, "nonce"},
		"no user":        {func(m map[string]any) { delete(m, "sub"); delete(m, "https://slack.com/user_id") }, "no user"},
	} {
		m := good()
		tc.edit(m)
		if _, err := parseIDToken(jwtOf(m), "cid", "n1", now); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err %v, want %q", name, err, tc.want)
		}
	}
	for _, bad := range []string{"", "a.b", "a.!!!.c", "a." + base64.RawURLEncoding.EncodeToString([]byte("[1]")) + ".c", strings.Repeat("a", maxIDToken+1)} {
		if _, err := parseIDToken(bad, "cid", "n1", now); err == nil {
			t.Errorf("parseIDToken(%.20q) accepted", bad)
		}
	}
	if _, err := parseIDToken(jwtOf(good()), "cid", "", now); err == nil {
		t.Error("an empty expected nonce accepted")
	}
}

func FuzzParseIDToken(f *testing.F) {
	f.Add(jwtOf(map[string]any{"iss": "https://slack.com", "aud": "cid", "exp": 2_000_000_000, "nonce": "n", "sub": "U1"}))
	f.Add("a.b.c")
	f.Fuzz(func(t *testing.T, tok string) {
		c, err := parseIDToken(tok, "cid", "n", time.Unix(1_800_000_000, 0))
		if err == nil && (c.UserID == "" || c.Nonce != "n" || c.Issuer != slackIssuer) {
			t.Fatalf("accepted %q as %+v", tok, c)
		}
	})
}
