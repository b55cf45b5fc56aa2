package client

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// MemoryScope is one scope of agents' memory with its totals.
type MemoryScope struct {
	Scope string `json:"scope"`
	Files int    `json:"files"`
	Bytes int64  `json:"bytes"`
}

// MemoryFile is one memory file; Content is set where it was asked for.
type MemoryFile struct {
	Scope     string    `json:"scope"`
	Path      string    `json:"path"`
	Size      int64     `json:"size"`
	Version   int64     `json:"version"`
	UpdatedAt time.Time `json:"updated_at"`
	UpdatedBy string    `json:"updated_by,omitempty"`
	SessionID string    `json:"session_id,omitempty"`
	Content   *string   `json:"content,omitempty"`
}

// MemoryChange is one entry of a memory file's history.
type MemoryChange struct {
	Path      string    `json:"path"`
	Op        string    `json:"op"`
	Version   int64     `json:"version"`
	Diff      string    `json:"diff,omitempty"`
	By        string    `json:"by,omitempty"`
	SessionID string    `json:"session_id,omitempty"`
	At        time.Time `json:"at"`
}

// MemoryScopes lists the scopes that hold files (GET /v1/memory).
func (d *Daemon) MemoryScopes(ctx context.Context) ([]MemoryScope, error) {
	var out struct {
		Scopes []MemoryScope `json:"scopes"`
	}
	err := d.call(ctx, http.MethodGet, "/v1/memory", nil, &out)
	return out.Scopes, err
}

// MemoryFiles lists a scope's files, with their content when content is
// true (GET /v1/memory/files).
func (d *Daemon) MemoryFiles(ctx context.Context, scope string, content bool) ([]MemoryFile, error) {
	q := url.Values{"scope": {scope}}
	if content {
		q.Set("content", "true")
	}
	var out struct {
		Files []MemoryFile `json:"files"`
	}
	err := d.call(ctx, http.MethodGet, "/v1/memory/files?"+q.Encode(), nil, &out)
	return out.Files, err
}

// MemoryFile returns a file with its history (GET /v1/memory/file).
func (d *Daemon) MemoryFile(ctx context.Context, scope, path string) (MemoryFile, []MemoryChange, error) {
	var out struct {
		File    MemoryFile     `json:"file"`
		History []MemoryChange `json:"history"`
	}
	err := d.call(ctx, http.MethodGet, "/v1/memory/file?"+url.Values{"scope": {scope}, "path": {path}}.Encode(), nil, &out)
	return out.File, out.History, err
}

// DeleteMemoryFile deletes a file at the version read (DELETE
// /v1/memory/file).
func (d *Daemon) DeleteMemoryFile(ctx context.Context, scope, path string, version int64) error {
	q := url.Values{"scope": {scope}, "path": {path}, "version": {strconv.FormatInt(version, 10)}}
	return d.call(ctx, http.MethodDelete, "/v1/memory/file?"+q.Encode(), nil, nil)
}
