package api

import (
	"log/slog"
	"net/http"

	"brain/engine"
	"brain/tools"
)

// httpStatus maps error codes to HTTP statuses; a code missing here is
// answered as internal.
var httpStatus = map[string]int{
	engine.CodeInvalid:          http.StatusBadRequest,
	engine.CodeUnauthorized:     http.StatusUnauthorized,
	engine.CodeForbidden:        http.StatusForbidden,
	engine.CodeNotFound:         http.StatusNotFound,
	engine.CodeMethodNotAllowed: http.StatusMethodNotAllowed,
	engine.CodeConflict:         http.StatusConflict,
	codeIdempotencyMismatch:     http.StatusUnprocessableEntity,
	engine.CodeTooLarge:         http.StatusRequestEntityTooLarge,
	engine.CodeOverloaded:       http.StatusTooManyRequests,
	engine.CodeInternal:         http.StatusInternalServerError,
}

// ErrorEnvelope is the body of every failed response.
type ErrorEnvelope struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	RequestID string `json:"request_id"`
}

// writeError answers with the JSON error envelope. The message is the coded
// error's own, whatever wrapped it; internal errors are logged with the
// request id and shown as "internal error".
func writeError(w http.ResponseWriter, r *http.Request, log *slog.Logger, err error) {
	code := engine.CodeOf(err)
	msg := engine.ErrorMessage(err)
	status, ok := httpStatus[code]
	if !ok {
		status, code = http.StatusInternalServerError, engine.CodeInternal
	}
	if status == http.StatusInternalServerError {
		log.Error("request failed", tools.LogRequestID, requestID(r.Context()), tools.LogMethod, r.Method, tools.LogPath, r.URL.Path, tools.LogErr, err)
		msg = "internal error"
	}
	if status == http.StatusTooManyRequests && w.Header().Get("Retry-After") == "" {
		w.Header().Set("Retry-After", "1")
	}
	var env ErrorEnvelope
	env.Error.Code, env.Error.Message = code, msg
	env.RequestID = requestID(r.Context())
	writeJSON(w, status, env)
}

// routeError is the answer to a request no route matches: the status the
// mux would have written, as a coded error.
func routeError(status int, method, path string) error {
	if status == http.StatusMethodNotAllowed {
		return engine.Errorf(engine.CodeMethodNotAllowed, "%s is not allowed on %s", method, path)
	}
	return engine.Errorf(engine.CodeNotFound, "no route for %s %s", method, path)
}
