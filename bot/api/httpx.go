package api

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"reflect"
	"strings"

	"brain/engine"
)

type ctxKey int

// Request context keys.
const (
	requestIDKey ctxKey = iota // string
	callerKey                  // caller, when an API key authenticated the request
)

func requestID(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey).(string)
	return id
}

func newRequestID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// decodeBody reads a JSON body of at most max bytes into dst, rejecting
// unknown fields and trailing data.
func decodeBody(w http.ResponseWriter, r *http.Request, max int64, dst any) error {
	body, err := readBody(w, r, max)
	if err != nil {
		return err
	}
	return decodeJSON(body, dst)
}

// readBody reads a body of at most max bytes.
func readBody(w http.ResponseWriter, r *http.Request, max int64) ([]byte, error) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, max))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, engine.Errorf(engine.CodeTooLarge, "request body is over the %d-byte limit", max)
		}
		return nil, engine.Errorf(engine.CodeInvalid, "read body: %v", err)
	}
	return body, nil
}

// decodeJSON is the strict JSON decoding used for every request body.
func decodeJSON(body []byte, dst any) error {
	if len(bytes.TrimSpace(body)) == 0 {
		return engine.Errorf(engine.CodeInvalid, "request body is empty; send a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		var syn *json.SyntaxError
		var typ *json.UnmarshalTypeError
		switch {
		case errors.As(err, &syn):
			return engine.Errorf(engine.CodeInvalid, "body is not valid JSON at byte %d", syn.Offset)
		case errors.As(err, &typ):
			return engine.Errorf(engine.CodeInvalid, "field %q must be %s", typ.Field, jsonKind(typ.Type))
		case strings.HasPrefix(err.Error(), "json: unknown field"):
			return engine.Errorf(engine.CodeInvalid, "unknown field %s", strings.TrimPrefix(err.Error(), "json: unknown field "))
		default:
			return engine.Errorf(engine.CodeInvalid, "body is not valid JSON: %v", err)
		}
	}
	// More() misses a stray closing delimiter ("{}}"); Token must hit EOF.
	if _, err := dec.Token(); err != io.EOF {
		return engine.Errorf(engine.CodeInvalid, "body has data after the JSON object")
	}
	return nil
}

// statusRecorder remembers the status a handler wrote, for logs and metrics.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (s *statusRecorder) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	return s.ResponseWriter.Write(b)
}

// Flush lets SSE handlers flush through the recorder.
func (s *statusRecorder) Flush() {
	if f, ok := s.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// discardWriter captures what the mux's own 404/405 handlers would write.
type discardWriter struct {
	header http.Header
	status int
}

func (d *discardWriter) Header() http.Header         { return d.header }
func (d *discardWriter) Write(b []byte) (int, error) { return len(b), nil }
func (d *discardWriter) WriteHeader(code int)        { d.status = code }

// jsonKind names what a Go type is written as in JSON, so an error never
// names a Go type ("must be an object", not "must be engine.Answer").
func jsonKind(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Bool:
		return "true or false"
	case reflect.String:
		return "a string"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Struct, reflect.Map:
		return "an object"
	}
	return "a JSON value of another type"
}
