package bridge

import (
	"errors"
	"fmt"
	"testing"

	"brain/engine"
)

func TestRefusal(t *testing.T) {
	for _, c := range []struct {
		err     error
		text    string
		refused bool
	}{
		{nil, "", false},
		{errors.New("disk full"), "", false},
		{&engine.Error{Code: engine.CodeInternal, Message: "boom"}, "", false},
		{&engine.Error{Code: engine.CodeConflict, Message: "already decided"}, "already decided", true},
		{fmt.Errorf("decide: %w", &engine.Error{Code: engine.CodeForbidden, Message: "not an approver"}), "not an approver", true},
	} {
		text, refused := Refusal(c.err)
		if text != c.text || refused != c.refused {
			t.Errorf("Refusal(%v) = %q, %v; want %q, %v", c.err, text, refused, c.text, c.refused)
		}
	}
}
