package github

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"

	"brain/tools"
)

// dropGitHub is a raw HTTP/1.1 GitHub that answers the first `answered`
// requests of each connection with an issue, keeping the connection
// alive; the next one it reads in full and then closes the connection
// without a word. It counts every request that reached it.
type dropGitHub struct {
	ln       net.Listener
	answered int
	seen     atomic.Int64
	mu       sync.Mutex
	conns    []net.Conn
}

func newDropGitHub(t *testing.T, answered int) *dropGitHub {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	d := &dropGitHub{ln: ln, answered: answered}
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			d.mu.Lock()
			d.conns = append(d.conns, c)
			d.mu.Unlock()
			wg.Go(func() { d.serve(c) })
		}
	})
	t.Cleanup(func() {
		ln.Close()
		d.mu.Lock()
		for _, c := range d.conns {
			c.Close()
		}
		d.mu.Unlock()
		wg.Wait()
	})
	return d
}

func (d *dropGitHub) serve(c net.Conn) {
	defer c.Close()
	br := bufio.NewReader(c)
	for n := 0; ; n++ {
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		if _, err := io.Copy(io.Discard, req.Body); err != nil {
			return
		}
		d.seen.Add(1)
		if n >= d.answered {
			return
		}
		body := `{"id":1,"number":1,"title":"Found a bug","state":"open","comments":0,"html_url":"https://github.com/acme/widgets/issues/1"}`
		head := fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: %d\r\n\r\n", len(body))
		if _, err := io.WriteString(c, head+body); err != nil {
			return
		}
	}
}

// TestDispatch_AtMostOnce: against a GitHub that drops the second request
// of a connection, two calls reach it exactly twice and both succeed (no
// connection is reused, so none is replayed); a call whose connection is
// dropped after the write reaches it once and has an unknown outcome.
func TestDispatch_AtMostOnce(t *testing.T) {
	for _, tc := range []struct {
		name      string
		transport func() *http.Transport
	}{
		{"own transport", func() *http.Transport { return nil }},
		{"given transport", func() *http.Transport { return &http.Transport{} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tool := func(d *dropGitHub) *tools.Tool {
				defs, err := Tools(Config{Token: testToken, BaseURL: "http://" + d.ln.Addr().String() + "/", Repos: []string{"acme/*"}, Transport: tc.transport()})
				if err != nil {
					t.Fatal(err)
				}
				for _, def := range defs {
					if def.Name == "github_get_issue" {
						compiled, err := tools.Compile(def)
						if err != nil {
							t.Fatal(err)
						}
						return compiled
					}
				}
				t.Fatal("no github_get_issue")
				return nil
			}
			call := tools.Call{Input: json.RawMessage(`{"repo":"acme/widgets","number":1}`)}
			target := newDropGitHub(t, 1)
			get := tool(target)
			for i := range 2 {
				if _, err := get.Run(context.Background(), call); err != nil {
					t.Fatalf("call %d: %v", i+1, err)
				}
			}
			if got := target.seen.Load(); got != 2 {
				t.Fatalf("GitHub saw %d requests for 2 calls, want 2", got)
			}

			dropping := newDropGitHub(t, 0)
			_, err := tool(dropping).Run(context.Background(), call)
			toolError(t, err, true, "after the request was sent")
			if got := dropping.seen.Load(); got != 1 {
				t.Fatalf("GitHub saw %d requests for 1 call, want 1", got)
			}
		})
	}
}
