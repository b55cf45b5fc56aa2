package toolstest

import (
	"errors"
	"strings"
	"testing"

	"brain/tools"
)

// ToolError fails the test unless err is a *tools.Error whose outcome is
// unknown (UnknownOutcome) or not as given and whose message holds every
// one of contains; it returns the error for further checks.
func ToolError(t *testing.T, err error, unknown bool, contains ...string) *tools.Error {
	t.Helper()
	var te *tools.Error
	if !errors.As(err, &te) {
		t.Fatalf("error %v (%T) is not a *tools.Error", err, err)
	}
	if te.UnknownOutcome != unknown {
		t.Errorf("UnknownOutcome = %v, want %v (message %q)", te.UnknownOutcome, unknown, te.Message)
	}
	for _, c := range contains {
		if !strings.Contains(te.Message, c) {
			t.Errorf("message %q does not contain %q", te.Message, c)
		}
	}
	return te
}
