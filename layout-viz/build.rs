//! Host build of the kernels' index headers (`cpp/kernel_fns.cpp` including
//! `kernel-headers/include/flashlab/*.cuh`), linked into layout-viz so its diagrams call the very
//! functions the CUDA kernels call. Skipped for wasm32.
use std::path::PathBuf;

fn main() {
    // C++ cannot be compiled for wasm32 (the book's playground): there the library uses
    // its own models of these functions instead (lib.rs says how they are kept equal).
    if std::env::var("CARGO_CFG_TARGET_ARCH").as_deref() == Ok("wasm32") {
        return;
    }
    let manifest = PathBuf::from(
        std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"),
    );
    let shim = manifest.join("cpp").join("kernel_fns.cpp");
    let headers = PathBuf::from(flashlab_kernel_headers::INCLUDE_DIR);

    cc::Build::new()
        .cpp(true)
        .std("c++17")
        .include(&headers)
        .file(&shim)
        .warnings(true)
        .compile("flashlab_kernel_fns");

    // A changed header must rebuild the shim: the diagrams are only right if they run
    // the kernels' current code.
    println!("cargo:rerun-if-changed={}", shim.display());
    println!("cargo:rerun-if-changed={}", headers.display());
}
