package mcp

import (
	"context"
	"encoding/json"
	"fmt"

	"brain/tools"
)

var (
	listResourcesInput = json.RawMessage(`{"type":"object","properties":{},"additionalProperties":false}`)
	readResourceInput  = json.RawMessage(`{"type":"object","properties":{"uri":{"type":"string","minLength":1,"description":"The resource's URI, from list_resources (a template's URI with its variables filled in)"}},"required":["uri"],"additionalProperties":false}`)
)

// resourceTools are the two tools a server with the resources capability
// gets: list first, then read the URI wanted.
func (s *server) resourceTools() []tools.Definition {
	list := toolName(s.cfg.ID, "list_resources")
	read := toolName(s.cfg.ID, "read_resource")
	return []tools.Definition{
		{
			Name:        list,
			Description: fmt.Sprintf("List the resources (and resource URI templates) of the MCP server %s. Read one with %s.", s.cfg.ID, read),
			Input:       listResourcesInput,
			Run: func(ctx context.Context, call tools.Call) (json.RawMessage, error) {
				return s.listResources(ctx, list, call)
			},
		},
		{
			Name:        read,
			Description: fmt.Sprintf("Read one resource of the MCP server %s by its URI (see %s).", s.cfg.ID, list),
			Input:       readResourceInput,
			Run: func(ctx context.Context, call tools.Call) (json.RawMessage, error) {
				var in struct {
					URI string `json:"uri"`
				}
				if err := json.Unmarshal(call.Input, &in); err != nil || in.URI == "" {
					return nil, tools.Failed("%s: the argument uri is required; nothing was sent", read)
				}
				return s.readResource(ctx, read, in.URI, call)
			},
		},
	}
}

type resource struct {
	URI         string `json:"uri"`
	Name        string `json:"name,omitempty"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	MIMEType    string `json:"mimeType,omitempty"`
}

type resourceTemplate struct {
	URITemplate string `json:"uriTemplate"`
	Name        string `json:"name,omitempty"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	MIMEType    string `json:"mimeType,omitempty"`
}

func (s *server) listResources(ctx context.Context, name string, call tools.Call) (json.RawMessage, error) {
	c, err := s.connFor(ctx, name, call)
	if err != nil {
		return nil, err
	}
	out := struct {
		Resources []resource         `json:"resources"`
		Templates []resourceTemplate `json:"resourceTemplates,omitempty"`
	}{Resources: []resource{}}
	err = c.pages(ctx, "resources/list", func(raw json.RawMessage) (string, error) {
		var page struct {
			Resources  []resource `json:"resources"`
			NextCursor string     `json:"nextCursor"`
		}
		if err := json.Unmarshal(raw, &page); err != nil {
			return "", fmt.Errorf("invalid resources/list result: %v", err)
		}
		out.Resources = append(out.Resources, page.Resources...)
		return page.NextCursor, nil
	})
	if err != nil {
		return nil, s.callError(ctx, name, err)
	}
	// Templates are optional: a server without them may answer with an error.
	_ = c.pages(ctx, "resources/templates/list", func(raw json.RawMessage) (string, error) {
		var page struct {
			Templates  []resourceTemplate `json:"resourceTemplates"`
			NextCursor string             `json:"nextCursor"`
		}
		if err := json.Unmarshal(raw, &page); err != nil {
			return "", err
		}
		out.Templates = append(out.Templates, page.Templates...)
		return page.NextCursor, nil
	})
	return s.scrubbed(out)
}

func (s *server) readResource(ctx context.Context, name, uri string, call tools.Call) (json.RawMessage, error) {
	c, err := s.connFor(ctx, name, call)
	if err != nil {
		return nil, err
	}
	raw, err := c.request(ctx, "resources/read", map[string]any{"uri": uri})
	if err != nil {
		return nil, s.callError(ctx, name, err)
	}
	var res struct {
		Contents []struct {
			URI      string  `json:"uri"`
			MIMEType string  `json:"mimeType"`
			Text     *string `json:"text"`
			Blob     *string `json:"blob"`
		} `json:"contents"`
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, tools.Failed("%s: the server answered with an invalid result", name)
	}
	type content struct {
		URI      string `json:"uri"`
		MIMEType string `json:"mimeType,omitempty"`
		Text     string `json:"text"`
	}
	out := struct {
		Contents []content `json:"contents"`
	}{Contents: []content{}}
	for _, c := range res.Contents {
		item := content{URI: c.URI, MIMEType: c.MIMEType}
		switch {
		case c.Text != nil:
			item.Text = *c.Text
		case c.Blob != nil:
			item.Text = fmt.Sprintf("[binary %s, %d bytes of base64, not shown]", orUnknown(c.MIMEType), len(*c.Blob))
		}
		out.Contents = append(out.Contents, item)
	}
	return s.scrubbed(out)
}

// scrubbed encodes v with secrets redacted.
func (s *server) scrubbed(v any) (json.RawMessage, error) {
	raw, err := marshal(v)
	if err != nil {
		return nil, err
	}
	return s.scrub.JSON(raw), nil
}
