package bot

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"brain/bot/config"
)

// docPages are the README and every page under docs/: what a person reads.
func docPages(t *testing.T) []string {
	t.Helper()
	pages, err := filepath.Glob("../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	return append([]string{"../README.md"}, pages...)
}

var (
	fenceRE      = regexp.MustCompile("(?s)```[^\n]*\n.*?```")
	inlineCodeRE = regexp.MustCompile("`[^`\n]*`")
	linkRE       = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	headingRE    = regexp.MustCompile(`(?m)^#{1,6} +(.+?) *$`)
	slugDropRE   = regexp.MustCompile(`[^\p{L}\p{N}\- _]`)
)

// anchorsOf returns the anchors GitHub makes for a Markdown file's headings
// (lower case, punctuation dropped, spaces to hyphens, repeats numbered).
func anchorsOf(text string) map[string]bool {
	text = fenceRE.ReplaceAllString(text, "")
	seen := map[string]int{}
	anchors := map[string]bool{}
	for _, m := range headingRE.FindAllStringSubmatch(text, -1) {
		h := strings.ToLower(m[1])
		h = strings.ReplaceAll(h, "`", "")
		s := strings.ReplaceAll(slugDropRE.ReplaceAllString(h, ""), " ", "-")
		if n := seen[s]; n > 0 {
			anchors[s+"-"+strconv.Itoa(n)] = true
		} else {
			anchors[s] = true
		}
		seen[s]++
	}
	return anchors
}

// TestDocs_LinksResolve checks every relative link of the README and the
// docs: the file exists, and a #anchor names a heading of that file.
func TestDocs_LinksResolve(t *testing.T) {
	checked := 0
	for _, page := range docPages(t) {
		raw, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		text := inlineCodeRE.ReplaceAllString(fenceRE.ReplaceAllString(string(raw), ""), "")
		for _, m := range linkRE.FindAllStringSubmatch(text, -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			file, anchor, _ := strings.Cut(target, "#")
			path := page
			if file != "" {
				path = filepath.Join(filepath.Dir(page), file)
			}
			checked++
			body, err := os.ReadFile(path)
			if err != nil {
				if info, serr := os.Stat(path); serr == nil && info.IsDir() && anchor == "" {
					continue
				}
				t.Errorf("%s: link %q: %s does not exist", page, target, path)
				continue
			}
			if anchor != "" && strings.HasSuffix(path, ".md") && !anchorsOf(string(body))[anchor] {
				t.Errorf("%s: link %q: %s has no heading with anchor #%s", page, target, path, anchor)
			}
		}
	}
	if checked < 30 {
		t.Fatalf("only %d relative links found: is the link pattern broken?", checked)
	}
}

// configKeys are the config's top-level keys, from its yaml tags.
func configKeys() map[string]bool {
	keys := map[string]bool{}
	t := reflect.TypeOf(config.Config{})
	for i := 0; i < t.NumField(); i++ {
		if tag, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ","); tag != "" && tag != "-" {
			keys[tag] = true
		}
	}
	return keys
}

// mergeYAML lays fragment over base: maps merge key by key, anything else
// (lists included) replaces, as a person pasting the fragment would expect.
// A map that picks an implementation (`driver:`, `provider:`) replaces the
// base's whole, since keys of the other implementation do not apply to it.
func mergeYAML(base, fragment map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range base {
		out[k] = v
	}
	for k, v := range fragment {
		bm, ok1 := out[k].(map[string]any)
		fm, ok2 := v.(map[string]any)
		_, picks := fm["driver"]
		if _, ok := fm["provider"]; ok {
			picks = true
		}
		if ok1 && ok2 && !picks {
			out[k] = mergeYAML(bm, fm)
			continue
		}
		out[k] = v
	}
	return out
}

// docsEnv answers every ${VAR} a docs example names with a value that
// passes validation (long and random-looking, like a real secret).
func docsEnv(name string) (string, bool) {
	switch {
	case strings.HasSuffix(name, "_URL"), strings.HasSuffix(name, "_DSN"):
		return "postgres://brain:secret@127.0.0.1:5432/brain", true
	}
	return "f3Kq9ZpW7xLm2Vt8Rb6Yc4Nd1Hs5Gj0Ue7Ao3Ix9Pw2Qk", true
}

// docsPlatforms is laid over config.example.yaml as the docs' base config.
const docsPlatforms = `
public_url: https://brain.example.com
slack:
  bot_token: ${SLACK_BOT_TOKEN}
  signing_secret: ${SLACK_SIGNING_SECRET}
linear:
  webhook_secret: ${LINEAR_WEBHOOK_SECRET}
  access_token: ${LINEAR_ACCESS_TOKEN}
`

// TestDocs_ConfigExamplesCheck runs every YAML config example of the README
// and the docs through `brain config check`, each merged into the example
// config, so a documented key that the config rejects fails here. Blocks
// that are not brain config (no top-level key of it: a Kubernetes probe, an
// app manifest) are left out; a block is brain config when it names at
// least one of its top-level keys, and then all of its keys must be valid.
func TestDocs_ConfigExamplesCheck(t *testing.T) {
	baseRaw, err := os.ReadFile("../config.example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var base, platforms map[string]any
	if err := yaml.Unmarshal(baseRaw, &base); err != nil {
		t.Fatal(err)
	}
	// The example config connects no platform; examples that post to one
	// (a schedule's outcome to a Slack channel) need it configured.
	if err := yaml.Unmarshal([]byte(docsPlatforms), &platforms); err != nil {
		t.Fatal(err)
	}
	base = mergeYAML(base, platforms)
	keys := configKeys()
	blockRE := regexp.MustCompile("(?s)```ya?ml\n(.*?)```")
	checked := 0
	for _, page := range docPages(t) {
		raw, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for i, m := range blockRE.FindAllStringSubmatch(string(raw), -1) {
			var frag map[string]any
			if err := yaml.Unmarshal([]byte(m[1]), &frag); err != nil || frag == nil {
				continue // not a mapping: a list item or prose shown as YAML
			}
			isConfig := false
			for k := range frag {
				if keys[k] {
					isConfig = true
				}
			}
			if !isConfig {
				continue
			}
			checked++
			merged, err := yaml.Marshal(mergeYAML(base, frag))
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(t.TempDir(), "config.yaml")
			if err := os.WriteFile(path, merged, 0o600); err != nil {
				t.Fatal(err)
			}
			cfg, err := config.Check(path, docsEnv)
			if cfg != nil {
				if cerr := CheckConfig(cfg, Options{}); cerr != nil {
					err = cerr
				}
			}
			if err != nil {
				t.Errorf("%s, YAML block %d (merged into config.example.yaml) fails brain config check:\n%s\n--- block ---\n%s", page, i+1, err, m[1])
			}
		}
	}
	if checked < 10 {
		t.Fatalf("only %d config examples found in the docs", checked)
	}
}
