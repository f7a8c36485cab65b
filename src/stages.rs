//! The stage table: the one list of stages. `flashlab list`, `flashlab stage N`, the
//! just recipes (through `flashlab list`), the bench and the book's checks all read it.
//! Adding a stage is adding its crate and one line here.

use harness::Stage;

#[rustfmt::skip]
pub static STAGES: &[&dyn Stage] = &[
    &stage01_naive::STAGE,
    &stage02_online_softmax::STAGE,
    &stage03_tensor_cores::STAGE,
    &stage04_swizzle::STAGE,
    &stage05_cp_async::STAGE,
    &stage06_fewer_instructions::STAGE,
    &stage07_fa2_shape::STAGE,
    &stage08_mask_split::STAGE,
    &stage09_lean_softmax::STAGE,
    &stage10_tma::STAGE,
    &stage11_wgmma::STAGE,
    &stage12_warp_specialized::STAGE,
    &stage13_ping_pong::STAGE,
    &stage14_flash_decode::STAGE,
    &stage15_fused_combine::STAGE,
];

/// The stage numbered `n`, or an error listing the stages that exist.
pub fn find(n: u32) -> Result<&'static dyn Stage, String> {
    STAGES
        .iter()
        .copied()
        .find(|s| s.info().number == n)
        .ok_or_else(|| {
            let numbers: Vec<String> = STAGES.iter().map(|s| s.info().number.to_string()).collect();
            format!(
                "there is no stage {n}; the stages are {}",
                numbers.join(", ")
            )
        })
}
