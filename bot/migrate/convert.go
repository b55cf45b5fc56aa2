package migrate

import (
	"fmt"

	"brain/store/postgres"
	"brain/store/sqlite"
)

// convert turns one value as SQLite holds it into what the target column
// takes. The two schemas differ in a few ways, all decided by the target
// column's type: booleans are 0/1 integers in SQLite, byte payloads may be
// text there, and an absent time is ” in SQLite but NULL in PostgreSQL
// (whose utc_time domain accepts only a full time).
type convert func(v any) (any, error)

func converters(src sqlite.Table, dst postgres.Table) ([]convert, error) {
	conv := make([]convert, len(src.Columns))
	for i, name := range src.Columns {
		j := -1
		for k, c := range dst.Columns {
			if c.Name == name {
				j = k
			}
		}
		if j < 0 {
			return nil, fmt.Errorf("column %s.%s has no counterpart in the target schema", src.Name, name)
		}
		c := dst.Columns[j]
		switch c.Type {
		case "boolean":
			conv[i] = toBool
		case "bytea":
			conv[i] = toBytes
		case "text":
			conv[i] = toText(c.Nullable && c.Domain == "utc_time")
		case "bigint", "integer", "smallint":
			conv[i] = toInt
		default:
			return nil, fmt.Errorf("column %s.%s: target type %s is not one brain migrate knows", src.Name, name, c.Type)
		}
	}
	return conv, nil
}

func toBool(v any) (any, error) {
	switch v := v.(type) {
	case nil:
		return nil, nil
	case int64:
		if v == 0 || v == 1 {
			return v == 1, nil
		}
	}
	return nil, fmt.Errorf("want 0 or 1 for a boolean, have %v", v)
}

func toBytes(v any) (any, error) {
	switch v := v.(type) {
	case nil, []byte:
		return v, nil
	case string:
		return []byte(v), nil
	}
	return nil, fmt.Errorf("want bytes, have %T", v)
}

func toText(emptyIsNull bool) convert {
	return func(v any) (any, error) {
		var s string
		switch v := v.(type) {
		case nil:
			return nil, nil
		case string:
			s = v
		case []byte:
			s = string(v)
		default:
			return nil, fmt.Errorf("want text, have %T", v)
		}
		if emptyIsNull && s == "" {
			return nil, nil
		}
		return s, nil
	}
}

func toInt(v any) (any, error) {
	switch v := v.(type) {
	case nil, int64:
		return v, nil
	}
	return nil, fmt.Errorf("want an integer, have %T", v)
}

// converted is the postgres.RowSource of one table: the source rows, each
// value converted for its column.
type converted struct {
	rows  *sqlite.Rows
	table string
	cols  []string
	conv  []convert
	n     int
	out   []any
	err   error
}

func (c *converted) Next() bool {
	if c.err != nil || !c.rows.Next() {
		return false
	}
	c.n++
	in, err := c.rows.Values()
	if err != nil {
		c.err = err
		return false
	}
	if c.out == nil {
		c.out = make([]any, len(in))
	}
	for i, v := range in {
		if c.out[i], err = c.conv[i](v); err != nil {
			c.err = fmt.Errorf("%s.%s, row %d: %w", c.table, c.cols[i], c.n, err)
			return false
		}
	}
	return true
}

func (c *converted) Values() ([]any, error) { return c.out, nil }

func (c *converted) Err() error {
	if c.err != nil {
		return c.err
	}
	return c.rows.Err()
}
