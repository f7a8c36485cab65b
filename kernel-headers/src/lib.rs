//! The kernels' shared CUDA headers, `include/flashlab/**`: what every stage's kernels
//! include as `<flashlab/...>` (the one kernel signature of `common.cuh`, one wrapper
//! header per PTX instruction family, the index functions, the Hopper stages' roles in
//! `hopper/`). Some are `__host__ __device__` (or constants alone) and are also compiled
//! for the host: layout-viz's and protocol-viz's `build.rs` link them so their figures
//! and models call the kernels' own index functions and read their constants, and the
//! harness's tests read the structs and enums it mirrors.
//!
//! Below the kernels and the host alike: `kernel-build` (every stage's `build.rs`) passes
//! the checkout's include directory ([`include_dir_for`]) to nvcc, layout-viz and
//! protocol-viz to their C++ compiler, and none names a path inside another crate.

/// The directory to pass as `-I`: `#include <flashlab/common.cuh>` finds
/// `INCLUDE_DIR/flashlab/common.cuh`. It is the path of the checkout this crate was
/// compiled in: a build or test of another checkout that shares the target directory can
/// reuse that compiled crate (cargo's hash of a path crate leaves out where it lives), so
/// build scripts and tests ask [`include_dir_for`] with their own manifest directory.
pub const INCLUDE_DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/include");

/// The include directory of the checkout that holds `manifest_dir` (a crate of the
/// workspace: `CARGO_MANIFEST_DIR` of a build script, or `env!` of a test): the
/// `kernel-headers/include` of the nearest directory above it that has one, else
/// [`INCLUDE_DIR`]. With two checkouts sharing one target directory, [`INCLUDE_DIR`] may
/// name the other checkout; this never does.
pub fn include_dir_for(manifest_dir: &std::path::Path) -> std::path::PathBuf {
    manifest_dir
        .ancestors()
        .map(|dir| dir.join("kernel-headers").join("include"))
        .find(|dir| dir.join("flashlab").join("common.cuh").is_file())
        .unwrap_or_else(|| std::path::PathBuf::from(INCLUDE_DIR))
}

/// For a build script (feature `host-build`): compiles the calling crate's
/// `cpp/kernel_fns.cpp`, which includes the checkout's headers ([`include_dir_for`]) for the
/// host, into the static library `lib`, and has cargo rebuild it when the shim or a header
/// changes: a figure or model that calls the kernels' functions is only right with their
/// current code.
#[cfg(feature = "host-build")]
pub fn build_host_shim(lib: &str) {
    let manifest = std::path::PathBuf::from(
        std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"),
    );
    let shim = manifest.join("cpp").join("kernel_fns.cpp");
    let include = include_dir_for(&manifest);
    cc::Build::new()
        .cpp(true)
        .std("c++17")
        .include(&include)
        .file(&shim)
        .warnings(true)
        .compile(lib);
    println!("cargo:rerun-if-changed={}", shim.display());
    println!("cargo:rerun-if-changed={}", include.display());
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Asked from this crate or from a stage's folder, the checkout's own include directory.
    #[test]
    fn every_crate_of_the_checkout_finds_its_include_dir() {
        let here = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let root = here.parent().unwrap();
        for dir in [
            here.to_path_buf(),
            root.to_path_buf(),
            root.join("stages").join("01-naive"),
        ] {
            assert_eq!(
                include_dir_for(&dir),
                std::path::Path::new(INCLUDE_DIR),
                "{}",
                dir.display()
            );
        }
        let elsewhere = std::env::temp_dir();
        assert_eq!(
            include_dir_for(&elsewhere),
            std::path::Path::new(INCLUDE_DIR)
        );
    }

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
