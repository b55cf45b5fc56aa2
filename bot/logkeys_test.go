package bot

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// slogLevels are the logger methods whose arguments after the message
// alternate key, value.
var slogLevels = map[string]bool{
	"Debug": true, "Info": true, "Warn": true, "Error": true,
	"DebugContext": true, "InfoContext": true, "WarnContext": true, "ErrorContext": true,
}

// slogAttrs are slog's attribute constructors, whose first argument is a
// key.
var slogAttrs = map[string]bool{
	"String": true, "Int": true, "Int64": true, "Uint64": true, "Float64": true,
	"Bool": true, "Time": true, "Duration": true, "Any": true, "Group": true,
}

// TestLogKeys: log attribute keys come from tools' one set (tools/logkeys.go):
// no non-test file passes a literal key to a logger or to slog's attribute
// constructors, and none declares a local alias of a key (a constant named
// log… or key… set to a literal or to a tools.Log… key).
func TestLogKeys(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	checked := 0
	err = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "node_modules" || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		checked++
		rel, _ := filepath.Rel(root, path)
		if rel == filepath.Join("tools", "logkeys.go") {
			return nil
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.ValueSpec:
				for i, name := range n.Names {
					if i < len(n.Values) && isKeyAlias(name.Name, n.Values[i]) {
						t.Errorf("%s: %s is a local log key; use tools' key", fset.Position(name.Pos()), name.Name)
					}
				}
			case *ast.CallExpr:
				for _, key := range literalKeys(n) {
					t.Errorf("%s: literal log key %s; use tools' key (tools/logkeys.go)", fset.Position(key.Pos()), key.Value)
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 100 {
		t.Fatalf("checked %d files; is the module root %s?", checked, root)
	}
}

// isKeyAlias reports whether a constant named name with value v restates
// a log key.
func isKeyAlias(name string, v ast.Expr) bool {
	if !(strings.HasPrefix(name, "log") || strings.HasPrefix(name, "key")) || len(name) < 4 || strings.ToUpper(name[3:4]) != name[3:4] {
		return false
	}
	switch v := v.(type) {
	case *ast.SelectorExpr:
		pkg, ok := v.X.(*ast.Ident)
		return ok && pkg.Name == "tools" && strings.HasPrefix(v.Sel.Name, "Log")
	case *ast.BasicLit:
		s, err := strconv.Unquote(v.Value)
		return v.Kind == token.STRING && err == nil && !strings.ContainsAny(s, " :") // a key, not a message prefix
	}
	return false
}

// literalKeys returns the string literals call passes as log keys.
func literalKeys(call *ast.CallExpr) []*ast.BasicLit {
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok {
		return nil
	}
	var keys []ast.Expr
	switch {
	case slogAttrs[sel.Sel.Name] && isIdent(sel.X, "slog"):
		if len(call.Args) > 0 {
			keys = call.Args[:1]
		}
	case slogLevels[sel.Sel.Name] && isLogger(sel.X):
		args := call.Args
		if strings.HasSuffix(sel.Sel.Name, "Context") && len(args) > 0 {
			args = args[1:]
		}
		for i := 1; i < len(args); i += 2 {
			keys = append(keys, args[i])
		}
	}
	var lits []*ast.BasicLit
	for _, k := range keys {
		if lit, ok := k.(*ast.BasicLit); ok && lit.Kind == token.STRING {
			lits = append(lits, lit)
		}
	}
	return lits
}

func isIdent(e ast.Expr, name string) bool {
	id, ok := e.(*ast.Ident)
	return ok && id.Name == name
}

// isLogger reports whether e names a logger: slog, or a variable or field
// called log or logger.
func isLogger(e ast.Expr) bool {
	var name string
	switch e := e.(type) {
	case *ast.Ident:
		name = e.Name
	case *ast.SelectorExpr:
		name = e.Sel.Name
	}
	switch strings.ToLower(name) {
	case "slog", "log", "logger":
		return true
	}
	return false
}
