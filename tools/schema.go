package tools

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// Tool is a checked Definition with its schemas compiled.
type Tool struct {
	Definition
	input  *jsonschema.Schema
	output *jsonschema.Schema
	// props is every property name of the input schema, by folded name
	// (see CanonicalInput).
	props map[string][]string
}

// InputSchema is the schema the model is shown: the declared one, or an
// empty object schema.
func (t *Tool) InputSchema() json.RawMessage {
	if len(t.Definition.Input) == 0 {
		return json.RawMessage(`{"type":"object","properties":{}}`)
	}
	return t.Definition.Input
}

// ValidateInput checks arguments against the input schema.
func (t *Tool) ValidateInput(args json.RawMessage) error {
	return validate(t.input, args, "input")
}

// ValidateOutput checks a result against the output schema, if any.
func (t *Tool) ValidateOutput(out json.RawMessage) error {
	if t.output == nil {
		return nil
	}
	return validate(t.output, out, "output")
}

func validate(s *jsonschema.Schema, raw json.RawMessage, what string) error {
	if len(bytes.TrimSpace(raw)) == 0 {
		raw = json.RawMessage(`{}`)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return fmt.Errorf("%s is not valid JSON: %v", what, err)
	}
	if s == nil {
		if _, ok := doc.(map[string]any); !ok {
			return fmt.Errorf("%s must be a JSON object", what)
		}
		return nil
	}
	if err := s.Validate(doc); err != nil {
		var ve *jsonschema.ValidationError
		if errors.As(err, &ve) {
			return fmt.Errorf("%s does not match its schema: %s", what, flatten(ve))
		}
		return fmt.Errorf("%s does not match its schema: %v", what, err)
	}
	return nil
}

// flatten turns a validation error tree into one line a model can act on.
func flatten(ve *jsonschema.ValidationError) string {
	p := message.NewPrinter(language.English)
	var leaves []string
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			loc := "/"
			if len(e.InstanceLocation) > 0 {
				loc = ""
				for _, p := range e.InstanceLocation {
					loc += "/" + p
				}
			}
			leaves = append(leaves, fmt.Sprintf("at %s: %s", loc, e.ErrorKind.LocalizedString(p)))
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	sort.Strings(leaves)
	out := ""
	for i, l := range leaves {
		if i > 0 {
			out += "; "
		}
		out += l
	}
	return out
}

// Compile checks a definition and compiles its schemas.
func Compile(d Definition) (*Tool, error) {
	if err := d.Check(); err != nil {
		return nil, err
	}
	t := &Tool{Definition: d, props: map[string][]string{}}
	var err error
	if len(d.Input) > 0 {
		if t.input, err = compileSchema(d.Name, "input", d.Input); err != nil {
			return nil, err
		}
		var doc any
		if err := json.Unmarshal(d.Input, &doc); err != nil {
			return nil, fmt.Errorf("tool %q: input schema is not valid JSON: %v", d.Name, err)
		}
		schemaProps(doc, t.props)
	}
	if len(d.Output) > 0 {
		if t.output, err = compileSchema(d.Name, "output", d.Output); err != nil {
			return nil, err
		}
	}
	return t, nil
}

func compileSchema(tool, what string, raw json.RawMessage) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("tool %q: %s schema is not valid JSON: %v", tool, what, err)
	}
	c := jsonschema.NewCompiler()
	// Schemas come from config and code; never let them load files or URLs.
	c.UseLoader(jsonschema.SchemeURLLoader{})
	url := "mem://" + tool + "/" + what + ".json"
	if err := c.AddResource(url, doc); err != nil {
		return nil, fmt.Errorf("tool %q: %s schema: %v", tool, what, err)
	}
	s, err := c.Compile(url)
	if err != nil {
		return nil, fmt.Errorf("tool %q: %s schema: %v", tool, what, err)
	}
	return s, nil
}

// Set is a group of compiled tools with unique names, e.g. all the tools an
// agent can be given.
type Set struct {
	byName map[string]*Tool
	order  []string
}

// NewSet compiles definitions into a set; errors name the tool.
func NewSet(defs ...Definition) (*Set, error) {
	s := &Set{byName: map[string]*Tool{}}
	for _, d := range defs {
		if err := s.Add(d); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// Add compiles and adds one definition.
func (s *Set) Add(d Definition) error {
	if _, dup := s.byName[d.Name]; dup {
		return fmt.Errorf("tool %q: defined twice", d.Name)
	}
	if reservedNames[d.Name] {
		return fmt.Errorf("tool %q: the name is reserved for a built-in tool", d.Name)
	}
	t, err := Compile(d)
	if err != nil {
		return err
	}
	s.byName[d.Name] = t
	s.order = append(s.order, d.Name)
	return nil
}

// Get returns the tool called name.
func (s *Set) Get(name string) (*Tool, bool) {
	if s == nil {
		return nil, false
	}
	t, ok := s.byName[name]
	return t, ok
}

// Names lists the tools in the order they were added.
func (s *Set) Names() []string {
	if s == nil {
		return nil
	}
	return append([]string(nil), s.order...)
}
