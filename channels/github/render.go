package github

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"brain/engine"
	"brain/store"
	"brain/tools"
)

// Events is what the renderer reads of the engine; *engine.Engine has it.
type Events interface {
	engine.ApprovalReader
}

// DefaultMinEdit is the least time between two edits of a reply comment.
const DefaultMinEdit = 3 * time.Second

// Renderer renders a GitHub session's events as comments: one reply per
// turn, created at the first text and edited as the turn goes on (at most
// one edit per MinEdit; the turn's end always writes the whole reply),
// tool steps collapsed under it, questions and approval cards as comments
// of their own, the card edited as votes, the decision and the apply's
// outcome arrive. A rate-limited call returns its error, so the deliverer
// tries the event again later: nothing is dropped.
type Renderer struct {
	Engine Events
	Client *Client
	// Cards remember each approval card's comment and notes, so a restart
	// keeps editing the card it posted instead of commenting beside it.
	Cards store.PostedMessages
	// Origin is the platform name cards are kept under.
	Origin engine.Origin
	// ConsoleURL is brain's public URL, for links to approvals ("" none).
	ConsoleURL string
	MinEdit    time.Duration // 0: DefaultMinEdit; < 0 edit at every event
	Now        func() time.Time
	Log        *slog.Logger

	mu    sync.Mutex
	turns map[string]*reply // by session
	cards map[string]*card  // by approval id
}

// reply is a turn's reply: what it says and the comments that show it.
type reply struct {
	text     string
	steps    []string
	calls    map[string]string // call id -> one-line input
	ids      []int64
	shown    []string
	lastEdit time.Time
}

type card struct {
	id    int64
	a     engine.Approval
	notes []string
}

// cardRef is how a card is kept in Cards: the comment and its notes.
type cardRef struct {
	ID    int64    `json:"id"`
	Notes []string `json:"notes,omitempty"`
}

// Render renders one of the session's events.
func (r *Renderer) Render(ctx context.Context, s engine.Session, ev engine.Event) error {
	t, err := Parse(s.ThreadKey)
	if err != nil {
		r.Log.Warn("not a github thread; event skipped", tools.LogSession, s.ID, tools.LogErr, err)
		return nil
	}
	payload, err := ev.Decode()
	if err != nil {
		return nil // retrying cannot make it readable
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.turns == nil {
		r.turns, r.cards = map[string]*reply{}, map[string]*card{}
	}
	rp := r.turns[s.ID]
	if rp == nil {
		rp = &reply{calls: map[string]string{}}
		r.turns[s.ID] = rp
	}
	switch d := payload.(type) {
	case engine.AgentMessage:
		if strings.TrimSpace(d.Text) == "" {
			return nil
		}
		if rp.text != "" {
			rp.text += "\n\n"
		}
		rp.text += d.Text
		return r.flush(ctx, t, rp, false)
	case engine.ToolCall:
		rp.calls[d.ID] = clip(oneLine(string(d.Input)), 200)
	case engine.ToolCallResult:
		res := clip(oneLine(d.Result.Text()), 300)
		if d.Result.IsError {
			res = "error: " + res
		}
		rp.steps = append(rp.steps, fmt.Sprintf("`%s` %s → %s", d.Name, rp.calls[d.CallID], res))
		delete(rp.calls, d.CallID)
		return r.flush(ctx, t, rp, false)
	case engine.Question:
		if err := r.flush(ctx, t, rp, true); err != nil {
			return err
		}
		_, err := r.Client.Comment(ctx, t, QuestionBody(d))
		return err
	case engine.ApprovalRequested:
		if err := r.flush(ctx, t, rp, true); err != nil {
			return err
		}
		a, err := r.Engine.Approval(ctx, d.ApprovalID)
		if err != nil {
			return err
		}
		c := &card{a: a}
		if c.id, err = r.Client.Comment(ctx, t, CardBody(a, r.ConsoleURL, nil)); err != nil {
			return err
		}
		r.cards[a.ID] = c
		return r.keep(ctx, a.ID, c)
	case engine.ApprovalVoted:
		return r.note(ctx, t, d.ApprovalID, fmt.Sprintf("%d of %d approvals, the latest by @%s.%s", d.Count, d.Required, d.By, suffix(d.Comment)))
	case engine.ApprovalDecided:
		verb := "Approved"
		if d.Denied() {
			verb = "Denied"
		}
		by := "@" + d.By
		if d.ByPolicy() { // a review policy's decision is still a person's
			by = "policy " + d.Policy
		}
		return r.note(ctx, t, d.ApprovalID, fmt.Sprintf("%s by %s.%s", verb, by, suffix(d.Comment)))
	case engine.ApplySucceeded:
		return r.note(ctx, t, d.ApprovalID, "Applied.")
	case engine.ApplyFailed:
		return r.note(ctx, t, d.ApprovalID, "Apply failed: "+d.Error+". Reply `/retry "+ShortID(d.ApprovalID)+"` to run it again.")
	case engine.ApplyUnconfirmed:
		return r.note(ctx, t, d.ApprovalID, "Apply unconfirmed: "+d.Error+". Check the result before `/retry "+ShortID(d.ApprovalID)+"`.")
	case engine.ApprovalExpiry:
		return r.note(ctx, t, d.ApprovalID, "Expired: nobody decided in time.")
	case engine.SessionError:
		if err := r.flush(ctx, t, rp, true); err != nil {
			return err
		}
		_, err := r.Client.Comment(ctx, t, fmt.Sprintf("**Stopped** (%s): %s", d.Code, d.Message))
		if err == nil {
			delete(r.turns, s.ID)
		}
		return err
	case engine.TurnCompleted:
		if err := r.flush(ctx, t, rp, true); err != nil {
			return err
		}
		delete(r.turns, s.ID)
	}
	return nil
}

// flush shows the reply: new comments for new parts; edits where a part
// changed, unless force is false and the last edit was under MinEdit ago.
func (r *Renderer) flush(ctx context.Context, t Thread, rp *reply, force bool) error {
	if rp.text == "" && len(rp.steps) == 0 {
		return nil
	}
	now := r.now
	minEdit := r.MinEdit
	if minEdit == 0 {
		minEdit = DefaultMinEdit
	}
	parts := Split(replyBody(rp.text, rp.steps))
	for i, p := range parts {
		if i < len(rp.ids) {
			if rp.shown[i] == p {
				continue
			}
			if !force && now().Sub(rp.lastEdit) < minEdit {
				return nil
			}
			if err := r.Client.Edit(ctx, t, rp.ids[i], p); err != nil {
				return err
			}
			rp.shown[i], rp.lastEdit = p, now()
			continue
		}
		id, err := r.Client.Comment(ctx, t, p)
		if err != nil {
			return err
		}
		rp.ids, rp.shown, rp.lastEdit = append(rp.ids, id), append(rp.shown, p), now()
	}
	return nil
}

// note adds a line to an approval's card, editing it. The card is found
// in memory, else in Cards (posted before a restart); a card nobody kept
// gets its note as a comment of its own.
func (r *Renderer) note(ctx context.Context, t Thread, approvalID, text string) error {
	c, err := r.card(ctx, approvalID)
	if err != nil {
		return err
	}
	if c == nil {
		_, err := r.Client.Comment(ctx, t, fmt.Sprintf("Approval `%s`: %s", ShortID(approvalID), text))
		return err
	}
	if a, err := r.Engine.Approval(ctx, approvalID); err == nil {
		c.a = a
	}
	if err := r.Client.Edit(ctx, t, c.id, CardBody(c.a, r.ConsoleURL, append(c.notes, text))); err != nil {
		return err
	}
	c.notes = append(c.notes, text)
	return r.keep(ctx, approvalID, c)
}

// card returns the approval's card, nil when none was posted or kept.
func (r *Renderer) card(ctx context.Context, approvalID string) (*card, error) {
	if c := r.cards[approvalID]; c != nil || r.Cards == nil {
		return c, nil
	}
	raw, ok, err := r.Cards.ApprovalMessage(ctx, r.Origin, approvalID)
	if err != nil || !ok {
		return nil, err
	}
	var ref cardRef
	if json.Unmarshal([]byte(raw), &ref) != nil || ref.ID == 0 {
		r.Log.Warn("unreadable card reference; the note is posted as a comment", tools.LogApprovalID, approvalID)
		return nil, nil
	}
	a, err := r.Engine.Approval(ctx, approvalID)
	if err != nil {
		return nil, err
	}
	c := &card{id: ref.ID, a: a, notes: ref.Notes}
	r.cards[approvalID] = c
	return c, nil
}

// keep records the card in Cards. The comment already says it, so a
// failure here is logged, not retried: retrying would post the card again.
func (r *Renderer) keep(ctx context.Context, approvalID string, c *card) error {
	if r.Cards == nil {
		return nil
	}
	raw, _ := json.Marshal(cardRef{ID: c.id, Notes: c.notes})
	if err := r.Cards.SetApprovalMessage(ctx, r.now(), r.Origin, approvalID, string(raw)); err != nil {
		r.Log.Warn("card not remembered; after a restart its notes become comments", tools.LogApprovalID, approvalID, tools.LogErr, err)
	}
	return nil
}

func suffix(comment string) string {
	if comment == "" {
		return ""
	}
	return " “" + oneLine(comment) + "”"
}

func (r *Renderer) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}
