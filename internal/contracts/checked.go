package contracts

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strings"
)

// Checked wraps h, a fake of GitHub's REST API: each request is checked
// against the description before h sees it (a wrong one is answered 400
// naming the operation and the field, and reported); each successful JSON
// answer of h is laid on the description's example for its operation (so
// the fields h does not set are GitHub's own), then checked against the
// operation's response schema and reported when wrong. seen, when set, is
// told the operation of each request ("POST /repos/{owner}/{repo}/issues").
func (g *GitHub) Checked(h http.Handler, report func(violation string), seen func(operation string)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		op, err := g.CheckRequest(r)
		if seen != nil && op.route != nil {
			seen(op.route.Method + " " + op.route.Path)
		}
		if err != nil {
			report("github contract: request: " + err.Error())
			w.Header().Set("Content-Type", "application/json; charset=utf-8")
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprintf(w, "{\"message\":%q}\n", "contract: "+err.Error())
			return
		}
		rec := &recorder{ResponseWriter: w}
		h.ServeHTTP(rec, r)
		if rec.hijacked {
			return
		}
		if rec.status == 0 {
			rec.status = http.StatusOK
		}
		body := rec.body.Bytes()
		var own any
		if rec.status < 300 && op.route != nil && strings.HasPrefix(w.Header().Get("Content-Type"), "application/json") && json.Unmarshal(body, &own) == nil {
			body = g.complete(r, op, rec.status, own, body)
		}
		if err := g.CheckResponse(r, op, rec.status, w.Header(), body); err != nil {
			report("github contract: fake's answer: " + err.Error())
		}
		w.Header().Del("Content-Length")
		w.WriteHeader(rec.status)
		_, _ = w.Write(body)
	})
}

// complete lays own, a fake's answer, on the description's examples for
// the operation and returns the first result that matches the schema, or
// body as it was when none does.
func (g *GitHub) complete(r *http.Request, op Operation, status int, own any, body []byte) []byte {
	h := http.Header{"Content-Type": {"application/json"}}
	for _, ex := range g.Examples(op.route.Method+" "+op.route.Path, status) {
		merged, err := json.Marshal(Overlay(ex, own))
		if err == nil && g.CheckResponse(r, op, status, h, merged) == nil {
			return append(merged, '\n')
		}
	}
	return body
}

// recorder keeps a response back until it has been checked.
type recorder struct {
	http.ResponseWriter
	status   int
	body     bytes.Buffer
	hijacked bool
}

func (r *recorder) WriteHeader(status int) {
	if r.status == 0 {
		r.status = status
	}
}

func (r *recorder) Write(p []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.body.Write(p)
}

func (r *recorder) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	h, ok := r.ResponseWriter.(http.Hijacker)
	if !ok {
		return nil, nil, fmt.Errorf("contracts: %T cannot be hijacked", r.ResponseWriter)
	}
	r.hijacked = true
	return h.Hijack()
}
