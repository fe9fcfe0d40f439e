//! Regenerates include/natsio.h from src/ffi with cbindgen. The header is
//! committed; CI fails when a build changes it.

use std::path::PathBuf;

fn main() {
    println!("cargo:rerun-if-changed=src/ffi");
    println!("cargo:rerun-if-changed=cbindgen.toml");
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("manifest dir"));
    let config = cbindgen::Config::from_file(root.join("cbindgen.toml")).expect("cbindgen.toml");
    let header = match cbindgen::Builder::new()
        .with_crate(&root)
        .with_config(config)
        .generate()
    {
        Ok(h) => h,
        Err(e) => {
            // A syntax error is reported by rustc with a better message.
            println!("cargo:warning=cbindgen could not generate natsio.h: {e}");
            return;
        }
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
