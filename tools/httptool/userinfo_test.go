package httptool_test

import (
	"context"
	"encoding/base64"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"brain/tools/httptool"
)

// TestHTTPTool_URLPasswordNotEchoed: a password in the tool's URL
// (http://user:PW@host/) reaches the target as the Authorization: Basic
// header Go builds from it; a target that echoes its request headers must
// not hand the password back to the model in any form.
func TestHTTPTool_URLPasswordNotEchoed(t *testing.T) {
	const user, password = "svc", "url-pa55word-0987"
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		got, _ := io.ReadAll(r.Body)
		io.WriteString(w, `{"auth":"`+r.Header.Get("Authorization")+`","url":"`+r.URL.String()+`","body":`+string(got)+`}`)
	}))
	defer target.Close()
	url := strings.Replace(target.URL, "http://", "http://"+user+":"+password+"@", 1) + "/echo"
	spec := httptool.Spec{
		Name: "echo", Description: "Echo the request", URL: url,
		Input: []byte(`{"type":"object","properties":{"title":{"type":"string"}}}`),
	}
	tool := compile(t, spec, nil)
	out, err := tool.Run(context.Background(), call(`{"title":"hello"}`))
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	text := string(out)
	if !strings.Contains(text, "Basic ") {
		t.Fatalf("the target did not see Basic credentials, so the test proves nothing: %s", text)
	}
	pair := user + ":" + password
	for _, form := range []string{password, pair, base64.StdEncoding.EncodeToString([]byte(pair)), base64.RawStdEncoding.EncodeToString([]byte(pair))} {
		if strings.Contains(text, form) {
			t.Errorf("the result carries %q: %s", form, text)
		}
	}
}
