//! Host build of what the kernels share with the models (`cpp/kernel_fns.cpp` including
//! `kernel-headers/include/flashlab/decode_index.cuh` and `hopper/turns.cuh`), linked into
//! protocol-viz so its models and figures run the kernels' own functions and numbers.
use std::path::PathBuf;

fn main() {
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
        .compile("flashlab_protocol_fns");

    // A changed header must rebuild the shim: the models are only right with the kernels'
    // current code.
    println!("cargo:rerun-if-changed={}", shim.display());
    println!("cargo:rerun-if-changed={}", headers.display());
}
