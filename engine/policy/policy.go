// Package policy is the small matcher behind approvals.policies: which
// policy, if any, applies to one call of an approval tool. A policy names a
// tool (exactly, or with a path.Match glob such as "lookup_*") and may test
// the call's arguments with conditions on a JSON path: equals, regexp, or a
// numeric comparison. Policies are tried in order; the first that matches
// wins.
//
// It imports only the standard library; the engine decides what the
// matched policy's action means.
package policy

import (
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"regexp"
	"strings"
)

// Actions a policy takes.
const (
	// AutoApprove applies the call at once, recorded as decided by the
	// policy.
	AutoApprove = "auto_approve"
	// Deny refuses the call before a card is posted, with Message as the
	// tool error.
	Deny = "deny"
	// Review sends the call to people, with Require and ForbidSelf.
	Review = "review"
)

// Policy is one entry of approvals.policies.
type Policy struct {
	Name string
	// Tool is a tool name or a path.Match glob over tool names.
	Tool string
	// When holds conditions on the arguments; all must hold.
	When []Condition
	// Action is AutoApprove, Deny or Review.
	Action string
	// Require is how many distinct people must approve (Review; >= 1).
	Require int
	// ForbidSelf keeps the requester from approving (Review).
	ForbidSelf bool
	// Message is the tool error of a Deny.
	Message string
}

// Condition tests the value at Path in a call's arguments. Exactly one of
// Equals, Regexp or a comparison (GT, GTE, LT, LTE; several may be combined
// into a range) is set.
type Condition struct {
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

// Set is a compiled, ordered list of policies.
type Set struct {
	list []compiled
}

type compiled struct {
	Policy
	steps [][]step
	res   []*regexp.Regexp
}

// FieldError is a policy that does not compile: Field names the part
// that is wrong ("tool", "when[0].path" ...), so config can name its key.
type FieldError struct {
	Field string
	Msg   string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Msg }

func fieldErr(field, format string, args ...any) *FieldError {
	return &FieldError{Field: field, Msg: fmt.Sprintf(format, args...)}
}

// Compile checks and compiles the policies, in order. An error names the
// policy (by index and name) and the field that is wrong.
func Compile(ps []Policy) (*Set, error) {
	s := &Set{}
	var errs []error
	for i, p := range ps {
		c, err := compile(p)
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
func Check(p Policy) *FieldError {
	_, err := compile(p)
	if err != nil {
		return err
	}
	return nil
}

func compile(p Policy) (compiled, *FieldError) {
	c := compiled{Policy: p}
	if strings.TrimSpace(p.Name) == "" {
		return c, fieldErr("name", "required")
	}
	if p.Tool == "" {
		return c, fieldErr("tool", "required (a tool name or a glob)")
	}
	if _, err := path.Match(p.Tool, ""); err != nil {
		return c, fieldErr("tool", "bad glob %q: %v", p.Tool, err)
	}
	switch p.Action {
	case AutoApprove:
	case Deny:
		if strings.TrimSpace(p.Message) == "" {
			return c, fieldErr("message", "required with deny (it is the tool error the model sees)")
		}
	case Review:
		if p.Require < 1 {
			return c, fieldErr("require", "must be at least 1")
		}
	default:
		return c, fieldErr("action", "%q is not auto_approve, deny or review", p.Action)
	}
	for j, cond := range p.When {
		steps, err := parsePath(cond.Path)
		if err != nil {
			return c, fieldErr(fmt.Sprintf("when[%d].path", j), "%v", err)
		}
		re, err := checkCondition(cond)
		if err != nil {
			return c, fieldErr(fmt.Sprintf("when[%d]", j), "%v", err)
		}
		c.steps = append(c.steps, steps)
		c.res = append(c.res, re)
	}
	return c, nil
}

func checkCondition(c Condition) (*regexp.Regexp, error) {
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
func (s *Set) Len() int {
	if s == nil {
		return 0
	}
	return len(s.list)
}

// Match returns the first policy that applies to a call of tool with
// input, and false when none does. Arguments that are not a JSON document
// match no policy with conditions.
func (s *Set) Match(tool string, input json.RawMessage) (Policy, bool) {
	if s == nil {
		return Policy{}, false
	}
	var doc any
	parsed := false
	for _, c := range s.list {
		if ok, _ := path.Match(c.Tool, tool); !ok {
			continue
		}
		if len(c.When) > 0 && !parsed {
			if json.Unmarshal(input, &doc) != nil {
				doc = nil
			}
			parsed = true
		}
		if c.matches(doc) {
			return c.Policy, true
		}
	}
	return Policy{}, false
}

func (c compiled) matches(doc any) bool {
	for i, cond := range c.When {
		v, ok := lookup(doc, c.steps[i])
		if !ok || !test(cond, c.res[i], v) {
			return false
		}
	}
	return true
}

func test(c Condition, re *regexp.Regexp, v any) bool {
	switch {
	case c.HasEquals:
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
