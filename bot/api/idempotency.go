package api

import "brain/engine"

// codeIdempotencyMismatch answers a reused Idempotency-Key whose body
// differs from the message first recorded under it (422).
const codeIdempotencyMismatch = "idempotency_mismatch"

// checkReplay reports a mismatch between a repeated message and the event
// originally recorded under its idempotency key: a client reusing a key
// for a different message would otherwise be told it was recorded. The
// engine may add an answer to a typed reply, so the answer is compared
// only when the request carries one.
func checkReplay(ev engine.Event, in engine.Input) error {
	p, err := ev.Decode()
	if err != nil {
		return nil // an unreadable original cannot be compared; keep the replay
	}
	orig, ok := p.(engine.Input)
	if !ok {
		return nil
	}
	same := orig.Text == in.Text && orig.Author == in.Author
	if in.Answer != nil {
		same = same && orig.Answer != nil && *orig.Answer == *in.Answer
	}
	if same {
		return nil
	}
	return engine.Errorf(codeIdempotencyMismatch,
		"idempotency_key %q was first used for a different message (event %s); use a new key for a new message", in.IdempotencyKey, ev.ID)
}

// checkSessionReplay reports a session creation repeated under an
// Idempotency-Key with a different body than the one that created it.
func checkSessionReplay(s engine.Session, n engine.NewSession) error {
	if s.Agent == n.Agent && s.Interactive == n.Interactive && s.StartedBy == n.StartedBy {
		return nil
	}
	return engine.Errorf(codeIdempotencyMismatch,
		"Idempotency-Key %q was first used to create session %s with a different body; use a new key for a new session", n.IdempotencyKey, s.ID)
}
