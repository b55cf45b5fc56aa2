package httptool

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"text/template"

	"brain/tools"
)

// Card bounds, in characters; the engine applies the same ones.
const (
	maxTitle = 150
	maxLabel = 80
	maxValue = 2000
)

// noValue is what text/template prints for a missing key of a
// map[string]any even with missingkey=zero (the zero of any is nil).
const noValue = "<no value>"

// card holds the parsed templates of an Approval.
type card struct {
	title *template.Template
	facts []factTemplate
}

type factTemplate struct {
	label, value *template.Template
}

var cardFuncs = template.FuncMap{
	"json": func(v any) (string, error) {
		b, err := json.Marshal(v)
		return string(b), err
	},
}

func parseCard(tool string, a Approval) (*card, error) {
	parse := func(what, text string) (*template.Template, error) {
		t, err := template.New(what).Option("missingkey=zero").Funcs(cardFuncs).Parse(text)
		if err != nil {
			return nil, fmt.Errorf("tool %q: approval %s template: %w", tool, what, err)
		}
		return t, nil
	}
	if strings.TrimSpace(a.Title) == "" {
		return nil, fmt.Errorf("tool %q: approval title is empty", tool)
	}
	c := &card{}
	var err error
	if c.title, err = parse("title", a.Title); err != nil {
		return nil, err
	}
	for i, f := range a.Facts {
		var ft factTemplate
		if ft.label, err = parse(fmt.Sprintf("fact %d label", i+1), f.Label); err != nil {
			return nil, err
		}
		if ft.value, err = parse(fmt.Sprintf("fact %d value", i+1), f.Value); err != nil {
			return nil, err
		}
		c.facts = append(c.facts, ft)
	}
	return c, nil
}

// render executes the templates with the input object as data. It makes no
// request: a preview must not write.
func (c *card) render(tool string, input json.RawMessage) (tools.Card, error) {
	var data any = map[string]any{}
	if in := bytes.TrimSpace(input); len(in) > 0 {
		dec := json.NewDecoder(bytes.NewReader(in))
		dec.UseNumber() // print numbers as the model wrote them
		if err := dec.Decode(&data); err != nil {
			return tools.Card{}, tools.Failed("%s: arguments are not valid JSON", tool)
		}
	}
	exec := func(t *template.Template) (string, error) {
		var b strings.Builder
		if err := t.Execute(&b, data); err != nil {
			return "", tools.Failed("%s: rendering the approval card: %v", tool, err)
		}
		return strings.TrimSpace(strings.ReplaceAll(b.String(), noValue, "")), nil
	}
	title, err := exec(c.title)
	if err != nil {
		return tools.Card{}, err
	}
	// A title is one line.
	out := tools.Card{Title: clip(strings.Join(strings.Fields(title), " "), maxTitle), Facts: []tools.Fact{}}
	if out.Title == "" {
		out.Title = tool
	}
	for _, f := range c.facts {
		label, err := exec(f.label)
		if err != nil {
			return tools.Card{}, err
		}
		value, err := exec(f.value)
		if err != nil {
			return tools.Card{}, err
		}
		out.Facts = append(out.Facts, tools.Fact{Label: clip(label, maxLabel), Value: clip(value, maxValue)})
	}
	return out, nil
}
