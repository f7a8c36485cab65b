// The streaming read's slab comes from `src/tiles.rs`, so the kernel is checked against it.
include!("src/tiles.rs");

fn main() {
    // harness/kernels/: the ceiling kernels of `sol` (no flashlab headers needed).
    kernel_build::compile_stage_kernels_with(SHARED_WITH_KERNEL);
}
