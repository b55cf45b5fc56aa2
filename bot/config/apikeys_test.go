package config

import (
	"slices"
	"strings"
	"testing"
)

func TestLoad_APIKeyForms(t *testing.T) {
	c := mustLoadYAML(t, minimalYAML+`
api_keys:
  - plain-key-1-0f3c8e1d9a7b6c5d4e3f2a1b0c9d8e7f
  - {name: ops, key: ops-key-0f3c8e1d9a7b6c5d4e3f2a1b0c9d8e7f, act_for: true}
  - {key: unnamed-key-0f3c8e1d9a7b6c5d4e3f2a1b0c9d8e7f}
  - "${BRAIN_KEY}"
  - {name: ci, key: "${CI_KEY}", act_for: "${CI_ACT_FOR}"}
`, map[string]string{"BRAIN_KEY": "env-key-0f3c8e1d9a7b6c5d4e3f2a1b0c9d8e7f", "CI_KEY": "ci-key-0f3c8e1d9a7b6c5d4e3f2a1b0c9d8e7f", "CI_ACT_FOR": "false"})
	want := []APIKey{
		{Name: "api-key-1", Key: "plain-key-1-0f3c8e1d9a7b6c5d4e3f2a1b0c9d8e7f"},
		{Name: "ops", Key: "ops-key-0f3c8e1d9a7b6c5d4e3f2a1b0c9d8e7f", ActFor: true},
		{Name: "api-key-3", Key: "unnamed-key-0f3c8e1d9a7b6c5d4e3f2a1b0c9d8e7f"},
		{Name: "api-key-4", Key: "env-key-0f3c8e1d9a7b6c5d4e3f2a1b0c9d8e7f"},
		{Name: "ci", Key: "ci-key-0f3c8e1d9a7b6c5d4e3f2a1b0c9d8e7f"},
	}
	if !slices.Equal(c.APIKeys, want) {
		t.Fatalf("api_keys = %+v\nwant %+v", c.APIKeys, want)
	}
	for _, k := range want {
		if !slices.Contains(c.Secrets(), k.Key) {
			t.Errorf("Secrets() misses %q", k.Key)
		}
	}
}

func TestLoad_APIKeyProblems(t *testing.T) {
	tests := []struct {
		name, yaml string
		env        map[string]string
		want       []string
	}{
		{"unknown key", `api_keys: [{name: ops, key: k, actfor: true}]`, nil,
			[]string{"api_keys[0].actfor: unknown key"}},
		{"no key", `api_keys: [k0, {name: ops}]`, nil,
			[]string{"api_keys[1].key: required"}},
		{"unset plain", `api_keys: ["${NOPE}"]`, nil,
			[]string{"api_keys[0].key: required, but the environment variable NOPE is not set"}},
		{"unset mapping", `api_keys: [{name: ops, key: "${NOPE}"}]`, nil,
			[]string{"api_keys[0].key: required, but the environment variable NOPE is not set"}},
		{"duplicate name", `api_keys: [{name: ops, key: a}, {name: ops, key: b}]`, nil,
			[]string{`api_keys[1].name: duplicate "ops" (also api_keys[0])`}},
		{"default name taken", `api_keys: [{name: api-key-2, key: a}, b]`, nil,
			[]string{`api_keys[1].name: duplicate "api-key-2" (also api_keys[0])`}},
		{"bad name", `api_keys: [{name: "ops team", key: a}]`, nil,
			[]string{`api_keys[0].name: "ops team": use letters`}},
		{"same key", `api_keys: [{name: ops, key: a}, {name: ci, key: a}]`, nil,
			[]string{"api_keys[1].key: the same key as api_keys[0]"}},
		{"not a key", `api_keys: [[a, b]]`, nil,
			[]string{"an api key is a string or a mapping"}},
		{"weak keys", `api_keys: [brain-api-key-123456, {name: ops, key: "${OPS_KEY}"}, "` + strings.Repeat("ab", 40) + `"]`,
			map[string]string{"OPS_KEY": "weak-" + strings.Repeat("x", 60)},
			[]string{"api_keys[0].key: too weak: about ", "api_keys[1].key: too weak", "api_keys[2].key: too weak",
				"under the 128 required (32 random characters); make one with: openssl rand -hex 32"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := loadYAML(t, minimalYAML+tt.yaml+"\n", tt.env)
			if err == nil {
				t.Fatal("Load succeeded")
			}
			for _, want := range tt.want {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not contain %q", err, want)
				}
			}
			if strings.Contains(err.Error(), "key: a") || strings.Contains(err.Error(), `"a"`) || strings.Contains(err.Error(), "123456") || strings.Contains(err.Error(), "xxx") {
				t.Errorf("error %q shows a key", err)
			}
		})
	}
}

// TestKeyBits: random keys of 32 characters or more from a hex or base64
// alphabet pass; made-up, short or repetitive ones do not.
func TestKeyBits(t *testing.T) {
	tests := []struct {
		key  string
		pass bool
	}{
		{"9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08", true}, // openssl rand -hex 32
		{"9f86d081884c7d659a2feaa0c55ad015", true},                                 // 32 hex
		{"9f86d081884c7d659a2feaa0c55ad01", false},                                 // 31 hex
		{"q83vEjRWeJ/aUPz3mL+1Yk9xT2cHn4bA", true},                                 // openssl rand -base64 24
		{"brain-api-key-123456", false},
		{"secret", false},
		{"abc", false},
		{strings.Repeat("a", 200), false},
		{strings.Repeat("ab", 64), false},
		{"", false},
	}
	for _, tt := range tests {
		if got := KeyBits(tt.key) >= MinKeyBits; got != tt.pass {
			t.Errorf("KeyBits(%q) = %d; pass = %v, want %v", tt.key, KeyBits(tt.key), got, tt.pass)
		}
	}
}
