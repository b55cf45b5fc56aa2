package config

import (
	"slices"
	"strings"
	"testing"
)

func TestLoad_APIKeyForms(t *testing.T) {
	c := mustLoadYAML(t, minimalYAML+`
api_keys:
  - plain-key-1
  - {name: ops, key: ops-key, act_for: true}
  - {key: unnamed-key}
  - "${BRAIN_KEY}"
  - {name: ci, key: "${CI_KEY}", act_for: "${CI_ACT_FOR}"}
`, map[string]string{"BRAIN_KEY": "env-key", "CI_KEY": "ci-key", "CI_ACT_FOR": "false"})
	want := []APIKey{
		{Name: "api-key-1", Key: "plain-key-1"},
		{Name: "ops", Key: "ops-key", ActFor: true},
		{Name: "api-key-3", Key: "unnamed-key"},
		{Name: "api-key-4", Key: "env-key"},
		{Name: "ci", Key: "ci-key"},
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
			if strings.Contains(err.Error(), "key: a") || strings.Contains(err.Error(), `"a"`) {
				t.Errorf("error %q shows a key", err)
			}
		})
	}
}
