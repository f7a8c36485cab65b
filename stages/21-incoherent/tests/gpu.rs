//! Stage 21 on the GPU against the oracle, over the shape grid of `harness::testing` at head
//! dims 64, 128 and 256, bf16, with the bound from the FP8 emulation of the same recipe, rotation
//! included (`reference::fp8_attention`). Hopper only: on any other GPU each test is
//! reported ignored, with the reason.
harness::gpu_tests!(stage21_incoherent::STAGE);
