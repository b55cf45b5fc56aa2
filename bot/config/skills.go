package config

import (
	"fmt"
	"path"
	"path/filepath"
	"strings"
)

// SkillsConfig is the skills block: where Agent Skills come from. Agents
// choose theirs with agents[].skills (names or globs).
type SkillsConfig struct {
	Sources []SkillSourceConfig `yaml:"sources"`
}

// SkillSourceConfig is one entry of skills.sources: a folder (Dir) or a
// git repository (Git) at a pinned Ref, fetched into data_dir/skills/<name>.
type SkillSourceConfig struct {
	Name string `yaml:"name"`
	Dir  string `yaml:"dir"`  // relative to the config file's folder
	Git  string `yaml:"git"`  // a URL git can clone (https, ssh, file)
	Ref  string `yaml:"ref"`  // a tag, commit or branch; required with git
	Path string `yaml:"path"` // the folder of the repository that holds the skills; default its root
}

// resolveSkillDirs makes relative skills.sources[].dir relative to the
// config file's folder, as data_dir is.
func (c *Config) resolveSkillDirs(file string) {
	for i := range c.Skills.Sources {
		if d := c.Skills.Sources[i].Dir; d != "" && !filepath.IsAbs(d) {
			c.Skills.Sources[i].Dir = filepath.Join(filepath.Dir(file), d)
		}
	}
}

func (c *Config) validateSkills(p *problems) {
	seen := map[string]bool{}
	for i, s := range c.Skills.Sources {
		key := fmt.Sprintf("skills.sources[%d]", i)
		switch {
		case s.Name == "":
			p.add(key+".name", "required")
		case !namePattern.MatchString(s.Name):
			p.add(key+".name", "%q: use letters, digits, _ and -", s.Name)
		case seen[s.Name]:
			p.add(key+".name", "duplicate %q", s.Name)
		}
		seen[s.Name] = true
		switch {
		case s.Dir == "" && s.Git == "":
			p.add(key, "set dir (a folder of skills) or git (a repository)")
		case s.Dir != "" && s.Git != "":
			p.add(key, "set dir or git, not both")
		case s.Dir != "":
			if s.Ref != "" {
				p.add(key+".ref", "only for git sources")
			}
			if s.Path != "" {
				p.add(key+".path", "only for git sources (point dir at the folder itself)")
			}
		default:
			if s.Ref == "" {
				p.add(key+".ref", "required with git: pin a tag or commit (a branch moves at each brain skills sync)")
			} else if strings.HasPrefix(s.Ref, "-") {
				p.add(key+".ref", "%q is not a ref", s.Ref)
			}
			if strings.HasPrefix(s.Git, "-") {
				p.add(key+".git", "%q is not a repository URL", s.Git)
			}
			if c := path.Clean("/" + s.Path); s.Path != "" && (path.IsAbs(s.Path) || strings.Contains(s.Path, "..") || c == "/") {
				p.add(key+".path", "%q: want a folder inside the repository, e.g. skills", s.Path)
			}
		}
	}
	for i, a := range c.Agents {
		c.checkSkillPatterns(p, fmt.Sprintf("agents[%d].skills", i), a.Skills)
		for j, w := range a.When {
			c.checkSkillPatterns(p, fmt.Sprintf("agents[%d].when[%d].skills", i, j), w.Skills)
		}
	}
}

func (c *Config) checkSkillPatterns(p *problems, key string, patterns []string) {
	if len(patterns) > 0 && len(c.Skills.Sources) == 0 {
		p.add(key, "names skills, but skills.sources is empty")
		return
	}
	for i, pat := range patterns {
		if _, err := path.Match(pat, ""); err != nil || pat == "" || strings.Contains(pat, "/") {
			p.add(fmt.Sprintf("%s[%d]", key, i), "%q is not a skill name or glob (e.g. release-*)", pat)
		}
	}
}
