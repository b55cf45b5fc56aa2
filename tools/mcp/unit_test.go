package mcp

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"brain/tools"
)

func TestToolName(t *testing.T) {
	long := strings.Repeat("x", 200)
	for _, tc := range []struct{ id, tool, want string }{
		{"github", "create_issue", "github__create_issue"},
		{"fs", "read.file", "fs__read_file"},
		{"fs", "héllo wörld/x", "fs__h_llo_w_rld_x"},
		{"a-b", "get-sum", "a-b__get-sum"},
		{"id", long, ("id__" + long)[:128]},
	} {
		if got := toolName(tc.id, tc.tool); got != tc.want {
			t.Errorf("toolName(%q, %q) = %q, want %q", tc.id, tc.tool, got, tc.want)
		}
	}
}

func TestDescribe(t *testing.T) {
	for _, tc := range []struct{ content, want string }{
		{`[{"type":"text","text":"a"},{"type":"text","text":"b"}]`, "a\nb"},
		{`[{"type":"image","data":"AA==","mimeType":"image/png"}]`, "[image: image/png]"},
		{`[{"type":"audio","data":"AA=="}]`, "[audio: unknown type]"},
		{`[{"type":"resource_link","uri":"file:///a","name":"a"}]`, "[resource link: a file:///a]"},
		{`[{"type":"resource","resource":{"uri":"x://1","text":"body"}}]`, "[resource x://1]\nbody"},
		{`[{"type":"resource","resource":{"uri":"x://2","blob":"AA==","mimeType":"application/zip"}}]`, "[resource x://2: binary application/zip]"},
		{`[{"type":"hologram"}]`, "[hologram content]"},
		{`[]`, ""},
	} {
		var content []json.RawMessage
		if err := json.Unmarshal([]byte(tc.content), &content); err != nil {
			t.Fatal(err)
		}
		if got := describe(content); got != tc.want {
			t.Errorf("describe(%s) = %q, want %q", tc.content, got, tc.want)
		}
	}
}

func TestChildEnv(t *testing.T) {
	if got := strings.Join(childEnv(map[string]string{"B": "2", "A": "1"}), " "); got != "A=1 B=2 PATH="+DefaultPath {
		t.Errorf("without PATH: %s", got)
	}
	if got := strings.Join(childEnv(map[string]string{"PATH": "/opt/bin"}), " "); got != "PATH=/opt/bin" {
		t.Errorf("with PATH: %s", got)
	}
}

func TestLookPath(t *testing.T) {
	dir := t.TempDir()
	exe := filepath.Join(dir, "srv")
	if err := os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "plain"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := lookPath("srv", "relative:"+dir); err != nil || got != exe {
		t.Errorf("srv: %q, %v", got, err)
	}
	if _, err := lookPath("plain", dir); err == nil {
		t.Error("a file that is not executable was found")
	}
	if _, err := lookPath("srv", "relative"); err == nil {
		t.Error("a relative PATH entry was searched")
	}
	if got, _ := lookPath("./bin/srv", ""); got != "./bin/srv" {
		t.Errorf("a path with a slash: %q", got)
	}
}

func TestServerConfig_Validate(t *testing.T) {
	ok := []ServerConfig{
		{ID: "fs", Transport: TransportStdio, Command: "mcp-server-filesystem", Env: map[string]string{"A": "1"}},
		{ID: "gh", Transport: TransportHTTP, URL: "https://mcp.example.com/mcp", BearerToken: "t"},
	}
	for _, c := range ok {
		if err := c.Validate(); err != nil {
			t.Errorf("%+v: %v", c, err)
		}
	}
	bad := []ServerConfig{
		{ID: "", Transport: TransportStdio, Command: "x"},
		{ID: "a b", Transport: TransportStdio, Command: "x"},
		{ID: "x", Transport: "sse", URL: "http://h"},
		{ID: "x", Transport: TransportStdio},
		{ID: "x", Transport: TransportStdio, Command: "x", URL: "http://h"},
		{ID: "x", Transport: TransportStdio, Command: "x", Env: map[string]string{"A=B": "1"}},
		{ID: "x", Transport: TransportHTTP, URL: "ftp://h/mcp"},
		{ID: "x", Transport: TransportHTTP, URL: "/mcp"},
		{ID: "x", Transport: TransportHTTP, URL: "http://h", Command: "x"},
	}
	for _, c := range bad {
		if err := c.Validate(); err == nil {
			t.Errorf("%+v: accepted", c)
		}
	}
	err := ServerConfig{ID: "x", Transport: TransportHTTP, URL: "http://h:secret/mcp"}.Validate()
	if err == nil || strings.Contains(err.Error(), "secret") {
		t.Errorf("a bad URL: %v", err)
	}
}

func TestScrubber(t *testing.T) {
	cfg := ServerConfig{
		BearerToken: "tok/with+chars",
		Env:         map[string]string{"API_KEY": `k"ey-1234`, "PATH": "/usr/bin", "MODE": "no"},
		URL:         "https://user:pa55word@h/mcp?apikey=qk-998877",
	}
	s := tools.NewScrubber(secretsOf(cfg)...)
	in := `tok/with+chars tok%2Fwith%2Bchars k\"ey-1234 pa55word qk-998877 /usr/bin no`
	want := `[REDACTED] [REDACTED] [REDACTED] [REDACTED] [REDACTED] /usr/bin no`
	if got := s.String(in); got != want {
		t.Errorf("text = %q, want %q", got, want)
	}
	out := s.JSON([]byte(`{"a":["k\"ey-1234"],"tok/with+chars":1}`))
	if string(out) != `{"[REDACTED]":1,"a":["[REDACTED]"]}` {
		t.Errorf("value = %s", out)
	}

	var buf bytes.Buffer
	log := slog.New(tools.RedactHandler(slog.NewTextHandler(&buf, nil), s))
	log.With("k", "pa55word").Warn("failed with tok/with+chars", "err", os.ErrNotExist, "group", slog.GroupValue(slog.String("u", "qk-998877")))
	if strings.Contains(buf.String(), "pa55word") || strings.Contains(buf.String(), "tok/with") || strings.Contains(buf.String(), "qk-99") {
		t.Errorf("the log leaks: %s", buf.String())
	}
	buf.Reset()
	slog.New(demoteHandler{tools.RedactHandler(slog.NewTextHandler(&buf, nil), s)}).Error("noise")
	if buf.Len() != 0 {
		t.Errorf("a demoted record passed an info handler: %s", buf.String())
	}
}
