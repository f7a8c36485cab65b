//! Host build of the kernels' index headers (`cpp/kernel_fns.cpp` including
//! `kernel-headers/include/flashlab/*.cuh`), linked into layout-viz so its diagrams call the very
//! functions the CUDA kernels call. Skipped for wasm32.

fn main() {
    // C++ cannot be compiled for wasm32 (the book's playground): there the library uses
    // its own models of these functions instead (lib.rs says how they are kept equal).
    if std::env::var("CARGO_CFG_TARGET_ARCH").as_deref() == Ok("wasm32") {
        return;
    }
    flashlab_kernel_headers::build_host_shim("flashlab_kernel_fns");
}
