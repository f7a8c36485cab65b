// The stage's tile constants come from `src/tiles.rs`, so the kernel is checked against them.
include!("src/tiles.rs");

fn main() {
    kernel_build::compile_stage_kernels_with(SHARED_WITH_KERNEL);
}
