//! Stage 31 on the GPU against the oracle, over the shape grid of `harness::testing` at head
//! dim 128, bf16, and on one sequence of 8192 keys, with the bound from FP8's own error
//! (`reference::fp8_attention`'s emulation of the same casts). Hopper only: on any other GPU
//! each test is reported ignored, with the reason.
harness::gpu_tests!(stage31_natural_v::STAGE);
