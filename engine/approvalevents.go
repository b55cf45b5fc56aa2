package engine

import "time"

// ApprovalVoted is approval.voted: one person's approval of an approval
// that needs several; it stays pending until the last one (which is
// recorded as approval.decided instead).
type ApprovalVoted struct {
	ApprovalID string `json:"approval_id"`
	By         string `json:"by"`
	// Key is the API key the vote came through, if any.
	Key     string `json:"key,omitempty"`
	Comment string `json:"comment,omitempty"`
	// Count is how many distinct people have approved, Required how many
	// must.
	Count    int    `json:"count"`
	Policy   string `json:"policy,omitempty"`
	Required int    `json:"required"`
}

// ApprovalReminder is approval.reminder: a pending approval is about to
// expire (approvals.remind_before); channels remind its audience.
type ApprovalReminder struct {
	ApprovalID string    `json:"approval_id"`
	ExpiresAt  time.Time `json:"expires_at"`
	Title      string    `json:"title"`
	Tool       string    `json:"tool"`
}

func (ApprovalVoted) EventType() string    { return EventApprovalVoted }
func (ApprovalReminder) EventType() string { return EventApprovalReminder }

func (ApprovalVoted) isPayload()    {}
func (ApprovalReminder) isPayload() {}
