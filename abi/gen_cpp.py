"""C++ backend: the per-handle verb layer, the token readers and the feed
traits the hand-written classes build on.

Writes, from abi/natsio.abi.json:

- bindings/cpp/include/natsio/gen/<handle>_verbs.hpp for each handle of the
  overlay's cpp.handles: a class template detail::<Name>Verbs<Self> (CRTP)
  with, per `_async` verb of that handle, raw_<verb>_async (C++ arguments to
  C, the call, a Future of the result) and raw_<verb> (the C blocking twin,
  its output made a C++ value by detail::from_c). The class that derives
  from it provides c_handle() and sink(); its public methods (the binding's
  names, overloads and option types) call these.
- gen/<header>_results.hpp for each header of the overlay's cpp.results:
  detail::TokenReader<T> for the result kinds whose C++ type that header
  declares (natsio_token_<kind>, then detail::from_c).
- gen/feeds.hpp: the Feed traits of every iterator kind (the C functions
  of its iterator contract; the item side is detail::FeedItem<CItem>).
"""

from common import Gen, pascal, strip_prefix

CPP_SCALARS = {
    "uint64_t": "std::uint64_t",
    "int64_t": "std::int64_t",
    "uint32_t": "std::uint32_t",
    "int32_t": "std::int32_t",
    "size_t": "std::size_t",
    "bool": "bool",
    "double": "double",
}

SKIP = set()

INCLUDED = ["// Included by the binding's headers where the types it names are",
            "// declared; not a header of its own.", ""]


class CppGen(Gen):
    def __init__(self, desc, overlay):
        super().__init__(desc, overlay)
        self.cpp = overlay.get("cpp", {})
        self.types = {k: t for group in self.cpp.get("results", {}).values() for k, t in group.items()}

    def result_type(self, kind):
        if kind == "none":
            return "void"
        t = self.types.get(kind)
        if t is None:
            raise SystemExit(f"gen_cpp: no C++ type for result kind {kind} (abi/overlay.json cpp.results)")
        return t

    def verbs_of(self, handle):
        out = []
        for f in self.desc["functions"]:
            if f["handle"] != handle or not f["name"].endswith("_async") or self.is_iterator_next(f):
                continue
            if f.get("result") is None or f.get("blocking") in SKIP:
                continue
            if any(a["role"] in ("callback", "user_data", "release", "other") for a in f["args"]):
                continue
            out.append(f)
        return out

    def sync_verbs_of(self, handle):
        """The calls of a handle without a token form (publish, subscribe,
        rtt, ...): a status, at most one output (a scalar or an owned
        handle), no callback, not part of the iterator contract."""
        contract = {f"{handle}_{v}" for v in self.desc["iterators"].get(handle, {}).get("verbs", [])}
        out = []
        for f in self.desc["functions"]:
            if (f["handle"] != handle or f["name"].endswith("_async") or f.get("async")
                    or f["ret"] != "natsio_status" or f["name"] in SKIP | contract):
                continue
            if any(a["role"] in ("callback", "user_data", "release", "other") for a in f["args"]):
                continue
            outs = [a for a in f["args"] if a["role"] == "out"]
            if len(outs) > 1 or any(not o["owned"] and o["out_type"] not in CPP_SCALARS for o in outs):
                continue
            out.append(f)
        return out

    @staticmethod
    def params(f):
        """The C++ parameters of f's inputs, the statements that convert
        them and the C arguments they become (after the receiver)."""
        params, pre, cargs = [], [], []
        for a in f["args"]:
            n, role = a["name"], a["role"]
            if role in ("receiver", "token_out", "out"):
                continue
            if role == "string":
                # Optional: the C ABI says per argument whether NULL is
                # allowed, and refuses it where it is not.
                params.append(f"std::optional<std::string_view> {n}")
                pre.append(f'OptionalCString c_{n}({n}, "{n}");')
                cargs.append(f"c_{n}.get()")
            elif role == "bytes":
                params.append(f"ByteView {n}")
                cargs += [f"{n}.data()", f"{n}.size()"]
            elif role == "strings":
                params.append(f"const CStringArray& {n}")
                cargs += [f"{n}.data()", f"{n}.size()"]
            elif role == "scalar":
                params.append(f"{CPP_SCALARS.get(a['type'], a['type'])} {n}")
                cargs.append(n)
            elif role == "optional_scalar":
                t = CPP_SCALARS[a["type"].replace("const ", "").replace(" *", "")]
                params.append(f"std::optional<{t}> {n}")
                cargs.append(f"{n} ? &*{n} : nullptr")
            elif role in ("options", "handle"):
                params.append(f"{a['type']} {n}")
                cargs.append(n)
            else:
                raise SystemExit(f"gen_cpp: {f['name']}: role {role}")
        return params, pre, cargs

    def method(self, handle, f):
        verb = f["name"][len(handle) + 1: -len("_async")]
        rtype = self.result_type(f["result"])
        params, pre, cargs = self.params(f)
        plist = ", ".join(params)
        call = ", ".join(["self().c_handle()"] + cargs)
        # `auto`: the result types may be incomplete where a layer is
        # included (MsgView's comes before Future), and are at instantiation.
        lines = [f"    /// {f['name']}: a Future<{rtype}>.",
                 f"    auto raw_{verb}_async({plist}) const {{"]
        lines += [f"        {p}" for p in pre]
        lines += [f"        return start_async<{rtype}>(self().sink(), {f['name']}, {call});", "    }"]
        twin = self.funcs.get(f.get("blocking") or "")
        if twin is None:
            return lines
        twin_params = self.params(twin)[0]
        if twin_params != params:
            # A blocking twin may add inputs of its own (natsio_service_stop's
            # timeout, which its token form leaves to the caller's wait).
            if twin_params[:len(params)] != params:
                raise SystemExit(f"gen_cpp: {twin['name']} and {f['name']} take different inputs")
        if f["result"] == "none" and any(a["role"] == "out" for a in twin["args"]):
            raise SystemExit(f"gen_cpp: {twin['name']}: an output for result none")
        return lines + self.blocking(handle, twin, f"the blocking form ({rtype})")

    def blocking(self, handle, f, what):
        """raw_<verb>: the C call, its output (if any) made a C++ value."""
        verb = f["name"][len(handle) + 1:]
        params, pre, cargs = self.params(f)
        call = ", ".join(["self().c_handle()"] + cargs)
        outs = [a for a in f["args"] if a["role"] == "out"]
        lines = [f"    /// {f['name']}: {what}.",
                 f"    auto raw_{verb}({', '.join(params)}) const {{"]
        lines += [f"        {p}" for p in pre]
        if not outs:
            lines.append(f"        check({f['name']}({call}));")
        else:
            o = outs[0]
            ctype = o["out_type"] + (" *" if o["owned"] else "")
            init = "nullptr" if o["owned"] else "0"
            lines += [f"        {ctype} out = {init};",
                      f"        check({f['name']}({call}, &out));",
                      "        return from_c(out, self().sink());"]
        lines.append("    }")
        return lines

    def verbs_file(self, handle):
        name = pascal(strip_prefix(handle))
        out = self.banner("//", "//", "//")
        out += ["#pragma once", ""] + INCLUDED + [
            "namespace natsio {", "namespace detail {", "",
            f"/// The C verbs of {handle} as C++ calls (generated). Self provides",
            f"/// c_handle() ({handle}*) and sink().",
            "template <class Self>",
            f"class {name}Verbs {{",
            "protected:",
            "    const Self& self() const noexcept { return static_cast<const Self&>(*this); }",
            ""]
        for f in self.verbs_of(handle):
            out += self.method(handle, f)
            out.append("")
        # Bodies of unused ones are never instantiated: a call whose result
        # has no from_c yet costs nothing until a class uses it.
        for f in self.sync_verbs_of(handle):
            out += self.blocking(handle, f, "no token form")
            out.append("")
        out[-1:] = ["};", "", "}  // namespace detail", "}  // namespace natsio", ""]
        return "\n".join(out)

    def results_file(self, header, kinds):
        readers = self.desc["token_readers"]
        out = self.banner("//", "//", "//")
        out += ["#pragma once", ""] + INCLUDED + ["namespace natsio {", "namespace detail {", ""]
        for kind, t in kinds.items():
            r = readers.get(kind)
            if r is None:
                raise SystemExit(f"gen_cpp: cpp.results names {kind}, which has no token reader")
            out += [f"/// A {kind} result ({r['reader']}).",
                    "template <>",
                    f"struct TokenReader<{t}> {{",
                    f"    static Status read(const natsio_token* token, const SinkPtr& sink, std::optional<{t}>& out) {{",
                    f"        return read_as({r['reader']}, token, sink, out);",
                    "    }",
                    "};", ""]
        out += ["}  // namespace detail", "}  // namespace natsio", ""]
        return "\n".join(out)

    def feeds_file(self):
        funcs = self.funcs
        out = self.banner("//", "//", "//")
        out += ["#pragma once", "", "// Included by natsio.hpp before Feed; not a header of its own.", "",
                "namespace natsio {", "namespace detail {", ""]
        for h, it in sorted(self.desc["iterators"].items()):
            out += [f"/// The iterator contract of {h}: items of {it['item']}",
                    "/// (detail::FeedItem says what they are in C++).",
                    f"struct {pascal(strip_prefix(h))}Feed {{",
                    f"    using Handle = {h};",
                    f"    using CItem = {it['item']};"]
            out += [f"    static constexpr auto {v} = &{h}_{v};" for v in it["verbs"]]
            if f"{h}_subject" in funcs:
                out += [f"    static const char* owner_subject(const {h}* handle) noexcept {{",
                        f"        return {h}_subject(handle);", "    }"]
            out += ["};", ""]
        out += ["}  // namespace detail", "}  // namespace natsio", ""]
        return "\n".join(out)

    def generate(self):
        base = "bindings/cpp/include/natsio/gen"
        files = {f"{base}/{strip_prefix(h)}_verbs.hpp": self.verbs_file(h)
                 for h in self.cpp.get("handles", [])}
        for header, kinds in self.cpp.get("results", {}).items():
            files[f"{base}/{header.removesuffix('.hpp')}_results.hpp"] = self.results_file(header, kinds)
        files[f"{base}/feeds.hpp"] = self.feeds_file()
        return files
