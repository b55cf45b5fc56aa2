package linearbridge

import (
	"context"
	"fmt"

	"brain/bot/bridge"
	"brain/channels/linear"
	"brain/engine"
	"brain/webhooks/linearhook"
)

// decide records a decision picked or typed in Linear; a refusal (not an
// approver, already decided, expired) is answered as a thought.
func (b *Bridge) decide(ctx context.Context, client *linear.Client, it linearhook.Item, id string, d engine.Decision) error {
	_, err := b.eng.Decide(ctx, id, d)
	if text, refused := bridge.Refusal(err); refused {
		return client.Thought(ctx, it.SessionID, linear.ActivityID(it.SessionID, "decision", it.EventKey), text, false)
	}
	return err
}

// onlyPending finds the approval a reply without an id answers: the
// session's one pending approval. msg explains when there is none or
// several.
func (b *Bridge) onlyPending(ctx context.Context, sessionID string) (id, msg string, err error) {
	pending, err := b.eng.Approvals(ctx, engine.ApprovalFilter{SessionID: sessionID, Statuses: []engine.ApprovalStatus{engine.ApprovalPending}})
	if err != nil {
		return "", "", err
	}
	switch len(pending) {
	case 0:
		return "", "No approval is waiting for a decision in this session.", nil
	case 1:
		return pending[0].ID, "", nil
	}
	return "", fmt.Sprintf("%d approvals are waiting; reply \"deny:<id> your reason\" naming one, e.g. deny:%s.", len(pending), pending[0].ID), nil
}
