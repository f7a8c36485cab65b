// The stage's tile constants come from `src/tiles.rs`, so the kernel is checked against them.
include!("src/tiles.rs");

fn main() {
    // FP8 wgmma (and TMA) are Hopper instructions: sm_90a only.
    kernel_build::compile_hopper_stage_kernels_with(SHARED_WITH_KERNEL);
}
