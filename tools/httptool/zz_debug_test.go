package httptool_test

import (
	"context"
	"net/http"
	"testing"
	"time"
	"strings"
	"encoding/json"
)

func TestZZDebug(t *testing.T) {
	for _, h := range []http.HandlerFunc{reply(500, `{"error":"boom"}`), reply(404, "nope "+secret), reply(200, "<html>"), reply(200, strings.Repeat("x", 2<<20)),
		func(w http.ResponseWriter, r *http.Request) { time.Sleep(200 * time.Millisecond) },
		func(w http.ResponseWriter, r *http.Request) { json.NewEncoder(w).Encode(map[string]any{"a": "Bearer " + secret, "b": 1}) },
	} {
		tg := newTarget(t, h)
		spec := ticketSpec(tg.URL + "/x?key=abcdefgh")
		spec.Timeout = 100 * time.Millisecond
		tool := compile(t, spec, nil)
		out, err := tool.Run(context.Background(), call(`{}`))
		t.Logf("%s | %v", out, err)
	}
	tg := newTarget(t, reply(200, "{}"))
	tg.Close()
	tool := compile(t, ticketSpec(tg.URL+"/x?key=abcdefgh"), nil)
	_, err := tool.Run(context.Background(), call(`{}`))
	t.Logf("%v", err)
}
