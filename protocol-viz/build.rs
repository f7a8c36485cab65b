//! Host build of what the kernels share with the models (`cpp/kernel_fns.cpp` including
//! `kernel-headers/include/flashlab/decode_index.cuh` and `hopper/turns.cuh`), linked into
//! protocol-viz so its models and figures run the kernels' own functions and numbers.

fn main() {
    flashlab_kernel_headers::build_host_shim("flashlab_protocol_fns");
}
