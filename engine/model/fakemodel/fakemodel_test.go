package fakemodel

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

const anthropicBody = `{"model":"m","max_tokens":10,"stream":%s,"system":"be brief",
	"tools":[{"name":"a","input_schema":{"type":"object"}},{"name":"b","input_schema":{"type":"object"}}],
	"messages":[{"role":"user","content":"first"},{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"a","input":{}}]},
	{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"r"}]}]}`

func anthropicRequest(stream bool) string {
	return strings.Replace(anthropicBody, "%s", map[bool]string{true: "true", false: "false"}[stream], 1)
}

const openaiBody = `{"model":"m","messages":[{"role":"system","content":"be brief"},{"role":"user","content":[{"type":"text","text":"hello"}]}],
	"tools":[{"type":"function","function":{"name":"a","parameters":{"type":"object"}}}]}`

type reply struct {
	status int
	header http.Header
	body   string
}

func post(t *testing.T, url, body string) reply {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatalf("POST %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	return reply{resp.StatusCode, resp.Header, string(b)}
}

func newServer(t *testing.T, opts ...Option) *Server {
	t.Helper()
	s := New(opts...)
	t.Cleanup(s.Close)
	return s
}

// sseEvents returns the event names of an SSE body, in order.
func sseEvents(body string) []string {
	var names []string
	for line := range strings.SplitSeq(body, "\n") {
		if name, ok := strings.CutPrefix(line, "event: "); ok {
			names = append(names, name)
		}
	}
	return names
}

func TestFakeModel_AnthropicStream(t *testing.T) {
	s := newServer(t)
	s.Push(TextAndTools("hi", Call{ID: "toolu_1", Name: "a", Input: `{"x":1}`}))
	r := post(t, s.URL()+"/v1/messages", anthropicRequest(true))
	if r.status != 200 || r.header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("got %d %s", r.status, r.header.Get("Content-Type"))
	}
	want := []string{
		"message_start",
		"content_block_start", "content_block_delta", "content_block_delta", "content_block_stop",
		"content_block_start", "content_block_delta", "content_block_delta", "content_block_stop",
		"message_delta", "message_stop",
	}
	if got := sseEvents(r.body); !reflect.DeepEqual(got, want) {
		t.Fatalf("events %v\nwant %v", got, want)
	}
	for _, frag := range []string{`"text_delta"`, `"input_json_delta"`, `"stop_reason":"tool_use"`, `"output_tokens"`} {
		if !strings.Contains(r.body, frag) {
			t.Errorf("stream lacks %s", frag)
		}
	}
}

func TestFakeModel_RecordsRequests(t *testing.T) {
	s := newServer(t)
	post(t, s.URL()+"/v1/messages", anthropicRequest(false))
	post(t, s.OpenAIBaseURL()+"chat/completions", openaiBody)
	reqs := s.Requests()
	if len(reqs) != 2 {
		t.Fatalf("got %d requests", len(reqs))
	}
	a, o := reqs[0], reqs[1]
	if a.Provider != ProviderAnthropic || a.Model != "m" || a.System != "be brief" || a.Stream ||
		!reflect.DeepEqual(a.Tools, []string{"a", "b"}) || !strings.Contains(string(a.Messages), `"tool_result"`) {
		t.Fatalf("anthropic request %+v", a)
	}
	if o.Provider != ProviderOpenAI || o.System != "be brief" || !reflect.DeepEqual(o.Tools, []string{"a"}) || len(o.Raw) == 0 {
		t.Fatalf("openai request %+v", o)
	}
}

func TestFakeModel_EchoDefault(t *testing.T) {
	s := newServer(t)
	// The last user message holds only a tool result: the echo uses the
	// last user text.
	r := post(t, s.URL()+"/v1/messages", anthropicRequest(false))
	if !strings.Contains(r.body, `"text":"echo: first"`) || !strings.Contains(r.body, `"stop_reason":"end_turn"`) {
		t.Fatalf("anthropic echo: %s", r.body)
	}
	r = post(t, s.OpenAIBaseURL()+"chat/completions", openaiBody)
	var c struct {
		Choices []struct {
			Message struct {
				Content string `json:"content"`
			} `json:"message"`
			FinishReason string `json:"finish_reason"`
		} `json:"choices"`
	}
	if err := json.Unmarshal([]byte(r.body), &c); err != nil || c.Choices[0].Message.Content != "echo: hello" ||
		c.Choices[0].FinishReason != "stop" {
		t.Fatalf("openai echo: %s", r.body)
	}

	s.SetDefault(Text("fixed"))
	r = post(t, s.URL()+"/v1/messages", anthropicRequest(false))
	if !strings.Contains(r.body, `"text":"fixed"`) {
		t.Fatalf("default not used: %s", r.body)
	}
}

func TestFakeModel_OpenAIStreamWithSDK(t *testing.T) {
	s := newServer(t)
	s.Push(TextAndTools("thinking", Call{Name: "a", Input: `{"q":"x"}`}, Call{Name: "b"}))
	chat := openai.NewChatCompletionService(option.WithBaseURL(s.OpenAIBaseURL()), option.WithAPIKey("k"), option.WithMaxRetries(0))
	stream := chat.NewStreaming(t.Context(), openai.ChatCompletionNewParams{
		Model:    "m",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")},
	})
	var acc openai.ChatCompletionAccumulator
	for stream.Next() {
		acc.AddChunk(stream.Current())
	}
	if err := stream.Err(); err != nil {
		t.Fatalf("stream: %v", err)
	}
	msg := acc.Choices[0].Message
	if msg.Content != "thinking" || len(msg.ToolCalls) != 2 || msg.ToolCalls[0].Function.Arguments != `{"q":"x"}` ||
		msg.ToolCalls[1].Function.Name != "b" || acc.Choices[0].FinishReason != "tool_calls" {
		t.Fatalf("accumulated %+v", acc.ChatCompletion)
	}
}

func TestFakeModel_Fail(t *testing.T) {
	s := newServer(t)
	s.Push(Fail(529, "Overloaded"), Fail(401, "bad key"))
	r := post(t, s.URL()+"/v1/messages", anthropicRequest(true))
	if r.status != 529 || r.header.Get("Retry-After-Ms") != "0" ||
		r.body != `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}` {
		t.Fatalf("got %d %v %s", r.status, r.header, r.body)
	}
	r = post(t, s.OpenAIBaseURL()+"chat/completions", openaiBody)
	if r.status != 401 || r.header.Get("Retry-After-Ms") != "" ||
		r.body != `{"error":{"message":"bad key","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}` {
		t.Fatalf("got %d %v %s", r.status, r.header, r.body)
	}
}

func TestFakeModel_BadRequests(t *testing.T) {
	s := newServer(t)
	s.Push(Text("kept for the next good request"))
	if r := post(t, s.URL()+"/v1/messages", "{"); r.status != 400 || !strings.Contains(r.body, "invalid_request_error") {
		t.Fatalf("bad JSON: %d %s", r.status, r.body)
	}
	if r := post(t, s.URL()+"/v2/other", "{}"); r.status != 404 {
		t.Fatalf("unknown path: %d", r.status)
	}
	if s.Pending() != 1 || s.Received() != 1 {
		t.Fatalf("pending %d received %d", s.Pending(), s.Received())
	}
}

func TestFakeModel_Func(t *testing.T) {
	s := newServer(t)
	s.Push(Func(func(r Request) Step {
		s.Push(Text("pushed from Func")) // the handler's lock is not held
		return Text("model " + r.Model + " via " + r.Provider)
	}))
	r := post(t, s.URL()+"/v1/messages", anthropicRequest(false))
	if !strings.Contains(r.body, "model m via anthropic") {
		t.Fatalf("got %s", r.body)
	}
	if r := post(t, s.URL()+"/v1/messages", anthropicRequest(false)); !strings.Contains(r.body, "pushed from Func") {
		t.Fatalf("got %s", r.body)
	}
}

func TestFakeModel_BlockAndHold(t *testing.T) {
	s := newServer(t)
	gate := make(chan struct{})
	s.Push(Block(gate), Text("after block"), Hold(), Text("after hold"))

	done := make(chan reply, 1)
	go func() { done <- post(t, s.URL()+"/v1/messages", anthropicRequest(false)) }()
	if _, err := s.WaitRequests(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
		t.Fatal("blocked request answered early")
	case <-time.After(20 * time.Millisecond):
	}
	close(gate)
	if r := <-done; !strings.Contains(r.body, "after block") {
		t.Fatalf("got %s", r.body)
	}

	go func() { done <- post(t, s.URL()+"/v1/messages", anthropicRequest(false)) }()
	if _, err := s.WaitRequests(t.Context(), 2); err != nil {
		t.Fatal(err)
	}
	s.Release()
	if r := <-done; !strings.Contains(r.body, "after hold") {
		t.Fatalf("got %s", r.body)
	}
}

func TestFakeModel_CloseReleasesHeld(t *testing.T) {
	before := runtime.NumGoroutine()
	defer assertGoroutines(t, before)
	s := New()
	s.Push(Hold())
	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	errc := make(chan error, 1)
	go func() {
		resp, err := client.Post(s.URL()+"/v1/messages", "application/json", strings.NewReader(anthropicRequest(true)))
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		errc <- err
	}()
	if _, err := s.WaitRequests(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	closed := make(chan struct{})
	go func() { s.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not release the held request")
	}
	<-errc
	s.Close() // twice is fine
}

// assertGoroutines waits for the goroutine count to fall back to want, and
// fails with every stack if it does not.
func assertGoroutines(t *testing.T, want int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > want {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Fatalf("%d goroutines, want %d:\n%s", runtime.NumGoroutine(), want, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestFakeModel_CancelledRequestEndsHold(t *testing.T) {
	s := newServer(t)
	s.Push(Hold(), Text("next"))
	ctx, cancel := context.WithCancel(t.Context())
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, s.URL()+"/v1/messages", strings.NewReader(anthropicRequest(false)))
	errc := make(chan error, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		errc <- err
	}()
	if _, err := s.WaitRequests(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	cancel()
	if err := <-errc; err == nil {
		t.Fatal("cancelled request succeeded")
	}
	// The held step did not consume "next".
	if r := post(t, s.URL()+"/v1/messages", anthropicRequest(false)); !strings.Contains(r.body, `"next"`) {
		t.Fatalf("got %s", r.body)
	}
}

func TestFakeModel_RecordLimit(t *testing.T) {
	s := newServer(t, WithRecordLimit(2))
	for _, text := range []string{"one", "two", "three"} {
		post(t, s.OpenAIBaseURL()+"chat/completions", strings.Replace(openaiBody, "hello", text, 1))
	}
	reqs := s.Requests()
	if len(reqs) != 2 || !strings.Contains(string(reqs[0].Messages), "two") || !strings.Contains(string(reqs[1].Messages), "three") {
		t.Fatalf("kept %d requests: %+v", len(reqs), reqs)
	}
	if s.Received() != 3 {
		t.Fatalf("received %d", s.Received())
	}

	none := newServer(t, WithRecordLimit(0))
	post(t, none.OpenAIBaseURL()+"chat/completions", openaiBody)
	if len(none.Requests()) != 0 || none.Received() != 1 {
		t.Fatal("WithRecordLimit(0) recorded")
	}
}

func TestFakeModel_WaitRequestsTimeout(t *testing.T) {
	s := newServer(t)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Millisecond)
	defer cancel()
	if _, err := s.WaitRequests(ctx, 1); err == nil {
		t.Fatal("WaitRequests returned without requests")
	}
}

func TestFakeModel_Concurrent(t *testing.T) {
	s := newServer(t)
	const n = 40
	for range n / 2 {
		s.Push(Text("scripted"))
	}
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			url, body := s.URL()+"/v1/messages", anthropicRequest(i%2 == 0)
			if i%3 == 0 {
				url, body = s.OpenAIBaseURL()+"chat/completions", openaiBody
			}
			if r := post(t, url, body); r.status != 200 {
				t.Errorf("status %d", r.status)
			}
		})
	}
	wg.Wait()
	if s.Received() != n || s.Pending() != 0 {
		t.Fatalf("received %d pending %d", s.Received(), s.Pending())
	}
}

func TestFakeModel_MountedUnderPrefix(t *testing.T) {
	h := NewHandler()
	defer h.Close()
	mux := http.NewServeMux()
	mux.Handle("/fake-model/", h)
	srv := httptest.NewServer(mux)
	defer srv.Close()
	r := post(t, srv.URL+"/fake-model/v1/messages", anthropicRequest(false))
	if r.status != 200 || !strings.Contains(r.body, "echo: first") {
		t.Fatalf("got %d %s", r.status, r.body)
	}
}

func BenchmarkFakeModel_AnthropicStream(b *testing.B) {
	s := New(WithRecordLimit(0))
	defer s.Close()
	s.SetDefault(TextAndTools("hello", Call{Name: "a", Input: `{"x":1}`}))
	body := anthropicRequest(true)
	b.ReportAllocs()
	for b.Loop() {
		resp, err := http.Post(s.URL()+"/v1/messages", "application/json", strings.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
}
