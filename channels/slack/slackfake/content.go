package slackfake

import (
	"encoding/json"
	"net/http"
	"net/url"
	"path"
	"sort"
	"strconv"
	"strings"
)

// BotToken is the token file downloads must carry (as Slack, the fake
// serves url_private_download only with the bot token).
const BotToken = "xoxb-test"

// File is a file the fake serves at its url_private_download.
type File struct {
	ID       string
	Name     string
	Mimetype string // what Slack would guess from the name
	Data     []byte
	// Size is reported to clients; AddFile sets it to len(Data) unless set.
	Size int64
	// URL is url_private_download, set by AddFile.
	URL string
}

// Wire is the file object as Slack sends it in a file_share message (the
// fields @slack/types' File requires included).
func (f File) Wire() map[string]any {
	ext := strings.TrimPrefix(path.Ext(f.Name), ".")
	return map[string]any{"id": f.ID, "created": 1700000000, "name": f.Name, "title": f.Name,
		"mimetype": f.Mimetype, "filetype": ext, "pretty_type": strings.ToUpper(ext), "editable": false,
		"size": f.Size, "mode": "hosted", "is_external": false, "external_type": "", "is_public": false,
		"public_url_shared": false, "display_as_bot": false, "username": "",
		"url_private_download": f.URL, "permalink": "https://fake.slack.com/files/" + f.ID + "/" + f.Name,
		"channels": []string{}, "groups": []string{}}
}

// User is a workspace member users.info describes.
type User struct {
	ID          string
	Name        string
	RealName    string
	DisplayName string
}

// fakeContent is what the fake reads back besides messages: people, files,
// user groups and published Home views. Guarded by Server.mu.
type fakeContent struct {
	users     map[string]User
	files     map[string]File
	downloads map[string]int
	groups    map[string][]string
	homeViews map[string]json.RawMessage
}

func newContent() fakeContent {
	return fakeContent{users: map[string]User{}, files: map[string]File{}, downloads: map[string]int{},
		groups: map[string][]string{}, homeViews: map[string]json.RawMessage{}}
}

// AddMessage seeds a message a person or another bot wrote (set Author or
// BotID), in channel and thread m.ThreadTS; a TS is assigned when empty.
// It returns the message as stored.
func (s *Server) AddMessage(m Message) Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	if m.TS == "" {
		m.TS = s.nextTSLocked()
	}
	k := threadKey{m.Channel, m.TS}
	s.messages[k] = &m
	s.order = append(s.order, k)
	s.notifyLocked()
	return m
}

// AddUser makes users.info know u.
func (s *Server) AddUser(u User) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.users[u.ID] = u
}

// AddFile serves f at its url_private_download and returns it with URL
// and Size set.
func (s *Server) AddFile(f File) File {
	s.mu.Lock()
	defer s.mu.Unlock()
	if f.Size == 0 {
		f.Size = int64(len(f.Data))
	}
	f.URL = s.srv.URL + "/files-pri/" + TeamID + "-" + f.ID + "/download/" + url.PathEscape(f.Name)
	s.files[f.ID] = f
	return f
}

// Downloads counts the successful downloads of a file.
func (s *Server) Downloads(fileID string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.downloads[fileID]
}

// SetGroup sets a user group's members (usergroups.users.list).
func (s *Server) SetGroup(id string, members ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.groups[id] = members
}

// HomeView returns the view last published to user's Home tab.
func (s *Server) HomeView(user string) (json.RawMessage, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.homeViews[user]
	return v, ok
}

// HomePublishes counts views.publish successes.
func (s *Server) HomePublishes() int { return len(s.Calls("views.publish")) }

func (s *Server) dispatchContentLocked(method string, p url.Values) map[string]any {
	switch method {
	case "users.info":
		u, ok := s.users[p.Get("user")]
		if !ok {
			return apiError("user_not_found")
		}
		return map[string]any{"ok": true, "user": map[string]any{"id": u.ID, "name": u.Name, "real_name": u.RealName,
			"profile": map[string]any{"real_name": u.RealName, "display_name": u.DisplayName}}}
	case "usergroups.users.list":
		members, ok := s.groups[p.Get("usergroup")]
		if !ok {
			return apiError("no_such_subteam")
		}
		return map[string]any{"ok": true, "users": members}
	case "views.publish":
		return s.publishLocked(p)
	}
	return apiError("unknown_method")
}

func (s *Server) publishLocked(p url.Values) map[string]any {
	user := p.Get("user_id")
	if user == "" {
		return apiError("invalid_arguments")
	}
	var view struct {
		Type   string          `json:"type"`
		Blocks json.RawMessage `json:"blocks"`
	}
	if json.Unmarshal([]byte(p.Get("view")), &view) != nil || view.Type != "home" {
		return apiError("invalid_arguments")
	}
	if code := checkBlocksUpTo(string(view.Blocks), maxViewBlocks); code != "" {
		return apiError(code)
	}
	s.homeViews[user] = json.RawMessage(p.Get("view"))
	return map[string]any{"ok": true, "view": map[string]any{"id": "V" + strconv.Itoa(len(s.homeViews)), "type": "home"}}
}

// repliesLocked answers conversations.replies: the thread oldest first,
// before latest (exclusive unless inclusive), limit per page with a
// cursor, as Slack pages it.
func (s *Server) repliesLocked(p url.Values) map[string]any {
	if p.Get("channel") == "" || p.Get("ts") == "" {
		return apiError("invalid_arguments")
	}
	thread := s.threadLocked(p.Get("channel"), p.Get("ts"))
	if len(thread) == 0 {
		return apiError("thread_not_found")
	}
	sort.SliceStable(thread, func(i, j int) bool { return tsLess(thread[i].TS, thread[j].TS) })
	if latest := p.Get("latest"); latest != "" {
		inclusive := p.Get("inclusive") == "true" || p.Get("inclusive") == "1"
		kept := thread[:0]
		for _, m := range thread {
			if tsLess(m.TS, latest) || (inclusive && m.TS == latest) {
				kept = append(kept, m)
			}
		}
		thread = kept
	}
	start, _ := strconv.Atoi(strings.TrimPrefix(p.Get("cursor"), "c"))
	limit, _ := strconv.Atoi(p.Get("limit"))
	if limit <= 0 || limit > 1000 {
		limit = 1000
	}
	start = min(max(start, 0), len(thread))
	end := min(start+limit, len(thread))
	msgs := []any{}
	for _, m := range thread[start:end] {
		msgs = append(msgs, wire(m))
	}
	resp := map[string]any{"ok": true, "messages": msgs, "has_more": end < len(thread)}
	if end < len(thread) {
		resp["response_metadata"] = map[string]any{"next_cursor": "c" + strconv.Itoa(end)}
	}
	return resp
}

// tsLess orders Slack timestamps ("1700000000.000100").
func tsLess(a, b string) bool {
	x, _ := strconv.ParseFloat(a, 64)
	y, _ := strconv.ParseFloat(b, 64)
	return x < y
}

// serveFile serves url_private_download. Without the bot token it answers
// as files.slack.com does: a redirect to the sign-in page.
func (s *Server) serveFile(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/signin" {
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte("<html>sign in</html>"))
		return
	}
	rest, ok := strings.CutPrefix(r.URL.Path, "/files-pri/"+TeamID+"-")
	id, _, _ := strings.Cut(rest, "/")
	s.mu.Lock()
	f, known := s.files[id]
	s.mu.Unlock()
	if !ok || !known {
		http.NotFound(w, r)
		return
	}
	if r.Header.Get("Authorization") != "Bearer "+BotToken {
		http.Redirect(w, r, "/signin?redir="+url.QueryEscape(r.URL.Path), http.StatusFound)
		return
	}
	s.mu.Lock()
	s.downloads[id]++
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/octet-stream")
	_, _ = w.Write(f.Data)
}
