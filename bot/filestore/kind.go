package filestore

import (
	"bytes"
	"net/http"
	"strings"
	"unicode/utf8"
)

// Kind is how brain can pass a file to a model.
type Kind string

const (
	KindImage Kind = "image" // image content (PNG, JPEG, GIF, WebP)
	KindPDF   Kind = "pdf"   // a PDF document block / file part
	KindText  Kind = "text"  // text-like: plain text, Markdown, CSV, JSON, code
	KindOther Kind = "other" // named with its size only
)

// Classify says what data is from its content alone (a name or Slack's
// mimetype can lie): net/http's sniffing, then checks it cannot do
// (WebP's brand, UTF-8 text without NULs). It returns the media type to
// record and the kind.
func Classify(data []byte) (string, Kind) {
	sniffed, _, _ := strings.Cut(http.DetectContentType(data), ";")
	switch sniffed {
	case "image/png", "image/jpeg", "image/gif", "image/webp":
		return sniffed, KindImage
	case "application/pdf":
		return sniffed, KindPDF
	}
	if len(data) >= 12 && string(data[:4]) == "RIFF" && string(data[8:12]) == "WEBP" {
		return "image/webp", KindImage
	}
	if isText(data) {
		if strings.HasPrefix(sniffed, "text/") {
			return sniffed, KindText
		}
		return "text/plain", KindText
	}
	return sniffed, KindOther
}

// isText reports whether data reads as UTF-8 text (a BOM allowed).
func isText(data []byte) bool {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	if bytes.IndexByte(data, 0) >= 0 || !utf8.Valid(data) {
		return false
	}
	for _, r := range string(data) {
		if r < 0x20 && r != '\n' && r != '\r' && r != '\t' && r != '\f' {
			return false
		}
	}
	return true
}
