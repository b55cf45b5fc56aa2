package openai

import (
	"encoding/base64"
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
