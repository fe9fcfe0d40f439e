package interop

// The facades' surface against nats.go's: every exported name of nats.go's
// nats, jetstream and micro packages (functions, types, constants,
// variables, methods, interface methods, struct fields) is referenced from
// a generated package that imports the facades in their place, and the
// compiler says which do not resolve. A program written for nats.go builds
// on libnatsio only if each name it uses resolves, so the names that do
// not are listed, each with its reason, in testdata/nats-go-surface-gaps.txt.
// The test fails when a name is missing but not listed (a gap nobody chose)
// and when a listed name resolves (the list is out of date), so the list is
// always the exact answer to "what of nats.go can a program not use".
//
// Only names are checked, not signatures: the corpus (tests/corpus/go) runs
// whole programs for that.

import (
	"bufio"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// surfacePackages are nats.go's packages (relative to its module) and the
// facades' import paths that stand in for them.
var surfacePackages = []struct{ natsDir, alias, facade string }{
	{".", "nats", "github.com/libnatsio/natsio/bindings/go/nats"},
	{"jetstream", "jetstream", "github.com/libnatsio/natsio/bindings/go/nats/jetstream"},
	{"micro", "micro", "github.com/libnatsio/natsio/bindings/go/nats/micro"},
}

// surfaceRef is one exported name and the Go statement that uses it.
type surfaceRef struct {
	key  string // "nats.Conn.Flush", "jetstream.ErrKeyExists"
	stmt string
}

func TestFacadeSurfaceMatchesNatsGo(t *testing.T) {
	natsRoot := goListModuleDir(t, "github.com/nats-io/nats.go")
	facadeRoot, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}

	var refs []surfaceRef
	for _, p := range surfacePackages {
		refs = append(refs, exportedRefs(t, filepath.Join(natsRoot, p.natsDir), p.alias)...)
	}
	missing := unresolvedRefs(t, refs, facadeRoot)
	listed := readSurfaceGaps(t, "testdata/nats-go-surface-gaps.txt")

	var unlisted, stale []string
	for key := range missing {
		if _, ok := listed[key]; !ok {
			unlisted = append(unlisted, key)
		}
	}
	for key := range listed {
		if !missing[key] {
			stale = append(stale, key)
		}
	}
	sort.Strings(unlisted)
	sort.Strings(stale)
	t.Logf("nats.go names checked: %d, resolved by the facades: %d, listed as gaps: %d",
		len(refs), len(refs)-len(missing), len(listed))
	if len(unlisted) > 0 {
		t.Errorf("%d nats.go names do not resolve in the facades and are not in testdata/nats-go-surface-gaps.txt (add them, or a reason they may stay missing):\n%s",
			len(unlisted), strings.Join(unlisted, "\n"))
	}
	if len(stale) > 0 {
		t.Errorf("%d names in testdata/nats-go-surface-gaps.txt resolve now; remove them:\n%s",
			len(stale), strings.Join(stale, "\n"))
	}
}

func goListModuleDir(t *testing.T, module string) string {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", module).Output()
	if err != nil {
		t.Fatalf("go list -m %s: %v", module, err)
	}
	dir := strings.TrimSpace(string(out))
	if dir == "" {
		t.Fatalf("go list -m %s: module not downloaded", module)
	}
	return dir
}

// exportedRefs lists a package's exported names, each with a statement
// that uses it through alias. Generic functions and types are skipped (a
// reference needs type arguments); names declared in files for other
// systems are kept (nats.go has few, and they are the same names).
func exportedRefs(t *testing.T, dir, alias string) []surfaceRef {
	t.Helper()
	fset := token.NewFileSet()
	notTest := func(fi os.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }
	pkgs, err := parser.ParseDir(fset, dir, notTest, parser.SkipObjectResolution)
	if err != nil {
		t.Fatalf("parse %s: %v", dir, err)
	}
	var files []*ast.File
	for name, p := range pkgs {
		if strings.HasSuffix(name, "_test") {
			continue
		}
		for _, f := range p.Files {
			files = append(files, f)
		}
	}
	generic := map[string]bool{}
	for _, f := range files {
		for _, decl := range f.Decls {
			if g, ok := decl.(*ast.GenDecl); ok {
				for _, spec := range g.Specs {
					if ts, ok := spec.(*ast.TypeSpec); ok && ts.TypeParams != nil {
						generic[ts.Name.Name] = true
					}
				}
			}
		}
	}

	seen := map[string]surfaceRef{}
	add := func(key, stmt string) { seen[key] = surfaceRef{key: key, stmt: stmt} }
	member := func(typ, name string) {
		// A parameter is addressable, so pointer-receiver methods resolve
		// on it too, whether the facade's type is a struct or an interface.
		add(alias+"."+typ+"."+name, fmt.Sprintf("_ = func(x %s.%s) { _ = x.%s }", alias, typ, name))
	}
	for _, f := range files {
		for _, decl := range f.Decls {
			switch d := decl.(type) {
			case *ast.FuncDecl:
				if !d.Name.IsExported() {
					continue
				}
				if d.Recv == nil {
					if d.Type.TypeParams == nil {
						add(alias+"."+d.Name.Name, fmt.Sprintf("_ = %s.%s", alias, d.Name.Name))
					}
					continue
				}
				recv := d.Recv.List[0].Type
				if star, ok := recv.(*ast.StarExpr); ok {
					recv = star.X
				}
				if id, ok := recv.(*ast.Ident); ok && id.IsExported() && !generic[id.Name] {
					member(id.Name, d.Name.Name)
				}
			case *ast.GenDecl:
				for _, spec := range d.Specs {
					switch s := spec.(type) {
					case *ast.ValueSpec:
						for _, n := range s.Names {
							if n.IsExported() {
								add(alias+"."+n.Name, fmt.Sprintf("_ = %s.%s", alias, n.Name))
							}
						}
					case *ast.TypeSpec:
						if !s.Name.IsExported() || s.TypeParams != nil {
							continue
						}
						add(alias+"."+s.Name.Name+" (type)", fmt.Sprintf("var _ *%s.%s", alias, s.Name.Name))
						var fields *ast.FieldList
						switch tt := s.Type.(type) {
						case *ast.InterfaceType:
							fields = tt.Methods
						case *ast.StructType:
							fields = tt.Fields
						}
						if fields == nil {
							continue
						}
						for _, field := range fields.List {
							for _, n := range field.Names {
								if n.IsExported() {
									member(s.Name.Name, n.Name)
								}
							}
						}
					}
				}
			}
		}
	}
	refs := make([]surfaceRef, 0, len(seen))
	for _, r := range seen {
		refs = append(refs, r)
	}
	sort.Slice(refs, func(i, j int) bool { return refs[i].key < refs[j].key })
	return refs
}

var errorLine = regexp.MustCompile(`^\./refs\.go:(\d+):`)

// unresolvedRefs compiles one statement per line in a module that imports
// the facades and returns the keys of the lines the compiler rejects.
func unresolvedRefs(t *testing.T, refs []surfaceRef, facadeRoot string) map[string]bool {
	t.Helper()
	dir := t.TempDir()
	gomod := fmt.Sprintf("module surfacecheck\n\ngo 1.24\n\nrequire github.com/libnatsio/natsio/bindings/go v0.0.0\n\nreplace github.com/libnatsio/natsio/bindings/go => %s\n", facadeRoot)
	var lines []string
	lines = append(lines, "package surfacecheck", "", "import (")
	for _, p := range surfacePackages {
		lines = append(lines, fmt.Sprintf("\t%s %q", p.alias, p.facade))
	}
	lines = append(lines, ")", "", "func use() {")
	lineOf := map[int]string{} // 1-based line number -> key
	for _, r := range refs {
		lines = append(lines, "\t"+r.stmt)
		lineOf[len(lines)] = r.key
	}
	lines = append(lines, "}", "")
	for name, body := range map[string]string{"go.mod": gomod, "refs.go": strings.Join(lines, "\n")} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("go", "build", "-gcflags=-e", ".")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	missing := map[string]bool{}
	if err == nil {
		return missing
	}
	for _, line := range strings.Split(string(out), "\n") {
		m := errorLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		n, _ := strconv.Atoi(m[1])
		key, ok := lineOf[n]
		if !ok {
			t.Fatalf("compiler error outside the references (the generated package is wrong):\n%s", out)
		}
		missing[key] = true
	}
	if len(missing) == 0 {
		t.Fatalf("go build failed without naming a reference:\n%s", out)
	}
	return missing
}

// readSurfaceGaps reads "key  # reason" lines; blank lines and lines that
// start with '#' are headings and comments. Every key needs a reason.
func readSurfaceGaps(t *testing.T, path string) map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gaps := map[string]string{}
	scanner := bufio.NewScanner(f)
	for n := 1; scanner.Scan(); n++ {
		line := strings.TrimSpace(scanner.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		key, reason, _ := strings.Cut(line, "#")
		key, reason = strings.TrimSpace(key), strings.TrimSpace(reason)
		if reason == "" {
			t.Errorf("%s:%d: %q has no reason", path, n, key)
		}
		gaps[key] = reason
	}
	if err := scanner.Err(); err != nil {
		t.Fatal(err)
	}
	return gaps
}
