package slackfake_test

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/slack-go/slack"

	"brain/channels/slack/slackfake"
)

func TestServer_SignInWithSlack(t *testing.T) {
	fake, _, ctx := setup(t)
	fake.EnableOIDC("cid", "csecret", slackfake.OIDCUser{UserID: "U0ADA", TeamID: "T0FAKE", Name: "Ada"})
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	authorize := func(q url.Values) *http.Response {
		t.Helper()
		resp, err := noFollow.Get(fake.URL() + slackfake.AuthorizePath + "?" + q.Encode())
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	good := url.Values{"client_id": {"cid"}, "response_type": {"code"}, "scope": {"openid profile"}, "state": {"s1"}, "nonce": {"n1"}, "redirect_uri": {"https://brain.example/cb"}}
	for name, edit := range map[string]func(url.Values){
		"other client": func(q url.Values) { q.Set("client_id", "x") },
		"no openid":    func(q url.Values) { q.Set("scope", "profile") },
		"no state":     func(q url.Values) { q.Del("state") },
	} {
		q := url.Values{}
		for k, v := range good {
			q[k] = v
		}
		edit(q)
		if resp := authorize(q); resp.StatusCode != http.StatusBadRequest {
			t.Errorf("%s: %d", name, resp.StatusCode)
		}
	}
	resp := authorize(good)
	back, _ := url.Parse(resp.Header.Get("Location"))
	code := back.Query().Get("code")
	if resp.StatusCode != http.StatusFound || back.Host != "brain.example" || back.Query().Get("state") != "s1" || code == "" {
		t.Fatalf("authorize: %d %s", resp.StatusCode, back)
	}

	api := slack.OAuthOptionAPIURL(fake.URL() + "/api/")
	if _, err := slack.GetOpenIDConnectTokenContext(ctx, http.DefaultClient, "cid", "wrong", code, "https://brain.example/cb", api); err == nil || !strings.Contains(err.Error(), "invalid_client_id") {
		t.Fatalf("wrong secret: %v", err)
	}
	// The failed exchange spent the code: codes are single-use whatever
	// the outcome, so ask for another.
	back, _ = url.Parse(authorize(good).Header.Get("Location"))
	code = back.Query().Get("code")
	tok, err := slack.GetOpenIDConnectTokenContext(ctx, http.DefaultClient, "cid", "csecret", code, "https://brain.example/cb", api)
	if err != nil {
		t.Fatal(err)
	}
	parts := strings.Split(tok.IdToken, ".")
	if len(parts) != 3 || tok.AccessToken == "" {
		t.Fatalf("token %+v", tok)
	}
	raw, _ := base64.RawURLEncoding.DecodeString(parts[1])
	var claims map[string]any
	if err := json.Unmarshal(raw, &claims); err != nil {
		t.Fatal(err)
	}
	if claims["iss"] != slackfake.Issuer || claims["aud"] != "cid" || claims["nonce"] != "n1" || claims["https://slack.com/user_id"] != "U0ADA" || claims["https://slack.com/team_id"] != "T0FAKE" {
		t.Fatalf("claims %v", claims)
	}
	if _, err := slack.GetOpenIDConnectTokenContext(ctx, http.DefaultClient, "cid", "csecret", code, "https://brain.example/cb", api); err == nil || !strings.Contains(err.Error(), "invalid_code") {
		t.Fatalf("a code exchanged twice: %v", err)
	}
}
