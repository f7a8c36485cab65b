fn main() {
    kernel_build::compile_stage_kernels();

    // The tail split's partition (`tail_split.cuh`) built for the host as well, for the
    // CPU tests in src/tail_split.rs.
    let shim = std::path::Path::new("cpp/tail_split.cpp");
    cc::Build::new()
        .cpp(true)
        .std("c++17")
        .include("../include")
        .file(shim)
        .warnings(true)
        .compile("flashlab_tail_split");
    println!("cargo:rerun-if-changed={}", shim.display());
    println!("cargo:rerun-if-changed=../include/flashlab/tail_split.cuh");
}
