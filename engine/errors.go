package engine

import (
	"errors"
	"fmt"
)

// Error codes, every one the project uses, the engine's and the HTTP
// layer's alike, so a code is never a string literal elsewhere. bot/api maps
// each to an HTTP status.
const (
	CodeInvalid          = "invalid_request"
	CodeUnauthorized     = "unauthorized"
	CodeForbidden        = "forbidden"
	CodeNotFound         = "not_found"
	CodeMethodNotAllowed = "method_not_allowed"
	CodeConflict         = "conflict"
	CodeTooLarge         = "too_large"
	CodeOverloaded       = "overloaded"
	CodeInternal         = "internal"
)

// internalMessage is what a person reads for an error without a code.
const internalMessage = "internal error"

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

// ErrInvariant marks a call a Store refused because the caller broke the
// store's contract (a commit without a session id, event data that is not
// JSON). It is a bug, not bad input: it carries no code, so the API answers
// 500 "internal error" and logs it, instead of a 400 that blames the client.
var ErrInvariant = errors.New("store invariant violated")

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

// ErrorMessage returns the message of the coded error in err's chain, the
// text fit to show a person, so wrapping with fmt.Errorf("op: %w", err)
// never changes what they read. An error without a code reads "internal
// error": its details are for the log, not for the person.
func ErrorMessage(err error) string {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Message
	}
	return internalMessage
}
