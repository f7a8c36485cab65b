//! Shared-memory bank-conflict simulation for one warp-wide instruction.
//!
//! The model (NVIDIA SM80/SM90, as the CUDA programming guide and Nsight Compute count
//! it): 32 banks of 4-byte words. A warp's 32-bit access is served in one phase of 32
//! lanes, a 64-bit access in 2 phases of 16 lanes, a 128-bit access in 4 phases of 8
//! lanes (quarter-warps), and `ldmatrix.xN` in N phases of 8 lanes, each lane giving one
//! 16-byte row address. Within a phase, distinct words in one bank serialize, while lanes
//! reading the same word share it (broadcast); the phase takes as many wavefronts as the
//! busiest bank has distinct words. The ideal is one wavefront per phase.
//!
//! The named patterns (`pattern`) are the stages' real reads, computed from the kernels'
//! own index functions through `kernel_fns`.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;
use thiserror::Error;

use crate::kernel_fns::{self, KernelFnError};

/// Banks in shared memory.
pub const BANKS: u32 = 32;
/// Bytes per bank word.
pub const WORD_BYTES: u64 = 4;
/// Lanes in a warp.
pub const WARP: usize = 32;

/// An access that the simulator cannot model.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum BankError {
    #[error("expected one address slot per lane (32), got {0}")]
    LaneCount(usize),
    #[error("lane {lane}: address {addr:#x} is not aligned to the {bytes}-byte access")]
    Misaligned { lane: usize, addr: u64, bytes: u64 },
    #[error("unsupported access: {0}")]
    Unsupported(String),
    #[error("unknown access pattern `{name}`; known: {known}")]
    UnknownPattern { name: String, known: String },
    #[error(transparent)]
    KernelFn(#[from] KernelFnError),
}

/// The instruction issuing the access.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Op {
    /// `ld.shared` / `st.shared` (or a `cp.async` landing) of `bits` per lane: 32, 64, 128.
    Access { bits: u32, store: bool },
    /// `ldmatrix.x{num}`: lanes 8m..8m+7 give the 16-byte rows of matrix m.
    Ldmatrix { num: u32, trans: bool },
}

impl Op {
    /// Bytes each active lane touches.
    pub fn bytes_per_lane(self) -> u64 {
        match self {
            Op::Access { bits, .. } => u64::from(bits / 8),
            Op::Ldmatrix { .. } => 16,
        }
    }

    /// The lane groups served together, in order.
    pub fn phases(self) -> Result<Vec<std::ops::Range<usize>>, BankError> {
        let (count, width) = match self {
            Op::Access { bits: 32, .. } => (1, 32),
            Op::Access { bits: 64, .. } => (2, 16),
            Op::Access { bits: 128, .. } => (4, 8),
            Op::Access { bits, .. } => {
                return Err(BankError::Unsupported(format!("{bits}-bit access")));
            }
            Op::Ldmatrix { num, .. } if [1, 2, 4].contains(&num) => (num as usize, 8),
            Op::Ldmatrix { num, .. } => {
                return Err(BankError::Unsupported(format!("ldmatrix.x{num}")));
            }
        };
        Ok((0..count).map(|p| p * width..(p + 1) * width).collect())
    }

    /// PTX-like spelling for captions.
    pub fn describe(self) -> String {
        match self {
            Op::Access { bits, store } => {
                format!("{}.shared.b{bits}", if store { "st" } else { "ld" })
            }
            Op::Ldmatrix { num, trans } => {
                format!("ldmatrix.x{num}{}", if trans { ".trans" } else { "" })
            }
        }
    }
}

/// One warp-wide shared-memory instruction: each lane's byte address (`None`: inactive,
/// or ignored, like lanes 8..31 of `ldmatrix.x1`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Access {
    pub name: String,
    pub description: String,
    pub op: Op,
    pub addrs: Vec<Option<u64>>,
}

/// Distinct words that collide in one bank within a phase.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BankConflict {
    pub bank: u32,
    /// Byte addresses of the distinct words, ascending.
    pub words: Vec<u64>,
    /// Lanes touching this bank in the phase, ascending.
    pub lanes: Vec<u32>,
}

/// How one phase was served.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PhaseReport {
    pub index: usize,
    pub first_lane: usize,
    pub last_lane: usize,
    /// Max over banks of the distinct words in that bank (0 if no lane was active).
    pub wavefronts: u32,
    /// Banks with more than one distinct word, ascending by bank.
    pub conflicts: Vec<BankConflict>,
}

/// What one lane touches.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LaneAccess {
    pub lane: u32,
    pub phase: usize,
    pub addr: u64,
    /// The banks of the lane's words, in address order.
    pub banks: Vec<u32>,
}

/// The simulator's verdict on one instruction.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BankReport {
    pub name: String,
    pub op: String,
    pub wavefronts: u32,
    /// One wavefront per phase with an active lane.
    pub ideal: u32,
    /// The worst phase's wavefront count (1 = conflict-free).
    pub max_way: u32,
    pub phases: Vec<PhaseReport>,
    pub lanes: Vec<LaneAccess>,
}

impl BankReport {
    pub fn conflict_free(&self) -> bool {
        self.wavefronts == self.ideal
    }
}

/// The bank of a byte address.
pub fn bank_of(addr: u64) -> u32 {
    ((addr / WORD_BYTES) % u64::from(BANKS)) as u32
}

/// Runs the model on one access.
pub fn simulate(access: &Access) -> Result<BankReport, BankError> {
    if access.addrs.len() != WARP {
        return Err(BankError::LaneCount(access.addrs.len()));
    }
    let bytes = access.op.bytes_per_lane();
    let phases = access.op.phases()?;
    let mut reports = Vec::new();
    let mut lanes = Vec::new();
    for (index, range) in phases.iter().enumerate() {
        // bank -> (distinct words, lanes); BTree for a deterministic report.
        let mut banks: BTreeMap<u32, (BTreeSet<u64>, BTreeSet<u32>)> = BTreeMap::new();
        for lane in range.clone() {
            let Some(addr) = access.addrs[lane] else {
                continue;
            };
            if addr % bytes != 0 {
                return Err(BankError::Misaligned { lane, addr, bytes });
            }
            let mut lane_banks = Vec::new();
            for word in (addr..addr + bytes).step_by(WORD_BYTES as usize) {
                let b = bank_of(word);
                lane_banks.push(b);
                let entry = banks.entry(b).or_default();
                entry.0.insert(word);
                entry.1.insert(lane as u32);
            }
            lanes.push(LaneAccess {
                lane: lane as u32,
                phase: index,
                addr,
                banks: lane_banks,
            });
        }
        let wavefronts = banks
            .values()
            .map(|(w, _)| w.len() as u32)
            .max()
            .unwrap_or(0);
        let conflicts = banks
            .into_iter()
            .filter(|(_, (w, _))| w.len() > 1)
            .map(|(bank, (w, l))| BankConflict {
                bank,
                words: w.into_iter().collect(),
                lanes: l.into_iter().collect(),
            })
            .collect();
        reports.push(PhaseReport {
            index,
            first_lane: range.start,
            last_lane: range.end - 1,
            wavefronts,
            conflicts,
        });
    }
    Ok(BankReport {
        name: access.name.clone(),
        op: access.op.describe(),
        wavefronts: reports.iter().map(|p| p.wavefronts).sum(),
        ideal: reports.iter().filter(|p| p.wavefronts > 0).count() as u32,
        max_way: reports.iter().map(|p| p.wavefronts).max().unwrap_or(0),
        phases: reports,
        lanes,
    })
}

/// The stages' tiles: head dimension 64 of bf16, so a Q/K/V row is 128 bytes, one full
/// sweep of the 32 banks.
pub const HEAD_DIM: u64 = 64;
/// Bytes per bf16 element.
pub const ELEM_BYTES: u64 = 2;

/// The element offset stored at (row, col) of a (rows x 64) tile: the kernels' own
/// `tile_offset_swizzled<64>` (stage 4 on) or `tile_offset_rowmajor<64>` (stage 3).
fn tile_offset(row: u32, col: u32, swizzled: bool) -> Result<u64, BankError> {
    Ok(kernel_fns::tile_offset(HEAD_DIM as u32, swizzled, row, col)
        .expect("smem_tile.cuh lays out head dim 64"))
}

/// Which tile the warp's `ldmatrix.x4` reads, and how the four matrices map onto it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Operand {
    /// Q as mma.m16n8k16's A (16 x 16 at k-step 0): matrix m covers the block whose first
    /// element is a[2m] of lane 0.
    Q,
    /// K (stored n x d) as B for two n-blocks: matrices 2j, 2j+1 are n-block j's b[0..1],
    /// b[2..3].
    K,
    /// V (stored kv x d) read with .trans as B of P·V, for two d-blocks.
    V,
}

/// The 32 lane addresses of the warp's first `ldmatrix.x4` of a Q, K or V tile. The
/// lane -> (matrix, row) map and the matrix -> block map both come from the kernels'
/// index functions (`ldmatrix_address_of`, `mma_m16n8k16_a/b` of lane 0, whose element
/// 2m is the top-left of the block register m holds).
fn ldmatrix_tile_addrs(operand: Operand, swizzled: bool) -> Result<Vec<Option<u64>>, BankError> {
    (0..WARP as u32)
        .map(|lane| {
            let (matrix, row) = kernel_fns::ldmatrix_address_of(lane);
            let (r, c) = match operand {
                Operand::Q => {
                    let origin = kernel_fns::mma_m16n8k16_a(0, 2 * matrix);
                    (origin.row + row, origin.col)
                }
                Operand::K => {
                    // b[2j] of lane 0 is (k, n) = (8j, 0); K's stored row is n, column k.
                    let origin = kernel_fns::mma_m16n8k16_b(0, 2 * (matrix % 2));
                    (8 * (matrix / 2) + origin.col + row, origin.row)
                }
                Operand::V => {
                    // With .trans the stored rows are k (the kv index), columns n (d).
                    let origin = kernel_fns::mma_m16n8k16_b(0, 2 * (matrix % 2));
                    (origin.row + row, 8 * (matrix / 2) + origin.col)
                }
            };
            Ok(Some(tile_offset(r, c, swizzled)? * ELEM_BYTES))
        })
        .collect()
}

/// The first warp's `cp.async` 16-byte stores of a (rows x 64) bf16 tile: lane l writes
/// chunk l % 8 of row l / 8.
fn cp_async_tile_addrs(swizzled: bool) -> Result<Vec<Option<u64>>, BankError> {
    (0..WARP as u32)
        .map(|lane| {
            Ok(Some(
                tile_offset(lane / 8, 8 * (lane % 8), swizzled)? * ELEM_BYTES,
            ))
        })
        .collect()
}

/// The named patterns, with one-line descriptions.
pub const PATTERNS: &[(&str, &str)] = &[
    (
        "ldmatrix-q-unswizzled",
        "stage 3: ldmatrix.x4 of Q (A operand) from an unswizzled 64-wide bf16 tile",
    ),
    (
        "ldmatrix-q-swizzled",
        "stage 4: ldmatrix.x4 of Q (A operand) from a Swizzle<3,3,3> tile",
    ),
    (
        "ldmatrix-k-unswizzled",
        "stage 3: ldmatrix.x4 of K (B operand, 2 n-blocks) from an unswizzled tile",
    ),
    (
        "ldmatrix-k-swizzled",
        "stage 4: ldmatrix.x4 of K (B operand, 2 n-blocks) from a Swizzle<3,3,3> tile",
    ),
    (
        "ldmatrix-v-trans-unswizzled",
        "stage 3: ldmatrix.x4.trans of V (B operand of P*V) from an unswizzled tile",
    ),
    (
        "ldmatrix-v-trans-swizzled",
        "stage 4: ldmatrix.x4.trans of V from a Swizzle<3,3,3> tile",
    ),
    (
        "cp-async-unswizzled",
        "cp.async 16B stores of warp 0 into an unswizzled 64-wide bf16 tile",
    ),
    (
        "cp-async-swizzled",
        "cp.async 16B stores of warp 0 into a Swizzle<3,3,3> tile",
    ),
    ("lds32-consecutive", "32 lanes read 32 consecutive words"),
    ("lds32-broadcast", "32 lanes read the same word"),
    (
        "lds32-stride32",
        "lane l reads word 32*l: every lane in bank 0",
    ),
    (
        "lds64-consecutive",
        "32 lanes read consecutive 8-byte words",
    ),
    (
        "lds128-consecutive",
        "32 lanes read consecutive 16-byte vectors",
    ),
];

/// A named access pattern.
pub fn pattern(name: &str) -> Result<Access, BankError> {
    let description = PATTERNS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, d)| d.to_string())
        .ok_or_else(|| BankError::UnknownPattern {
            name: name.to_string(),
            known: PATTERNS
                .iter()
                .map(|(n, _)| *n)
                .collect::<Vec<_>>()
                .join(", "),
        })?;
    let ldsm = Op::Ldmatrix {
        num: 4,
        trans: false,
    };
    let every = |step: u64| (0..WARP as u64).map(|l| Some(l * step)).collect::<Vec<_>>();
    let load = |bits| Op::Access { bits, store: false };
    let (op, addrs) = match name {
        "ldmatrix-q-unswizzled" => (ldsm, ldmatrix_tile_addrs(Operand::Q, false)?),
        "ldmatrix-q-swizzled" => (ldsm, ldmatrix_tile_addrs(Operand::Q, true)?),
        "ldmatrix-k-unswizzled" => (ldsm, ldmatrix_tile_addrs(Operand::K, false)?),
        "ldmatrix-k-swizzled" => (ldsm, ldmatrix_tile_addrs(Operand::K, true)?),
        "ldmatrix-v-trans-unswizzled" => (
            Op::Ldmatrix {
                num: 4,
                trans: true,
            },
            ldmatrix_tile_addrs(Operand::V, false)?,
        ),
        "ldmatrix-v-trans-swizzled" => (
            Op::Ldmatrix {
                num: 4,
                trans: true,
            },
            ldmatrix_tile_addrs(Operand::V, true)?,
        ),
        "cp-async-unswizzled" => (
            Op::Access {
                bits: 128,
                store: true,
            },
            cp_async_tile_addrs(false)?,
        ),
        "cp-async-swizzled" => (
            Op::Access {
                bits: 128,
                store: true,
            },
            cp_async_tile_addrs(true)?,
        ),
        "lds32-consecutive" => (load(32), every(4)),
        "lds32-broadcast" => (load(32), every(0)),
        "lds32-stride32" => (load(32), every(128)),
        "lds64-consecutive" => (load(64), every(8)),
        "lds128-consecutive" => (load(128), every(16)),
        _ => unreachable!("every name in PATTERNS has a case"),
    };
    Ok(Access {
        name: name.to_string(),
        description,
        op,
        addrs,
    })
}
