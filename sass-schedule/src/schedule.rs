//! A kernel's main loop as ptxas scheduled it: the loop with the tensor-core instructions, a
//! way around it, and that way cut into phases at each synchronization.
//!
//! The static cycles of a stretch of code are the sum of its instructions' stall counts:
//! the fewest cycles one warp takes to issue it when no scoreboard (a load, a shuffle, an
//! exponential) and no barrier holds it. A warp held by a stall count is what Nsight Compute
//! calls stalled on `wait`, so the static cycles of the steady-state loop are its `wait`
//! samples, predicted from the binary alone.

use crate::cfg::{Cfg, Loop};
use crate::listing::{Flow, Function, Instruction};
use crate::profile::Row;
use std::collections::BTreeMap;

/// The mnemonics of the tensor-core instructions: `mma.sync` (HMMA, IMMA) and `wgmma`
/// (HGMMA, QGMMA, IGMMA).
pub const TENSOR_CORE: [&str; 5] = ["HMMA", "HGMMA", "QGMMA", "IMMA", "IGMMA"];

/// Whether an instruction synchronizes: a named barrier (`BAR`), a wgmma fence or wait
/// (`WARPGROUP.ARRIVE`, `WARPGROUP.DEPBAR`), or a mbarrier wait (`SYNCS.PHASECHK`). A
/// phase runs from one to the next.
pub fn synchronizes(ins: &Instruction) -> bool {
    matches!(ins.mnemonic(), "BAR" | "WARPGROUP") || ins.opcode.starts_with("SYNCS.PHASECHK")
}

/// Which way around the loop a [`LoopSchedule`] follows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Way {
    /// The way of fewest static cycles: no masking, no skipped work taken, no mbarrier wait
    /// retried (in these kernels, the steady state).
    Lightest,
    /// The way the warps took most often, by the executed counts of a source page.
    Executed,
}

/// One phase of a way around the loop: from a synchronizing instruction (or the loop's
/// head) to the next.
#[derive(Clone, Debug)]
pub struct Phase {
    /// Indices into the function's instructions, in the order of the way.
    pub instructions: Vec<usize>,
    /// The sum of their stall counts.
    pub static_cycles: u64,
    /// With a source page: the warp samples on these instructions, and those stalled on
    /// `wait`.
    pub samples: Option<u64>,
    pub wait: Option<u64>,
}

impl Phase {
    /// The mnemonics of the phase, most frequent first.
    pub fn mnemonics<'a>(&self, f: &'a Function) -> Vec<(&'a str, usize)> {
        let mut count: BTreeMap<&str, usize> = BTreeMap::new();
        for &i in &self.instructions {
            *count.entry(f.instructions[i].mnemonic()).or_default() += 1;
        }
        let mut v: Vec<(&str, usize)> = count.into_iter().collect();
        v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
        v
    }
}

/// The main loop of one kernel and a way around it.
#[derive(Clone, Debug)]
pub struct LoopSchedule {
    pub lp: Loop,
    /// Instructions in the loop's blocks, and tensor-core instructions among them.
    pub loop_instructions: usize,
    pub loop_tensor_core: usize,
    pub way: Way,
    /// The way's instructions, in order.
    pub path: Vec<usize>,
    pub phases: Vec<Phase>,
}

impl LoopSchedule {
    pub fn static_cycles(&self) -> u64 {
        self.phases.iter().map(|p| p.static_cycles).sum()
    }

    /// How many of the way's instructions have this mnemonic.
    pub fn count(&self, f: &Function, mnemonic: &str) -> usize {
        self.path
            .iter()
            .filter(|&&i| f.instructions[i].mnemonic() == mnemonic)
            .count()
    }
}

/// The indices of a loop's tensor-core instructions.
fn tensor_core_instructions<'a>(
    f: &'a Function,
    cfg: &'a Cfg,
    lp: &'a Loop,
) -> impl Iterator<Item = usize> + 'a {
    lp.blocks
        .iter()
        .flat_map(|&b| cfg.blocks[b].start..cfg.blocks[b].end)
        .filter(|&i| TENSOR_CORE.contains(&f.instructions[i].mnemonic()))
}

/// The kernel's main loop (of the innermost loops with tensor-core instructions, the one with
/// the most; with `rows`, the one whose tensor-core instructions were executed most) and
/// a way around it: the executed one with `rows`, else the lightest. `None` when no loop
/// holds a tensor-core instruction.
pub fn main_loop(f: &Function, rows: Option<&[Row]>) -> Option<LoopSchedule> {
    let cfg = Cfg::of(f);
    // Loops with tensor-core instructions, each with how many and how often they ran.
    let with_tc: Vec<(Loop, usize, u64)> = cfg
        .loops()
        .into_iter()
        .map(|lp| {
            let tc: Vec<usize> = tensor_core_instructions(f, &cfg, &lp).collect();
            let executed = rows.map_or(0, |rows| tc.iter().map(|&i| rows[i].executed).sum());
            (lp, tc.len(), executed)
        })
        .filter(|&(_, tc, _)| tc > 0)
        .collect();
    // Innermost first: a loop around another such loop (a persistent kernel's loop over its
    // work tiles) is not the main loop.
    let innermost = with_tc.iter().filter(|(lp, _, _)| {
        !with_tc
            .iter()
            .any(|(inner, _, _)| inner.header != lp.header && inner.blocks.is_subset(&lp.blocks))
    });
    let (lp, loop_tensor_core, _) = innermost
        .max_by_key(|(lp, tc, executed)| (*executed, *tc, std::cmp::Reverse(lp.blocks.len())))?
        .clone();
    let cycles = |b: &crate::cfg::Block| -> u64 {
        f.instructions[b.start..b.end]
            .iter()
            .map(|i| u64::from(i.control.stall))
            .sum()
    };
    let (way, blocks) = match rows {
        None => (Way::Lightest, cfg.lightest_way_around(&lp, cycles)),
        Some(rows) => (Way::Executed, executed_way_around(&cfg, &lp, rows)),
    };
    let path: Vec<usize> = blocks
        .iter()
        .flat_map(|&b| cfg.blocks[b].start..cfg.blocks[b].end)
        .collect();
    let phases = phases(f, &path, rows);
    Some(LoopSchedule {
        loop_instructions: lp
            .blocks
            .iter()
            .map(|&b| cfg.blocks[b].end - cfg.blocks[b].start)
            .sum(),
        loop_tensor_core,
        lp,
        way,
        path,
        phases,
    })
}

/// From the header, each block's most executed successor in the loop, following no back
/// edge but the one to the header, until the way comes back to it.
fn executed_way_around(cfg: &Cfg, lp: &Loop, rows: &[Row]) -> Vec<usize> {
    let executed = |b: usize| rows[cfg.blocks[b].start].executed;
    let mut way = vec![lp.header];
    let mut u = lp.header;
    while way.len() <= lp.blocks.len() {
        let next = cfg.blocks[u]
            .successors
            .iter()
            .copied()
            .filter(|&v| lp.blocks.contains(&v) && (v == lp.header || !cfg.dominates(v, u)))
            .max_by_key(|&v| (executed(v), v == lp.header));
        match next {
            Some(v) if v != lp.header => {
                way.push(v);
                u = v;
            }
            _ => break,
        }
    }
    way
}

/// `path` cut before every synchronizing instruction.
pub fn phases(f: &Function, path: &[usize], rows: Option<&[Row]>) -> Vec<Phase> {
    let mut out: Vec<Phase> = Vec::new();
    for &i in path {
        if out.is_empty() || synchronizes(&f.instructions[i]) {
            out.push(Phase {
                instructions: Vec::new(),
                static_cycles: 0,
                samples: rows.map(|_| 0),
                wait: rows.map(|_| 0),
            });
        }
        let p = out.last_mut().unwrap();
        p.instructions.push(i);
        p.static_cycles += u64::from(f.instructions[i].control.stall);
        if let Some(rows) = rows {
            *p.samples.as_mut().unwrap() += rows[i].samples;
            *p.wait.as_mut().unwrap() += rows[i].wait.unwrap_or(0);
        }
    }
    out
}

/// One row of [`stall_versus_wait`]: the instructions of one stall count, how often they
/// were executed, and the `wait` samples on the instruction after each.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StallRow {
    pub stall: u8,
    pub instructions: usize,
    pub executed: u64,
    pub wait_after: u64,
}

impl StallRow {
    /// `wait` samples on the next instruction per million executions.
    pub fn wait_per_million(&self) -> f64 {
        if self.executed == 0 {
            0.0
        } else {
            self.wait_after as f64 * 1e6 / self.executed as f64
        }
    }
}

/// For each stall count, the executed instructions that carry it (branches and ends left
/// out: the instruction after them is not the next issued) and the `wait` samples that fell
/// on the instruction after each. If the stall count is what holds a warp in `wait`, the
/// samples grow with it, from none at a stall of 1.
pub fn stall_versus_wait(f: &Function, rows: &[Row]) -> Vec<StallRow> {
    let mut by: BTreeMap<u8, StallRow> = BTreeMap::new();
    for (i, ins) in f
        .instructions
        .iter()
        .enumerate()
        .take(f.instructions.len().saturating_sub(1))
    {
        if rows[i].executed == 0 || ins.flow() != Flow::Next {
            continue;
        }
        let r = by.entry(ins.control.stall).or_insert(StallRow {
            stall: ins.control.stall,
            instructions: 0,
            executed: 0,
            wait_after: 0,
        });
        r.instructions += 1;
        r.executed += rows[i].executed;
        r.wait_after += rows[i + 1].wait.unwrap_or(0);
    }
    by.into_values().collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::listing::{parse_listing, tests::LOOP};

    #[test]
    fn the_toy_loop_has_no_tensor_core_and_so_no_main_loop() {
        let f = parse_listing(LOOP).unwrap().remove(0);
        assert!(main_loop(&f, None).is_none());
    }

    /// A loop over work tiles around the main loop, each with a wgmma.
    const NESTED: &str = r#"
	code for sm_90a
		Function : persistent_bf16_d128
        /*0000*/                   MOV R1, c[0x0][0x28] ;                         /* 0x0 */
                                                                                  /* 0x000fe20000000000 */
        /*0010*/                   HGMMA.64x128x16.F32.BF16 R24, gdesc[UR8], RZ, !UPT ; /* 0x0 */
                                                                                  /* 0x000fe20000000000 */
        /*0020*/                   HGMMA.64x128x16.F32.BF16 R24, gdesc[UR12], R24 ; /* 0x0 */
                                                                                  /* 0x000fe20000000000 */
        /*0030*/               @P0 BRA 0x20 ;                                     /* 0x0 */
                                                                                  /* 0x000fea0000000000 */
        /*0040*/               @P1 BRA 0x10 ;                                     /* 0x0 */
                                                                                  /* 0x000fea0000000000 */
        /*0050*/                   EXIT ;                                         /* 0x0 */
                                                                                  /* 0x000fea0000000000 */
"#;

    #[test]
    fn the_main_loop_is_the_innermost_with_tensor_core_instructions() {
        let f = parse_listing(NESTED).unwrap().remove(0);
        let s = main_loop(&f, None).unwrap();
        // The inner loop: 0x20 and its back edge, not the tile loop from 0x10.
        assert_eq!(s.path, vec![2, 3]);
        assert_eq!(s.loop_tensor_core, 1);
    }

    #[test]
    fn phases_start_at_each_synchronization() {
        let f = parse_listing(LOOP).unwrap().remove(0);
        // The way 0x10 (try_wait), 0x20, 0x30, 0x40, 0x50, 0x70, 0x80.
        let path = vec![1, 2, 3, 4, 5, 7, 8];
        let p = phases(&f, &path, None);
        assert_eq!(
            p.len(),
            1,
            "only the try_wait synchronizes, and it starts the way"
        );
        assert_eq!(p[0].static_cycles, 2 + 5 + 1 + 7 + 5 + 13 + 5);
        let p = phases(&f, &[0, 1, 2], None);
        assert_eq!(
            p.iter().map(|p| p.instructions.clone()).collect::<Vec<_>>(),
            vec![vec![0], vec![1, 2]]
        );
    }
}
