package fakemodel

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
)

// The tools the demo script calls. config.demo.yaml declares the two http
// ones against the demo endpoint the fake serves (DemoTicketsPath,
// DemoLookupPath); ask is brain's built-in question tool.
const (
	DemoAskTool    = "ask"
	DemoTicketTool = "create_ticket"
	DemoLookupTool = "lookup"

	DemoTicketsPath = "/demo/tickets"
	DemoLookupPath  = "/demo/lookup"
)

// DemoHelp is the demo script's answer to anything it does not recognise.
const DemoHelp = "This is the fake model server, a TEST DOUBLE following a demo script; it is not a language model. Type:\n" +
	"- \"ask me\": I ask you a question with three options\n" +
	"- \"make a ticket\": I propose a ticket, which waits for your approval\n" +
	"- \"use a tool\": I call a plain tool on the demo endpoint"

// Demo answers by the demo script: it reacts to the person's last words
// ("ask me", "ticket", "tool" or "look"), answers a tool result with a
// short summary, and otherwise with DemoHelp.
func Demo() Step { return Func(demoStep) }

// WithDemo makes Demo the default step and serves the demo endpoint
// (DemoTicketsPath, DemoLookupPath) beside the model API.
func WithDemo() Option {
	return func(h *Handler) {
		h.def = Demo()
		h.desk = &demoDesk{}
	}
}

// Listen starts a fake model server (test double) on addr, e.g.
// 127.0.0.1:8081, so a config can name its URL. Close it.
func Listen(addr string, opts ...Option) (*Server, error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("fake model server (test double): %w", err)
	}
	h := NewHandler(opts...)
	srv := httptest.NewUnstartedServer(h)
	srv.Listener.Close()
	srv.Listener = l
	srv.Start()
	return &Server{Handler: h, srv: srv}, nil
}

func demoStep(req Request) Step {
	ex := lastExchange(req.Provider, req.Messages)
	if ex.text != "" {
		if ex.calledAsk {
			return Text(fmt.Sprintf("Thanks. brain passed your answer to me as: %q. That was the ask tool; the buttons are its options.", ex.text))
		}
		return demoReact(ex.text)
	}
	if len(ex.results) > 0 {
		var b strings.Builder
		for _, r := range ex.results {
			fmt.Fprintf(&b, "%s answered: %s\n", r.name, clipText(r.text, 300))
		}
		return Text(strings.TrimSpace(b.String()))
	}
	return Text(DemoHelp)
}

// demoReact picks the demo action from the last paragraph of the person's
// text: brain adds notes (an approval's outcome) as earlier paragraphs.
func demoReact(text string) Step {
	if i := strings.LastIndex(text, "\n\n"); i >= 0 {
		text = text[i+2:]
	}
	low := strings.ToLower(text)
	switch {
	case strings.Contains(low, "ask"):
		return ToolCalls(Call{Name: DemoAskTool, Input: `{"text":"Which colour should the demo ticket be?","options":[` +
			`{"label":"Red","value":"red"},{"label":"Green","value":"green"},{"label":"Blue","value":"blue"}]}`})
	case strings.Contains(low, "ticket"):
		title := "Demo ticket"
		if _, rest, _ := strings.Cut(text, "ticket"); strings.TrimSpace(rest) != "" {
			title = clipText(strings.TrimSpace(rest), 80)
		}
		in, _ := json.Marshal(map[string]string{"title": title})
		return TextAndTools("I'll propose a ticket; it waits for your approval.", Call{Name: DemoTicketTool, Input: string(in)})
	case strings.Contains(low, "tool"), strings.Contains(low, "look"):
		return ToolCalls(Call{Name: DemoLookupTool, Input: `{"query":"demo"}`})
	}
	return Text(DemoHelp)
}

func clipText(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "..."
	}
	return s
}

// exchange is what the demo reads of a conversation: the messages after
// the last assistant message, and whether that message called ask.
type exchange struct {
	text      string
	results   []demoResult
	calledAsk bool
}

type demoResult struct{ name, text string }

// wireMessage is the union of the Anthropic and OpenAI message fields the
// demo reads.
type wireMessage struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	ToolCallID string          `json:"tool_call_id"` // OpenAI role "tool"
	ToolCalls  []struct {      // OpenAI assistant
		ID       string `json:"id"`
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	} `json:"tool_calls"`
}

type wirePart struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ID        string          `json:"id"`          // tool_use
	Name      string          `json:"name"`        // tool_use
	ToolUseID string          `json:"tool_use_id"` // tool_result
	Content   json.RawMessage `json:"content"`     // tool_result
}

func parts(raw json.RawMessage) []wirePart {
	var ps []wirePart
	if len(raw) > 0 && raw[0] == '[' {
		json.Unmarshal(raw, &ps)
	}
	return ps
}

func lastExchange(provider string, raw json.RawMessage) exchange {
	var msgs []wireMessage
	json.Unmarshal(raw, &msgs)
	start := 0
	names := map[string]string{} // tool call id -> tool name
	var ex exchange
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role != "assistant" {
			continue
		}
		start = i + 1
		for _, c := range msgs[i].ToolCalls {
			names[c.ID] = c.Function.Name
		}
		for _, p := range parts(msgs[i].Content) {
			if p.Type == "tool_use" {
				names[p.ID] = p.Name
			}
		}
		break
	}
	for _, n := range names {
		ex.calledAsk = ex.calledAsk || n == DemoAskTool
	}
	var text []string
	for _, m := range msgs[start:] {
		switch {
		case m.Role == "tool":
			ex.results = append(ex.results, demoResult{names[m.ToolCallID], contentText(m.Content)})
		case m.Role == "user":
			if t := contentText(m.Content); t != "" {
				text = append(text, t)
			}
			if provider != ProviderAnthropic {
				continue
			}
			for _, p := range parts(m.Content) {
				if p.Type == "tool_result" {
					ex.results = append(ex.results, demoResult{names[p.ToolUseID], contentText(p.Content)})
				}
			}
		}
	}
	ex.text = strings.Join(text, "\n\n")
	return ex
}

// demoDesk is the demo endpoint: a ticket tracker and a lookup service
// that live in memory, for the demo's http tools.
type demoDesk struct {
	mu      sync.Mutex
	tickets []DemoTicket
}

// DemoTicket is a ticket created on the demo endpoint.
type DemoTicket struct {
	ID    string `json:"id"`
	Title string `json:"title"`
	Note  string `json:"note"`
}

func (d *demoDesk) serve(w http.ResponseWriter, r *http.Request) bool {
	switch r.URL.Path {
	case DemoTicketsPath:
		d.serveTickets(w, r)
	case DemoLookupPath:
		writeJSON(w, map[string]string{
			"answer": "The demo endpoint is served by the fake model server (a test double) inside brain; nothing left this machine.",
		})
	default:
		return false
	}
	return true
}

func (d *demoDesk) serveTickets(w http.ResponseWriter, r *http.Request) {
	d.mu.Lock()
	defer d.mu.Unlock()
	switch r.Method {
	case http.MethodGet:
		writeJSON(w, map[string]any{"tickets": append([]DemoTicket{}, d.tickets...)})
	case http.MethodPost:
		var in struct {
			Title string `json:"title"`
		}
		if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20)).Decode(&in); err != nil {
			http.Error(w, "demo endpoint: "+err.Error(), http.StatusBadRequest)
			return
		}
		t := DemoTicket{ID: fmt.Sprintf("DEMO-%d", len(d.tickets)+1), Title: in.Title, Note: "kept in memory by the demo endpoint (test double)"}
		d.tickets = append(d.tickets, t)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		writeJSON(w, t)
	default:
		w.Header().Set("Allow", "GET, POST")
		http.Error(w, "demo endpoint: GET or POST", http.StatusMethodNotAllowed)
	}
}

func writeJSON(w http.ResponseWriter, v any) {
	if w.Header().Get("Content-Type") == "" {
		w.Header().Set("Content-Type", "application/json")
	}
	json.NewEncoder(w).Encode(v)
}
