//! Regenerates include/natsio.h from src/ffi with cbindgen. The header is
//! committed; CI fails when a build changes it.

use std::path::PathBuf;

fn main() {
    println!("cargo:rerun-if-changed=src/ffi");
    println!("cargo:rerun-if-changed=cbindgen.toml");
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("manifest dir"));
    let config = match cbindgen::Config::from_file(root.join("cbindgen.toml")) {
        Ok(c) => c,
        Err(e) => panic!("cbindgen.toml: {e}"),
    };
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
    let path = root.join("include").join("natsio.h");
    let mut new = Vec::new();
    header.write(&mut new);
    // Write only on change, so an unchanged header keeps its timestamp.
    if std::fs::read(&path).ok().as_deref() != Some(&new[..]) {
        std::fs::create_dir_all(path.parent().expect("include dir")).expect("create include/");
        std::fs::write(&path, &new).expect("write include/natsio.h");
    }
}
