package mcp

import "strings"

// CallInfo says what a bridged tool sends (for traces): the server's id,
// the MCP method, and the protocol revision of the server's current
// connection ("" when it is not connected).
type CallInfo struct {
	Server   string
	Method   string
	Protocol string
}

// Describe returns the CallInfo of a tool the bridge offers, by its name
// ("<id>__<tool>"); ok is false for a tool that is not the bridge's.
func (b *Bridge) Describe(tool string) (CallInfo, bool) {
	for _, s := range b.servers {
		rest, found := strings.CutPrefix(tool, s.cfg.ID+"__")
		if !found {
			continue
		}
		info := CallInfo{Server: s.cfg.ID, Method: "tools/call"}
		c := s.current()
		if c != nil {
			info.Protocol = c.version
			if c.resources {
				switch rest {
				case "list_resources":
					info.Method = "resources/list"
				case "read_resource":
					info.Method = "resources/read"
				}
			}
		}
		return info, true
	}
	return CallInfo{}, false
}
