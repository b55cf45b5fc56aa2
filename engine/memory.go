package engine

import (
	"context"
	"fmt"
)

// EventMemoryChanged is memory.changed: a session's call of the memory
// tool changed a memory file.
const EventMemoryChanged = "memory.changed"

// MemoryChanged is memory.changed. Scope is the store's name of the
// scope ("channel:slack:T1:C1"); Path and NewPath are as the model wrote
// them (/memories/...); Version is the file's version after the change (0
// for a delete, a rename or several files); Diff has "-" and "+" lines.
type MemoryChanged struct {
	Command string `json:"command"`
	Scope   string `json:"scope"`
	Path    string `json:"path"`
	NewPath string `json:"new_path,omitempty"`
	Version int64  `json:"version,omitempty"`
	Diff    string `json:"diff,omitempty"`
}

func (MemoryChanged) EventType() string { return EventMemoryChanged }
func (MemoryChanged) isPayload()        {}

// RecordMemoryChanged appends a memory.changed event to the session. It
// starts no turn and leaves the model's context alone (the tool's result
// already tells the model what changed).
func (e *Engine) RecordMemoryChanged(ctx context.Context, sessionID string, m MemoryChanged) (Event, error) {
	evs, err := e.events("", m)
	if err != nil {
		return Event{}, err
	}
	res, err := e.commit(ctx, Commit{SessionID: sessionID, Events: evs})
	if err != nil {
		return Event{}, fmt.Errorf("record memory change: %w", err)
	}
	e.count("memory_changes")
	return res.Events[0], nil
}
