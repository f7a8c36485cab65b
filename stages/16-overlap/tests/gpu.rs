//! Stage 16 on the GPU against the oracle, over the shape grid of `harness::testing`.
//! Hopper only: on any other GPU each test says so and checks nothing.
harness::gpu_tests!(stage16_overlap::STAGE);
