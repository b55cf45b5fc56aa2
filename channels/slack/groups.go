package slack

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"brain/engine"
)

// GroupPrefix marks an approvers entry naming a Slack user group.
const GroupPrefix = "subteam:"

// groupTTL is how long a group's members are used before Slack is asked
// again; a failed refresh keeps the last answer.
const groupTTL = 5 * time.Minute

// Groups resolves "subteam:S0123" approver entries to the user group's
// members (usergroups.users.list, needs usergroups:read), cached.
type Groups struct {
	r *Reader

	mu    sync.Mutex
	cache map[string]cachedGroup
}

type cachedGroup struct {
	members []string
	at      time.Time
}

var _ engine.Groups = (*Groups)(nil)

// NewGroups reads groups through r.
func NewGroups(r *Reader) *Groups { return &Groups{r: r, cache: map[string]cachedGroup{}} }

// Members returns the members of the group an entry names. Entries of
// other kinds are an error.
func (g *Groups) Members(ctx context.Context, entry string) ([]string, error) {
	id, ok := strings.CutPrefix(entry, GroupPrefix)
	if !ok || id == "" {
		return nil, fmt.Errorf("approvers entry %q: not a Slack user group (%sS0123)", entry, GroupPrefix)
	}
	now := g.r.now()
	g.mu.Lock()
	c, cached := g.cache[id]
	g.mu.Unlock()
	if cached && now.Sub(c.at) < groupTTL {
		return c.members, nil
	}
	members, err := g.r.api.GetUserGroupMembersContext(ctx, id)
	if err != nil {
		if cached {
			return c.members, nil
		}
		return nil, fmt.Errorf("read user group %s: %w", id, err)
	}
	g.mu.Lock()
	g.cache[id] = cachedGroup{members: members, at: now}
	g.mu.Unlock()
	return members, nil
}
