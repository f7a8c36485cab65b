//! The kernels' shared CUDA headers, `include/flashlab/**`: what every stage's kernels
//! include as `<flashlab/...>` (the one kernel signature of `common.cuh`, one wrapper
//! header per PTX instruction family, the index functions, the Hopper stages' roles in
//! `hopper/`). Some are `__host__ __device__` (or constants alone) and are also compiled
//! for the host: layout-viz's and protocol-viz's `build.rs` link them so their figures
//! and models call the kernels' own index functions and read their constants, and the
//! harness's tests read the structs and enums it mirrors.
//!
//! Below the kernels and the host alike: `kernel-build` (every stage's `build.rs`) passes
//! [`INCLUDE_DIR`] to nvcc, layout-viz and protocol-viz to their C++ compiler, and none
//! names a path inside another crate.

/// The directory to pass as `-I`: `#include <flashlab/common.cuh>` finds
/// `INCLUDE_DIR/flashlab/common.cuh`.
pub const INCLUDE_DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/include");

/// For a build script (feature `host-build`): compiles the calling crate's
/// `cpp/kernel_fns.cpp`, which includes headers of [`INCLUDE_DIR`] for the host, into the
/// static library `lib`, and has cargo rebuild it when the shim or a header changes: a
/// figure or model that calls the kernels' functions is only right with their current code.
#[cfg(feature = "host-build")]
pub fn build_host_shim(lib: &str) {
    let manifest = std::path::PathBuf::from(
        std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"),
    );
    let shim = manifest.join("cpp").join("kernel_fns.cpp");
    cc::Build::new()
        .cpp(true)
        .std("c++17")
        .include(INCLUDE_DIR)
        .file(&shim)
        .warnings(true)
        .compile(lib);
    println!("cargo:rerun-if-changed={}", shim.display());
    println!("cargo:rerun-if-changed={INCLUDE_DIR}");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_include_dir_holds_the_headers() {
        let dir = std::path::Path::new(INCLUDE_DIR).join("flashlab");
        for header in ["common.cuh", "hostdev.cuh", "hopper/pipeline.cuh"] {
            assert!(
                dir.join(header).is_file(),
                "{header} not in {}",
                dir.display()
            );
        }
    }
}
