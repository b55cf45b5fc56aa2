package config

import (
	"strings"
	"testing"
)

func TestValidate_MCPAuth(t *testing.T) {
	tests := []struct {
		name, yaml, want string // want: "" = valid, else a key the error names
	}{
		{"workspace", `public_url: https://b.example
mcp_servers: [{id: n, url: "https://n.example/mcp", auth: oauth}]`, ""},
		{"pre-registered", `public_url: https://b.example
mcp_servers: [{id: n, url: "https://n.example/mcp", auth: oauth, oauth: {client_id: c, client_secret: s}}]`, ""},
		{"no public_url", `mcp_servers: [{id: n, url: "https://n.example/mcp", auth: oauth}]`, "public_url"},
		{"per person", `public_url: https://b.example
mcp_servers: [{id: n, url: "https://n.example/mcp", auth: oauth, per: person}]`, ""},
		{"per person as approver", `public_url: https://b.example
mcp_servers: [{id: n, url: "https://n.example/mcp", auth: oauth, per: person, acts_as: approver}]`, ""},
		{"per person as app", `public_url: https://b.example
mcp_servers: [{id: n, url: "https://n.example/mcp", auth: oauth, per: person, acts_as: app}]`, "mcp_servers[0].acts_as"},
		{"per person as nobody", `public_url: https://b.example
mcp_servers: [{id: n, url: "https://n.example/mcp", auth: oauth, per: person, acts_as: someone}]`, "mcp_servers[0].acts_as"},
		{"workspace as requester", `public_url: https://b.example
mcp_servers: [{id: n, url: "https://n.example/mcp", auth: oauth, acts_as: requester}]`, "mcp_servers[0].acts_as"},
		{"bearer as approver", `mcp_servers: [{id: n, url: "https://n.example/mcp", acts_as: approver}]`, "mcp_servers[0].acts_as"},
		{"unknown auth", `mcp_servers: [{id: n, url: "https://n.example/mcp", auth: basic}]`, "mcp_servers[0].auth"},
		{"stdio", `public_url: https://b.example
mcp_servers: [{id: n, command: srv, auth: oauth}]`, "mcp_servers[0].auth"},
		{"with bearer", `public_url: https://b.example
mcp_servers: [{id: n, url: "https://n.example/mcp", auth: oauth, bearer_token: t}]`, "mcp_servers[0].bearer_token"},
		{"per without auth", `mcp_servers: [{id: n, url: "https://n.example/mcp", per: workspace}]`, "mcp_servers[0].auth"},
		{"oauth without client id", `public_url: https://b.example
mcp_servers: [{id: n, url: "https://n.example/mcp", auth: oauth, oauth: {client_secret: s}}]`, "mcp_servers[0].oauth.client_id"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := loadYAML(t, minimalYAML+tt.yaml+"\n", nil)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("valid config refused: %v", err)
				}
				if c.MCPServers[0].Per != "workspace" && c.MCPServers[0].Per != "person" {
					t.Fatalf("per defaults to %q, want workspace", c.MCPServers[0].Per)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want one naming %s", err, tt.want)
			}
		})
	}
}
