package engine

import "testing"

// A shared file counts toward the request's size: text by its length, an
// image by what providers bill for one (not its bytes), a PDF by its bytes.
func TestMessagesBytes_CountsAttachments(t *testing.T) {
	plain := messagesBytes([]Message{{Role: RoleUser, Text: "look"}})
	cases := []struct {
		name string
		att  Attachment
		min  int
		max  int
	}{
		{"text", Attachment{Name: "a.txt", Text: string(make([]byte, 9000))}, 9000, 9200},
		{"image", Attachment{Name: "a.png", MediaType: "image/png", Data: make([]byte, 4<<20)}, imageBytes, imageBytes + 200},
		{"pdf", Attachment{Name: "a.pdf", MediaType: "application/pdf", Data: make([]byte, 50000)}, 50000, 50200},
	}
	for _, c := range cases {
		got := messagesBytes([]Message{{Role: RoleUser, Text: "look", Attachments: []Attachment{c.att}}}) - plain
		if got < c.min || got > c.max {
			t.Errorf("%s: counts %d bytes, want %d..%d", c.name, got, c.min, c.max)
		}
	}
}
