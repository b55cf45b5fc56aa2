package engine

import (
	"context"
	"slices"
	"strings"

	"brain/tools"
)

// Groups resolves approver entries that name a group of people (an entry
// with a kind prefix, such as "subteam:S0123" for a Slack user group) to
// their members. Entries without a ':' are people and never reach it.
type Groups interface {
	Members(ctx context.Context, group string) ([]string, error)
}

// isGroup reports whether an approvers entry names a group (a person
// entry, "person:alice", is not one).
func isGroup(entry string) bool {
	return strings.Contains(entry, ":") && !strings.HasPrefix(entry, PersonPrefix)
}

// isApprover reports whether by is one of approvers, directly or as a
// member of a group entry. A group that cannot be read grants nothing.
func (e *Engine) isApprover(ctx context.Context, approvers []string, by, person string) bool {
	if slices.Contains(approvers, by) {
		return true
	}
	if slices.ContainsFunc(approvers, func(entry string) bool { return personEntry(entry, person) }) {
		return true
	}
	if e.groups == nil {
		return false
	}
	for _, entry := range approvers {
		if !isGroup(entry) {
			continue
		}
		members, err := e.groups.Members(ctx, entry)
		if err != nil {
			e.log.Warn("approver group not readable", tools.LogGroup, entry, tools.LogErr, err)
			continue
		}
		if slices.Contains(members, by) {
			return true
		}
	}
	return false
}
