package engine

import (
	"errors"
	"fmt"
)

// Error codes shared by the engine and its callers; the HTTP layer maps them
// to statuses.
const (
	CodeInvalid    = "invalid_request"
	CodeNotFound   = "not_found"
	CodeConflict   = "conflict"
	CodeForbidden  = "forbidden"
	CodeOverloaded = "overloaded"
	CodeInternal   = "internal"
)

// Error is a failure with a code and a message fit to show a person.
type Error struct {
	Code    string
	Message string
}

func (e *Error) Error() string { return e.Message }

// Is makes errors.Is match on the code, so ErrNotFound matches any not-found.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code && (t.Message == "" || t.Message == e.Message)
}

// Sentinels for errors.Is; their messages are empty so they match any message.
var (
	ErrNotFound   = &Error{Code: CodeNotFound}
	ErrConflict   = &Error{Code: CodeConflict}
	ErrInvalid    = &Error{Code: CodeInvalid}
	ErrOverloaded = &Error{Code: CodeOverloaded}
)

// Errorf builds an Error with a code.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// CodeOf returns the code of err, or CodeInternal.
func CodeOf(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return CodeInternal
}
