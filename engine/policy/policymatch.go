// This file is the small matcher behind approvals.policies: which policy,
// if any, applies to one call of an approval tool. A policy names a tool
// (exactly, or with a path.Match glob such as "lookup_*") and may test the
// call's arguments with conditions on a JSON path: equals, regexp, or a
// numeric comparison. Policies are tried in order; the first that matches
// wins. The engine (engine/approvalpolicy.go) decides what the matched
// policy's action means.

package policy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"
)

// Actions a policy takes.
const (
	// PolicyAutoApprove applies the call at once, recorded as decided by the
	// policy.
	PolicyAutoApprove = "auto_approve"
	// PolicyDeny refuses the call before a card is posted, with Message as the
	// tool error.
	PolicyDeny = "deny"
	// PolicyReview sends the call to people, with Require and ForbidSelf.
	PolicyReview = "review"
)

// ApprovalPolicy is one entry of approvals.policies.
type ApprovalPolicy struct {
	Name string
	// Tool is a tool name or a path.Match glob over tool names.
	Tool string
	// When holds conditions on the arguments; all must hold.
	When []PolicyCondition
	// Action is PolicyAutoApprove, PolicyDeny or PolicyReview.
	Action string
	// Require is how many distinct people must approve (PolicyReview; >= 1).
	Require int
	// ForbidSelf keeps the requester from approving (PolicyReview).
	ForbidSelf bool
	// Message is the tool error of a PolicyDeny.
	Message string
}

// PolicyCondition tests the value at Path in a call's arguments. Exactly one of
// Equals, Regexp or a comparison (GT, GTE, LT, LTE; several may be combined
// into a range) is set.
type PolicyCondition struct {
	// Path is a JSON path: "$", then ".key" or "[index]" steps, e.g.
	// "$.repo", "$.labels[0]", "$.owner.login". A leading "$." may be
	// left out.
	Path string
	// Equals compares the value with a JSON scalar: strings, numbers,
	// booleans and null compare by value (1 equals 1.0).
	Equals any
	// HasEquals tells an Equals of null from no Equals.
	HasEquals bool
	// Regexp is an RE2 expression the value (a string) must contain a
	// match of; anchor it with ^...$ to match all of it.
	Regexp string
	// GT, GTE, LT and LTE compare a numeric value.
	GT, GTE, LT, LTE *float64
}

// PolicySet is a compiledPolicy, ordered list of policies.
type PolicySet struct {
	list []compiledPolicy
}

type compiledPolicy struct {
	ApprovalPolicy
	steps [][]pathStep
	res   []*regexp.Regexp
	// foldRes are res ignoring case, for paths a tool compares so.
	foldRes []*regexp.Regexp
}

// PolicyFieldError is a policy that does not compile: Field names the part
// that is wrong ("tool", "when[0].path" ...), so config can name its key.
type PolicyFieldError struct {
	Field string
	Msg   string
}

func (e *PolicyFieldError) Error() string { return e.Field + ": " + e.Msg }

func policyFieldErr(field, format string, args ...any) *PolicyFieldError {
	return &PolicyFieldError{Field: field, Msg: fmt.Sprintf(format, args...)}
}

// Compile checks and compiles the policies, in order. An error names the
// policy (by index and name) and the field that is wrong.
func CompilePolicies(ps []ApprovalPolicy) (*PolicySet, error) {
	s := &PolicySet{}
	var errs []error
	for i, p := range ps {
		c, err := compilePolicy(p)
		if err != nil {
			errs = append(errs, fmt.Errorf("policies[%d] (%s): %w", i, p.Name, err))
			continue
		}
		s.list = append(s.list, c)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return s, nil
}

// Check reports what is wrong with one policy, or nil.
func CheckPolicy(p ApprovalPolicy) *PolicyFieldError {
	_, err := compilePolicy(p)
	if err != nil {
		return err
	}
	return nil
}

func compilePolicy(p ApprovalPolicy) (compiledPolicy, *PolicyFieldError) {
	c := compiledPolicy{ApprovalPolicy: p}
	if strings.TrimSpace(p.Name) == "" {
		return c, policyFieldErr("name", "required")
	}
	if p.Tool == "" {
		return c, policyFieldErr("tool", "required (a tool name or a glob)")
	}
	if _, err := path.Match(p.Tool, ""); err != nil {
		return c, policyFieldErr("tool", "bad glob %q: %v", p.Tool, err)
	}
	switch p.Action {
	case PolicyAutoApprove:
	case PolicyDeny:
		if strings.TrimSpace(p.Message) == "" {
			return c, policyFieldErr("message", "required with deny (it is the tool error the model sees)")
		}
	case PolicyReview:
		if p.Require < 1 {
			return c, policyFieldErr("require", "must be at least 1")
		}
	default:
		return c, policyFieldErr("action", "%q is not auto_approve, deny or review", p.Action)
	}
	for j, cond := range p.When {
		steps, err := parsePath(cond.Path)
		if err != nil {
			return c, policyFieldErr(fmt.Sprintf("when[%d].path", j), "%v", err)
		}
		re, err := checkPolicyCondition(cond)
		if err != nil {
			return c, policyFieldErr(fmt.Sprintf("when[%d]", j), "%v", err)
		}
		var foldRe *regexp.Regexp
		if re != nil {
			foldRe = regexp.MustCompile("(?i)" + cond.Regexp) // compiles: cond.Regexp did
		}
		c.steps = append(c.steps, steps)
		c.res = append(c.res, re)
		c.foldRes = append(c.foldRes, foldRe)
	}
	return c, nil
}

func checkPolicyCondition(c PolicyCondition) (*regexp.Regexp, error) {
	compare := c.GT != nil || c.GTE != nil || c.LT != nil || c.LTE != nil
	n := 0
	for _, set := range []bool{c.HasEquals, c.Regexp != "", compare} {
		if set {
			n++
		}
	}
	if n != 1 {
		return nil, errors.New("set exactly one of equals, regexp, or gt/gte/lt/lte")
	}
	if c.HasEquals {
		switch c.Equals.(type) {
		case nil, string, bool, float64:
		default:
			return nil, fmt.Errorf("equals: %v is not a string, number, boolean or null", c.Equals)
		}
	}
	if c.Regexp == "" {
		return nil, nil
	}
	re, err := regexp.Compile(c.Regexp)
	if err != nil {
		return nil, fmt.Errorf("regexp: %v", err)
	}
	return re, nil
}

// Len is how many policies the set holds.
func (s *PolicySet) Len() int {
	if s == nil {
		return 0
	}
	return len(s.list)
}

// Match returns the first policy that applies to a call of tool with
// input, and false when none does. foldCase lists the paths whose values
// the tool compares ignoring case (tools.Definition.FoldCase): conditions
// on them ignore case too, as the tool would. The engine hands Match the
// canonical arguments only; arguments it still cannot read are refused by
// unreadableArgs when a policy of the tool has conditions, so a condition
// that cannot be evaluated never switches a policy off.
func (s *PolicySet) Match(tool string, input json.RawMessage, foldCase ...string) (ApprovalPolicy, bool) {
	if s == nil {
		return ApprovalPolicy{}, false
	}
	var doc any
	parsed := false
	var folds [][]pathStep
	for _, c := range s.list {
		if ok, _ := path.Match(c.Tool, tool); !ok {
			continue
		}
		if len(c.When) > 0 && !parsed {
			if len(bytes.TrimSpace(input)) == 0 {
				input = json.RawMessage(`{}`)
			}
			if json.Unmarshal(input, &doc) != nil {
				return unreadableArgs(tool), true
			}
			for _, f := range foldCase {
				if steps, err := parsePath(f); err == nil {
					folds = append(folds, steps)
				}
			}
			parsed = true
		}
		if c.matches(doc, folds) {
			return c.ApprovalPolicy, true
		}
	}
	return ApprovalPolicy{}, false
}

// unreadableArgs is the deny of a call whose arguments no policy can read.
func unreadableArgs(tool string) ApprovalPolicy {
	return ApprovalPolicy{
		Name: "unreadable-arguments", Tool: tool, Action: PolicyDeny,
		Message: "the arguments could not be read as one JSON document, so the approval policies cannot be checked; send plain JSON",
	}
}

func (c compiledPolicy) matches(doc any, folds [][]pathStep) bool {
	for i, cond := range c.When {
		v, ok := lookupPath(doc, c.steps[i])
		if !ok {
			return false
		}
		re := c.res[i]
		fold := slices.ContainsFunc(folds, func(f []pathStep) bool { return slices.Equal(f, c.steps[i]) })
		if fold {
			re = c.foldRes[i]
		}
		if !holds(cond, re, v, fold) {
			return false
		}
	}
	return true
}

func holds(c PolicyCondition, re *regexp.Regexp, v any, fold bool) bool {
	switch {
	case c.HasEquals:
		if a, ok := v.(string); ok && fold {
			b, ok := c.Equals.(string)
			return ok && strings.EqualFold(a, b)
		}
		return v == c.Equals
	case re != nil:
		s, ok := v.(string)
		return ok && re.MatchString(s)
	}
	f, ok := v.(float64)
	if !ok {
		return false
	}
	return (c.GT == nil || f > *c.GT) && (c.GTE == nil || f >= *c.GTE) &&
		(c.LT == nil || f < *c.LT) && (c.LTE == nil || f <= *c.LTE)
}
