package main

import (
	"context"
	"errors"
	"sync"

	"brain/bot"
	"brain/bot/api/client"
	"brain/engine"
)

// apiChat is the terminal chat's transport over a running daemon's HTTP
// API: `brain chat` beside `brain serve`, which holds the data directory.
type apiChat struct{ d *client.Daemon }

var _ bot.ChatTransport = apiChat{}

func (a apiChat) CreateSession(ctx context.Context, agent, user string) (engine.Session, error) {
	return a.d.CreateSession(ctx, agent, user)
}

func (a apiChat) Session(ctx context.Context, id string) (engine.Session, error) {
	return a.d.Session(ctx, id)
}

func (a apiChat) Send(ctx context.Context, id string, in engine.Input) (engine.Event, error) {
	return a.d.SendInput(ctx, id, in)
}

func (a apiChat) Resume(ctx context.Context, id string) ([]int64, error) {
	evs, err := a.d.ResumeRetry(ctx, id)
	var seqs []int64
	for _, ev := range evs {
		seqs = append(seqs, ev.Seq)
	}
	return seqs, err
}

func (a apiChat) Cancel(ctx context.Context, id string) error {
	_, err := a.d.Cancel(ctx, id)
	return err
}

func (a apiChat) Events(ctx context.Context, id string, after int64) ([]engine.Event, error) {
	return a.d.Events(ctx, id, after)
}

func (a apiChat) PendingApprovals(ctx context.Context, sessionID string) ([]engine.Approval, error) {
	return a.d.SessionApprovals(ctx, sessionID, string(engine.ApprovalPending))
}

func (a apiChat) Approval(ctx context.Context, id string) (engine.Approval, error) {
	return a.d.Approval(ctx, id)
}

func (a apiChat) Decide(ctx context.Context, id string, d engine.Decision) error {
	_, err := a.d.DecideWithComment(ctx, id, d.Approve, d.By, d.Comment)
	return err
}

// Watch follows the session's event stream (server-sent events with the
// text being written) in the background.
func (a apiChat) Watch(ctx context.Context, id string, after int64) (bot.ChatWatch, error) {
	ctx, cancel := context.WithCancel(ctx)
	w := &apiWatch{items: make(chan client.StreamItem, 64), done: make(chan struct{}), cancel: cancel}
	w.wg.Go(func() {
		w.err = a.d.Stream(ctx, id, after, func(it client.StreamItem) bool {
			select {
			case w.items <- it:
				return true
			case <-ctx.Done():
				return false
			}
		})
		close(w.done)
	})
	return w, nil
}

// apiWatch is a session's event stream read by a background goroutine.
type apiWatch struct {
	items  chan client.StreamItem
	done   chan struct{} // closed when the stream ended; err says why
	err    error
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

func (w *apiWatch) Next(ctx context.Context, interrupts <-chan struct{}) (bot.ChatBatch, error) {
	var b bot.ChatBatch
	select {
	case it := <-w.items:
		addItem(&b, it)
	case <-w.done:
		select {
		case it := <-w.items: // what the stream sent before it ended
			addItem(&b, it)
		default:
			if w.err == nil {
				w.err = errors.New("the daemon closed the event stream (is it shutting down?)")
			}
			return b, w.err
		}
	case <-interrupts:
		return bot.ChatBatch{Interrupted: true}, nil
	case <-ctx.Done():
		return b, ctx.Err()
	}
	for { // and whatever else has arrived
		select {
		case it := <-w.items:
			addItem(&b, it)
		default:
			return b, nil
		}
	}
}

func addItem(b *bot.ChatBatch, it client.StreamItem) {
	if it.Delta != nil {
		b.Deltas = append(b.Deltas, *it.Delta)
	}
	if it.Event != nil {
		b.Events = append(b.Events, *it.Event)
	}
}

func (w *apiWatch) Close() {
	w.cancel()
	w.wg.Wait()
}
