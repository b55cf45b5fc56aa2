package config

import (
	"strings"
	"testing"
)

func TestLoad_SandboxNetwork(t *testing.T) {
	for _, tc := range []struct{ yaml, want string }{
		{"{}", NetworkNone},
		{"{network: false}", NetworkNone},
		{"{network: true}", NetworkHost},
		{"{network: host}", NetworkHost},
		{"{network: proxy, egress: {allow: [proxy.golang.org, '*.npmjs.org', 'example.com:8443'], agents: {default: [github.com]}, private_ok: ['10.0.0.5:443'], git_hosts: {github.com: 'https://github.com'}}}", NetworkProxy},
	} {
		c := mustLoadYAML(t, minimalYAML+"tools:\n  sandbox_exec: "+tc.yaml+"\n", nil)
		if got := string(c.Tools.SandboxExec.Network); got != tc.want {
			t.Errorf("%s: network = %q, want %q", tc.yaml, got, tc.want)
		}
	}
}

func TestLoad_SandboxEgressProblems(t *testing.T) {
	_, err := loadYAML(t, minimalYAML+`tools:
  sandbox_exec:
    network: wide
    egress:
      allow: ["*.com", "a b", ""]
      agents: {nobody: [x.org]}
      private_ok: [10.0.0.5]
      git_hosts: {github.com: "ftp://github.com"}
`, nil)
	if err == nil {
		t.Fatal("accepted")
	}
	for _, want := range []string{
		"tools.sandbox_exec.network",
		"tools.sandbox_exec.egress: applies to network: proxy only",
		`tools.sandbox_exec.egress.allow[0]: "*.com" would match a whole top-level domain`,
		"tools.sandbox_exec.egress.allow[1]",
		"tools.sandbox_exec.egress.allow[2]",
		"tools.sandbox_exec.egress.agents.nobody: names no agent",
		"tools.sandbox_exec.egress.private_ok[0]",
		"tools.sandbox_exec.egress.git_hosts.github.com",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("missing %q in:\n%v", want, err)
		}
	}
}
