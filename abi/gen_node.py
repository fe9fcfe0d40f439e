"""Node backend: the addon's per-verb N-API glue and its kind tables.

Writes, from abi/natsio.abi.json:
  bindings/node/src/gen/verbs.c    one N-API function per verb of the
                                   areas the overlay's node.areas names,
                                   registered under its C name, by shape:
                                   promise (an `_async` call), iterator (a
                                   call that opens one: a feed), open (a
                                   handle made without I/O), call (a status
                                   and nothing else), query (one owned
                                   output read at once), getter and scalar
                                   (plain getters)
  bindings/node/src/gen/results.c  how a token's result becomes a JS value,
                                   for every token reader the header has
  bindings/node/src/gen/feeds.c    per iterator kind, the iterator
                                   contract's calls and how its items are
                                   delivered (FEED_KINDS)
  bindings/node/src/gen/gen.h      the result kinds (R_<KIND>), the
                                   iterator kinds (FEED_<ITERATOR>) and the
                                   declarations the hand-written files use
  bindings/node/src/gen/verbs.d.ts the raw module's types for those verbs

The mechanism these call (op_track, feed_wrap, the argument readers, the
receivers' accessors, the converters <kind>_to_js and wrap_<handle>, the
feed_on_<item> callbacks and feed_items_<presentation>) is hand-written in
the addon's other files; this file only decides which of them each verb
needs.
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


# The JetStream publishes keep their glue in js.c: hand-tuned as the core
# publish is (one options struct filled from the flat object index.js
# builds; the asynchronous one written with the turn's others).
SKIP = {"natsio_js_publish", "natsio_js_publish_async", "natsio_js_publish_request_async"}


# Unsigned scalars narrower than 64 bits: read as integers, then bounded.
UINT_MAX_OF = {"uint32_t": "UINT32_MAX", "uint16_t": "UINT16_MAX", "uint8_t": "UINT8_MAX", "size_t": "SIZE_MAX"}


# The hot path and mechanism the addon keeps hand-written on purpose: a
# publish or response is one call on the JS thread with no token and is
# hand-tuned (client.c's publish); the deferred send and the publish ring
# are the hub's (hub.c).
HOT = {
    "natsio_client_publish", "natsio_client_publish_n", "natsio_client_publish_with",
    "natsio_client_respond", "natsio_client_send_deferred", "natsio_client_pub_ring_kick",
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

    def converters(self, verbs):
        """The hand-written converters the generated results and verbs
        call: a handle's wrap_<type> takes it over; a value's <type>_to_js
        borrows."""
        wraps = {[a for a in f["args"] if a["role"] == "out"][0]["out_type"] for f, shape in verbs if shape == "open"}
        values = set()
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
            if (not any(f["name"].startswith(p) for p in areas) or f["name"] in hand or f["name"] in SKIP
                    or f["name"] in HOT):
                continue
            it = self.desc["iterators"].get(f["handle"])
            contract = (it["verbs"] + ["end_async"]) if it else []
            if any(f["name"] == f"{f['handle']}_{v}" for v in contract) or self.is_iterator_next(f):
                continue  # the iterator contract is the feed mechanism's
            shape = self.shape(f)
            if shape:
                out.append((f, shape))
        return out

    def shape(self, f):
        args = f["args"]
        if not args or args[0]["role"] != "receiver" or f["handle"] not in self.handles:
            return None
        if any(a["role"] in ("callback", "user_data", "release", "other") for a in args):
            return None
        if any(a["role"] == "handle" and not self.is_headers(a) for a in args):
            return None
        if f.get("result") is not None and any(a["role"] == "token_out" for a in args):
            return "promise"
        outs = [a for a in args if a["role"] == "out"]
        if len(outs) == 1 and outs[0]["out_type"] in self.desc["iterators"] and not f.get("async"):
            return "iterator"
        if (len(outs) == 1 and outs[0]["owned"] and not f.get("async")
                and self.desc["types"].get(outs[0]["out_type"]) == "handle"):
            return "open"  # makes a handle without I/O (a context, a writer)
        if not outs and f["ret"] == "const char *" and len(args) == 1:
            return "getter"
        if f.get("async"):
            return None  # its token form is the verb
        if f["ret"] == "natsio_status" and not outs:
            return "call"  # returns at once (force_reconnect, unsubscribe_after)
        if f["ret"] == "natsio_status" and len(outs) == 1 and outs[0]["owned"] and self.reader_of(outs[0]):
            return "query"  # an owned value read at once (server_info, servers)
        if len(args) == 1 and "*" not in f["ret"] and f["ret"] not in ("void", "natsio_status"):
            return "scalar"  # a plain getter (status, max_payload, sid)
        return None

    def reader_of(self, out):
        """The token reader's kind for an output of the same type, whose
        conversion the query shape reuses."""
        return next((k for k, r in self.desc["token_readers"].items()
                     if r["c_type"] == out["out_type"] and r["owned"] == out["owned"]
                     and self.desc["types"].get(out["out_type"]) not in ("handle", "iterator")), None)

    def verb_fn(self, f, shape):
        name = verb_name(f["name"])
        args = f["args"]
        jsh, field = self.handles[f["handle"]]
        ins = [a for a in args if a["role"] not in ("receiver", "token_out", "out")]
        decls, reads, frees, call = [], [], [], []
        for i, a in enumerate(ins, start=1):
            n, role = a["name"], a["role"]
            if role == "string" and a.get("nullable"):
                decls.append(f"char *{n} = NULL;")
                reads.append(f"get_opt_string(env, argv[{i}], &{n})")
                frees.append(f"free({n});")
            elif self.is_headers(a):
                decls.append(f"natsio_headers *{n} = NULL;")
                reads.append(f"get_headers(env, argv[{i}], &{n})")
                frees.append(f"natsio_headers_free({n});")
            elif role in ARG_READERS:
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
                elif t in UINT_MAX_OF:
                    decls.append(f"uint64_t {n} = 0;")
                    reads.append(f'get_required_uint(env, argv[{i}], "{what(n)}", {UINT_MAX_OF[t]}, &{n})')
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
                if self.owned_fields(st):
                    frees.append(f"free_{strip_prefix(st)}(&{n});")
            else:
                raise SystemExit(f"gen_node: {f['name']}: no reader for role {role}")
        cargs = []
        for a in args:
            r = a["role"]
            if r == "receiver":
                cargs.append("@recv")
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
                f"    ARGS({argc});"]
        # What holds the C handle: the client's external, a subscription's
        # feed, or a js_handle (js.c); what an operation keeps until it
        # settles (`h` counted in flight, the client retained), and whose
        # client a handle or feed made by the verb belongs to.
        if jsh == "CLIENT":
            body += ["    client_wrap *cw = get_client(env, argv[0]);", "    if (!cw) return NULL;"]
            recv, op_h, owner = f"cw->{field}", "NULL", "cw"
        elif jsh == "OPTIONS":  # connect()'s options, built by index.js (client.c)
            body += ["    natsio_options *recv = get_options(env, argv[0]);", "    if (!recv) return NULL;"]
            recv, op_h, owner = "recv", "NULL", "NULL"
        elif jsh.startswith("GET:"):  # a hand-written accessor of the JS value (service.c)
            body += [f"    {f['handle']} *recv = {jsh[4:]}(env, argv[0]);", "    if (!recv) return NULL;"]
            recv, op_h, owner = "recv", "NULL", "NULL"
        elif jsh.startswith("FEED_"):
            body += [f"    {f['handle']} *recv = feed_handle(env, argv[0], {jsh});", "    if (!recv) return NULL;"]
            recv, op_h, owner = "recv", "NULL", "NULL"
        else:
            body += [f"    js_handle *h = get_jsh(env, argv[0], {jsh});", "    if (!h) return NULL;"]
            recv, op_h, owner = f"h->{field}", "h", "h->cw"
        cargs = [recv if c == "@recv" else c for c in cargs]
        if shape == "getter":
            body += [f"    return str_or_null(env, {f['name']}({recv}));", "}"]
            return "\n".join(body)
        if shape == "scalar":
            conv = "boolean" if f["ret"] == "bool" else "num"
            cast = "" if f["ret"] == "bool" else "(double)"
            body += [f"    return {conv}(env, {cast}{f['name']}({recv}));", "}"]
            return "\n".join(body)
        body.append("    napi_value ret = NULL;")
        body += [f"    {d}" for d in decls]
        if reads:
            body.append("    if (" + "\n        && ".join(reads) + ") {")
        else:
            body.append("    {")
        if shape == "promise":
            kind = f["result"]
            keep = owner if self.result_keeps_client(kind) or jsh == "CLIENT" else "NULL"
            present = self.node.get("presentations", {}).get(f["name"])
            track = (f"op_track_with(env, st, tok, {present}, {op_h}, {keep})" if present
                     else f"op_track(env, st, tok, R_{kind.upper()}, {op_h}, {keep})")
            body += ["        natsio_token *tok = NULL;",
                     f"        int32_t st = {f['name']}({', '.join(cargs)});",
                     f"        ret = {track};"]
        elif shape == "call":
            body += [f"        throw_if_failed(env, {f['name']}({', '.join(cargs)}));"]
        elif shape == "query":
            out = [a for a in args if a["role"] == "out"][0]
            conv = self.result_conversion(self.reader_of(out))
            body += [f"        {conv[0]}",
                     f"        if (!throw_if_failed(env, {f['name']}({', '.join(cargs).replace('&out', '&x')}))) {{",
                     "            napi_value v = NULL;"]
            body += [f"            {line}" for line in conv[2:]]
            body += ["            ret = v;", "        }"]
        else:  # iterator, open
            it = [a for a in args if a["role"] == "out"][0]["out_type"]
            wrap = (f"feed_wrap(env, FEED_{strip_prefix(it).upper()}, out, {owner})" if shape == "iterator"
                    else f"wrap_{strip_prefix(it)}(env, out, {owner})")
            body += [f"        {it} *out = NULL;",
                     f"        if (!throw_if_failed(env, {f['name']}({', '.join(cargs)})))",
                     f"            ret = {wrap};"]
        body.append("    }")
        body += [f"    {fr}" for fr in frees]
        body += ["    return ret;", "}"]
        return "\n".join(body)

    def is_headers(self, a):
        return a["role"] == "handle" and a["type"] == "const natsio_headers *"

    def owned_fields(self, st):
        """The fields of an options struct the reader allocates: strings
        and string arrays (freed by free_<struct>)."""
        return [fld for fld in self.desc["structs"][st] if fld["type"] in ("const char *", "const char *const *")]

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
                    lines.append(f'    o->{n} = ({t})get_i64(env, prop(env, obj, "{p}"), o->{n});')
                elif t == "double":
                    lines.append(f'    o->{n} = get_f64(env, prop(env, obj, "{p}"), o->{n});')
                elif t == "const char *":
                    lines.append(f'    if (!get_opt_string(env, prop(env, obj, "{p}"), (char **)&o->{n})) return false;')
                elif t == "const char *const *":
                    lines.append(f'    if (!get_string_array(env, prop(env, obj, "{p}"), "{p}", (char ***)&o->{n}, '
                                 f'&o->{n}_count)) return false;')
                elif t == "size_t" and n.endswith("_count"):
                    continue  # the count of the array before it
                else:
                    raise SystemExit(f"gen_node: {st}.{n}: no reader for {t}")
            lines += ["    return !exception_pending(env);", "}"]
            owned = self.owned_fields(st)
            if owned:
                lines += ["", f"static void free_{strip_prefix(st)}({st} *o) {{"]
                for fld in owned:
                    if fld["type"] == "const char *":
                        lines.append(f"    free((char *)o->{fld['name']});")
                    else:
                        lines.append(f"    free_strings((char **)o->{fld['name']}, o->{fld['name']}_count);")
                lines.append("}")
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
        header += [f"    FEED_{strip_prefix(it).upper()} = {i + 1},"
                   for i, it in enumerate(sorted(self.desc["iterators"]))]
        header += ["    FEED_KIND_END", "};", ""]
        header += self.feed_kinds_header()
        header += ["",
                   "struct op;",
                   "struct client_wrap;",
                   "/* What each result kind is converted with, hand-written in the addon:",
                   " * wrap_<handle> takes the handle over, <value>_to_js borrows. */"]
        header += self.converters(verbs)
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
            "bindings/node/src/gen/feeds.c": "\n".join(self.feed_kinds_c()),
            "bindings/node/src/gen/results.c": "\n".join(results),
            "bindings/node/src/gen/verbs.c": "\n".join(verbs_c),
            "bindings/node/src/gen/verbs.d.ts": "\n".join(dts),
        }

    # -- iterator kinds: what a feed (feed.c) calls for each --
    def item_name(self, item):
        """A C item type's name in the hand-written callbacks: msg, kv_entry, ... (char *: string)."""
        return "string" if item == "char" else strip_prefix(item)

    def presentation(self, it):
        """How an iterator's items look in JS: its item type's, unless the
        overlay names another (a JetStream message: one of a batch with acks)."""
        return self.node.get("iterators", {}).get(it) or self.item_name(self.desc["iterators"][it]["item"])

    def feed_kinds_header(self):
        its = sorted(self.desc["iterators"])
        lines = ["struct feed;",
                 "/* How a feed delivers the items of one presentation, hand-written in",
                 " * feed.c: frees an item it drops, counts an item's payload bytes",
                 " * (the batch byte cap), hands a batch to JS (and frees or hands over",
                 " * the items). */",
                 "typedef struct feed_items {",
                 "    void (*free)(void *item);",
                 "    size_t (*bytes)(const void *item);",
                 "    void (*deliver)(napi_env env, struct feed *f, void **items, uint32_t n);",
                 "} feed_items;"]
        lines += [f"extern const feed_items feed_items_{p};" for p in sorted({self.presentation(it) for it in its})]
        lines += ["",
                  "/* The push-mode callbacks of feed.c, one per item type: each keeps the",
                  " * item (a clone or a copy) in the feed `user_data`. */"]
        for ret, item in sorted({(self.desc["iterators"][it].get("callback_ret", "void"), self.desc["iterators"][it]["item"])
                                 for it in its}):
            # A callback that returns a status (an endpoint's: a failed
            # handler) returns NATSIO_OK from here: the JS handler runs later.
            ctype = "const char *" if item == "char" else f"const {item} *"
            lines.append(f"{ret} feed_on_{self.item_name(item)}(void *user_data, {ctype}item, natsio_status status);")
        lines += ["",
                  "/* One iterator kind: the iterator contract's calls on its handle, and",
                  " * how its items are delivered. */",
                  "typedef struct feed_kind {",
                  "    const char *name; /* the C type without natsio_ */",
                  "    natsio_status (*stop)(void *handle);",
                  "    void (*free)(void *handle);",
                  "    natsio_status (*get_stats)(void *handle, natsio_iter_stats *out);",
                  "    /* push mode towards feed_on_<item>(user_data, ...) */",
                  "    natsio_status (*set_callback)(void *handle, void *user_data, natsio_release_cb release);",
                  "    const feed_items *items;",
                  "    /* pull mode (feed.c): the next item's token, the item a completed",
                  "     * token holds (owned), an item already queued (NATSIO_NO_WAIT), and",
                  "     * the end's token (NULL: the kind has none) */",
                  "    natsio_status (*next_async)(void *handle, natsio_token **token_out);",
                  "    natsio_status (*take)(const natsio_token *token, void **item_out);",
                  "    natsio_status (*next_now)(void *handle, void **item_out);",
                  "    natsio_status (*end_async)(void *handle, natsio_token **token_out);",
                  "} feed_kind;",
                  "extern const feed_kind FEED_KINDS[FEED_KIND_END];"]
        return lines

    def feed_kinds_c(self):
        out = self.banner("/*", " *", " */") + ['#include "../internal.h"', ""]
        table = ["const feed_kind FEED_KINDS[FEED_KIND_END] = {"]
        for it in sorted(self.desc["iterators"]):
            short = strip_prefix(it)
            d = self.desc["iterators"][it]
            for v in ("stop", "free", "get_stats", "set_callback"):
                if v not in d["verbs"]:
                    raise SystemExit(f"gen_node: iterator {it} has no _{v}")
            item = d["item"]
            ctype = "char" if item == "char" else item
            reader = next((r["reader"] for r in self.desc["token_readers"].values()
                           if r["c_type"] == item and r["owned"]), None)
            if reader is None:
                raise SystemExit(f"gen_node: iterator {it} has no token reader of its item")
            has_end = f"{it}_end_async" in self.funcs
            out += [f"static natsio_status {short}_next_async(void *h, natsio_token **t) {{ return {it}_next_async(h, t); }}",
                    f"static natsio_status {short}_take(const natsio_token *t, void **x) {{ return {reader}(t, ({ctype} **)x); }}",
                    f"static natsio_status {short}_next_now(void *h, void **x) {{",
                    f"    return {it}_next(h, NATSIO_NO_WAIT, ({ctype} **)x);",
                    "}"]
            if has_end:
                out.append(f"static natsio_status {short}_end_async(void *h, natsio_token **t) {{ return {it}_end_async(h, t); }}")
            out += [f"static natsio_status {short}_stop(void *h) {{ return {it}_stop(h); }}",
                    f"static void {short}_free(void *h) {{ {it}_free(h); }}",
                    f"static natsio_status {short}_get_stats(void *h, natsio_iter_stats *s) {{ return {it}_get_stats(h, s); }}",
                    f"static natsio_status {short}_set_callback(void *h, void *user_data, natsio_release_cb release) {{",
                    f"    return {it}_set_callback(h, feed_on_{self.item_name(d['item'])}, user_data, release);",
                    "}", ""]
            end = f"{short}_end_async" if has_end else "NULL"
            table.append(f'    [FEED_{short.upper()}] = {{"{short}", {short}_stop, {short}_free, {short}_get_stats, '
                         f"{short}_set_callback, &feed_items_{self.presentation(it)}, {short}_next_async, "
                         f"{short}_take, {short}_next_now, {end}}},")
        return out + table + ["};", ""]

    def c_doc(self, f, shape):
        ins = [a["name"] for a in f["args"] if a["role"] not in ("token_out", "out")]
        outs = [a for a in f["args"] if a["role"] == "out"]
        ret = {"promise": f"Promise<{f.get('result')}>", "iterator": "feed", "getter": "string",
               "open": "handle", "call": "undefined", "scalar": f["ret"],
               "query": outs and self.reader_of(outs[0])}[shape]
        return f"/* {verb_name(f['name'])}({', '.join(ins)}) -> {ret}: {f['name']} */"

    def ts_sig(self, f, shape):
        params = []
        for a in f["args"]:
            r = a["role"]
            if r in ("token_out", "out"):
                continue
            if self.is_headers(a):
                params.append(f"{a['name']}: string[] | null")
                continue
            if r == "string" and a.get("nullable"):
                params.append(f"{a['name']}: string | null")
                continue
            t = {"receiver": "object", "string": "string", "bytes": "Uint8Array | string",
                 "strings": "string[] | null", "optional_scalar": "number | undefined",
                 "options": "object | undefined"}.get(r) or JS_SCALAR.get(a["type"], "number")
            params.append(f"{a['name']}: {t}")
        if shape == "promise":
            ret = f"Promise<{self.ts_result(f['result'])}>"
        elif shape in ("iterator", "open"):
            ret = "object"
        elif shape == "call":
            ret = "void"
        elif shape == "scalar":
            ret = "boolean" if f["ret"] == "bool" else "number"
        elif shape == "query":
            out = [a for a in f["args"] if a["role"] == "out"][0]
            ret = self.ts_result(self.reader_of(out))
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
