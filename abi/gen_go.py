"""Go backend: the binding's raw cgo layer and its kind tables.

Writes, from abi/natsio.abi.json:
  bindings/go/gen_kinds.h    the result kinds (GO_TAKE_<KIND>, one per
                             token reader) and iterator kinds (GO_ITER_<TYPE>)
  bindings/go/gen_take.c     reading a token's result of each kind, an
                             iterator's ready item or its _next_async token,
                             and which result kind an iterator's token holds
  bindings/go/gen_verbs.go   one raw Go function per request-shaped verb
                             (an `X_async` with a result kind): Go arguments
                             to C (a string the header lets be NULL as a
                             *string), the `_async` call, the token awaited
                             under ctx (token.go's await), status to error

The mechanism (await, the completion queue, views of messages and entries)
and the nats.go-shaped facade that calls the raw functions are hand-written.
"""

from common import Gen, pascal, strip_prefix, verb_name

GO_SCALARS = {
    "uint64_t": ("uint64", "C.uint64_t"),
    "int64_t": ("int64", "C.int64_t"),
    "uint32_t": ("uint32", "C.uint32_t"),
    "int32_t": ("int32", "C.int32_t"),
    "size_t": ("int", "C.size_t"),
    "bool": ("bool", "C.bool"),
    "double": ("float64", "C.double"),
}


def go_ident(snake):
    """A Go local name: config_json -> configJson."""
    head, *rest = snake.split("_")
    return head + "".join(p[:1].upper() + p[1:] for p in rest)


class GoGen(Gen):
    def __init__(self, desc, overlay):
        super().__init__(desc, overlay)
        self.go = overlay.get("go", {})

    def take_kind(self, kind):
        return "GO_TAKE_" + kind.upper()

    def iter_kind(self, it):
        return "GO_ITER_" + strip_prefix(it).upper()

    def reader_of(self, ctype):
        for kind, r in self.desc["token_readers"].items():
            if r["c_type"] == ctype:
                return kind
        raise SystemExit(f"gen_go: no token reader for {ctype}")

    # -- C: kinds, takes, iterators --
    def kinds_h(self):
        out = self.banner("/*", " *", " */") + [
            "#ifndef NATSIO_GO_GEN_KINDS_H",
            "#define NATSIO_GO_GEN_KINDS_H",
            "",
            "/* What go_token_take reads: one kind per token reader of the header",
            " * (GO_TAKE_NONE: only the status), then the overlay's presentations",
            " * (a reader's result with another view), then the binding's own",
            " * (natsio_go.h) from GO_TAKE_GEN_END on. */",
            "enum {",
            "\tGO_TAKE_NONE,",
        ]
        out += [f"\t{self.take_kind(k)}," for k in sorted(self.desc["token_readers"])]
        out += [f"\t{self.take_kind(k)}," for k in sorted(self.go.get("presentations", {}))]
        out += ["\tGO_TAKE_GEN_END", "};", "", "/* The iterator kinds of the header (go_iter_next). */", "enum {"]
        out += [f"\t{self.iter_kind(it)}," for it in sorted(self.desc["iterators"])]
        out += ["};", "", "#endif", ""]
        return out

    def take_c(self):
        views = dict(self.go.get("take_views", {}))
        out = self.banner("/*", " *", " */") + ['#include "natsio_go.h"', "",
                                                 "void go_gen_take(go_take *r, natsio_token *tok, int kind) {",
                                                 "\tswitch (kind) {",
                                                 "\tcase GO_TAKE_NONE:",
                                                 "\t\tr->status = natsio_token_status(tok);",
                                                 "\t\treturn;"]
        readers = sorted(self.desc["token_readers"].items())
        for name, p in sorted(self.go.get("presentations", {}).items()):
            readers.append((name, self.desc["token_readers"][p["reader"]]))
            views[name] = p["view"]
        for kind, rd in readers:
            ctype = rd["c_type"]
            out.append(f"\tcase {self.take_kind(kind)}:")
            if rd["kind"] == "u64":
                out.append(f"\t\tr->status = {rd['reader']}(tok, &r->u64);")
            else:
                out.append(f"\t\tr->status = {rd['reader']}(tok, ({ctype} **)&r->out);")
            if kind in views:
                fn, field = views[kind]
                out.append(f"\t\tif (r->status == NATSIO_OK) {fn}(r->out, &r->{field});")
            out.append("\t\treturn;")
        out += ["\t}", "\tr->status = NATSIO_ERR_INTERNAL;", "}", ""]

        its = sorted(self.desc["iterators"])
        iter_views = self.go.get("iterators", {})
        out += ["void go_gen_iter_next(go_next *r, const void *it, int kind) {", "\tswitch (kind) {"]
        for it in its:
            item = self.desc["iterators"][it]["item"]
            out.append(f"\tcase {self.iter_kind(it)}:")
            out.append(f"\t\tr->status = {it}_next(it, NATSIO_NO_WAIT, ({item} **)&r->item);")
            read = iter_views.get(it, {}).get("read")
            if read:
                out.append(f"\t\tif (r->status == NATSIO_OK) {read[0]}(r->item, &r->{read[1]});")
            out.append("\t\tbreak;")
        out += ["\tdefault:", "\t\tr->status = NATSIO_ERR_INTERNAL;", "\t\treturn;", "\t}",
                "\tif (r->status != NATSIO_ERR_TIMEOUT) return;",
                "\t/* Nothing ready: a token for the next item. */",
                "\tswitch (kind) {"]
        for it in its:
            out += [f"\tcase {self.iter_kind(it)}:", f"\t\tr->status = {it}_next_async(it, &r->token);", "\t\tbreak;"]
        out += ["\t}", "\tif (r->status == NATSIO_OK) r->status = NATSIO_PENDING;", "}", "",
                "int go_iter_take_kind(int kind) {", "\tswitch (kind) {"]
        for it in its:
            take = iter_views.get(it, {}).get("take") or self.take_kind(self.reader_of(self.desc["iterators"][it]["item"]))
            out += [f"\tcase {self.iter_kind(it)}:", f"\t\treturn {take};"]
        out += ["\t}", "\treturn GO_TAKE_NONE;", "}", ""]
        return out

    # -- Go: raw verbs --
    # The JetStream publishes stay hand-written (natsio_go.c's
    # go_js_publish_start): a hot path whose options are filled in C from
    # one struct of scalars, with no Go allocation per publish.
    SKIP = {"natsio_js_publish_async", "natsio_js_publish_request_async"}

    def verbs(self):
        """Every request-shaped verb: an `X_async` with a result kind (an
        iterator's `_next_async` aside: go_iter_next reads those)."""
        out = []
        for f in self.desc["functions"]:
            if not f["name"].endswith("_async") or self.is_iterator_next(f) or f.get("result") is None:
                continue
            if f["name"] in self.SKIP:
                continue
            if any(a["role"] in ("callback", "user_data", "release", "other") for a in f["args"]):
                continue
            out.append(f)
        return out

    def go_result(self, kind):
        if kind == "none":
            return None, None
        if kind == "u64":
            return "uint64", "uint64(r.u64)"
        if kind == "string":
            return "string", "takeString(r)"
        return "C.go_take", "r"

    def verb_go(self, f):
        name = "raw" + pascal(verb_name(f["name"]))
        params, pre, cargs, keep = [], [], [], []
        rtype, rexpr = self.go_result(f["result"])
        zero = {"uint64": "0", "string": '""', "C.go_take": "C.go_take{}", None: None}[rtype]
        fail = f"return {zero}, err" if rtype else "return err"
        for a in f["args"]:
            n, role = go_ident(a["name"]), a["role"]
            if n in ("r", "err", "tok", "ctx"):
                n += "Arg"
            if role == "receiver":
                params.append(f"p *C.{a['type'].replace('const ', '').replace(' *', '')}")
                cargs.append("p")
            elif role == "token_out":
                cargs.append("tok")
            elif role == "string" and a.get("nullable"):
                # nil: NULL, which the C call gives its own meaning.
                params.append(f"{n} *string")
                pre += [f"var c{pascal(n)} []byte", f"if {n} != nil {{",
                        f"\tif c{pascal(n)}, err = cString(*{n}); err != nil {{", f"\t\t{fail}", "\t}", "}"]
                cargs.append(f"cPtr(c{pascal(n)})")
            elif role == "string":
                params.append(f"{n} string")
                pre += [f"c{pascal(n)}, err := cString({n})", "if err != nil {", f"\t{fail}", "}"]
                cargs.append(f"cPtr(c{pascal(n)})")
            elif role == "bytes":
                params.append(f"{n} []byte")
                pre.append(f"c{pascal(n)}, c{pascal(n)}Len := dataPtr({n})")
                cargs += [f"c{pascal(n)}", f"c{pascal(n)}Len"]
                keep.append(n)
            elif role == "strings":
                params.append(f"{n} []string")
                pre += [f"c{pascal(n)}, err := newCStrings({n})", "if err != nil {", f"\t{fail}", "}",
                        f"defer c{pascal(n)}.free()"]
                cargs += [f"c{pascal(n)}.ptr()", f"c{pascal(n)}.count()"]
            elif role == "scalar":
                gt, ct = GO_SCALARS.get(a["type"], ("int32", "C.int32_t"))
                params.append(f"{n} {gt}")
                cargs.append(f"{ct}({n})")
            elif role == "optional_scalar":
                t = a["type"].replace("const ", "").replace(" *", "")
                gt, ct = GO_SCALARS[t]
                params.append(f"{n} *{gt}")
                cargs.append(f"(*{ct})(unsafe.Pointer({n}))")
            elif role == "handle":
                params.append(f"{n} *C.{a['type'].replace('const ', '').replace(' *', '')}")
                cargs.append(n)
            elif role == "options":
                st = a["type"].replace("const ", "").replace(" *", "")
                params.append(f"{n} *C.{st}")
                cargs.append(n)
            else:
                raise SystemExit(f"gen_go: {f['name']}: role {role}")
        ret = f"({rtype}, error)" if rtype else "error"
        lines = [f"// {name} is {f['name']}, awaited under ctx.",
                 f"func {name}(ctx context.Context, {', '.join(params)}) {ret} {{"]
        if any(a.get("nullable") for a in f["args"]):
            pre.insert(0, "var err error")
        lines += [f"\t{p}" for p in pre]
        declared = any("err :=" in p or p == "var err error" for p in pre)
        got = ("_, err " + ("=" if declared else ":=")) if rtype is None else "r, err :="
        lines += [f"\t{got} await(ctx, C.{self.take_kind(f['result']) if f['result'] != 'none' else 'GO_TAKE_NONE'}, "
                  "func(tok **C.natsio_token) C.natsio_status {",
                  f"\t\treturn C.{f['name']}({', '.join(cargs)})",
                  "\t})"]
        lines += [f"\truntime.KeepAlive({k})" for k in keep]
        if rtype is None:
            lines += ["\treturn err"]
        elif rtype == "C.go_take":
            lines += ["\treturn r, err"]
        else:
            lines += ["\tif err != nil {", f"\t\treturn {zero}, err", "\t}", f"\treturn {rexpr}, nil"]
        lines.append("}")
        return "\n".join(lines)

    def verbs_go(self):
        verbs = self.verbs()
        body = [self.verb_go(f) for f in verbs]
        text = "\n\n".join(body)
        imports = ['"context"']
        if "runtime." in text:
            imports.append('"runtime"')
        if "unsafe." in text:
            imports.append('"unsafe"')
        out = ["// Code generated by abi/generate.py from abi/natsio.abi.json; DO NOT EDIT.",
               "// Change the C ABI (src/ffi) or abi/overlay.json, then run abi/generate.py.",
               "", "package natsio", "", "/*", '#include "natsio_go.h"', "*/", 'import "C"', "",
               "import (", *[f"\t{i}" for i in imports], ")", "", text, ""]
        return out

    def generate(self):
        return {
            "bindings/go/gen_kinds.h": "\n".join(self.kinds_h()),
            "bindings/go/gen_take.c": "\n".join(self.take_c()),
            "bindings/go/gen_verbs.go": "\n".join(self.verbs_go()),
        }
