//! The stage table: the one list of stages. `flashlab list`, `flashlab stage N`, the
//! just recipes (through `flashlab list`), the bench and the book's checks all read it.
//! Adding a stage is adding its crate and one line here; its row names the stage it builds
//! on, which makes the ladder a tree ([`ladder_branches`]).

use harness::{Stage, WorkloadKind};

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
    &stage16_overlap::STAGE,
    &stage17_wide_tile::STAGE,
    &stage18_head_dim_256::STAGE,
    &stage19_lazy_rescale::STAGE,
    &stage20_fp8::STAGE,
    &stage21_incoherent::STAGE,
    &stage22_backward::STAGE,
    &stage23_hopper_backward::STAGE,
    &stage24_v_transpose::STAGE,
    &stage25_backward_warp_tiles::STAGE,
    &stage26_lean_loop::STAGE,
    &stage27_wide_keys::STAGE,
    &stage28_three_consumers::STAGE,
    &stage29_ring_order::STAGE,
    &stage30_matrix_transpose::STAGE,
    &stage31_natural_v::STAGE,
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

/// The ladder as a tree, cut into branches: each branch a chain of stages, each building
/// on the one before it. A stage starts a branch when it builds on nothing, when its
/// parent runs on other GPUs or another workload (the Hopper stages after stage 9, decode),
/// or when an earlier stage already continues its parent's branch (a second idea tried on
/// the same parent). Branches come in the order of their first stage.
pub fn ladder_branches(stages: &[&dyn Stage]) -> Vec<Vec<u32>> {
    // Each stage's row with its workload's kind, which a branch never changes.
    let infos: Vec<(&harness::StageInfo, WorkloadKind)> = stages
        .iter()
        .map(|s| (s.info(), s.workload().kind()))
        .collect();
    let parent = |i: &harness::StageInfo| infos.iter().find(|p| Some(p.0.number) == i.builds_on);
    let continues = |(i, kind): (&harness::StageInfo, WorkloadKind)| -> bool {
        let Some(&(p, p_kind)) = parent(i) else {
            return false;
        };
        let same =
            |(c, c_kind): (&harness::StageInfo, WorkloadKind)| c.gpu == p.gpu && c_kind == p_kind;
        same((i, kind))
            && infos
                .iter()
                .filter(|&&(c, c_kind)| c.builds_on == Some(p.number) && same((c, c_kind)))
                .map(|c| c.0.number)
                .min()
                == Some(i.number)
    };
    let mut starts: Vec<u32> = infos
        .iter()
        .filter(|&&i| !continues(i))
        .map(|i| i.0.number)
        .collect();
    starts.sort();
    starts
        .into_iter()
        .map(|start| {
            let mut chain = vec![start];
            while let Some(next) = infos
                .iter()
                .find(|&&c| c.0.builds_on == chain.last().copied() && continues(c))
            {
                chain.push(next.0.number);
            }
            chain
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ladder_has_three_branches() {
        let branches = ladder_branches(STAGES);
        assert_eq!(
            branches[0],
            (1..=9).collect::<Vec<u32>>(),
            "prefill on mma.sync"
        );
        assert_eq!(
            branches[1][..6],
            [10, 11, 17, 12, 13, 16],
            "prefill on Hopper"
        );
        assert_eq!(branches[2], [14, 15], "decode");
        let listed: usize = branches.iter().map(Vec::len).sum();
        assert_eq!(
            listed,
            STAGES.len(),
            "every stage in one branch: {branches:?}"
        );
    }

    /// A parent may carry a later number (a step cut in two gives the new half the next
    /// free number), but every stage's chain of parents ends at stage 1: no cycles.
    #[test]
    fn every_parent_exists_and_the_ladder_is_a_tree() {
        for s in STAGES {
            let mut seen = vec![s.info().number];
            let mut at = s.info();
            while let Some(p) = at.builds_on {
                at = find(p)
                    .unwrap_or_else(|e| panic!("stage {}: {e}", at.number))
                    .info();
                assert!(
                    !seen.contains(&at.number),
                    "stage {} builds on itself through {seen:?}",
                    s.info().number
                );
                seen.push(at.number);
            }
            assert_eq!(
                at.number,
                1,
                "stage {}: its chain {seen:?}",
                s.info().number
            );
        }
        assert_eq!(
            STAGES
                .iter()
                .filter(|s| s.info().builds_on.is_none())
                .count(),
            1
        );
    }

    /// A stage's `tests/gpu.rs` is `harness::gpu_tests!`, which writes its own `main`: under
    /// libtest's harness that `main` is never called and the binary reports 0 tests, passed.
    #[test]
    fn every_stage_runs_its_gpu_tests_without_libtests_harness() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        for s in STAGES {
            let i = s.info();
            let dir = root.join(format!("stages/{:02}-{}", i.number, i.slug));
            let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
            let gpu = manifest
                .split("[[test]]")
                .skip(1)
                .find(|t| t.contains("name = \"gpu\""));
            assert!(
                gpu.is_some_and(|t| t.contains("harness = false")),
                "{}: add `[[test]] name = \"gpu\" harness = false` (see stage 13's)",
                dir.join("Cargo.toml").display()
            );
        }
    }
}
