package config

import "fmt"

// Memory scopes an agent may use (agents[].memory.scopes): each is a
// directory of the memory tool's /memories.
const (
	MemoryScopeAgent   = "agent"
	MemoryScopeChannel = "channel"
	MemoryScopePerson  = "person"
)

// Defaults of agents[].memory.
const (
	DefaultMemoryMaxFiles = 100
	DefaultMemoryMaxBytes = 256 << 10
)

// AgentMemory is agents[].memory: the memory tool and what it may see.
// Absent, the agent has no memory tool.
type AgentMemory struct {
	// Scopes are the directories of /memories its sessions see: agent
	// (every session of the agent), channel (the Slack channel, the
	// GitHub repository), person (the person the session talks to).
	Scopes []string `yaml:"scopes"`
	// ReadOnly offers only view: the agent reads what people (or other
	// agents) wrote, and writes nothing.
	ReadOnly bool `yaml:"read_only"`
	// MaxFiles and MaxBytes bound each scope.
	MaxFiles int   `yaml:"max_files"`
	MaxBytes int64 `yaml:"max_bytes"`
}

func (m *AgentMemory) applyDefaults() {
	if m == nil {
		return
	}
	if m.Scopes == nil {
		m.Scopes = []string{MemoryScopeAgent}
	}
	setDefault(&m.MaxFiles, DefaultMemoryMaxFiles)
	setDefault(&m.MaxBytes, DefaultMemoryMaxBytes)
}

func (m *AgentMemory) validate(p *problems, key string) {
	if m == nil {
		return
	}
	seen := map[string]bool{}
	for i, s := range m.Scopes {
		k := fmt.Sprintf("%s.scopes[%d]", key, i)
		oneOf(p, k, s, MemoryScopeAgent, MemoryScopeChannel, MemoryScopePerson)
		if seen[s] {
			p.add(k, "%q is listed twice", s)
		}
		seen[s] = true
	}
	if len(m.Scopes) == 0 {
		p.add(key+".scopes", "name at least one of agent, channel, person")
	}
	atLeast(p, key+".max_files", int64(m.MaxFiles), 1, "")
	atLeast(p, key+".max_bytes", m.MaxBytes, 1, "")
}
