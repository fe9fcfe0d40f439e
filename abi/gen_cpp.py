"""C++ backend: the per-handle verb layer the hand-written classes build on.

Writes bindings/cpp/include/natsio/gen/<handle>_verbs.hpp from
abi/natsio.abi.json: for each handle of the overlay's cpp.handles, a class
template
detail::<Name>Verbs<Self> (CRTP) with, per `_async` verb of that handle,
raw_<verb>_async (C++ arguments to C, the call, a Future of the result
type the overlay's cpp.types names) and raw_<verb> (the same operation,
waited for: one code path, as the C blocking forms are). The class that
derives from it provides c_handle() and sink(); its public methods (the
binding's names, overloads and option types) call these.
"""

from common import Gen, strip_prefix

CPP_SCALARS = {
    "uint64_t": "std::uint64_t",
    "int64_t": "std::int64_t",
    "uint32_t": "std::uint32_t",
    "int32_t": "std::int32_t",
    "size_t": "std::size_t",
    "bool": "bool",
    "double": "double",
}


class CppGen(Gen):
    def __init__(self, desc, overlay):
        super().__init__(desc, overlay)
        self.cpp = overlay.get("cpp", {})

    def result_type(self, kind):
        if kind == "none":
            return "void"
        t = self.cpp.get("types", {}).get(kind)
        if t is None:
            raise SystemExit(f"gen_cpp: no C++ type for result kind {kind} (abi/overlay.json cpp.types)")
        return t

    def verbs_of(self, handle):
        out = []
        for f in self.desc["functions"]:
            if f["handle"] != handle or not f["name"].endswith("_async") or f["name"].endswith("_next_async"):
                continue
            if f.get("result") is None:
                continue
            if any(a["role"] in ("callback", "user_data", "release", "other", "handle") for a in f["args"]):
                continue
            out.append(f)
        return out

    def method(self, handle, f):
        verb = f["name"][len(handle) + 1: -len("_async")]
        rtype = self.result_type(f["result"])
        params, pre, cargs, names = [], [], ["self().c_handle()"], []
        for a in f["args"]:
            n, role = a["name"], a["role"]
            if role in ("receiver", "token_out"):
                continue
            names.append(n)
            if role == "string":
                params.append(f"std::string_view {n}")
                pre.append(f'CString c_{n}({n}, "{n}");')
                cargs.append(f"c_{n}.get()")
            elif role == "bytes":
                params.append(f"ByteView {n}")
                cargs += [f"{n}.data()", f"{n}.size()"]
            elif role == "strings":
                params.append(f"const CStringArray& {n}")
                cargs += [f"{n}.data()", f"{n}.size()"]
            elif role == "scalar":
                t = CPP_SCALARS.get(a["type"], a["type"])
                params.append(f"{t} {n}")
                cargs.append(n)
            elif role == "optional_scalar":
                t = CPP_SCALARS[a["type"].replace("const ", "").replace(" *", "")]
                params.append(f"std::optional<{t}> {n}")
                cargs.append(f"{n} ? &*{n} : nullptr")
            elif role == "options":
                params.append(f"{a['type']} {n}")
                cargs.append(n)
            else:
                raise SystemExit(f"gen_cpp: {f['name']}: role {role}")
        plist = ", ".join(params)
        lines = [f"    /// {f['name']}: a Future of its result ({f['result']}).",
                 f"    Future<{rtype}> raw_{verb}_async({plist}) const {{"]
        lines += [f"        {p}" for p in pre]
        lines += [f"        return start_async<{rtype}>(self().sink(), {f['name']}, {', '.join(cargs)});",
                  "    }",
                  f"    /// {f['blocking'] or f['name']}: raw_{verb}_async, waited for.",
                  f"    {rtype} raw_{verb}({plist}) const {{",
                  f"        return raw_{verb}_async({', '.join(names)}).get();",
                  "    }"]
        return lines

    def generate(self):
        files = {}
        for handle, name in sorted(self.cpp.get("handles", {}).items()):
            out = self.banner("//", "//", "//")
            out += ["#pragma once", "",
                    "// Included by the binding's headers where the result types it names are",
                    "// declared; not a header of its own.", "",
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
            out[-1:] = ["};", "", "}  // namespace detail", "}  // namespace natsio", ""]
            files[f"bindings/cpp/include/natsio/gen/{strip_prefix(handle)}_verbs.hpp"] = "\n".join(out)
        return files
