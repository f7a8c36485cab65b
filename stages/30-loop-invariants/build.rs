// The stage's tile constants come from `src/tiles.rs`, so the kernel is checked against them.
include!("src/tiles.rs");

fn main() {
    // wgmma (and stage 10's TMA) are Hopper instructions: sm_90a only.
    kernel_build::compile_hopper_stage_kernels_with(SHARED_WITH_KERNEL);
}
