"""Node backend: the addon's per-verb N-API glue and its result-kind table.

Writes, from abi/natsio.abi.json:
  bindings/node/src/gen/verbs.c    one N-API function per verb of the
                                   areas the overlay's node.areas names
                                   (each an `_async` call and a promise, a
                                   call that opens an iterator, or a getter),
                                   and their registration
  bindings/node/src/gen/results.c  how a token's result becomes a JS value,
                                   for every token reader the header has
  bindings/node/src/gen/gen.h      the result kinds (R_<KIND>) and the
                                   declarations the hand-written files use
  bindings/node/gen.d.ts           the raw module's types for those verbs

The mechanism these call (op_track, feed_wrap, the argument readers, the
converters <kind>_to_js and wrap_<handle>) is hand-written in the addon's
other files; this file only decides which of them each verb needs.
"""

from common import Gen, strip_prefix, verb_name

ARG_READERS = {
    # role -> (declaration, read, free)
    "string": ("char *{n} = NULL;", 'get_req_string(env, argv[{i}], "{what}", &{n})', "free({n});"),
    "bytes": ("const void *{n} = NULL;\n    size_t {len} = 0;", "get_bytes(env, argv[{i}], &{n}, &{len})", None),
    "strings": (
        "char **{n} = NULL;\n    size_t {count} = 0;",
        'get_string_array(env, argv[{i}], "{what}", &{n}, &{count})',
        "free_strings({n}, {count});",
    ),
}

JS_SCALAR = {
    "bool": "boolean",
    "uint64_t": "number",
    "int64_t": "number",
    "uint32_t": "number",
    "int32_t": "number",
    "size_t": "number",
    "double": "number",
}


def what(name):
    return name.replace("_", " ")


class NodeGen(Gen):
    def __init__(self, desc, overlay):
        super().__init__(desc, overlay)
        self.node = overlay.get("node", {})
        self.handles = self.node.get("handles", {})

    # -- which C result kinds there are, and how each becomes a JS value --
    def result_kinds(self):
        return ["none"] + sorted(self.desc["token_readers"])

    def result_conversion(self, kind):
        """C statements reading a token's `kind` result into napi_value v."""
        r = self.desc["token_readers"][kind]
        ctype = r["c_type"]
        reader = r["reader"]
        if kind == "u64":
            return [f"uint64_t x = 0;", f"if ((*st = {reader}(t, &x)) != NATSIO_OK) return NULL;",
                    "napi_create_double(env, (double)x, &v);"]
        if kind == "string":
            return ["char *x = NULL;", f"if ((*st = {reader}(t, &x)) != NATSIO_OK) return NULL;",
                    'napi_create_string_utf8(env, x ? x : "", NAPI_AUTO_LENGTH, &v);', "natsio_string_free(x);"]
        lines = [f"{ctype} *x = NULL;", f"if ((*st = {reader}(t, &x)) != NATSIO_OK) return NULL;"]
        short = strip_prefix(ctype)
        what = self.desc["types"].get(ctype)
        if what == "iterator":
            lines.append(f"v = feed_wrap(env, FEED_{short.upper()}, x, o->cw);")
        elif what == "handle":
            lines.append(f"v = wrap_{short}(env, x, o->cw);")
        elif what == "list":
            elem = self.list_elem(ctype)
            lines += [
                f"size_t n = {ctype}_count(x);",
                "napi_create_array_with_length(env, n, &v);",
                "for (size_t i = 0; i < n && !exception_pending(env); i++)",
                f"    set_elem(env, v, (uint32_t)i, {self.elem_to_js(elem)}(env, {ctype}_get(x, i)));",
                f"{ctype}_free(x);",
            ]
        else:
            lines += [f"v = {short}_to_js(env, x);", f"{ctype}_free(x);"]
        return lines

    def elem_to_js(self, elem):
        return "str_or_null" if elem == "char" else f"{strip_prefix(elem)}_to_js"

    def converters(self):
        """The hand-written converters the generated results call: a
        handle's wrap_<type> takes it over; a value's <type>_to_js borrows."""
        wraps, values = set(), set()
        for kind, r in self.desc["token_readers"].items():
            ctype = r["c_type"]
            what = self.desc["types"].get(ctype)
            if what == "handle":
                wraps.add(ctype)
            elif what == "list":
                elem = self.list_elem(ctype)
                if elem != "char":
                    values.add(elem)
            elif what == "value":
                values.add(ctype)
        out = [f"napi_value wrap_{strip_prefix(t)}(napi_env env, {t} *x, struct client_wrap *cw);" for t in sorted(wraps)]
        out += [f"napi_value {strip_prefix(t)}_to_js(napi_env env, const {t} *x);" for t in sorted(values)]
        return out

    def list_elem(self, ctype):
        get = self.funcs[ctype + "_get"]
        return get["ret"].replace("const ", "").replace(" *", "").strip()

    # -- verbs --
    def verbs(self):
        """The exports the overlay's areas give to the generated layer."""
        areas = self.node.get("areas", [])
        hand = set(self.overlay.get("hand_written", {}).get("node", []))
        out = []
        for f in self.desc["functions"]:
            if not any(f["name"].startswith(p) for p in areas) or f["name"] in hand:
                continue
            if f["handle"] in self.desc["iterators"] or f["name"].endswith("_next_async"):
                continue  # iterators are the feed mechanism's
            shape = self.shape(f)
            if shape:
                out.append((f, shape))
        return out

    def shape(self, f):
        args = f["args"]
        if not args or args[0]["role"] != "receiver" or f["handle"] not in self.handles:
            return None
        if any(a["role"] in ("callback", "user_data", "release", "other", "handle") for a in args):
            return None
        if f.get("result") is not None and any(a["role"] == "token_out" for a in args):
            return "promise"
        outs = [a for a in args if a["role"] == "out"]
        if len(outs) == 1 and outs[0]["out_type"] in self.desc["iterators"] and not f.get("async"):
            return "iterator"
        if not outs and f["ret"] == "const char *" and len(args) == 1:
            return "getter"
        return None

    def verb_fn(self, f, shape):
        name = verb_name(f["name"])
        args = f["args"]
        jsh, field = self.handles[f["handle"]]
        ins = [a for a in args if a["role"] not in ("receiver", "token_out", "out")]
        decls, reads, frees, call = [], [], [], []
        for i, a in enumerate(ins, start=1):
            n, role = a["name"], a["role"]
            if role in ARG_READERS:
                d, r, fr = ARG_READERS[role]
                fmt = dict(n=n, i=i, what=what(n), len=a.get("len"), count=a.get("count"))
                decls.append(d.format(**fmt))
                reads.append(r.format(**fmt))
                if fr:
                    frees.append(fr.format(**fmt))
            elif role == "scalar":
                t = a["type"]
                if t == "uint64_t":
                    decls.append(f"uint64_t {n} = 0;")
                    reads.append(f'get_required_u64(env, argv[{i}], "{what(n)}", &{n})')
                elif t == "bool":
                    decls.append(f"bool {n} = false;")
                    reads.append(f"(napi_get_value_bool(env, argv[{i}], &{n}), true)")
                else:
                    decls.append(f"{t} {n} = 0;")
                    reads.append(f"(({n} = ({t})get_i64(env, argv[{i}], 0)), !exception_pending(env))")
            elif role == "optional_scalar":
                t = a["type"].replace("const ", "").replace(" *", "")
                decls.append(f"{t} {n}_value = 0;\n    bool has_{n} = false;")
                reads.append(f'get_u64(env, argv[{i}], "{what(n)}", &{n}_value, &has_{n})')
            elif role == "options":
                st = a["type"].replace("const ", "").replace(" *", "")
                decls.append(f"{st} {n};\n    {st}_init(&{n});")
                reads.append(f"read_{strip_prefix(st)}(env, argv[{i}], &{n})")
            else:
                raise SystemExit(f"gen_node: {f['name']}: no reader for role {role}")
        cargs = []
        for a in args:
            r = a["role"]
            if r == "receiver":
                cargs.append(f"h->{field}")
            elif r == "token_out":
                cargs.append("&tok")
            elif r == "out":
                cargs.append("&out")
            elif r == "bytes":
                cargs += [a["name"], a["len"]]
            elif r == "strings":
                cargs += [f"(const char *const *){a['name']}", a["count"]]
            elif r == "optional_scalar":
                cargs.append(f"has_{a['name']} ? &{a['name']}_value : NULL")
            elif r == "options":
                cargs.append(f"&{a['name']}")
            else:
                cargs.append(a["name"])
        argc = 1 + len(ins)
        body = [f"napi_value {name}_js(napi_env env, napi_callback_info info) {{",
                f"    ARGS({argc});",
                f"    js_handle *h = get_jsh(env, argv[0], {jsh});",
                "    if (!h) return NULL;"]
        if shape == "getter":
            body += [f"    return str_or_null(env, {f['name']}(h->{field}));", "}"]
            return "\n".join(body)
        body.append("    napi_value ret = NULL;")
        body += [f"    {d}" for d in decls]
        if reads:
            body.append("    if (" + "\n        && ".join(reads) + ") {")
        else:
            body.append("    {")
        if shape == "promise":
            kind = f["result"]
            keep = "h->cw" if self.result_keeps_client(kind) else "NULL"
            body += ["        natsio_token *tok = NULL;",
                     f"        int32_t st = {f['name']}({', '.join(cargs)});",
                     f"        ret = op_track(env, st, tok, R_{kind.upper()}, h, {keep});"]
        else:  # iterator
            it = [a for a in args if a["role"] == "out"][0]["out_type"]
            body += [f"        {it} *out = NULL;",
                     f"        if (!throw_if_failed(env, {f['name']}({', '.join(cargs)})))",
                     f"            ret = feed_wrap(env, FEED_{strip_prefix(it).upper()}, out, h->cw);"]
        body.append("    }")
        body += [f"    {fr}" for fr in frees]
        body += ["    return ret;", "}"]
        return "\n".join(body)

    def result_keeps_client(self, kind):
        if kind == "none":
            return False
        ctype = self.desc["token_readers"][kind]["c_type"]
        return self.desc["types"].get(ctype) in ("handle", "iterator")

    def options_readers(self, verbs):
        """read_<struct>(env, obj, &opts) for each options struct a verb
        takes: every field from the property of the same name (the raw
        module speaks C: snake_case, as the struct has it)."""
        out = []
        structs = sorted({a["type"].replace("const ", "").replace(" *", "")
                          for f, _ in verbs for a in f["args"] if a["role"] == "options"})
        for st in structs:
            lines = [f"static bool read_{strip_prefix(st)}(napi_env env, napi_value obj, {st} *o) {{",
                     "    if (!is_object(env, obj)) return !exception_pending(env);"]
            for fld in self.desc["structs"][st]:
                n, t = fld["name"], fld["type"]
                if n == "version":
                    continue
                p = n
                if t == "bool":
                    lines.append(f'    o->{n} = opt_flag(env, obj, "{p}");')
                elif t == "uint64_t":
                    lines.append(f"    {{\n        bool present = false;\n"
                                 f'        if (!get_u64(env, prop(env, obj, "{p}"), "{p}", &o->{n}, &present)) return false;\n    }}')
                elif t in ("int64_t", "int32_t", "uint32_t"):
                    lines.append(f'    o->{n} = ({t})get_i64(env, prop(env, obj, "{p}"), 0);')
                else:
                    raise SystemExit(f"gen_node: {st}.{n}: no reader for {t}")
            lines += ["    return !exception_pending(env);", "}"]
            out.append("\n".join(lines))
        return out

    def generate(self):
        verbs = self.verbs()
        kinds = self.result_kinds()
        header = self.banner("/*", " *", " */") + [
            "#ifndef NATSIO_NODE_GEN_H",
            "#define NATSIO_NODE_GEN_H",
            "",
            "/* How a completed token's result becomes a JS value: one kind per",
            " * token reader of the header (R_NONE: undefined), then the addon's own",
            " * presentations (internal.h) from R_GEN_END on. */",
            "enum {",
        ]
        header += [f"    R_{k.upper()}," for k in kinds]
        header += ["    R_GEN_END", "};", "",
                   "/* The iterator kinds of the header, each a feed (feed.c). */",
                   "enum {"]
        header += [f"    FEED_{strip_prefix(it).upper()}{' = 1' if i == 0 else ''},"
                   for i, it in enumerate(sorted(self.desc["iterators"]))]
        header += ["};", "",
                   "struct op;",
                   "struct client_wrap;",
                   "/* What each result kind is converted with, hand-written in the addon:",
                   " * wrap_<handle> takes the handle over, <value>_to_js borrows. */"]
        header += self.converters()
        header += ["",
                   "/* The JS value of a generated kind's result; NULL with *st set on",
                   " * failure (or with a pending exception). */",
                   "napi_value gen_result_value(napi_env env, struct op *o, int32_t *st);",
                   "/* Adds the generated verbs to the module's exports. */",
                   "void gen_register_verbs(napi_env env, napi_value exports);",
                   "", "#endif", ""]
        results = self.banner("/*", " *", " */") + ['#include "../internal.h"', "",
                                                     "napi_value gen_result_value(napi_env env, op *o, int32_t *st) {",
                                                     "    natsio_token *t = o->token;",
                                                     "    napi_value v = NULL;",
                                                     "    switch (o->result) {",
                                                     "    case R_NONE:",
                                                     "        return undefined_value(env);"]
        for k in kinds[1:]:
            results.append(f"    case R_{k.upper()}: {{")
            results += [f"        {line}" for line in self.result_conversion(k)]
            results += ["        return v;", "    }"]
        results += ["    }", "    *st = NATSIO_ERR_INTERNAL;", "    return NULL;", "}", ""]
        verbs_c = self.banner("/*", " *", " */") + ['#include "../internal.h"', "", "#include <stdlib.h>", ""]
        verbs_c += [s + "\n" for s in self.options_readers(verbs)]
        for f, shape in verbs:
            verbs_c.append(self.c_doc(f, shape))
            verbs_c.append("static " + self.verb_fn(f, shape) + "\n")
        verbs_c += ["void gen_register_verbs(napi_env env, napi_value exports) {",
                    "    napi_property_descriptor props[] = {"]
        verbs_c += [f'        {{"{verb_name(f["name"])}", NULL, {verb_name(f["name"])}_js, NULL, NULL, NULL, napi_default, NULL}},'
                    for f, _ in verbs]
        verbs_c += ["    };",
                    "    napi_define_properties(env, exports, sizeof props / sizeof props[0], props);",
                    "}", ""]
        dts = self.banner("/*", " *", " */") + [
            "/** The raw addon's generated verbs: each the C call of the same name",
            " * (natsio_<name>, its _async form for a promise). Handles are opaque. */",
            "export interface GeneratedVerbs {"]
        for f, shape in verbs:
            dts.append("  " + self.ts_sig(f, shape))
        dts += ["}", ""]
        return {
            "bindings/node/src/gen/gen.h": "\n".join(header),
            "bindings/node/src/gen/results.c": "\n".join(results),
            "bindings/node/src/gen/verbs.c": "\n".join(verbs_c),
            "bindings/node/src/gen/verbs.d.ts": "\n".join(dts),
        }

    def c_doc(self, f, shape):
        ins = [a["name"] for a in f["args"] if a["role"] not in ("token_out", "out")]
        ret = {"promise": f"Promise<{f.get('result')}>", "iterator": "feed", "getter": "string"}[shape]
        return f"/* {verb_name(f['name'])}({', '.join(ins)}) -> {ret}: {f['name']} */"

    def ts_sig(self, f, shape):
        params = []
        for a in f["args"]:
            r = a["role"]
            if r in ("token_out", "out"):
                continue
            t = {"receiver": "object", "string": "string", "bytes": "Uint8Array | string",
                 "strings": "string[] | null", "optional_scalar": "number | undefined",
                 "options": "object | undefined"}.get(r) or JS_SCALAR.get(a["type"], "number")
            params.append(f"{a['name']}: {t}")
        if shape == "promise":
            ret = f"Promise<{self.ts_result(f['result'])}>"
        elif shape == "iterator":
            ret = "object"
        else:
            ret = "string | null"
        return f"{verb_name(f['name'])}({', '.join(params)}): {ret};"

    def ts_result(self, kind):
        if kind == "none":
            return "void"
        if kind == "u64":
            return "number"
        if kind == "string":
            return "string"
        if kind == "string_list":
            return "string[]"
        return "unknown"
