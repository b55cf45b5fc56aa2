package engine

import "encoding/json"

// SkillTool is the name of the skill tool (tools/skills): its successful
// loads of a skill's instructions are also recorded as skill.loaded, so
// the timeline shows which version of which skill a session followed.
const SkillTool = "skill"

// EventSkillLoaded is skill.loaded: the agent loaded a skill's instructions.
const EventSkillLoaded = "skill.loaded"

// SkillLoaded is skill.loaded: the skill's name and the content hash of
// its folder when it was loaded.
type SkillLoaded struct {
	CallID string `json:"call_id"`
	Name   string `json:"name"`
	Hash   string `json:"hash"`
}

func (SkillLoaded) EventType() string { return EventSkillLoaded }
func (SkillLoaded) isPayload()        {}

// skillOf reads a skill tool's output; nil unless it loaded a skill's
// instructions (a file read is not a load).
func skillOf(callID, out string) *SkillLoaded {
	var l struct {
		Name string `json:"name"`
		Hash string `json:"hash"`
		Path string `json:"path"`
	}
	if json.Unmarshal([]byte(out), &l) != nil || l.Name == "" || l.Hash == "" || l.Path != "" {
		return nil
	}
	return &SkillLoaded{CallID: callID, Name: l.Name, Hash: l.Hash}
}
