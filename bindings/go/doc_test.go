package natsio_test

// The package's documentation is checked like code: every exported
// identifier godoc shows must have a doc comment, so an undocumented one
// cannot land.

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// docReport is what checkDocs finds in a set of files.
type docReport struct {
	exported   int      // exported identifiers checked
	offenders  []string // "file:line name: problem"
	packageDoc []string // files holding a package doc comment
}

// TestEveryExportedIdentifierIsDocumented parses the package's non-test
// files (build-tagged ones included, whatever the tags) and fails, listing
// each offender as file:line name, when an exported identifier godoc shows
// has no doc comment, or has one that does not start with its name
// (golint's rule; "A", "An" or "The" may come first for a type).
//
// Checked: package-level funcs; methods of exported types; types; consts
// and vars (one in a parenthesized group with a doc comment counts as
// documented, whatever its own comment says); exported fields of exported
// struct types, and of the struct types written in them; methods of
// exported interfaces. A field or interface method is documented by a
// comment above it or at the end of its line. Exactly one file must hold
// the package doc comment, starting "Package natsio ".
func TestEveryExportedIdentifierIsDocumented(t *testing.T) {
	names, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	names = slices.DeleteFunc(names, func(n string) bool { return strings.HasSuffix(n, "_test.go") })
	// The working directory is the package's: these must be among them,
	// build-tagged files included.
	for _, want := range []string{"natsio.go", "conn.go", "link_static.go", "link_shared.go", "nocgo.go"} {
		if !slices.Contains(names, want) {
			t.Fatalf("%s not among the package's files %v (working directory not the package's?)", want, names)
		}
	}
	fset := token.NewFileSet()
	var files []*ast.File
	for _, name := range names {
		// ParseFile ignores build constraints: every file is checked.
		f, err := parser.ParseFile(fset, name, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		if f.Name.Name != "natsio" {
			t.Fatalf("%s: package %s, want natsio", name, f.Name.Name)
		}
		files = append(files, f)
	}
	r := checkDocs(fset, files)
	t.Logf("%d files, %d exported identifiers checked", len(files), r.exported)
	// A checker that finds nothing to check would pass anything.
	if r.exported < 100 {
		t.Errorf("only %d exported identifiers found; the checker is not looking at the package", r.exported)
	}
	for _, o := range r.offenders {
		t.Errorf("%s", o)
	}
	if len(r.offenders) > 0 {
		t.Errorf("%d exported identifiers lack a proper doc comment", len(r.offenders))
	}
	switch len(r.packageDoc) {
	case 1:
	case 0:
		t.Errorf("no file has a package doc comment (// Package natsio ...)")
	default:
		t.Errorf("package doc comment in several files: %v; keep one", r.packageDoc)
	}
}

// TestDocCheckerFindsOffenders runs the checker on a source with a known
// set of offenders, so that TestEveryExportedIdentifierIsDocumented cannot
// pass because the checker misses them.
func TestDocCheckerFindsOffenders(t *testing.T) {
	const src = `// Package natsio is documented.
package natsio

func Undocumented() {}

// Documented does.
func Documented() {}

// Wrongly starts with another word.
func Wrong() {}

func unexported() {}

// T is a type.
type T struct {
	A int // A is documented at the end of its line.
	// B is documented above.
	B int
	C int
	c int
	D struct {
		E int
	} // D is documented, its field E not.
}

type U int

// A V is fine: an article may come first for a type.
type V int

type hidden struct{ X int }

func (hidden) Method() {}

func (T) M() {}

// N does.
func (*T) N() {}

// I is an interface.
type I interface {
	// F is documented.
	F()
	G()
	g()
}

// Group doc covers the group.
const (
	// Section comments in a documented group are free-form.
	K1 = 1
	K2 = 2
)

const (
	// L1 is documented.
	L1 = 1
	L2 = 2
	l3 = 3
)

var W = 1

// X is documented.
var X, Y = 1, 2

func (U) String() string { return "" }
`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "offenders.go", src, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	r := checkDocs(fset, []*ast.File{f})
	var got []string
	for _, o := range r.offenders {
		// "offenders.go:4 Undocumented: no doc comment" -> "Undocumented"
		_, rest, _ := strings.Cut(o, " ")
		name, _, _ := strings.Cut(rest, ":")
		got = append(got, name)
	}
	want := []string{"Undocumented", "Wrong", "T.C", "T.D.E", "U", "T.M", "I.G", "L2", "W", "U.String"}
	if !slices.Equal(got, want) {
		t.Errorf("offenders %q, want %q\n%s", got, want, strings.Join(r.offenders, "\n"))
	}
	// Undocumented, Documented, Wrong; T, A, B, C, D, E; U, V; M, N; I, F,
	// G; K1, K2; L1, L2; W; X, Y; U.String.
	if r.exported != 24 {
		t.Errorf("%d exported identifiers checked, want 24", r.exported)
	}
	if !slices.Equal(r.packageDoc, []string{"offenders.go"}) {
		t.Errorf("package doc found in %v, want offenders.go", r.packageDoc)
	}
}

// checkDocs checks the doc comments of the exported identifiers of files,
// which make one package.
func checkDocs(fset *token.FileSet, files []*ast.File) docReport {
	var r docReport
	report := func(pos token.Pos, name, problem string) {
		p := fset.Position(pos)
		r.offenders = append(r.offenders, fmt.Sprintf("%s:%d %s: %s", filepath.Base(p.Filename), p.Line, name, problem))
	}
	// needDoc checks a doc comment that must exist and start with name
	// (after an article, when articles is set).
	needDoc := func(pos token.Pos, name, first string, doc *ast.CommentGroup, articles bool) {
		r.exported++
		text := strings.TrimSpace(doc.Text()) // "" for nil, and for only directives
		if text == "" {
			report(pos, name, "no doc comment")
			return
		}
		if articles {
			for _, a := range []string{"A ", "An ", "The "} {
				if after, ok := strings.CutPrefix(text, a); ok {
					text = after
					break
				}
			}
		}
		if !startsWithName(text, first) {
			report(pos, name, fmt.Sprintf("doc comment should start with %q", first))
		}
	}
	// needComment checks a field or interface method: a doc comment above
	// or a line comment after it.
	needComment := func(pos token.Pos, name string, doc, line *ast.CommentGroup) {
		r.exported++
		if strings.TrimSpace(doc.Text()) == "" && strings.TrimSpace(line.Text()) == "" {
			report(pos, name, "no comment")
		}
	}
	// checkFields checks the exported fields of a struct type, and of the
	// struct types written in them.
	var checkFields func(prefix string, st *ast.StructType)
	checkFields = func(prefix string, st *ast.StructType) {
		for _, fld := range st.Fields.List {
			names := fieldNames(fld)
			for _, n := range names {
				if !ast.IsExported(n) {
					continue
				}
				needComment(fld.Pos(), prefix+"."+n, fld.Doc, fld.Comment)
				if inner, ok := fld.Type.(*ast.StructType); ok {
					checkFields(prefix+"."+n, inner)
				}
			}
		}
	}

	// Methods are checked only on exported types, wherever declared.
	exportedTypes := map[string]bool{}
	for _, f := range files {
		for _, d := range f.Decls {
			if gd, ok := d.(*ast.GenDecl); ok && gd.Tok == token.TYPE {
				for _, s := range gd.Specs {
					if ts := s.(*ast.TypeSpec); ts.Name.IsExported() {
						exportedTypes[ts.Name.Name] = true
					}
				}
			}
		}
	}

	for _, f := range files {
		if f.Doc != nil {
			name := filepath.Base(fset.Position(f.Package).Filename)
			r.packageDoc = append(r.packageDoc, name)
			if !strings.HasPrefix(f.Doc.Text(), "Package "+f.Name.Name+" ") {
				report(f.Package, "package "+f.Name.Name, fmt.Sprintf("package doc comment should start with %q", "Package "+f.Name.Name+" "))
			}
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if !d.Name.IsExported() {
					continue
				}
				if d.Recv == nil {
					needDoc(d.Name.Pos(), d.Name.Name, d.Name.Name, d.Doc, false)
					continue
				}
				recv := receiverType(d.Recv.List[0].Type)
				if !exportedTypes[recv] {
					continue
				}
				needDoc(d.Name.Pos(), recv+"."+d.Name.Name, d.Name.Name, d.Doc, false)

			case *ast.GenDecl:
				grouped := d.Lparen.IsValid()
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						if !s.Name.IsExported() {
							continue
						}
						doc := s.Doc
						if doc == nil && !grouped {
							doc = d.Doc
						}
						needDoc(s.Name.Pos(), s.Name.Name, s.Name.Name, doc, true)
						switch typ := s.Type.(type) {
						case *ast.StructType:
							checkFields(s.Name.Name, typ)
						case *ast.InterfaceType:
							for _, m := range typ.Methods.List {
								for _, n := range m.Names { // none for an embedded interface
									if n.IsExported() {
										needComment(n.Pos(), s.Name.Name+"."+n.Name, m.Doc, m.Comment)
									}
								}
							}
						}

					case *ast.ValueSpec:
						var exported []*ast.Ident
						for _, n := range s.Names {
							if n.IsExported() {
								exported = append(exported, n)
							}
						}
						if len(exported) == 0 {
							continue
						}
						switch {
						case grouped && d.Doc != nil:
							// Documented by its group's comment, which may
							// be split in sections by the specs' own
							// comments (golint does not check their form).
							r.exported += len(exported)
						case s.Doc == nil && (grouped || d.Doc == nil):
							for _, n := range exported {
								r.exported++
								report(n.Pos(), n.Name, "no doc comment (nor a doc comment on its group)")
							}
						default:
							doc := s.Doc
							if doc == nil {
								doc = d.Doc
							}
							// A doc comment of several names starts with the first.
							needDoc(exported[0].Pos(), exported[0].Name, s.Names[0].Name, doc, false)
							r.exported += len(exported) - 1
						}
					}
				}
			}
		}
	}
	return r
}

// startsWithName reports whether text starts with the word name: followed
// by a space, punctuation or nothing.
func startsWithName(text, name string) bool {
	rest, ok := strings.CutPrefix(text, name)
	if !ok {
		return false
	}
	return rest == "" || strings.ContainsRune(" \n\t.,:;'", rune(rest[0]))
}

// fieldNames are a field's names, or its type's name when embedded.
func fieldNames(fld *ast.Field) []string {
	if len(fld.Names) > 0 {
		names := make([]string, len(fld.Names))
		for i, n := range fld.Names {
			names[i] = n.Name
		}
		return names
	}
	return []string{receiverType(fld.Type)}
}

// receiverType is the name of a receiver's (or an embedded field's) type:
// T for T, *T, T[P], *pkg.T.
func receiverType(e ast.Expr) string {
	for {
		switch x := e.(type) {
		case *ast.StarExpr:
			e = x.X
		case *ast.IndexExpr:
			e = x.X
		case *ast.IndexListExpr:
			e = x.X
		case *ast.ParenExpr:
			e = x.X
		case *ast.SelectorExpr:
			return x.Sel.Name
		case *ast.Ident:
			return x.Name
		default:
			return ""
		}
	}
}
