package config

import (
	"fmt"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// ApprovalsConfig is the approvals block.
type ApprovalsConfig struct {
	Approvers []string `yaml:"approvers"` // empty = the person who started the session
	TTL       Duration `yaml:"ttl"`       // default 168h
	// Policies are tried in order for each approval tool call; the first
	// that matches decides how the call is approved.
	Policies []PolicyConfig `yaml:"policies"`
	// Notify posts each card to more people than the thread.
	Notify NotifyConfig `yaml:"notify"`
	// RemindBefore, when set, posts a reminder this long before a pending
	// approval expires. 0 (the default) = no reminder.
	RemindBefore Duration `yaml:"remind_before"`
}

// NotifyConfig is approvals.notify: where approval cards go besides the
// session's own thread. Every copy is updated when the approval changes,
// and a decision on any copy counts once.
type NotifyConfig struct {
	// SlackChannel is an approvers' channel id (C...) that gets a copy of
	// every card of a Slack session.
	SlackChannel string `yaml:"slack_channel"`
	// DMApprovers sends a copy as a direct message to each configured
	// approver that is a Slack user id (U... or W...).
	DMApprovers bool `yaml:"dm_approvers"`
}

// PolicyConfig is one entry of approvals.policies. Exactly one action:
// auto_approve, deny (with message), or require (N people) and/or
// forbid_self.
type PolicyConfig struct {
	Name string `yaml:"name"`
	// Tool is a tool name or a glob ("lookup_*", "github_*").
	Tool string `yaml:"tool"`
	// When tests the call's arguments; every condition must hold.
	When        []ConditionConfig `yaml:"when"`
	AutoApprove bool              `yaml:"auto_approve"`
	Require     int               `yaml:"require"`
	ForbidSelf  bool              `yaml:"forbid_self"`
	Deny        bool              `yaml:"deny"`
	// Message is the tool error of a deny.
	Message string `yaml:"message"`
}

// ConditionConfig tests the value at a JSON path of the arguments with
// exactly one of equals, regexp, or gt/gte/lt/lte.
type ConditionConfig struct {
	Path   string   `yaml:"path"`
	Equals *Scalar  `yaml:"equals"`
	Regexp string   `yaml:"regexp"`
	GT     *float64 `yaml:"gt"`
	GTE    *float64 `yaml:"gte"`
	LT     *float64 `yaml:"lt"`
	LTE    *float64 `yaml:"lte"`
}

// Scalar is a YAML scalar kept as the JSON value it compares with: a
// string, a float64, a bool or nil (null).
type Scalar struct{ Value any }

// UnmarshalYAML reads a scalar; quoted values stay strings ("42" is not 42).
func (s *Scalar) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return fmt.Errorf("line %d: want a string, number, boolean or null", n.Line)
	}
	switch n.ShortTag() {
	case "!!null":
		s.Value = nil
	case "!!bool":
		b, err := strconv.ParseBool(n.Value)
		if err != nil {
			return fmt.Errorf("line %d: %q is not a boolean", n.Line, n.Value)
		}
		s.Value = b
	case "!!int", "!!float":
		f, err := strconv.ParseFloat(strings.ReplaceAll(n.Value, "_", ""), 64)
		if err != nil {
			return fmt.Errorf("line %d: %q is not a number", n.Line, n.Value)
		}
		s.Value = f
	default:
		s.Value = n.Value
	}
	return nil
}

func (c *Config) validateApprovals(p *problems) {
	for i, a := range c.Approvals.Approvers {
		if a == "" {
			p.add(fmt.Sprintf("approvals.approvers[%d]", i), "must not be empty")
		}
	}
	atLeast(p, "approvals.ttl", int64(c.Approvals.TTL), 1, "a positive duration")
	atLeast(p, "approvals.remind_before", int64(c.Approvals.RemindBefore), 0, "a duration, 0 for no reminder")
	if rb := c.Approvals.RemindBefore; rb > 0 && c.Approvals.TTL > 0 && rb >= c.Approvals.TTL {
		p.add("approvals.remind_before", "must be shorter than approvals.ttl (%s)", c.Approvals.TTL.Std())
	}
	if ch := c.Approvals.Notify.SlackChannel; ch != "" && !validSlackChannel(ch) {
		p.add("approvals.notify.slack_channel", "%q is not a Slack channel id (C..., G...)", ch)
	}
	names := map[string]int{}
	for i, pc := range c.Approvals.Policies {
		key := fmt.Sprintf("approvals.policies[%d]", i)
		if j, dup := names[pc.Name]; dup && pc.Name != "" {
			p.add(key+".name", "%q is also the name of approvals.policies[%d]", pc.Name, j)
		}
		names[pc.Name] = i
		actions := 0
		for _, set := range []bool{pc.AutoApprove, pc.Deny, pc.Require != 0 || pc.ForbidSelf} {
			if set {
				actions++
			}
		}
		switch {
		case actions != 1:
			p.add(key, "set exactly one action: auto_approve, deny, or require and/or forbid_self")
			continue
		case pc.Require < 0:
			p.add(key+".require", "must be at least 1")
			continue
		case pc.Message != "" && !pc.Deny:
			p.add(key+".message", "only a deny policy has a message")
		}
		if strings.TrimSpace(pc.Name) == "" {
			p.add(key+".name", "required")
		}
		if pc.Tool == "" {
			p.add(key+".tool", "required (a tool name or a glob)")
		}
		if pc.Deny && strings.TrimSpace(pc.Message) == "" {
			p.add(key+".message", "required with deny (it is the tool error the model sees)")
		}
		c.checkPolicyPeople(p, key, pc)
		c.checkPolicyMatcher(p, key, pc)
	}
}

// validSlackChannel reports whether s looks like a channel id.
func validSlackChannel(s string) bool {
	if len(s) < 2 || len(s) > 32 || (s[0] != 'C' && s[0] != 'G') {
		return false
	}
	for _, r := range s[1:] {
		if (r < 'A' || r > 'Z') && (r < '0' || r > '9') {
			return false
		}
	}
	return true
}

// checkPolicyPeople refuses a review policy no agent could ever satisfy:
// more distinct approvers than any agent has, or forbid_self where only
// the requester (the session's starter) may decide. API sessions, whose
// keys decide under their own names, are not the case to design for.
func (c *Config) checkPolicyPeople(p *problems, key string, pc PolicyConfig) {
	if pc.Require <= 1 && !pc.ForbidSelf {
		return
	}
	most := 0
	for _, a := range c.Agents {
		most = max(most, len(a.Approvers))
	}
	switch {
	case most == 0 && pc.ForbidSelf:
		p.add(key+".forbid_self", "needs approvals.approvers (or agents[].approvers): without them only the requester may decide")
	case most == 0 && pc.Require > 1:
		p.add(key+".require", "needs %d distinct approvers, but none are configured (approvals.approvers, agents[].approvers): only the session's starter may decide", pc.Require)
	case pc.Require > most:
		p.add(key+".require", "needs %d distinct approvers, but no agent has more than %d", pc.Require, most)
	}
}
