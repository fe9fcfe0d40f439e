//! Regenerates include/natsio.h and include/natsio_sys.h from src/ffi with
//! cbindgen (the headers are committed; CI fails when a build changes
//! them), and gives the shared library its SONAME.

use std::path::{Path, PathBuf};

/// src/options.rs DEFAULT_URL, for the header (a build script cannot use
/// the crate it builds); `default_url_matches_the_header` keeps them equal.
const DEFAULT_URL: &str = "nats://127.0.0.1:4222";

fn main() {
    println!("cargo:rerun-if-changed=src/ffi");
    println!("cargo:rerun-if-changed=cbindgen.toml");
    println!("cargo:rerun-if-changed={JS_HEADER_NAMES}");
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("manifest dir"));
    let version = |part: &str| {
        std::env::var(format!("CARGO_PKG_VERSION_{part}")).expect("cargo sets the version parts")
    };
    let (major, minor, patch) = (version("MAJOR"), version("MINOR"), version("PATCH"));
    soname(&major);
    let mut config = match cbindgen::Config::from_file(root.join("cbindgen.toml")) {
        Ok(c) => c,
        Err(e) => panic!("cbindgen.toml: {e}"),
    };
    // The version the header was generated with, for compile-time checks
    // and for natsio_version_compatible(): taken from Cargo.toml, so the two
    // can never disagree.
    config.after_includes = Some(format!(
        "\n/* The version of this header (Cargo.toml's). natsio_version() and\n \
         * natsio_version_compatible() ask the library loaded. */\n\
         #define NATSIO_VERSION_MAJOR {major}\n\
         #define NATSIO_VERSION_MINOR {minor}\n\
         #define NATSIO_VERSION_PATCH {patch}\n\
         #define NATSIO_VERSION_STRING \"{major}.{minor}.{patch}\"\n\
         /* MAJOR * 10000 + MINOR * 100 + PATCH, for #if comparisons. */\n\
         #define NATSIO_VERSION_NUMBER ({major} * 10000 + {minor} * 100 + {patch})\n\
         /* true when the library loaded serves programs built against this\n \
         * header; see natsio_version_compatible(). */\n\
         #define NATSIO_VERSION_IS_COMPATIBLE() \\\n  \
         natsio_version_compatible(NATSIO_VERSION_MAJOR, NATSIO_VERSION_MINOR, NATSIO_VERSION_PATCH)\n\n\
         /* The server a client connects to when given none: what the options\n \
         * hold after natsio_options_new, and what an empty URL means (as in\n \
         * nats.go). src/options.rs DEFAULT_URL; a unit test keeps them equal. */\n\
         #define NATSIO_DEFAULT_URL \"{DEFAULT_URL}\"\n\n{js_headers}",
        js_headers = js_header_defines(&root.join(JS_HEADER_NAMES)),
    ));
    // A failure must fail the build: going on would leave the committed
    // header stale, and the C, C++, Go and Node builds would compile
    // against declarations that no longer match the library.
    let header = match cbindgen::Builder::new()
        .with_crate(&root)
        .with_config(config)
        .generate()
    {
        Ok(h) => h,
        Err(e) => panic!(
            "cbindgen could not generate include/natsio.h: {e}\n\
             hint: cbindgen parses src/ffi itself, before rustc does. For a \
             syntax error, `rustfmt --check <file>` shows rustc's message; \
             otherwise fix the construct named above, or cbindgen.toml."
        ),
    };
    let mut generated = Vec::new();
    header.write(&mut generated);
    let generated = String::from_utf8(generated).expect("cbindgen writes UTF-8");
    let (user, sys) = split_sys(&generated);
    let include = root.join("include");
    std::fs::create_dir_all(&include).expect("create include/");
    write_if_changed(&include.join("natsio.h"), &user);
    write_if_changed(&include.join("natsio_sys.h"), &sys);
}

/// The JetStream header names, one `pub const` each (see that file).
const JS_HEADER_NAMES: &str = "src/jetstream/header_names.rs";

/// `#define NATSIO_JS_HEADER_<NAME> "<value>"` for every `pub const` of
/// JS_HEADER_NAMES, its `///` lines as the comment, then
/// `NATSIO_JS_HEADERS(X)`, which applies X to every suffix (for bindings
/// that export them all).
fn js_header_defines(path: &Path) -> String {
    let text =
        std::fs::read_to_string(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    let (mut out, mut doc, mut names) = (String::new(), Vec::new(), Vec::new());
    // rustfmt may break a long constant after `=`: join each statement.
    let mut statement = String::new();
    for line in text.lines().map(str::trim) {
        if let Some(d) = line.strip_prefix("///") {
            doc.push(d.trim().to_string());
        } else if line.starts_with("pub const") || !statement.is_empty() {
            statement.push_str(line);
            if !statement.ends_with(';') {
                continue;
            }
            let parsed = statement
                .strip_prefix("pub const ")
                .and_then(|rest| rest.split_once(": &str ="))
                .and_then(|(name, value)| {
                    let value = value.trim().strip_suffix(';')?.trim();
                    Some((
                        name.trim().to_string(),
                        value.strip_prefix('"')?.strip_suffix('"')?.to_string(),
                    ))
                });
            let Some((name, value)) = parsed else {
                panic!(
                    "{}: not `pub const NAME: &str = \"...\";`: {statement}",
                    path.display()
                );
            };
            out.push_str(&format!(
                "/* {} */\n#define NATSIO_JS_HEADER_{name} \"{value}\"\n",
                doc.join("\n * ")
            ));
            names.push(format!("X({name})"));
            doc.clear();
            statement.clear();
        }
    }
    format!(
        "/* The JetStream header names and Nats-Rollup's values (src/jetstream/header_names.rs). */\n\
         {out}\n\
         /* Applies X to the suffix of every NATSIO_JS_HEADER_ name, for code\n \
         * that lists them all: `#define NAME(s) #s, ` then\n \
         * `NATSIO_JS_HEADERS(NAME)`. */\n\
         #define NATSIO_JS_HEADERS(X) \\\n  {}",
        names.join(" \\\n  ")
    )
}

/// The line that marks an export's doc comment (in src/ffi, as `///`) as
/// binding support: it moves from natsio.h to natsio_sys.h.
const SYS_MARKER: &str = " * Binding support (natsio_sys.h).";

/// Splits cbindgen's one header into the user's API (natsio.h) and the
/// binding-support exports (natsio_sys.h, which includes natsio.h): every
/// item whose doc comment has SYS_MARKER moves. cbindgen separates items by
/// a blank line and opens the `extern "C"` block once, before the first
/// function; types before it stay before it in natsio_sys.h too.
fn split_sys(header: &str) -> (String, String) {
    let (mut user, mut sys_types, mut sys_fns) = (Vec::new(), Vec::new(), Vec::new());
    let mut in_functions = false;
    for item in header.split("\n\n") {
        in_functions |= item.contains("extern \"C\" {");
        if !item.lines().any(|l| l == SYS_MARKER) {
            user.push(item);
        } else if in_functions {
            sys_fns.push(item);
        } else {
            sys_types.push(item);
        }
    }
    assert!(
        !sys_fns.is_empty(),
        "build.rs: no export is marked {SYS_MARKER:?}"
    );
    let sys = format!(
        "/*\n \
         * natsio_sys.h: binding support of libnatsio, the exports that exist\n \
         * for a language binding's mechanism (a publish ring, a completion\n \
         * queue, spinning on an event loop, batch callbacks, field structs)\n \
         * rather than for a C program. natsio.h is the user's API; this header\n \
         * includes it, and its conventions hold here too.\n \
         *\n \
         * GENERATED by cbindgen from src/ffi (build.rs). Do not edit by hand.\n \
         */\n\n\
         #ifndef NATSIO_SYS_H\n\
         #define NATSIO_SYS_H\n\n\
         #include \"natsio.h\"\n\n\
         {types}\n\n\
         #ifdef __cplusplus\n\
         extern \"C\" {{\n\
         #endif  // __cplusplus\n\n\
         {fns}\n\n\
         #ifdef __cplusplus\n\
         }}  // extern \"C\"\n\
         #endif  // __cplusplus\n\n\
         #endif  /* NATSIO_SYS_H */\n",
        types = sys_types.join("\n\n"),
        fns = sys_fns.join("\n\n"),
    );
    (user.join("\n\n"), sys)
}

/// Writes only on change, so an unchanged header keeps its timestamp.
fn write_if_changed(path: &Path, text: &str) {
    if std::fs::read(path).ok().as_deref() != Some(text.as_bytes()) {
        if let Err(e) = std::fs::write(path, text) {
            panic!("write {}: {e}", path.display());
        }
    }
}

/// The shared library names its ABI version (`libnatsio.so.<major>`), so a
/// program linked with `-lnatsio` records that name, not the path of the
/// file it was linked against, and an install can keep several majors side
/// by side. Within cargo's output directory the same name is a symlink to
/// the library, so programs linked in the tree run there as they are.
fn soname(major: &str) {
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    match os.as_str() {
        "macos" | "ios" => {
            println!(
                "cargo:rustc-cdylib-link-arg=-Wl,-install_name,@rpath/libnatsio.{major}.dylib"
            );
            link_in_output_dir(&format!("libnatsio.{major}.dylib"), "libnatsio.dylib");
        }
        "windows" => {}
        _ => {
            println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libnatsio.so.{major}");
            link_in_output_dir(&format!("libnatsio.so.{major}"), "libnatsio.so");
        }
    }
}

/// `<out>/<profile>/name -> target`, where cargo puts the library (OUT_DIR
/// is `<out>/<profile>/build/natsio-<hash>/out`). Dangling until the library
/// is linked, which is fine for a symlink.
fn link_in_output_dir(name: &str, target: &str) {
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    let Some(profile_dir) = out.ancestors().nth(3) else {
        return;
    };
    let link = profile_dir.join(name);
    if std::fs::read_link(&link).ok().as_deref() == Some(Path::new(target)) {
        return;
    }
    let _ = std::fs::remove_file(&link);
    #[cfg(unix)]
    if let Err(e) = std::os::unix::fs::symlink(target, &link) {
        println!(
            "cargo:warning=could not link {} -> {target}: {e}",
            link.display()
        );
    }
}
