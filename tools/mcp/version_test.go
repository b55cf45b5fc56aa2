package mcp

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// A server/discover rejected as UnsupportedProtocolVersion while the
// version sent is listed as supported is sent once more; any other
// rejection, and any other method, is sent once.
func TestVersionRetry(t *testing.T) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if n.Add(1) == 1 || r.Header.Get("Mcp-Method") != "server/discover" {
			w.WriteHeader(http.StatusBadRequest)
			_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":1,"error":{"code":-32022,"message":"Unsupported protocol version","data":{"supported":["2026-07-28"]}}}`)
			return
		}
		_, _ = w.Write(body)
	}))
	defer srv.Close()
	rt := versionRetry{next: http.DefaultTransport}
	send := func(method, version string) (int, string) {
		req, _ := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader(`{"method":"`+method+`"}`))
		req.Header.Set("Mcp-Method", method)
		req.Header.Set("Mcp-Protocol-Version", version)
		resp, err := rt.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := send("server/discover", "2026-07-28"); code != 200 || body != `{"method":"server/discover"}` || n.Load() != 2 {
		t.Fatalf("discover: %d %s after %d requests", code, body, n.Load())
	}
	if code, _ := send("tools/call", "2026-07-28"); code != 400 || n.Load() != 3 {
		t.Fatalf("tools/call: %d after %d requests, want one 400", code, n.Load())
	}
	n.Store(0)
	if code, body := send("server/discover", "2099-01-01"); code != 400 || !strings.Contains(body, "-32022") || n.Load() != 1 {
		t.Fatalf("unlisted version: %d %s after %d requests", code, body, n.Load())
	}
}
