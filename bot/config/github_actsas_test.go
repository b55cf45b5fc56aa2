package config

import (
	"strings"
	"testing"
)

func TestValidate_GitHubActsAs(t *testing.T) {
	const gh = `public_url: https://b.example
tools:
  github:
    token: t
    repos: [acme/widgets]
`
	const users = "    user_tokens: {client_id: Iv1.c, client_secret: s}\n"
	tests := []struct {
		name, yaml, want string // want: "" = valid, else what the error says
	}{
		{"approver with user tokens", gh + users + "    acts_as: {github_comment: approver, default: requester}\n", ""},
		{"app needs nothing", gh + "    acts_as: {default: app}\n", ""},
		{"person without user tokens", gh + "    acts_as: {github_comment: approver}\n", "tools.github.acts_as: acting as a person"},
		{"unknown mode", gh + users + "    acts_as: {github_comment: owner}\n", "tools.github.acts_as.github_comment: must be one of app, requester, approver"},
		{"not a GitHub tool", gh + users + "    acts_as: {deploy: requester}\n", "tools.github.acts_as.deploy: not a GitHub tool"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := loadYAML(t, minimalYAML+tt.yaml, nil)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("valid config refused: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want one saying %q", err, tt.want)
			}
		})
	}
}
