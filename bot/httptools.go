package bot

import (
	"encoding/json"
	"fmt"
	"time"

	"brain/tools"
	"brain/tools/httptool"
)

// httpTools turns tools.http config entries into tool definitions. Header
// values (secrets via ${ENV}) stay inside the tool: never in the model's
// view, events or logs.
func httpTools(cfg *Config) ([]tools.Definition, error) {
	var out []tools.Definition
	for i, h := range cfg.Tools.HTTP {
		spec := httptool.Spec{
			Name:        h.Name,
			Description: h.Description,
			Input:       json.RawMessage(h.Input),
			Output:      json.RawMessage(h.Output),
			Method:      h.Method,
			URL:         h.URL,
			Headers:     h.Headers,
			Timeout:     time.Duration(h.TimeoutMS) * time.Millisecond,
		}
		if a := h.Approval; a != nil {
			spec.Approval = &httptool.Approval{Title: a.Title}
			for _, f := range a.Facts {
				spec.Approval.Facts = append(spec.Approval.Facts, httptool.Fact{Label: f.Label, Value: f.Value})
			}
		}
		def, err := httptool.New(spec, nil)
		if err != nil {
			return nil, fmt.Errorf("tools.http[%d]: %w", i, err)
		}
		out = append(out, def)
	}
	return out, nil
}
