package bot

import (
	"errors"
	"fmt"

	"brain/bot/config"
	"brain/engine/policy"
)

// approvalPolicies compiles approvals.policies for the engine (nil when
// none). An error names the key of the bad part of each bad policy, as
// config validation does.
func approvalPolicies(cfg *config.Config) (*policy.PolicySet, error) {
	if len(cfg.Approvals.Policies) == 0 {
		return nil, nil
	}
	ps := make([]policy.ApprovalPolicy, len(cfg.Approvals.Policies))
	var errs []error
	for i, pc := range cfg.Approvals.Policies {
		ps[i] = enginePolicy(pc)
		if err := policy.CheckPolicy(ps[i]); err != nil {
			key := fmt.Sprintf("approvals.policies[%d].%s", i, err.Field)
			at := ""
			if line := cfg.Line(key); line > 0 {
				at = fmt.Sprintf(" (line %d)", line)
			} else if line := cfg.Line(fmt.Sprintf("approvals.policies[%d]", i)); line > 0 {
				at = fmt.Sprintf(" (line %d)", line)
			}
			errs = append(errs, fmt.Errorf("%s%s: %s", key, at, err.Msg))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return policy.CompilePolicies(ps)
}

// enginePolicy is the engine's form of one configured policy; config
// validation has made sure exactly one action is set.
func enginePolicy(p config.PolicyConfig) policy.ApprovalPolicy {
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
