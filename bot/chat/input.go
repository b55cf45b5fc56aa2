package chat

import (
	"bufio"
	"context"
	"io"

	"brain/engine"
)

// chatInput reads the terminal's lines in the background, so that waiting
// for a line can also end on Ctrl-C or ctx.
type chatInput struct {
	lines chan string
	done  chan struct{} // closed at EOF or a read error
	err   error         // set before done is closed
}

func newChatInput(r io.Reader) *chatInput {
	c := &chatInput{lines: make(chan string), done: make(chan struct{})}
	go func() {
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 64<<10), engine.MaxInputChars*4)
		for sc.Scan() {
			c.lines <- sc.Text()
		}
		c.err = sc.Err()
		close(c.done)
	}()
	return c
}

// readResult is how waiting for a line ended.
type readResult int

const (
	readLine      readResult = iota // a line was read
	readEOF                         // the input ended (err says why, nil at EOF)
	readInterrupt                   // Ctrl-C
)

// next waits for a line, Ctrl-C (interrupts) or ctx.
func (c *chatInput) next(ctx context.Context, interrupts <-chan struct{}) (string, readResult, error) {
	select {
	case line := <-c.lines:
		return line, readLine, nil
	case <-c.done:
		return "", readEOF, c.err
	case <-interrupts:
		return "", readInterrupt, nil
	case <-ctx.Done():
		return "", readEOF, ctx.Err()
	}
}
