fn main() {
    kernel_build::compile_stage_kernels();
}
