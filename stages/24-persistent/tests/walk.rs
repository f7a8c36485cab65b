//! Stage 24 on the GPU in a grid of 3 blocks (`stage24_persistent::WALK`), over the same
//! shape grid as `tests/gpu.rs`: there most problems have fewer work tiles than the GPU has
//! SMs, so each block takes one; here each walks several. Hopper only: on any other GPU
//! each test is reported ignored, with the reason.
harness::gpu_tests!(stage24_persistent::WALK);
