#!/usr/bin/env python3
"""Describes the C ABI once, for the bindings' generators.

Reads the headers cbindgen writes from src/ffi (include/natsio.h, the
user's API, and include/natsio_sys.h, binding support) and the
overlay (abi/overlay.json), and writes abi/natsio.abi.json: for every export
its handle, its arguments with their roles, its blocking/_async pairing and
result kind, and its doc; the iterator kinds with their item types; the
token readers; the option structs with their fields.

The header is the input on purpose: it is the ABI every binding compiles
against, cbindgen has already turned src/ffi's Rust into it, and its
declarations are regular enough to read without a C parser. Everything the
generators need that the header can say is derived here; what it cannot
say (a language's own name for a verb, exports a binding leaves to its
hand-written mechanism) is in the overlay.

Run through abi/generate.py, which writes the description and the
generated files together (and checks them with --check).
"""

import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HEADERS = [ROOT / "include" / "natsio.h", ROOT / "include" / "natsio_sys.h"]
# The second header's exports are binding support (a binding's mechanism,
# not its per-verb glue): described too, marked "sys".
SYS_HEADER = HEADERS[1]
OVERLAY = ROOT / "abi" / "overlay.json"
OUT = ROOT / "abi" / "natsio.abi.json"

DECL = re.compile(
    r"(?:/\*\*(?P<doc>(?:(?!\*/).)*?)\*/\s*)?"
    r"^(?P<ret>[A-Za-z_][\w \*]*?)\s*\b(?P<name>natsio_\w+)\((?P<args>[^;{]*?)\);",
    re.S | re.M,
)
STRUCT = re.compile(
    r"^typedef struct (?P<name>natsio_\w+) \{(?P<body>.*?)^\} (?P=name);", re.S | re.M
)
OPAQUE = re.compile(r"^typedef struct (natsio_\w+) \1;", re.M)
ENUM = re.compile(r"^typedef int32_t (natsio_\w+);", re.M)
CALLBACK = re.compile(r"^typedef [\w \*]+\(\*(natsio_\w+)\)\(", re.M)
# A callback's return type: what a binding's function for it returns.
CALLBACK_RET = re.compile(r"^typedef (?P<ret>[\w \*]+?)\s*\(\*(?P<name>natsio_\w+)\)\(", re.M)
FIELD = re.compile(r"^\s*(?P<type>[A-Za-z_][\w \*]*?)\s*\b(?P<name>\w+)(?:\[(?P<n>\w+)\])?;", re.M)

SCALARS = {
    "bool", "int32_t", "int64_t", "uint32_t", "uint64_t", "uint16_t", "uint8_t",
    "size_t", "double", "int", "natsio_status",
}


def doc_text(raw):
    if not raw:
        return ""
    lines = [re.sub(r"^\s*\* ?", "", l) for l in raw.strip("\n").split("\n")]
    return "\n".join(lines).strip()


def norm_type(t):
    t = re.sub(r"\bstruct\s+", "", t)
    t = re.sub(r"\s+", " ", t).strip()
    return re.sub(r"\s*\*", " *", t).replace("* *", "**").replace(" **", " **")


def base_type(t):
    """The type without const and pointers: `const natsio_kv *` -> natsio_kv."""
    return re.sub(r"\bconst\b|\*", "", t).strip()


def split_args(s):
    s = s.strip()
    if s in ("", "void"):
        return []
    out = []
    for a in s.split(","):
        a = re.sub(r"\s+", " ", a.strip())
        m = re.match(r"(.*?)(\w+)$", a)
        out.append({"type": norm_type(m.group(1)), "name": m.group(2)})
    return out


def parse(text):
    funcs, structs = {}, {}
    for m in DECL.finditer(text):
        name = m.group("name")
        if name in funcs:
            continue
        funcs[name] = {
            "name": name,
            "ret": norm_type(m.group("ret")),
            "args": split_args(m.group("args")),
            "doc": doc_text(m.group("doc")),
        }
    for m in STRUCT.finditer(text):
        body = re.sub(r"/\*\*.*?\*/", "", m.group("body"), flags=re.S)
        fields = [
            {"type": norm_type(f.group("type")), "name": f.group("name")}
            | ({"array": f.group("n")} if f.group("n") else {})
            for f in FIELD.finditer(body)
        ]
        structs[m.group("name")] = fields
    opaque = sorted(set(OPAQUE.findall(text)))
    callbacks = sorted(set(CALLBACK.findall(text)))
    enums = sorted(set(ENUM.findall(text)))
    SCALARS.update(enums)
    return funcs, structs, opaque, callbacks, enums


def handle_of(fname, first_arg, handles):
    """The handle a function is a verb of: its first argument's type when the
    name starts with that type's name (longest match)."""
    if not first_arg:
        return None
    t = base_type(first_arg["type"])
    if t in handles and first_arg["type"].count("*") == 1 and fname.startswith(t + "_"):
        return t
    return None


def nullable(doc, name):
    """Whether the doc lets argument `name` be NULL: "`name` is NULL",
    "`name` may be NULL", "`name` (NULL: ...)", "`name` (may be NULL)",
    "(either may be NULL)", "`name` and `other` may be NULL". A token form's
    arguments follow its blocking twin's doc (see the pairing below)."""
    flat = " ".join(doc.split())
    return bool(re.search(rf"`{name}` (?:is NULL|may be NULL|\((?:may be )?NULL)", flat)) or bool(
        re.search(rf"`{name}` and `\w+` may be NULL", flat)) or (
        "either may be NULL" in flat and f"`{name}`" in flat)


def roles(f, handles, structs, callbacks):
    """Each argument's role: receiver, in (string, scalar, optional scalar,
    bytes+len, strings+count, options struct, handle), out, token_out,
    callback, user_data, release."""
    args = f["args"]
    out = []
    i = 0
    while i < len(args):
        a = dict(args[i])
        t, n = a["type"], a["name"]
        bt = base_type(t)
        nxt = args[i + 1] if i + 1 < len(args) else None
        stars = t.count("*")
        if i == 0 and f.get("handle"):
            a["role"] = "receiver"
        elif t == "natsio_token **":
            a["role"] = "token_out"
        elif n.endswith("_out"):
            a["role"] = "out"
        elif t in ("const void *", "const uint8_t *") and nxt and nxt["type"] == "size_t":
            a["role"] = "bytes"
            a["len"] = nxt["name"]
            i += 1
        elif t == "const char *const *" and nxt and nxt["type"] == "size_t":
            a["role"] = "strings"
            a["count"] = nxt["name"]
            i += 1
        elif t == "const char *":
            a["role"] = "string"
            if nullable(f["doc"], n):
                a["nullable"] = True
        elif bt in structs and stars == 1 and t.startswith("const"):
            a["role"] = "options"
        elif bt in callbacks and bt == "natsio_release_cb":
            a["role"] = "release"
        elif bt in callbacks:
            a["role"] = "callback"
        elif t == "void *" and n == "user_data":
            a["role"] = "user_data"
        elif bt in SCALARS and stars == 0:
            a["role"] = "scalar"
        elif bt in SCALARS and stars == 1 and t.startswith("const"):
            a["role"] = "optional_scalar"
        elif bt in handles and stars == 1:
            a["role"] = "handle"
        elif n.endswith("_out") or (stars >= 1 and not t.startswith("const")):
            a["role"] = "out"
        else:
            a["role"] = "other"
        if a["role"] == "out":
            a["out_type"] = bt
            a["owned"] = stars >= 2
        out.append(a)
        i += 1
    return out


def describe():
    text = "\n".join(h.read_text() for h in HEADERS)
    funcs, structs, opaque, callbacks, enums = parse(text)
    sys_funcs, sys_structs, sys_opaque, sys_callbacks, sys_enums = parse(SYS_HEADER.read_text())
    for name in sys_funcs:
        funcs[name]["sys"] = True
    sys_types = sorted(set(sys_structs) | set(sys_opaque) | set(sys_callbacks) | set(sys_enums))
    overlay = json.loads(OVERLAY.read_text()) if OVERLAY.exists() else {}
    handles = set(opaque)

    for f in funcs.values():
        f["handle"] = handle_of(f["name"], f["args"][0] if f["args"] else None, handles)
        f["args"] = roles(f, handles, set(structs), set(callbacks))

    # Token readers: natsio_token_<kind>(token, T *out) -> kind of T.
    readers = {}
    for f in funcs.values():
        a = f["args"]
        if (f["name"].startswith("natsio_token_") and len(a) == 2 and a[1]["role"] == "out"
                and f["ret"] == "natsio_status"):
            t = a[1]["out_type"] + (" *" if a[1]["owned"] else "")
            readers[t] = {"kind": f["name"][len("natsio_token_"):], "reader": f["name"],
                          "c_type": a[1]["out_type"], "owned": a[1]["owned"]}

    # Iterators: a handle with _next(it, timeout, &item) and _next_async.
    callback_rets = {m.group("name"): norm_type(m.group("ret")) for m in CALLBACK_RET.finditer(text)}
    iterators = {}
    for h in sorted(handles):
        nx = funcs.get(h + "_next")
        if nx and all(f"{h}_{v}" in funcs for v in ("next_async", "set_callback", "stop", "free")):
            item = [a for a in nx["args"] if a["role"] == "out"]
            iterators[h] = {
                "item": item[0]["out_type"] if item else None,
                "verbs": [v for v in ("next", "next_async", "set_callback", "stop", "get_stats", "free")
                          if f"{h}_{v}" in funcs],
                "callback": next((a["type"] for a in funcs.get(h + "_set_callback", {"args": []})["args"]
                                  if a["role"] == "callback"), None),
            }
            iterators[h]["callback_ret"] = callback_rets.get(iterators[h]["callback"], "void")

    # Pairs and result kinds: X_async's result is what X writes to its
    # outputs; with one output of a type a token reader reads, that reader.
    # A token form named apart from its blocking call is paired by the
    # overlay's "blocking"; the `_async` that would have been the twin by
    # name is then no token form of it (its result is still read off the
    # blocking call's output).
    result_override = overlay.get("result", {})
    blocking_override = overlay.get("blocking", {})
    claimed = {b: a for a, b in blocking_override.items()}
    problems = []
    # The next item of an iterator or a reader (`<handle>_next_async`, its
    # only input the handle: natsio_obj_reader_next_async) is the feed
    # mechanism's, not a request (natsio_js_next_async is one).
    for f in funcs.values():
        h = f.get("handle")
        if h and f["name"] == f"{h}_next_async" and (
                h in iterators or all(a["role"] in ("receiver", "token_out") for a in f["args"])):
            f["feed_next"] = True
    for f in funcs.values():
        if not f["name"].endswith("_async") or f.get("feed_next"):
            continue
        if not any(a["role"] == "token_out" for a in f["args"]):
            continue
        twin = funcs.get(blocking_override.get(f["name"], f["name"][: -len("_async")]))
        paired = twin is not None and claimed.get(twin["name"], f["name"]) == f["name"]
        f["blocking"] = twin["name"] if paired else None
        if paired:
            twin["async"] = f["name"]
            # The token form's doc points at its twin's: so do its arguments.
            nullable_args = {a["name"] for a in twin["args"] if a.get("nullable")}
            for a in f["args"]:
                if a["name"] in nullable_args:
                    a["nullable"] = True
        if f["name"] in result_override:
            f["result"] = result_override[f["name"]]
            continue
        outs = [a for a in (twin["args"] if twin else []) if a["role"] == "out"]
        if not twin:
            problems.append(f"{f['name']}: no blocking twin; say its result in the overlay")
            f["result"] = None
        elif not outs:
            f["result"] = "none"
        elif len(outs) == 1:
            key = outs[0]["out_type"] + (" *" if outs[0]["owned"] else "")
            r = readers.get(key)
            if r is None:
                problems.append(f"{f['name']}: no token reader for {key}")
            f["result"] = r["kind"] if r else None
        else:
            problems.append(f"{f['name']}: {len(outs)} outputs; say its result in the overlay")
            f["result"] = None

    for name in overlay.get("hand_written", {}):
        if name not in funcs:
            problems.append(f"overlay names {name}, which the header does not declare")
    for name, blocking in blocking_override.items():
        if name not in funcs or blocking not in funcs:
            problems.append(f"overlay pairs {name} with {blocking}, which the header does not declare")
    for name in result_override:
        if name not in funcs:
            problems.append(f"overlay's result names {name}, which the header does not declare")

    # What each opaque type is to a binding: an iterator (the iterator
    # contract), a list (_count/_get), a handle (the receiver of operations,
    # owned by the binding's wrapper: a type that has `_async` verbs and no
    # `_clone`), or a value (read through getters, copied by a binding).
    async_receivers = {f["handle"] for f in funcs.values()
                       if f["handle"] and any(a["role"] == "token_out" for a in f["args"])}
    kinds = {}
    for h in sorted(handles):
        if h in iterators:
            kinds[h] = "iterator"
        elif f"{h}_count" in funcs and f"{h}_get" in funcs:
            kinds[h] = "list"
        elif h in async_receivers and f"{h}_clone" not in funcs:
            kinds[h] = "handle"
        else:
            kinds[h] = "value"

    desc = {
        "generated": "by abi/describe.py from include/natsio.h and abi/overlay.json; do not edit",
        "types": kinds,
        "sys_types": sys_types,
        "callbacks": callbacks,
        "enums": enums,
        "structs": {k: v for k, v in sorted(structs.items())},
        "token_readers": {v["kind"]: v for v in sorted(readers.values(), key=lambda r: r["kind"])},
        "iterators": iterators,
        "functions": [funcs[k] for k in sorted(funcs)],
    }
    return desc, problems
