package config

import (
	"strings"
	"testing"
)

func TestValidate_HTTPOAuth(t *testing.T) {
	const tool = `tools:
  http:
    - name: tickets
      description: d
      url: https://api.example/tickets
      input: {type: object}
`
	const oauth = "      oauth: {authorize_url: https://id.example/authorize, token_url: https://id.example/token, client_id: c%s}\n"
	tests := []struct {
		name, yaml, want string // want: "" = valid, else a key the error names
	}{
		{"workspace", "public_url: https://b.example\n" + tool + strings.Replace(oauth, "%s", "", 1), ""},
		{"person", "public_url: https://b.example\n" + tool + strings.Replace(oauth, "%s", ", per: person", 1), ""},
		{"person as approver", "public_url: https://b.example\n" + tool + strings.Replace(oauth, "%s", ", per: person", 1) +
			"      acts_as: approver\n", ""},
		{"person as app", "public_url: https://b.example\n" + tool + strings.Replace(oauth, "%s", ", per: person", 1) +
			"      acts_as: app\n", "tools.http[0].acts_as"},
		{"person as nobody", "public_url: https://b.example\n" + tool + strings.Replace(oauth, "%s", ", per: person", 1) +
			"      acts_as: someone\n", "tools.http[0].acts_as"},
		{"workspace as requester", "public_url: https://b.example\n" + tool + strings.Replace(oauth, "%s", "", 1) +
			"      acts_as: requester\n", "tools.http[0].acts_as"},
		{"no oauth as approver", tool + "      acts_as: approver\n", "tools.http[0].acts_as"},
		{"no oauth as app", tool + "      acts_as: app\n", ""},
		{"oauth and an Authorization header", "public_url: https://b.example\n" + tool + strings.Replace(oauth, "%s", "", 1) +
			"      headers: {Authorization: Bearer x}\n", "tools.http[0].headers.Authorization"},
		{"no public_url", tool + strings.Replace(oauth, "%s", "", 1), "public_url"},
		{"bad per", "public_url: https://b.example\n" + tool + strings.Replace(oauth, "%s", ", per: team", 1), "tools.http[0].oauth.per"},
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
				t.Fatalf("err = %v, want one naming %s", err, tt.want)
			}
		})
	}
}
