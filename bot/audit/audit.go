// Package audit is brain's audit trail above the store: the Recorder the
// rest of bot calls for each security-relevant act, the Sealer that signs
// the chain's head with an Ed25519 key now and then, Export (JSON Lines
// for a time range) and Verify, which checks the hash chain and the seals
// offline and names the first entry that does not hold. The chain itself
// (hashing, appending under a lock) is the store's (store/audit.go).
//
// It imports store, engine and internal/startstop, nothing else of bot.
package audit

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"brain/store"
)

// Actions recorded by bot (the engine's approval decisions and votes are
// recorded by the store, named by their event types).
const (
	ActionSealed         = "audit.sealed"
	ActionConfigReloaded = "config.reloaded"
	ActionAPIKeyUsed     = "api_key.used"
	ActionSignedIn       = "console.signed_in"
	ActionBudgetSet      = "budget.set"
	ActionBudgetOverride = "budget.override"
	ActionDeleted        = "retention.deleted"
	ActionErased         = "person.erased"
	ActionStarted        = "brain.started"
	// ActionServiceAccount: an admin marked or unmarked a connection as
	// its provider's service account (bot/api).
	ActionServiceAccount = "connection.service_account"
)

// Recorder appends acts to the trail. The zero value (no store) records
// nothing, for tests that do not look.
type Recorder struct {
	Store store.Audit
	Now   func() time.Time
}

// Record appends one act; detail is marshalled to a JSON object (nil for
// none).
func (r *Recorder) Record(ctx context.Context, actor, action, target string, detail any) error {
	if r == nil || r.Store == nil {
		return nil
	}
	var raw json.RawMessage
	if detail != nil {
		b, err := json.Marshal(detail)
		if err != nil {
			return fmt.Errorf("audit %s: %w", action, err)
		}
		raw = b
	}
	now := time.Now
	if r.Now != nil {
		now = r.Now
	}
	_, err := r.Store.AppendAudit(ctx, store.AuditRecord{At: now(), Actor: actor, Action: action, Target: target, Detail: raw})
	if err != nil {
		return fmt.Errorf("audit %s: %w", action, err)
	}
	return nil
}
