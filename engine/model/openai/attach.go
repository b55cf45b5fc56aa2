package openai

import (
	"encoding/base64"
	"fmt"
	"slices"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/param"

	"brain/engine"
)

// attachmentMessage maps the files shared with a user message to one user
// message of content parts: images as image_url parts (data URLs), PDFs
// as file parts, anything else as its text. ok is false when none remain.
func attachmentMessage(atts []engine.Attachment) (openai.ChatCompletionMessageParamUnion, bool) {
	var parts []openai.ChatCompletionContentPartUnionParam
	for _, a := range atts {
		switch {
		case len(a.Data) > 0 && strings.HasPrefix(a.MediaType, "image/"):
			parts = append(parts, openai.TextContentPart("[file "+a.Name+"]"),
				openai.ImageContentPart(openai.ChatCompletionContentPartImageImageURLParam{URL: dataURL(a)}))
		case len(a.Data) > 0 && a.MediaType == "application/pdf":
			parts = append(parts, openai.FileContentPart(openai.ChatCompletionContentPartFileFileParam{
				FileData: param.NewOpt(dataURL(a)),
				Filename: param.NewOpt(a.Name),
			}))
		case a.Text != "":
			parts = append(parts, openai.TextContentPart(a.Text))
		}
	}
	if len(parts) == 0 {
		return openai.ChatCompletionMessageParamUnion{}, false
	}
	return openai.UserMessage(parts), true
}

func dataURL(a engine.Attachment) string {
	return "data:" + a.MediaType + ";base64," + base64.StdEncoding.EncodeToString(a.Data)
}

// withoutPDFs replaces PDF attachments by a note naming them. OpenAI's own
// API reads file parts; OpenAI-compatible servers (Ollama, vLLM ...)
// refuse the whole request, which would fail the session, so they are
// told a PDF was shared instead. msgs is not modified.
func withoutPDFs(msgs []engine.Message) []engine.Message {
	var out []engine.Message
	for i, msg := range msgs {
		for j, a := range msg.Attachments {
			if len(a.Data) == 0 || a.MediaType != "application/pdf" {
				continue
			}
			if out == nil {
				out = slices.Clone(msgs)
			}
			if &out[i].Attachments[0] == &msgs[i].Attachments[0] { // still shared
				out[i].Attachments = slices.Clone(msg.Attachments)
			}
			out[i].Attachments[j] = engine.Attachment{Name: a.Name, Text: fmt.Sprintf(
				"[PDF file %q (%d bytes) was shared; this model server does not accept PDF documents]", a.Name, len(a.Data))}
		}
	}
	if out == nil {
		return msgs
	}
	return out
}
