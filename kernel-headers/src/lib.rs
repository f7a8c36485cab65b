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
