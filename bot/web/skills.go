package web

import "net/http"

// The skills page (admins): every skill of skills.sources with its
// source, its content hash as the folder is now, and the agents that use
// it (always or under a when: block), so an edit or a sync shows here
// before any session loads it.

// Skill is one skill as the skills page shows it.
type Skill struct {
	Name        string
	Description string
	// Source names the source and where it reads from (a folder, or a git
	// URL at its ref, without credentials).
	Source string
	// Hash is the content hash of the skill's folder ("sha256:..." as
	// skill.loaded records it), Short its first 12 hex digits; "" when
	// the folder cannot be read now.
	Hash, Short string
	Agents      []string
}

type skillsView struct {
	Skills []Skill
	// Configured is false when no skills.sources are configured.
	Configured bool
}

func (s *Server) skillsPage(w http.ResponseWriter, r *http.Request, v visitor) {
	vw := skillsView{Configured: s.cfg.Skills != nil}
	if s.cfg.Skills != nil {
		vw.Skills = s.cfg.Skills()
	}
	s.render(w, r, http.StatusOK, "skills", v, vw)
}
