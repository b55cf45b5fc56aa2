package api

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"brain/engine"
	"brain/internal/linediff"
	"brain/store"
)

// Agents' memory over the API: list scopes and files, read a file with its
// history, export a scope, and an operator's edit or delete of a file
// (recorded in the history as the caller's, with no session).

// memoryFile is a file as the API shows it; Content only where asked.
type memoryFile struct {
	Scope     string    `json:"scope"`
	Path      string    `json:"path"`
	Size      int64     `json:"size"`
	Version   int64     `json:"version"`
	UpdatedAt time.Time `json:"updated_at"`
	UpdatedBy string    `json:"updated_by,omitempty"`
	SessionID string    `json:"session_id,omitempty"`
	Content   *string   `json:"content,omitempty"`
}

type memoryChange struct {
	Path      string    `json:"path"`
	Op        string    `json:"op"`
	Version   int64     `json:"version"`
	Diff      string    `json:"diff,omitempty"`
	By        string    `json:"by,omitempty"`
	SessionID string    `json:"session_id,omitempty"`
	At        time.Time `json:"at"`
}

func toMemoryFile(f store.MemoryFile, content bool) memoryFile {
	out := memoryFile{Scope: f.Scope, Path: f.Path, Size: f.Size, Version: f.Version, UpdatedAt: f.UpdatedAt, UpdatedBy: f.UpdatedBy, SessionID: f.SessionID}
	if content {
		out.Content = &f.Content
	}
	return out
}

func toMemoryChanges(hs []store.MemoryChange) []memoryChange {
	out := make([]memoryChange, len(hs))
	for i, h := range hs {
		out[i] = memoryChange{Path: h.Path, Op: h.Op, Version: h.Version, Diff: h.Diff, By: h.By, SessionID: h.SessionID, At: h.At}
	}
	return out
}

// memoryOff answers when the daemon keeps no memory.
func (a *Server) memoryOff(w http.ResponseWriter, r *http.Request) bool {
	if a.memory == nil {
		writeError(w, r, a.log, engine.Errorf(engine.CodeNotFound, "this daemon keeps no memory"))
		return true
	}
	return false
}

// listMemory answers GET /v1/memory: every scope that holds a file.
func (a *Server) listMemory(w http.ResponseWriter, r *http.Request) {
	if a.memoryOff(w, r) {
		return
	}
	scopes, err := a.memory.MemoryScopes(r.Context())
	if err != nil {
		writeError(w, r, a.log, err)
		return
	}
	out := make([]map[string]any, len(scopes))
	for i, s := range scopes {
		out[i] = map[string]any{"scope": s.Scope, "files": s.Files, "bytes": s.Bytes}
	}
	writeJSON(w, http.StatusOK, map[string]any{"scopes": out})
}

// memoryFiles answers GET /v1/memory/files?scope=: a scope's files, with
// their content when content=true (an export).
func (a *Server) memoryFiles(w http.ResponseWriter, r *http.Request) {
	scope, ok := a.memoryArg(w, r, "scope")
	if !ok {
		return
	}
	files, err := a.memory.MemoryFiles(r.Context(), scope)
	if err != nil {
		writeError(w, r, a.log, err)
		return
	}
	content := r.URL.Query().Get("content") == "true"
	out := make([]memoryFile, len(files))
	for i, f := range files {
		out[i] = toMemoryFile(f, content)
	}
	writeJSON(w, http.StatusOK, map[string]any{"scope": scope, "files": out})
}

// memoryFileGet answers GET /v1/memory/file?scope=&path=: the file and
// its history, newest first.
func (a *Server) memoryFileGet(w http.ResponseWriter, r *http.Request) {
	scope, ok := a.memoryArg(w, r, "scope")
	if !ok {
		return
	}
	path, ok := a.memoryArg(w, r, "path")
	if !ok {
		return
	}
	f, err := a.memory.MemoryFile(r.Context(), scope, path)
	if err != nil {
		writeError(w, r, a.log, err)
		return
	}
	hist, err := a.memory.MemoryHistory(r.Context(), scope, path, 0)
	if err != nil {
		writeError(w, r, a.log, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"file": toMemoryFile(f, true), "history": toMemoryChanges(hist)})
}

// memoryEdit is PUT /v1/memory/file's body: the new content, the version
// it replaces (0 creates the file) and who edits (see actingAs).
type memoryEdit struct {
	Content string `json:"content"`
	Version int64  `json:"version"`
	By      string `json:"by"`
}

// memoryFilePut answers PUT /v1/memory/file?scope=&path=: an operator's
// edit, refused with 409 when the file changed since version.
func (a *Server) memoryFilePut(w http.ResponseWriter, r *http.Request) {
	scope, ok := a.memoryArg(w, r, "scope")
	if !ok {
		return
	}
	path, ok := a.memoryArg(w, r, "path")
	if !ok {
		return
	}
	var req memoryEdit
	if err := decodeBody(w, r, a.maxBody, &req); err != nil {
		writeError(w, r, a.log, err)
		return
	}
	by, err := a.actingAs(r, req.By, "edits memory")
	if err != nil {
		writeError(w, r, a.log, err)
		return
	}
	before := ""
	if req.Version > 0 {
		f, err := a.memory.MemoryFile(r.Context(), scope, path)
		if err != nil {
			writeError(w, r, a.log, err)
			return
		}
		before = f.Content
	}
	err = a.memory.CommitMemory(r.Context(), store.MemoryCommit{Scope: scope, Now: a.now(), By: by,
		Writes: []store.MemoryWrite{{Path: path, Expect: req.Version, Content: req.Content, Op: "operator_edit", Diff: linediff.Of(before, req.Content)}}})
	if err != nil {
		writeError(w, r, a.log, err)
		return
	}
	f, err := a.memory.MemoryFile(r.Context(), scope, path)
	if err != nil {
		writeError(w, r, a.log, err)
		return
	}
	writeJSON(w, http.StatusOK, toMemoryFile(f, true))
}

// memoryFileDelete answers DELETE /v1/memory/file?scope=&path=&version=:
// an operator's delete of the file at that version (409 if it changed).
func (a *Server) memoryFileDelete(w http.ResponseWriter, r *http.Request) {
	scope, ok := a.memoryArg(w, r, "scope")
	if !ok {
		return
	}
	path, ok := a.memoryArg(w, r, "path")
	if !ok {
		return
	}
	version, err := strconv.ParseInt(r.URL.Query().Get("version"), 10, 64)
	if err != nil || version < 1 {
		writeError(w, r, a.log, engine.Errorf(engine.CodeInvalid, "version must be the file's version (1 or more): the one you read"))
		return
	}
	by, err := a.actingAs(r, r.URL.Query().Get("by"), "deletes memory")
	if err != nil {
		writeError(w, r, a.log, err)
		return
	}
	f, err := a.memory.MemoryFile(r.Context(), scope, path)
	if err != nil {
		writeError(w, r, a.log, err)
		return
	}
	err = a.memory.CommitMemory(r.Context(), store.MemoryCommit{Scope: scope, Now: a.now(), By: by,
		Writes: []store.MemoryWrite{{Path: path, Expect: version, Delete: true, Op: "operator_delete", Diff: linediff.Of(f.Content, "")}}})
	if err != nil {
		writeError(w, r, a.log, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// maxMemoryArg bounds a scope or path argument.
const maxMemoryArg = 512

// memoryArg reads a required query argument.
func (a *Server) memoryArg(w http.ResponseWriter, r *http.Request, name string) (string, bool) {
	if a.memoryOff(w, r) {
		return "", false
	}
	v := r.URL.Query().Get(name)
	if strings.TrimSpace(v) == "" || len(v) > maxMemoryArg {
		writeError(w, r, a.log, engine.Errorf(engine.CodeInvalid, "%s is required (at most %d bytes)", name, maxMemoryArg))
		return "", false
	}
	return v, true
}
