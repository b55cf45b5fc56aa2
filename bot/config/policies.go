package config

import (
	"fmt"

	"brain/engine/policy"
)

// Matcher is the engine's form of the policy. Validation has made sure
// exactly one action is set.
func (p PolicyConfig) Matcher() policy.ApprovalPolicy {
	out := policy.ApprovalPolicy{Name: p.Name, Tool: p.Tool, Message: p.Message, Require: p.Require, ForbidSelf: p.ForbidSelf}
	switch {
	case p.AutoApprove:
		out.Action = policy.PolicyAutoApprove
	case p.Deny:
		out.Action = policy.PolicyDeny
	case p.Require > 0 || p.ForbidSelf:
		out.Action = policy.PolicyReview
		out.Require = max(p.Require, 1)
	}
	for _, c := range p.When {
		cond := policy.PolicyCondition{Path: c.Path, Regexp: c.Regexp, GT: c.GT, GTE: c.GTE, LT: c.LT, LTE: c.LTE}
		if c.Equals != nil {
			cond.Equals, cond.HasEquals = c.Equals.Value, true
		}
		out.When = append(out.When, cond)
	}
	return out
}

// ApprovalPolicies compiles approvals.policies for the engine (nil when
// none). A config that passed validation compiles: validation runs the
// same matcher.
func (c *Config) ApprovalPolicies() (*policy.PolicySet, error) {
	if len(c.Approvals.Policies) == 0 {
		return nil, nil
	}
	ps := make([]policy.ApprovalPolicy, len(c.Approvals.Policies))
	for i, pc := range c.Approvals.Policies {
		ps[i] = pc.Matcher()
	}
	return policy.CompilePolicies(ps)
}

// checkPolicyMatcher reports what only the matcher can check (the tool
// glob, the paths, the tests) under the key of the bad part, with its line.
func (c *Config) checkPolicyMatcher(p *problems, key string, pc PolicyConfig) {
	err := policy.CheckPolicy(pc.Matcher())
	if err == nil {
		return
	}
	at := key + "." + err.Field
	if line := c.Line(at); line > 0 {
		at = fmt.Sprintf("%s (line %d)", at, line)
	} else if line := c.Line(key); line > 0 {
		at = fmt.Sprintf("%s.%s (line %d)", key, err.Field, line)
	}
	p.add(at, "%s", err.Msg)
}
