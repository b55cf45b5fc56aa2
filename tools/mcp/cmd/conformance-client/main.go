//go:build conformance

// Command conformance-client runs brain's MCP bridge (brain/tools/mcp)
// against one client scenario of the official MCP conformance suite
// (npm @modelcontextprotocol/conformance). The suite starts a mock server
// and runs this command with the server's URL as the last argument; the
// command connects the bridge as brain does, calls every tool the server
// offers with arguments made from its input schema, and exits. It is
// test-only: tools/mcp's TestConformance builds it with -tags conformance.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	neturl "net/url"
	"os"
	"strings"
	"time"

	"brain/internal/oauthclient"
	"brain/tools"
	"brain/tools/mcp"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: conformance-client SERVER_URL")
		os.Exit(2)
	}
	if err := run(os.Args[len(os.Args)-1]); err != nil {
		fmt.Fprintln(os.Stderr, "conformance-client:", err)
		os.Exit(1)
	}
}

// cimdURL is the client ID metadata document URL the suite's basic-cimd
// scenario expects; brain's own is <public_url>/oauth/client-metadata.json.
const cimdURL = "https://conformance-test.local/client-metadata.json"

// oauth is the OAuth config every scenario gets (one that never answers
// 401 never uses it): the pre-registered client the scenario's context
// names, if any, and an authorizer that plays the person's browser: the
// suite's authorization endpoints approve at once and redirect back.
func oauth() *mcp.OAuth {
	var ctx struct {
		ClientID     string `json:"client_id"`
		ClientSecret string `json:"client_secret"`
	}
	_ = json.Unmarshal([]byte(os.Getenv("MCP_CONFORMANCE_CONTEXT")), &ctx)
	return &mcp.OAuth{
		Client: &oauthclient.Client{RedirectURL: "http://localhost/oauth/callback", ClientName: "brain conformance",
			ClientID: ctx.ClientID, ClientSecret: ctx.ClientSecret, MetadataURL: cimdURL},
		Tokens:    &oauthclient.MemoryTokens{},
		Authorize: follow,
	}
}

func follow(ctx context.Context, f oauthclient.Flow) (neturl.Values, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, f.URL, nil)
	if err != nil {
		return nil, err
	}
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	loc, err := resp.Location()
	if err != nil {
		return nil, errors.New("the authorization endpoint did not redirect back")
	}
	return loc.Query(), nil
}

func run(url string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	// The suite names the revision under test; brain's config would set
	// protocol: the same way.
	cfg := mcp.ServerConfig{ID: "s", Transport: mcp.TransportHTTP, URL: url, OAuth: oauth()}
	switch v := os.Getenv("MCP_CONFORMANCE_PROTOCOL_VERSION"); v {
	case mcp.ProtocolStateless, mcp.ProtocolLegacy:
		cfg.Protocol = v
	}
	b := mcp.Connect(ctx, []mcp.ServerConfig{cfg}, log,
		// The suite runs its scenarios in parallel, and a loaded machine may
		// answer server/discover after brain's default bound: the run tests
		// what brain sends, not how fast the mock answers.
		mcp.WithConnectTimeout(15*time.Second), mcp.WithRefreshInterval(0), mcp.WithDiscoverTimeout(10*time.Second))
	defer b.Close()
	if down := b.Disconnected(); len(down) > 0 {
		return fmt.Errorf("the server did not connect")
	}
	defs := b.Tools()
	given := givenArguments()
	inputs := map[string]json.RawMessage{}
	for _, d := range defs {
		inputs[d.Name] = d.Input
	}
	for _, d := range defs {
		if strings.HasSuffix(d.Name, "__read_resource") || strings.HasSuffix(d.Name, "__list_resources") {
			continue
		}
		t, err := tools.Compile(d)
		if err != nil {
			return fmt.Errorf("compile %s: %w", d.Name, err)
		}
		in := sample(d.Input)
		if args, ok := given[strings.TrimPrefix(d.Name, "s__")]; ok {
			in = args // the scenario names the arguments to send
		}
		if d.Name == "s__json_schema_echo" {
			// json-schema-2020-12-preservation: send back, verbatim, the
			// schema the bridge offers the model for the focal tool.
			in, _ = json.Marshal(map[string]json.RawMessage{"schema": inputs["s__json_schema_2020_12_tool"]})
		}
		if t.Run == nil {
			continue
		}
		call := tools.Call{Input: in, SessionID: "conformance", ToolCallID: d.Name, Elicit: accept}
		out, err := t.Run(ctx, call)
		// A multi round-trip request: the person "accepts" and the call is
		// sent again with the answer, as the engine does after a question.
		for range 3 {
			var ir *tools.InputRequired
			if !errors.As(err, &ir) {
				break
			}
			call.Resume = &tools.Resume{State: ir.State, Reply: tools.Reply{Action: tools.ActionAccept}}
			out, err = t.Run(ctx, call)
		}
		fmt.Printf("%s %s -> %s (err %v)\n", d.Name, in, out, err)
	}
	return nil
}

// givenArguments are the arguments the scenario's context asks for, by
// the server's tool name (http-custom-headers sends values that need
// each encoding).
func givenArguments() map[string]json.RawMessage {
	var ctx struct {
		ToolCalls []struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		} `json:"toolCalls"`
	}
	_ = json.Unmarshal([]byte(os.Getenv("MCP_CONFORMANCE_CONTEXT")), &ctx)
	out := map[string]json.RawMessage{}
	for _, c := range ctx.ToolCalls {
		out[c.Name] = c.Arguments
	}
	return out
}

// accept stands for a person who accepts every elicitation as offered:
// the bridge fills in the defaults (SEP-1034).
func accept(context.Context, tools.Elicitation) (tools.Reply, error) {
	return tools.Reply{Action: tools.ActionAccept}, nil
}

// sample makes arguments for a tool from its input schema: a value of the
// declared type for every required property.
func sample(schema json.RawMessage) json.RawMessage {
	var s struct {
		Properties map[string]struct {
			Type any   `json:"type"`
			Enum []any `json:"enum"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	_ = json.Unmarshal(schema, &s)
	args := map[string]any{}
	for _, name := range s.Required {
		p := s.Properties[name]
		if len(p.Enum) > 0 {
			args[name] = p.Enum[0]
			continue
		}
		typ, _ := p.Type.(string)
		switch typ {
		case "number", "integer":
			args[name] = 2
		case "boolean":
			args[name] = true
		case "object":
			args[name] = map[string]any{}
		case "array":
			args[name] = []any{}
		case "null":
			args[name] = nil
		default:
			args[name] = "a"
		}
	}
	raw, _ := json.Marshal(args)
	return raw
}
