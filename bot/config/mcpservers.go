package config

// MCPServerConfig is one entry of mcp_servers.
type MCPServerConfig struct {
	ID          string            `yaml:"id"`
	Transport   string            `yaml:"transport"` // stdio | http; default from command/url
	Command     string            `yaml:"command"`
	Args        []string          `yaml:"args"`
	Env         map[string]string `yaml:"env"` // the child's whole environment
	Cwd         string            `yaml:"cwd"`
	URL         string            `yaml:"url"`
	BearerToken string            `yaml:"bearer_token"`
	// Approval says which tools wait for a person's approval before a call
	// reaches the server: never (default), always, or annotations (a tool
	// waits unless the server marks it readOnlyHint true and not
	// destructiveHint true).
	Approval string `yaml:"approval"`
	// Tools overrides settings per tool, keyed by the server's tool name.
	Tools map[string]MCPToolConfig `yaml:"tools"`
	// Protocol pins the MCP revision: 2025-11-25 or 2026-07-28 (falls
	// back to 2025-11-25 when the server does not answer
	// server/discover). Unset: negotiated (docs/mcp.md).
	Protocol string `yaml:"protocol"`
	// Auth is "" (none, or bearer_token) or "oauth": OAuth 2.1 per the
	// MCP authorization spec, with the token of a connection.
	Auth string `yaml:"auth"`
	// Per says whose connection an oauth server uses: "workspace" (the
	// default: one connection, made by an admin) or "person" (each
	// person's own, connected through a link brain sends them).
	Per string `yaml:"per"`
	// ActsAs says whose connection a per-person server's calls use:
	// "requester" (the default: the person who asked) or "approver" (in
	// an approved call, the person whose vote decided it). Other servers
	// act as the app ("app", the default).
	ActsAs string `yaml:"acts_as"`
	// OAuth is a client pre-registered at the server's authorization
	// server; without it brain uses its client ID metadata document or
	// registers itself (dynamic client registration).
	OAuth *MCPOAuthConfig `yaml:"oauth"`
}

// MCPOAuthConfig is mcp_servers[].oauth.
type MCPOAuthConfig struct {
	ClientID     string `yaml:"client_id"`
	ClientSecret string `yaml:"client_secret"`
}

// MCPToolConfig is one entry of mcp_servers[].tools.
type MCPToolConfig struct {
	Approval string `yaml:"approval"` // always | never | annotations; empty = the server's
}
