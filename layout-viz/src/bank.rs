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
//! own index functions through `kernel_fns` (on wasm32, from layout-viz's models of them:
//! `IndexFns`). `layout_access` builds a warp's access from any layout instead: lane l
//! touches the element a layout of lanes picks, which is how the playground draws the
//! bank map of what a reader types.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;
use thiserror::Error;

use crate::atoms::{self, RowCol};
#[cfg(not(target_arch = "wasm32"))]
use crate::kernel_fns;
use crate::layout::Layout;
use crate::swizzle::AnyLayout;

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
    #[error("unknown access `{name}`; known: {known}")]
    UnknownAccess { name: String, known: String },
    #[error("lanes {lanes}: {why}")]
    Lanes { lanes: String, why: String },
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

    /// The access names `layout_access` takes (`Op::from_name`), one per kind of access.
    pub const NAMES: &str = "ld32, ld64, ld128, st32, st64, st128, ldmatrix-x1|x2|x4[-trans]";

    /// An access by name: `ld32`/`st128` (a load or store of that many bits per lane) or
    /// `ldmatrix-x4[-trans]`.
    pub fn from_name(name: &str) -> Result<Op, BankError> {
        let unknown = || BankError::UnknownAccess {
            name: name.to_string(),
            known: Op::NAMES.to_string(),
        };
        if let Some(rest) = name.strip_prefix("ldmatrix-x") {
            let (num, trans) = match rest.strip_suffix("-trans") {
                Some(n) => (n, true),
                None => (rest, false),
            };
            return match num {
                "1" | "2" | "4" => Ok(Op::Ldmatrix {
                    num: num.parse().map_err(|_| unknown())?,
                    trans,
                }),
                _ => Err(unknown()),
            };
        }
        let (store, bits) = if let Some(b) = name.strip_prefix("ld") {
            (false, b)
        } else if let Some(b) = name.strip_prefix("st") {
            (true, b)
        } else {
            return Err(unknown());
        };
        match bits {
            "32" | "64" | "128" => Ok(Op::Access {
                bits: bits.parse().map_err(|_| unknown())?,
                store,
            }),
            _ => Err(unknown()),
        }
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

/// The kernels' index functions the stage patterns are computed from: the kernels' own
/// (`KERNELS`, the C++ host build, native targets only) or layout-viz's models of them
/// (`MODELS`: the atoms and `Swizzle`). `tests/bank.rs` holds the two equal on every
/// named pattern, so the playground (wasm32, models) draws what the CLI draws.
#[derive(Clone, Copy)]
pub struct IndexFns {
    /// `ldmatrix_address_of(lane)`: the (matrix, row) whose 16-byte row `lane` addresses.
    pub ldmatrix_address_of: fn(u32) -> (u32, u32),
    /// `mma_m16n8k16_a(lane, i)`: (m, k) of element i of lane's A fragment.
    pub mma_m16n8k16_a: fn(u32, u32) -> RowCol,
    /// `mma_m16n8k16_b(lane, i)`: (k, n) of element i of lane's B fragment.
    pub mma_m16n8k16_b: fn(u32, u32) -> RowCol,
    /// The element offset stored at (row, col) of a (rows x 64) tile:
    /// `tile_offset_swizzled<64>` (stage 4 on) or `tile_offset_rowmajor<64>` (stage 3).
    pub tile_offset: fn(u32, u32, bool) -> u64,
}

#[cfg(not(target_arch = "wasm32"))]
fn kernel_tile_offset(row: u32, col: u32, swizzled: bool) -> u64 {
    kernel_fns::tile_offset(HEAD_DIM as u32, swizzled, row, col)
        .expect("smem_tile.cuh lays out head dim 64")
}

fn model_ldmatrix_address_of(lane: u32) -> (u32, u32) {
    // The model draws matrix m's rows as stored rows 8m..8m+7.
    let stored = atoms::ldmatrix(4, false)
        .expect("ldmatrix.x4 exists")
        .src
        .coord(lane, 0)
        .row;
    (stored / 8, stored % 8)
}

fn model_mma_a(lane: u32, i: u32) -> RowCol {
    atoms::mma_m16n8k16_a().coord(lane, i)
}

fn model_mma_b(lane: u32, i: u32) -> RowCol {
    atoms::mma_m16n8k16_b().coord(lane, i)
}

/// Row-major 64-wide rows, under `Swizzle<3,3,3>` when swizzled (smem_tile.cuh's choice
/// for head dim 64: 8-element chunks XORed with the row mod 8).
fn model_tile_offset(row: u32, col: u32, swizzled: bool) -> u64 {
    let linear = i64::from(row) * HEAD_DIM as i64 + i64::from(col);
    if swizzled {
        crate::swizzle::Swizzle::new(3, 3, 3).apply(linear) as u64
    } else {
        linear as u64
    }
}

impl IndexFns {
    /// The kernels' own functions, from the host build.
    #[cfg(not(target_arch = "wasm32"))]
    pub const KERNELS: IndexFns = IndexFns {
        ldmatrix_address_of: kernel_fns::ldmatrix_address_of,
        mma_m16n8k16_a: kernel_fns::mma_m16n8k16_a,
        mma_m16n8k16_b: kernel_fns::mma_m16n8k16_b,
        tile_offset: kernel_tile_offset,
    };

    /// layout-viz's models of the same functions.
    pub const MODELS: IndexFns = IndexFns {
        ldmatrix_address_of: model_ldmatrix_address_of,
        mma_m16n8k16_a: model_mma_a,
        mma_m16n8k16_b: model_mma_b,
        tile_offset: model_tile_offset,
    };

    /// What `pattern` uses: the kernels' own functions wherever they can be compiled.
    #[cfg(not(target_arch = "wasm32"))]
    pub const DEFAULT: IndexFns = IndexFns::KERNELS;
    #[cfg(target_arch = "wasm32")]
    pub const DEFAULT: IndexFns = IndexFns::MODELS;
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
fn ldmatrix_tile_addrs(fns: &IndexFns, operand: Operand, swizzled: bool) -> Vec<Option<u64>> {
    (0..WARP as u32)
        .map(|lane| {
            let (matrix, row) = (fns.ldmatrix_address_of)(lane);
            let (r, c) = match operand {
                Operand::Q => {
                    let origin = (fns.mma_m16n8k16_a)(0, 2 * matrix);
                    (origin.row + row, origin.col)
                }
                Operand::K => {
                    // b[2j] of lane 0 is (k, n) = (8j, 0); K's stored row is n, column k.
                    let origin = (fns.mma_m16n8k16_b)(0, 2 * (matrix % 2));
                    (8 * (matrix / 2) + origin.col + row, origin.row)
                }
                Operand::V => {
                    // With .trans the stored rows are k (the kv index), columns n (d).
                    let origin = (fns.mma_m16n8k16_b)(0, 2 * (matrix % 2));
                    (origin.row + row, 8 * (matrix / 2) + origin.col)
                }
            };
            Some((fns.tile_offset)(r, c, swizzled) * ELEM_BYTES)
        })
        .collect()
}

/// The first warp's `cp.async` 16-byte stores of a (rows x 64) bf16 tile: lane l writes
/// chunk l % 8 of row l / 8.
fn cp_async_tile_addrs(fns: &IndexFns, swizzled: bool) -> Vec<Option<u64>> {
    (0..WARP as u32)
        .map(|lane| Some((fns.tile_offset)(lane / 8, 8 * (lane % 8), swizzled) * ELEM_BYTES))
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
    pattern_with(name, &IndexFns::DEFAULT)
}

/// A named access pattern, its stage reads computed from `fns`.
pub fn pattern_with(name: &str, fns: &IndexFns) -> Result<Access, BankError> {
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
        "ldmatrix-q-unswizzled" => (ldsm, ldmatrix_tile_addrs(fns, Operand::Q, false)),
        "ldmatrix-q-swizzled" => (ldsm, ldmatrix_tile_addrs(fns, Operand::Q, true)),
        "ldmatrix-k-unswizzled" => (ldsm, ldmatrix_tile_addrs(fns, Operand::K, false)),
        "ldmatrix-k-swizzled" => (ldsm, ldmatrix_tile_addrs(fns, Operand::K, true)),
        "ldmatrix-v-trans-unswizzled" => (
            Op::Ldmatrix {
                num: 4,
                trans: true,
            },
            ldmatrix_tile_addrs(fns, Operand::V, false),
        ),
        "ldmatrix-v-trans-swizzled" => (
            Op::Ldmatrix {
                num: 4,
                trans: true,
            },
            ldmatrix_tile_addrs(fns, Operand::V, true),
        ),
        "cp-async-unswizzled" => (
            Op::Access {
                bits: 128,
                store: true,
            },
            cp_async_tile_addrs(fns, false),
        ),
        "cp-async-swizzled" => (
            Op::Access {
                bits: 128,
                store: true,
            },
            cp_async_tile_addrs(fns, true),
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

/// A warp's access through a layout: lane `l` (for `l < size(lanes)`, the other lanes
/// idle) touches the element at offset `layout(lanes(l))`, i.e. `layout ∘ lanes` read
/// in `elem_bytes`-byte elements, with the access `op`. For a row-major (8,64) tile,
/// `lanes = (8,4):(1,64)` with `ldmatrix-x4` is lane l giving row l % 8, column
/// 8 (l / 8): the stage 3 and 4 reads.
pub fn layout_access(
    layout: &AnyLayout,
    lanes: &Layout,
    op: Op,
    elem_bytes: u32,
) -> Result<Access, BankError> {
    let bad_lanes = |why: String| BankError::Lanes {
        lanes: lanes.to_string(),
        why,
    };
    if elem_bytes == 0 {
        return Err(bad_lanes("elements of 0 bytes".to_string()));
    }
    if lanes.size() > WARP as i64 {
        return Err(bad_lanes(format!(
            "{} lanes, more than a warp's {WARP}",
            lanes.size()
        )));
    }
    let mut addrs = vec![None; WARP];
    for (lane, slot) in addrs
        .iter_mut()
        .enumerate()
        .take(lanes.size().max(0) as usize)
    {
        let index = lanes.call(lane as i64);
        if index < 0 || index >= layout.size() {
            return Err(bad_lanes(format!(
                "lane {lane} picks index {index}, outside the layout's 0..{}",
                layout.size()
            )));
        }
        let offset = layout.call(index);
        if offset < 0 {
            return Err(bad_lanes(format!(
                "lane {lane} picks offset {offset}: a negative address"
            )));
        }
        *slot = Some(offset as u64 * u64::from(elem_bytes));
    }
    let bytes = op.bytes_per_lane();
    Ok(Access {
        name: format!("{layout} by lanes {lanes}"),
        description: format!(
            "lane l {} {bytes} bytes at element offset L(lanes(l)) of L = {layout}, lanes = {lanes}, {elem_bytes}-byte elements",
            if matches!(op, Op::Access { store: true, .. }) {
                "stores"
            } else {
                "reads"
            },
        ),
        op,
        addrs,
    })
}
