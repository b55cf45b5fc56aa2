package store

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"brain/engine"
)

// The audit trail: security-relevant acts in one append-only, hash-chained
// log shared by every process on the database. Each entry carries the hash
// of the one before it, so changing, removing or reordering an entry
// breaks every hash after it; bot/audit seals the head with a signature
// now and then, and verifies the chain offline. The chain is one line, not
// a tree, even with replicas: a driver appends under a lock (the single
// writer of SQLite, a locked head row in PostgreSQL), reading the head and
// writing the next entry in one transaction.

// AuditRecord is one act to record: who did what to what, and when.
type AuditRecord struct {
	At     time.Time
	Actor  string // "U123" (a person), "key:NAME" (an API key), "policy:NAME", "brain"
	Action string // e.g. "approval.decided", "budget.override", "config.reloaded"
	Target string // what it was done to: an approval id, a budget, a session
	// Detail is a JSON object (or empty); it is hashed as stored, byte
	// for byte.
	Detail json.RawMessage
}

// AuditEntry is an AuditRecord as the chain holds it.
type AuditEntry struct {
	Seq    int64           `json:"seq"`
	At     time.Time       `json:"at"`
	Actor  string          `json:"actor"`
	Action string          `json:"action"`
	Target string          `json:"target"`
	Detail json.RawMessage `json:"detail"`
	// Prev is the hash of the entry before (AuditGenesis for the first).
	Prev string `json:"prev"`
	Hash string `json:"hash"`
}

// AuditGenesis is the Prev of the first entry of a chain.
const AuditGenesis = "0000000000000000000000000000000000000000000000000000000000000000"

// AuditQuery narrows AuditEntries. Zero values mean "any".
type AuditQuery struct {
	After int64     // entries with Seq > After
	From  time.Time // At >= From
	To    time.Time // At < To
	Limit int       // at most this many (<= 0: all)
}

// Audit keeps the audit trail.
type Audit interface {
	// AppendAudit appends recs, in order, to the chain, and returns them as
	// entries. Concurrent appenders, in this process or another, form one
	// chain: each entry's Prev is the hash of the entry with Seq one less.
	AppendAudit(ctx context.Context, recs ...AuditRecord) ([]AuditEntry, error)
	// AuditEntries returns entries in Seq order.
	AuditEntries(ctx context.Context, q AuditQuery) ([]AuditEntry, error)
	// AuditHead is the newest entry; the zero entry (Seq 0, Hash
	// AuditGenesis) when the chain is empty. Entries pruned by retention
	// leave the head where it was.
	AuditHead(ctx context.Context) (AuditEntry, error)
	// PruneAudit deletes up to limit of the oldest entries with At before
	// before, and returns how many it deleted. The entry after the last
	// one deleted keeps its Prev, which verification then starts from.
	PruneAudit(ctx context.Context, before time.Time, limit int) (int, error)
}

// Caps of a record, so a hostile input cannot bloat the trail.
const (
	maxAuditField  = 512
	maxAuditDetail = 16 << 10
)

// CheckAuditRecord is what every driver checks before appending r: the
// action named, fields within their caps, the detail a JSON object.
func CheckAuditRecord(r AuditRecord) error {
	switch {
	case r.Action == "":
		return invariant("audit record without an action")
	case r.At.IsZero():
		return invariant("audit record %s without a time", r.Action)
	case len(r.Actor) > maxAuditField || len(r.Action) > maxAuditField || len(r.Target) > maxAuditField:
		return invariant("audit record %s: a field is over %d bytes", r.Action, maxAuditField)
	case len(r.Detail) > maxAuditDetail:
		return invariant("audit record %s: detail is over %d bytes", r.Action, maxAuditDetail)
	}
	if len(r.Detail) > 0 {
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(r.Detail, &obj); err != nil {
			return invariant("audit record %s: detail is not a JSON object", r.Action)
		}
	}
	return nil
}

// NextAudit is r chained after the entry prev: its Seq, Prev and Hash set,
// its time truncated to what the stores keep and its detail compacted, so
// what is hashed is what is stored. Drivers call it under their lock.
func NextAudit(prev AuditEntry, r AuditRecord) AuditEntry {
	detail := []byte("{}")
	if len(r.Detail) > 0 {
		var buf bytes.Buffer
		if json.Compact(&buf, r.Detail) == nil {
			detail = buf.Bytes()
		}
	}
	prevHash := prev.Hash
	if prevHash == "" {
		prevHash = AuditGenesis
	}
	e := AuditEntry{
		Seq: prev.Seq + 1, At: r.At.UTC(), Actor: r.Actor, Action: r.Action, Target: r.Target,
		Detail: detail, Prev: prevHash,
	}
	e.Hash = AuditHash(e)
	return e
}

// AuditTimeLayout is how an entry's time is hashed (and stored): UTC with
// nine fraction digits, so the text is the same wherever it is read back.
const AuditTimeLayout = "2006-01-02T15:04:05.000000000Z07:00"

// AuditHash is the SHA-256, in hex, of e's fields and Prev (not of Hash):
// a JSON array, so no field can run into the next.
func AuditHash(e AuditEntry) string {
	detail := e.Detail
	if len(detail) == 0 {
		detail = json.RawMessage("{}")
	}
	// Marshal cannot fail on strings, a number and a valid RawMessage; a
	// detail that is not valid JSON (a changed byte) hashes as text.
	if !json.Valid(detail) {
		detail, _ = json.Marshal(string(detail))
	}
	b, _ := json.Marshal([]any{
		strconv.FormatInt(e.Seq, 10), e.At.UTC().Format(AuditTimeLayout), e.Actor, e.Action, e.Target, detail, e.Prev,
	})
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// ChainBreak names the first entry of a chain that does not hold.
type ChainBreak struct {
	Seq    int64
	Reason string
}

func (b *ChainBreak) Error() string {
	return fmt.Sprintf("audit entry %d: %s", b.Seq, b.Reason)
}

// VerifyChain checks that each entry hashes to its Hash and links to the
// one before it (consecutive Seq, Prev the previous Hash). The first
// entry's Prev is taken on trust (older entries may have been pruned)
// unless it is Seq 1, which must start from AuditGenesis. It returns the
// first break, or nil.
func VerifyChain(entries []AuditEntry) *ChainBreak {
	for i, e := range entries {
		if got := AuditHash(e); got != e.Hash {
			return &ChainBreak{Seq: e.Seq, Reason: "its content does not match its hash (changed after it was written)"}
		}
		if i == 0 {
			if e.Seq == 1 && e.Prev != AuditGenesis {
				return &ChainBreak{Seq: e.Seq, Reason: "the first entry does not start the chain"}
			}
			continue
		}
		prev := entries[i-1]
		if e.Seq != prev.Seq+1 {
			return &ChainBreak{Seq: e.Seq, Reason: fmt.Sprintf("follows entry %d (entries missing or out of order)", prev.Seq)}
		}
		if e.Prev != prev.Hash {
			return &ChainBreak{Seq: e.Seq, Reason: fmt.Sprintf("does not link to entry %d (entries changed, swapped or removed)", prev.Seq)}
		}
	}
	return nil
}

// AuditOfEvents is the audit records a commit's events call for: the
// approval decisions and votes, a policy's automatic ones included (their
// actor is "policy:NAME"). Drivers append them in the commit's own
// transaction, so a decision is never in the log without its audit entry.
func AuditOfEvents(evs []engine.Event) []AuditRecord {
	var recs []AuditRecord
	for _, ev := range evs {
		switch ev.Type {
		case engine.EventApprovalDecided:
			p, err := ev.Decode()
			if err != nil {
				continue
			}
			d := p.(engine.ApprovalDecided)
			actor := d.By
			if d.Key != "" {
				actor = d.By + " via key:" + d.Key
			}
			detail, _ := json.Marshal(map[string]any{
				"session_id": ev.SessionID, "decision": d.Decision, "decision_id": d.DecisionID,
				"tool": d.Tool, "title": d.Title, "policy": d.Policy, "approvals": len(d.Approvals),
			})
			recs = append(recs, AuditRecord{At: ev.CreatedAt, Actor: actor, Action: ev.Type, Target: d.ApprovalID, Detail: detail})
		case engine.EventApprovalVoted:
			p, err := ev.Decode()
			if err != nil {
				continue
			}
			v := p.(engine.ApprovalVoted)
			actor := v.By
			if v.Key != "" {
				actor = v.By + " via key:" + v.Key
			}
			detail, _ := json.Marshal(map[string]any{"session_id": ev.SessionID, "count": v.Count, "required": v.Required, "policy": v.Policy})
			recs = append(recs, AuditRecord{At: ev.CreatedAt, Actor: actor, Action: ev.Type, Target: v.ApprovalID, Detail: detail})
		}
	}
	return recs
}
