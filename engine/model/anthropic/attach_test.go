package anthropic

import (
	"context"
	"encoding/json"
	"testing"

	"brain/engine"
	"brain/engine/model/fakemodel"
	"brain/engine/model/modeltest"
)

// TestAnthropic_Attachments: a PNG goes as an image block, a PDF as a
// document block and a text file as a text block, after the message text.
func TestAnthropic_Attachments(t *testing.T) {
	srv := modeltest.NewServer(t)
	srv.Push(fakemodel.Text("seen"))
	m, err := New(Config{BaseURL: srv.URL(), APIKey: modeltest.TestKey, Model: "claude-test"})
	if err != nil {
		t.Fatal(err)
	}
	png := []byte("\x89PNG\r\n\x1a\nfake")
	_, err = m.Generate(context.Background(), engine.ModelRequest{Messages: []engine.Message{{
		Role: engine.RoleUser, Text: "what is this?",
		Attachments: []engine.Attachment{
			{Name: "shot.png", MediaType: "image/png", Data: png},
			{Name: "spec.pdf", MediaType: "application/pdf", Data: []byte("%PDF-1.4")},
			{Name: "notes.txt", Text: "file notes.txt:\nhello"},
		},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	var msgs []struct {
		Content []struct {
			Type   string `json:"type"`
			Text   string `json:"text"`
			Title  string `json:"title"`
			Source struct {
				Type      string `json:"type"`
				MediaType string `json:"media_type"`
				Data      []byte `json:"data"`
			} `json:"source"`
		} `json:"content"`
	}
	if err := json.Unmarshal(srv.Requests()[0].Messages, &msgs); err != nil {
		t.Fatal(err)
	}
	c := msgs[0].Content
	if len(c) != 5 || c[0].Text != "what is this?" || c[1].Text != "[file shot.png]" {
		t.Fatalf("content = %+v", c)
	}
	if c[2].Type != "image" || c[2].Source.Type != "base64" || c[2].Source.MediaType != "image/png" || string(c[2].Source.Data) != string(png) {
		t.Errorf("image block = %+v", c[2])
	}
	if c[3].Type != "document" || c[3].Source.MediaType != "application/pdf" || string(c[3].Source.Data) != "%PDF-1.4" || c[3].Title != "spec.pdf" {
		t.Errorf("document block = %+v", c[3])
	}
	if c[4].Type != "text" || c[4].Text != "file notes.txt:\nhello" {
		t.Errorf("text block = %+v", c[4])
	}
}
