package bot

import (
	"context"
	"io"
	"time"

	"brain/bot/chat"
	"brain/bot/config"
)

// Chat runs the console channel: a terminal conversation with an agent, in
// this process, on the configured database. It ends at EOF, /quit or when
// ctx is cancelled.
func Chat(ctx context.Context, cfg *config.Config, opts Options, agent, user string, in io.Reader, out io.Writer) error {
	return ChatWith(ctx, cfg, opts, ChatOptions{Agent: agent, User: user, In: in, Out: out})
}

// ChatOptions are the terminal conversation's settings.
type ChatOptions = chat.Options

// ChatWith is Chat with every option: it builds the app, starts its
// engine (no HTTP server, no platforms) and hands it to bot/chat.
func ChatWith(ctx context.Context, cfg *config.Config, opts Options, c ChatOptions) error {
	app, err := New(ctx, cfg, opts)
	if err != nil {
		return err
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = app.Shutdown(sctx)
	}()
	if err := app.engine.Start(ctx); err != nil {
		return err
	}
	return chat.Run(ctx, app.engine, cfg, c)
}

// ChatTransport, ChatWatch and ChatBatch are bot/chat's: how the terminal
// conversation reaches its session (cmd/brain's API transport implements
// them).
type (
	ChatTransport = chat.Transport
	ChatWatch     = chat.Watch
	ChatBatch     = chat.Batch
)

// ChatThrough runs the terminal conversation over t, a running daemon's
// API: what `brain chat` does when `brain serve` holds the data directory.
func ChatThrough(ctx context.Context, t ChatTransport, cfg *config.Config, c ChatOptions) error {
	return chat.RunWith(ctx, t, cfg.Agents[0].Name, c)
}
