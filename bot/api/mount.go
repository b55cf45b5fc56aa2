package api

import (
	"net/http"
	"strings"

	"brain/engine"
)

// Mount serves h at pattern (a ServeMux pattern) beside the API, with its
// request ids, panic recovery and status counts but without API keys: the
// webhook routes, which verify their own signatures. Call it before
// serving.
//
// h answers failures the plain way, http.Error's status and line of text,
// so it needs nothing from this package; Mount sends them as the error
// envelope, the code taken from the status and the message from the text.
// Headers h set (Allow, Retry-After) are kept; successes pass untouched,
// and so do failures answered as an HTML page (Content-Type text/html):
// pages a person's browser opened, such as the OAuth install callback.
func (a *Server) Mount(pattern string, h http.Handler) {
	a.patterns = append(a.patterns, pattern)
	a.mux.Handle(pattern, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fc := &failureCatcher{ResponseWriter: w}
		h.ServeHTTP(fc, r)
		if fc.failed != 0 {
			msg := strings.TrimSpace(fc.text.String())
			if msg == "" {
				msg = strings.ToLower(http.StatusText(fc.failed))
			}
			writeError(w, r, a.log, &engine.Error{Code: codeForStatus(fc.failed), Message: msg})
		}
	}))
}

// codeForStatus is the error code of an HTTP status, the inverse of
// httpStatus; other statuses are invalid_request (4xx) or internal.
func codeForStatus(status int) string {
	for code, s := range httpStatus {
		if s == status {
			return code
		}
	}
	if status < http.StatusInternalServerError {
		return engine.CodeInvalid
	}
	return engine.CodeInternal
}

// maxFailureText bounds the text kept from a failure's body.
const maxFailureText = 1 << 10

// failureCatcher holds back a response whose status is a failure (400 or
// more), keeping its text for the envelope; any other response goes
// straight through.
type failureCatcher struct {
	http.ResponseWriter
	wrote  bool
	failed int
	text   strings.Builder
}

func (f *failureCatcher) WriteHeader(code int) {
	if f.wrote {
		return
	}
	f.wrote = true
	if code >= http.StatusBadRequest && !strings.HasPrefix(f.Header().Get("Content-Type"), "text/html") {
		f.failed = code
		return
	}
	f.ResponseWriter.WriteHeader(code)
}

func (f *failureCatcher) Write(b []byte) (int, error) {
	if !f.wrote {
		f.WriteHeader(http.StatusOK)
	}
	if f.failed == 0 {
		return f.ResponseWriter.Write(b)
	}
	if room := maxFailureText - f.text.Len(); room > 0 {
		f.text.Write(b[:min(len(b), room)])
	}
	return len(b), nil
}

func (f *failureCatcher) Unwrap() http.ResponseWriter { return f.ResponseWriter }
