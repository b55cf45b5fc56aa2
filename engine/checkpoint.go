package engine

import "strings"

// The context checkpoint (Session.ContextSeq): once a summary is recorded,
// the model's context is rebuilt from the log after the checkpoint alone,
// so a turn's start, a compaction and the compact API read that part and
// never the whole log, however long the session has run.

// kept is what a summary of the events before cut carries word for word:
// what keptNotes finds after the previous summary's end, merged with what
// the previous summary carried for the part before it, as if the whole
// log had been read.
func (p *planner) kept(cut int) []string {
	if p.prev == nil {
		return keptNotes(p.evs[:cut], p.payloads[:cut], p.failed, 0)
	}
	return mergeKept(p.prev.Kept, keptNotes(p.evs[:cut], p.payloads[:cut], p.failed, p.prev.ToSeq))
}

// checkpoint is the context checkpoint once plan, a summary, is recorded:
// the seq after which the log holds everything the context is rebuilt
// from. That is the summary's end, or earlier for what is kept from
// before it: the turn.started of the summary's own turn, the inputs the
// turns after the summary took, and input still queued (after cursor),
// which a later turn takes.
func (p *planner) checkpoint(plan ContextCompacted, cursor int64) int64 {
	from := plan.ToSeq
	inputs := map[string]int64{}
	for i, ev := range p.evs {
		switch pl := p.payloads[i].(type) {
		case Input:
			inputs[ev.ID] = ev.Seq
			if ev.Seq > cursor {
				from = min(from, ev.Seq-1)
			}
		case TurnStarted:
			own := p.c.turnID != "" && ev.TurnID == p.c.turnID
			if ev.Seq <= plan.ToSeq && !own {
				continue
			}
			if ev.Seq <= plan.ToSeq {
				from = min(from, ev.Seq-1)
			}
			for _, id := range pl.InputIDs {
				if seq, ok := inputs[id]; ok {
					from = min(from, seq-1)
				}
			}
		}
	}
	// Never before where this compaction read from: what it did not read
	// it did not need.
	return max(from, p.evs[0].Seq-1)
}

// mergeKept is what a new summary carries word for word when the
// previous one carried prev and the events after the previous one's end
// give next (see keptNotes): the newer note of each kind, and the
// approvals in the order they were first requested, each with its latest
// note, the newest maxKeptApprovals of them.
func mergeKept(prev, next []string) []string {
	var out []string
	for _, prefix := range []string{keptRequest, keptQuestion, keptResult} {
		if n := notePrefixed(next, prefix); n != "" {
			out = append(out, n)
		} else if n := notePrefixed(prev, prefix); n != "" {
			out = append(out, n)
		}
	}
	var order []string
	notes := map[string]string{}
	for _, list := range [][]string{prev, next} {
		for _, n := range list {
			id, ok := approvalNoteID(n)
			if !ok {
				continue
			}
			if _, seen := notes[id]; !seen {
				order = append(order, id)
			}
			notes[id] = n
		}
	}
	if len(order) > maxKeptApprovals {
		order = order[len(order)-maxKeptApprovals:]
	}
	for _, id := range order {
		out = append(out, notes[id])
	}
	return out
}

// notePrefixed is the note of notes that starts with prefix, or "".
func notePrefixed(notes []string, prefix string) string {
	for _, n := range notes {
		if strings.HasPrefix(n, prefix) {
			return n
		}
	}
	return ""
}

// approvalNoteID is the approval id an approval note (see approvalNote)
// is about.
func approvalNoteID(note string) (string, bool) {
	rest, ok := strings.CutPrefix(note, "[approval ")
	if !ok {
		return "", false
	}
	id, _, ok := strings.Cut(rest, " ")
	return id, ok
}
