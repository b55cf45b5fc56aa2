package openai

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"brain/engine"
	"brain/engine/model/fakemodel"
	"brain/engine/model/modeltest"
)

// TestOpenAI_Attachments: after the message text, one user message of
// parts: a PNG as an image_url data URL and a text file as a text part; a
// PDF is named in a note, since this server is not OpenAI's own.
func TestOpenAI_Attachments(t *testing.T) {
	srv := modeltest.NewServer(t)
	srv.Push(fakemodel.Text("seen"))
	m, err := New(Config{BaseURL: srv.URL() + "/v1/", APIKey: modeltest.TestKey, Model: "gpt-test"})
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
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(srv.Requests()[0].Messages, &msgs); err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 2 || string(msgs[0].Content) != `"what is this?"` {
		t.Fatalf("messages = %s", srv.Requests()[0].Messages)
	}
	var parts []struct {
		Type     string `json:"type"`
		Text     string `json:"text"`
		ImageURL struct {
			URL string `json:"url"`
		} `json:"image_url"`
		File struct {
			FileData string `json:"file_data"`
			Filename string `json:"filename"`
		} `json:"file"`
	}
	if err := json.Unmarshal(msgs[1].Content, &parts); err != nil {
		t.Fatal(err)
	}
	if len(parts) != 4 || parts[0].Text != "[file shot.png]" {
		t.Fatalf("parts = %+v", parts)
	}
	if want := "data:image/png;base64," + base64.StdEncoding.EncodeToString(png); parts[1].Type != "image_url" || parts[1].ImageURL.URL != want {
		t.Errorf("image part = %+v", parts[1])
	}
	if parts[2].Type != "text" || !strings.Contains(parts[2].Text, `PDF file "spec.pdf" (8 bytes) was shared; this model server does not accept PDF documents`) {
		t.Errorf("PDF note = %+v", parts[2])
	}
	if parts[3].Type != "text" || parts[3].Text != "file notes.txt:\nhello" {
		t.Errorf("text part = %+v", parts[3])
	}
}

// TestAttachmentMessage_PDFFilePart: for OpenAI's own API a PDF is a file
// part with a data URL; withoutPDFs leaves the caller's messages alone.
func TestAttachmentMessage_PDFFilePart(t *testing.T) {
	atts := []engine.Attachment{{Name: "spec.pdf", MediaType: "application/pdf", Data: []byte("%PDF-1.4")}}
	m, ok := attachmentMessage(atts)
	if !ok {
		t.Fatal("no message")
	}
	raw, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	want := `"content":[{"file":{"file_data":"data:application/pdf;base64,` + base64.StdEncoding.EncodeToString([]byte("%PDF-1.4")) + `","filename":"spec.pdf"},"type":"file"}]`
	if !strings.Contains(string(raw), want) {
		t.Errorf("message = %s, want %s", raw, want)
	}
	msgs := []engine.Message{{Role: engine.RoleUser, Attachments: atts}}
	out := withoutPDFs(msgs)
	if len(out[0].Attachments[0].Data) != 0 || len(msgs[0].Attachments[0].Data) == 0 {
		t.Errorf("withoutPDFs: out %+v, in %+v", out, msgs)
	}
}
