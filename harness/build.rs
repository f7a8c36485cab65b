fn main() {
    // harness/kernels/: the ceiling kernels of `sol` (no flashlab headers needed).
    kernel_build::compile_stage_kernels();
}
