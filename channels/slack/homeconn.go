package slack

import (
	"fmt"
	"time"

	"github.com/slack-go/slack"
)

// ActionRevokeConnection is the Revoke button of a connection on the
// Home tab.
const ActionRevokeConnection = "brain_revoke_connection"

// maxHomeConnections bounds the connections listed on the Home tab.
const maxHomeConnections = 10

// HomeConnection is one of the person's connections as the Home tab
// shows it: what and whose, never a token.
type HomeConnection struct {
	ID        string
	Provider  string
	Account   string
	Scope     string
	ExpiresAt time.Time // zero: not said
	Status    string    // connected | revoked
	Problem   string
}

// connectionBlocks are the "Your connections" part of the Home tab: a
// divider, a header, and one line per connection with Revoke while it is
// connected (none when ShowConnections is off).
func connectionBlocks(v HomeView) []slack.Block {
	if !v.ShowConnections {
		return nil
	}
	blocks := []slack.Block{slack.NewDividerBlock(),
		slack.NewHeaderBlock(plain("Your connections"), slack.HeaderBlockOptionBlockID("home_connections"))}
	if len(v.Connections) == 0 {
		return append(blocks, contextLine("home_no_connections", "No connections: brain sends you a link when a tool needs one."))
	}
	for i, c := range v.Connections {
		if i == maxHomeConnections {
			blocks = append(blocks, contextLine("home_more_connections", fmt.Sprintf("…and %d more", len(v.Connections)-i)))
			break
		}
		line := "*" + Escape(c.Provider) + "*"
		if c.Account != "" {
			line += " as " + Escape(truncate(c.Account, 80))
		}
		line += " · " + Escape(c.Status)
		if c.Scope != "" {
			line += " · scope `" + Escape(truncate(c.Scope, 200)) + "`"
		}
		if !c.ExpiresAt.IsZero() {
			line += " · token expires " + c.ExpiresAt.UTC().Format("2006-01-02 15:04 UTC") + " (refreshed by brain)"
		}
		if c.Problem != "" {
			line += "\n" + Escape(truncate(c.Problem, 300))
		}
		sec := section(fmt.Sprintf("home_c%d", i), line)
		if c.Status == "connected" {
			if val, err := encodeValue(ButtonValue{Connection: c.ID}); err == nil {
				sec.Accessory = slack.NewAccessory(slack.NewButtonBlockElement(ActionRevokeConnection, val, plain("Revoke")).
					WithStyle(slack.StyleDanger))
			}
		}
		blocks = append(blocks, sec)
	}
	return blocks
}
