package engine

import (
	"errors"
	"fmt"
	"strings"
)

// FormAnswer checks the values of a form a surface showed for a tool's
// request for input (a Slack modal, the console's form), by field name,
// against the question's fields, and returns the answer's text: the
// value of a one-field form, else one "name: value" line per field
// given, which replyOf reads back. An error says which field is wrong;
// nothing should be recorded then.
func (q *Question) FormAnswer(values map[string]string) (string, error) {
	if q.Call == nil || q.Call.Elicitation.URL != "" {
		return "", errors.New("the question has no form")
	}
	fields := q.Call.Elicitation.Fields
	var lines []string
	for _, f := range fields {
		v := strings.TrimSpace(values[f.Name])
		if v == "" {
			if f.Required && f.Default == nil {
				return "", fmt.Errorf("%s is required", f.Name)
			}
			continue
		}
		if strings.ContainsAny(v, "\r\n") {
			return "", fmt.Errorf("%s must be one line", f.Name)
		}
		if _, err := fieldValue(f, v); err != nil {
			return "", err
		}
		lines = append(lines, f.Name+": "+v)
	}
	if len(fields) == 1 {
		if len(lines) == 0 {
			return "", fmt.Errorf("%s: no value", fields[0].Name)
		}
		return strings.TrimSpace(values[fields[0].Name]), nil
	}
	if len(lines) == 0 {
		return "", errors.New("the form is empty")
	}
	return strings.Join(lines, "\n"), nil
}
