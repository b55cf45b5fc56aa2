package web

import (
	"errors"
	"net/http"
	"net/url"
	"strconv"

	"brain/engine"
	"brain/internal/linediff"
	"brain/store"
	"brain/tools"
)

// The memory page (admins): the scopes, a scope's files, and a file with
// its history (who changed what, from which session), which an admin may
// edit or delete. Both compare the version the page showed, so an edit
// never overwrites a change made meanwhile.

type memoryView struct {
	Scopes  []store.MemoryScope
	Scope   string
	Files   []store.MemoryFile
	File    *store.MemoryFile
	History []store.MemoryChange
	Notice  string
}

func (s *Server) memoryPage(w http.ResponseWriter, r *http.Request, v visitor) {
	if s.cfg.Memory == nil {
		s.render(w, r, http.StatusOK, "memory", v, memoryView{Notice: "This console keeps no memory."})
		return
	}
	q := r.URL.Query()
	vw := memoryView{Scope: q.Get("scope"), Notice: q.Get("notice")}
	ctx := r.Context()
	var err error
	switch path := q.Get("path"); {
	case vw.Scope == "":
		vw.Scopes, err = s.cfg.Memory.MemoryScopes(ctx)
	case path == "":
		vw.Files, err = s.cfg.Memory.MemoryFiles(ctx, vw.Scope)
	default:
		var f store.MemoryFile
		if f, err = s.cfg.Memory.MemoryFile(ctx, vw.Scope, path); err == nil {
			vw.File = &f
			vw.History, err = s.cfg.Memory.MemoryHistory(ctx, vw.Scope, path, 0)
		}
	}
	if err != nil {
		s.engineError(w, r, v, err)
		return
	}
	s.render(w, r, http.StatusOK, "memory", v, vw)
}

// memoryChange saves an admin's edit or delete of a memory file.
func (s *Server) memoryChange(w http.ResponseWriter, r *http.Request, v visitor) {
	action := r.PathValue("action")
	if action != "edit" && action != "delete" {
		s.fail(w, r, v, http.StatusNotFound, "No such memory action.")
		return
	}
	scope, path, content := r.PostForm.Get("scope"), r.PostForm.Get("path"), r.PostForm.Get("content")
	version, err := strconv.ParseInt(r.PostForm.Get("version"), 10, 64)
	if s.cfg.Memory == nil || scope == "" || path == "" || err != nil || version < 1 {
		http.Redirect(w, r, "/memory?notice="+url.QueryEscape("Nothing was changed: the form named no memory file and version."), http.StatusSeeOther)
		return
	}
	f, err := s.cfg.Memory.MemoryFile(r.Context(), scope, path)
	if err != nil {
		s.engineError(w, r, v, err)
		return
	}
	del := action == "delete"
	write := store.MemoryWrite{Path: path, Expect: version, Content: content, Op: "operator_edit", Diff: linediff.Of(f.Content, content)}
	if del {
		write = store.MemoryWrite{Path: path, Expect: version, Delete: true, Op: "operator_delete", Diff: linediff.Of(f.Content, "")}
	}
	err = s.cfg.Memory.CommitMemory(r.Context(), store.MemoryCommit{Scope: scope, Now: s.now(), By: v.name, Writes: []store.MemoryWrite{write}})
	if errors.Is(err, engine.ErrConflict) {
		s.fail(w, r, v, http.StatusConflict, "The file changed since this page showed it; nothing was saved. Open it again.")
		return
	}
	if err != nil {
		s.engineError(w, r, v, err)
		return
	}
	s.log.Info("console changed a memory file", tools.LogPath, scope+" "+path, tools.LogWho, v.name)
	back := "/memory?" + url.Values{"scope": {scope}, "path": {path}, "notice": {"Saved."}}.Encode()
	if del {
		back = "/memory?" + url.Values{"scope": {scope}, "notice": {"Deleted " + path + "."}}.Encode()
	}
	http.Redirect(w, r, back, http.StatusSeeOther)
}
