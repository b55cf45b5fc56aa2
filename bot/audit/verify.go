package audit

import (
	"bufio"
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"brain/store"
)

// Report is what Verify found.
type Report struct {
	Entries     int   // entries read
	First, Last int64 // their seqs
	Seals       int   // seal entries
	// Checked is how many seals had their signature checked (a key was
	// given, and the entry they seal was still kept).
	Checked int
	// Unsealed is how many entries follow the last seal.
	Unsealed int
	// Break is the first entry that does not hold; nil when all do.
	Break *store.ChainBreak
	// CutAt is the entry that recorded the retention cut the chain
	// starts after (its seq and hash match the first entry's Prev); 0
	// when the chain starts at its first entry, or where no kept entry
	// records the cut (an export of a time range).
	CutAt int64
}

// Cut is the detail a retention run records when it pruned the start of
// the chain: the last pruned entry, whose hash the first kept entry's
// Prev must be. A seal after it signs it.
type Cut struct {
	Seq  int64  `json:"audit_cut_seq"`
	Hash string `json:"audit_cut_hash"`
}

// Verifier checks entries one at a time, in seq order, keeping only the
// hashes a later seal may refer to.
type Verifier struct {
	keys   map[string]ed25519.PublicKey
	prev   *store.AuditEntry
	first  store.AuditEntry
	hashes map[int64]string
	r      Report
}

// NewVerifier checks seals against keys; with none, seals are checked
// for their place in the chain but not their signatures.
func NewVerifier(keys ...ed25519.PublicKey) *Verifier {
	v := &Verifier{keys: map[string]ed25519.PublicKey{}, hashes: map[int64]string{}}
	for _, k := range keys {
		v.keys[KeyID(k)] = k
	}
	return v
}

// Add checks e after the entries added before; it returns false once the
// chain broke (Report says where).
func (v *Verifier) Add(e store.AuditEntry) bool {
	if v.r.Break != nil {
		return false
	}
	pair := []store.AuditEntry{e}
	if v.prev != nil {
		pair = []store.AuditEntry{*v.prev, e}
	}
	if b := store.VerifyChain(pair); b != nil {
		v.r.Break = b
		return false
	}
	if v.r.Entries == 0 {
		v.r.First = e.Seq
		v.first = e
	}
	if e.Action == ActionDeleted && v.first.Seq > 1 && v.r.CutAt == 0 {
		var c Cut
		if json.Unmarshal(e.Detail, &c) == nil && c.Seq == v.first.Seq-1 && c.Hash == v.first.Prev {
			v.r.CutAt = e.Seq
		}
	}
	v.r.Entries++
	v.r.Last = e.Seq
	v.r.Unsealed++
	v.hashes[e.Seq] = e.Hash
	v.prev = &e
	if e.Action == ActionSealed {
		if reason := v.checkSeal(e); reason != "" {
			v.r.Break = &store.ChainBreak{Seq: e.Seq, Reason: reason}
			return false
		}
		v.r.Seals++
		v.r.Unsealed = 0
	}
	return true
}

func (v *Verifier) checkSeal(e store.AuditEntry) string {
	var s Seal
	if err := json.Unmarshal(e.Detail, &s); err != nil {
		return "a seal whose detail cannot be read"
	}
	if s.Seq >= e.Seq {
		return fmt.Sprintf("a seal of entry %d, which is not before it", s.Seq)
	}
	h, kept := v.hashes[s.Seq]
	if kept && h != s.Hash {
		return fmt.Sprintf("a seal of entry %d whose hash does not match that entry", s.Seq)
	}
	if len(v.keys) == 0 {
		return ""
	}
	key, ok := v.keys[s.KeyID]
	if !ok {
		return fmt.Sprintf("a seal by key %s, which is not among the keys given", s.KeyID)
	}
	sig, err := base64.StdEncoding.DecodeString(s.Sig)
	if err != nil || !ed25519.Verify(key, SealMessage(s.Seq, s.Hash), sig) {
		return fmt.Sprintf("a seal of entry %d whose signature does not verify", s.Seq)
	}
	if kept {
		v.r.Checked++
	}
	return ""
}

// Report is what was found so far.
func (v *Verifier) Report() Report { return v.r }

// pageSize is how many entries Verify and Export read at once.
const pageSize = 1000

// VerifyStore checks the whole chain the store keeps.
func VerifyStore(ctx context.Context, st store.Audit, keys ...ed25519.PublicKey) (Report, error) {
	v := NewVerifier(keys...)
	err := eachEntry(ctx, st, store.AuditQuery{}, func(e store.AuditEntry) bool { return v.Add(e) })
	return v.Report(), err
}

// VerifyExport checks a JSON Lines export (Export's output).
func VerifyExport(r io.Reader, keys ...ed25519.PublicKey) (Report, error) {
	v := NewVerifier(keys...)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	line := 0
	for sc.Scan() {
		line++
		var e store.AuditEntry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			return v.Report(), fmt.Errorf("line %d: %w", line, err)
		}
		if !v.Add(e) {
			break
		}
	}
	return v.Report(), sc.Err()
}

// Export writes the entries with At in [from, to) as JSON Lines, one
// entry a line, in seq order (zero times: no bound). Each line holds what
// was hashed, so VerifyExport checks the file alone.
func Export(ctx context.Context, st store.Audit, w io.Writer, from, to time.Time) (int, error) {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	// The detail is written as stored: escaping < or & would change the
	// bytes its hash covers.
	enc.SetEscapeHTML(false)
	n := 0
	var werr error
	err := eachEntry(ctx, st, store.AuditQuery{From: from, To: to}, func(e store.AuditEntry) bool {
		if werr = enc.Encode(e); werr != nil {
			return false
		}
		n++
		return true
	})
	if err == nil {
		err = werr
	}
	if err == nil {
		err = bw.Flush()
	}
	return n, err
}

func eachEntry(ctx context.Context, st store.Audit, q store.AuditQuery, f func(store.AuditEntry) bool) error {
	q.Limit = pageSize
	for {
		es, err := st.AuditEntries(ctx, q)
		if err != nil {
			return err
		}
		for _, e := range es {
			if !f(e) {
				return nil
			}
		}
		if len(es) < pageSize {
			return nil
		}
		q.After = es[len(es)-1].Seq
	}
}

// Describe is a report in a sentence or two, for the command line.
func (r Report) Describe() string {
	if r.Break != nil {
		return fmt.Sprintf("BROKEN at entry %d: %s (%d entries before it hold)", r.Break.Seq, r.Break.Reason, r.Entries)
	}
	if r.Entries == 0 {
		return "ok: the audit trail is empty"
	}
	s := fmt.Sprintf("ok: %d entries (%d..%d) chain; %d seals", r.Entries, r.First, r.Last, r.Seals)
	if r.Seals > 0 {
		s += fmt.Sprintf(", %d signatures checked", r.Checked)
	}
	if r.Unsealed > 0 {
		s += fmt.Sprintf("; %d entries after the last seal", r.Unsealed)
	}
	if r.CutAt > 0 {
		s += fmt.Sprintf("; starts after the retention cut entry %d records", r.CutAt)
	}
	return s
}
