package web

import (
	"bytes"
	"encoding/binary"
	"mime"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// kind is how web_fetch treats a response body.
type kind int

const (
	kindUnknown kind = iota // no usable Content-Type: sniff the bytes
	kindHTML                // extract the readable text
	kindText                // plain text, JSON, XML: passed through
	kindBinary              // refused
)

// kindOf classifies a Content-Type header value.
func kindOf(contentType string) kind {
	mt := mediaType(contentType)
	switch {
	case mt == "", mt == "application/octet-stream", mt == "binary/octet-stream":
		return kindUnknown
	case mt == "text/html", mt == "application/xhtml+xml":
		return kindHTML
	case strings.HasPrefix(mt, "image/"), strings.HasPrefix(mt, "audio/"),
		strings.HasPrefix(mt, "video/"), strings.HasPrefix(mt, "font/"):
		return kindBinary
	case strings.HasPrefix(mt, "text/"),
		mt == "application/json", strings.HasSuffix(mt, "+json"),
		mt == "application/xml", strings.HasSuffix(mt, "+xml"),
		mt == "application/javascript", mt == "application/ecmascript",
		mt == "application/x-ndjson", mt == "application/yaml", mt == "application/x-yaml",
		mt == "application/toml":
		return kindText
	}
	return kindBinary
}

// mediaType is the lower-cased type/subtype of a Content-Type value.
func mediaType(contentType string) string {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		mt, _, _ = strings.Cut(contentType, ";")
	}
	return strings.ToLower(strings.TrimSpace(mt))
}

// decodeText turns a body into UTF-8. It knows UTF-8, UTF-16 (by byte
// order mark) and windows-1252, which the web uses for the iso-8859-1 and
// us-ascii labels too; other encodings keep their ASCII and lose the rest
// to U+FFFD. The charset comes from the header, else (HTML) a <meta> in the
// first KiB.
func decodeText(body []byte, contentType string, isHTML bool) string {
	switch {
	case bytes.HasPrefix(body, []byte("\xef\xbb\xbf")):
		return strings.ToValidUTF8(string(body[3:]), "\uFFFD")
	case bytes.HasPrefix(body, []byte("\xfe\xff")):
		return decodeUTF16(body[2:], binary.BigEndian)
	case bytes.HasPrefix(body, []byte("\xff\xfe")):
		return decodeUTF16(body[2:], binary.LittleEndian)
	}
	cs := ""
	if _, params, err := mime.ParseMediaType(contentType); err == nil {
		cs = strings.ToLower(strings.TrimSpace(params["charset"]))
	}
	if cs == "" && isHTML {
		cs = metaCharset(body)
	}
	switch cs {
	case "iso-8859-1", "iso8859-1", "latin1", "l1", "windows-1252", "cp1252",
		"us-ascii", "ascii", "x-cp1252", "cp819", "ibm819", "iso_8859-1":
		return decode1252(body)
	}
	return strings.ToValidUTF8(string(body), "\uFFFD")
}

// metaCharset finds charset=NAME in the first KiB of a page, the way
// <meta charset> and <meta http-equiv> declare it.
func metaCharset(body []byte) string {
	head := lowerASCII(string(body[:min(len(body), 1024)]))
	i := strings.Index(head, "charset=")
	if i < 0 {
		return ""
	}
	rest := strings.TrimLeft(head[i+len("charset="):], `"' `)
	end := strings.IndexFunc(rest, func(r rune) bool {
		return !(r == '-' || r == '_' || r == '.' || r == ':' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9')
	})
	if end >= 0 {
		rest = rest[:end]
	}
	return rest
}

// cp1252 maps bytes 0x80-0x9F; the rest of windows-1252 is Latin-1.
var cp1252 = [32]rune{
	'€', '\uFFFD', '‚', 'ƒ', '„', '…', '†', '‡', 'ˆ', '‰', 'Š', '‹', 'Œ', '\uFFFD', 'Ž', '\uFFFD',
	'\uFFFD', '‘', '’', '“', '”', '•', '–', '—', '˜', '™', 'š', '›', 'œ', '\uFFFD', 'ž', 'Ÿ',
}

func decode1252(b []byte) string {
	var sb strings.Builder
	sb.Grow(len(b) + len(b)/8)
	for _, c := range b {
		switch {
		case c >= 0x80 && c <= 0x9F:
			sb.WriteRune(cp1252[c-0x80])
		default:
			sb.WriteRune(rune(c))
		}
	}
	return sb.String()
}

func decodeUTF16(b []byte, order binary.ByteOrder) string {
	u := make([]uint16, len(b)/2)
	for i := range u {
		u[i] = order.Uint16(b[2*i:])
	}
	return string(utf16.Decode(u))
}

func runeCount(s string) int { return utf8.RuneCountInString(s) }

// cutRunes returns the first n runes of s.
func cutRunes(s string, n int) string {
	i := 0
	for j := range s {
		if i == n {
			return s[:j]
		}
		i++
	}
	return s
}

func isSpaceRune(r rune) bool { return unicode.IsSpace(r) }

// clip cuts s to at most n characters, marking the cut with an ellipsis.
func clip(s string, n int) string {
	if runeCount(s) <= n {
		return s
	}
	return cutRunes(s, n-1) + "…"
}
