package anthropic

import (
	"encoding/base64"
	"strings"

	"github.com/anthropics/anthropic-sdk-go/v2"

	"brain/engine"
)

// attachmentBlocks maps the files shared with a user message: images as
// image blocks, PDFs as document blocks, anything else as its text.
func attachmentBlocks(atts []engine.Attachment) []anthropic.ContentBlockParamUnion {
	var out []anthropic.ContentBlockParamUnion
	for _, a := range atts {
		switch {
		case len(a.Data) > 0 && strings.HasPrefix(a.MediaType, "image/"):
			out = append(out, anthropic.NewTextBlock("[file "+a.Name+"]"),
				anthropic.NewImageBlockBase64(a.MediaType, base64.StdEncoding.EncodeToString(a.Data)))
		case len(a.Data) > 0 && a.MediaType == "application/pdf":
			doc := anthropic.DocumentBlockParam{
				Source: anthropic.DocumentBlockParamSourceUnion{
					OfBase64: &anthropic.Base64PDFSourceParam{Data: base64.StdEncoding.EncodeToString(a.Data)},
				},
			}
			if a.Name != "" {
				doc.Title = anthropic.String(a.Name)
			}
			out = append(out, anthropic.ContentBlockParamUnion{OfDocument: &doc})
		case a.Text != "":
			out = append(out, anthropic.NewTextBlock(a.Text))
		}
	}
	return out
}
