//! Stage 14 on the GPU against the oracle, over the decode grid of `harness::decode::testing`.
harness::gpu_tests!(stage14_flash_decode::STAGE);
