//! Stage 5 — pipelining: K and V tiles arrive by `cp.async` into a ring of slots while
//! the warps compute on an earlier tile; `ldmatrix.x4` for K and V. Every configuration
//! in [`VARIANTS`] (warps, rows per warp, BLOCK_KV, ring depth) is compiled, and
//! `FLASHLAB_STAGE5=<name>` picks one at run time, so the tuning is an experiment a reader
//! can repeat without rebuilding.
//! Book: "Stage 5: cp.async pipelining".

use harness::kernels::kernel_name;
use harness::{DType, Error, Gpu, KernelBundle, LaunchArgs, Result, Stage, StageInfo};

pub static KERNELS: KernelBundle = harness::include_kernels!();

pub static INFO: StageInfo = StageInfo {
    number: 5,
    slug: "cp-async",
    idea: "cp.async ring of K/V tiles overlapping loads with compute; ldmatrix.x4; addresses stepped, not recomputed",
    min_compute_capability: (8, 0),
    head_dims: &[64, 128],
    dtypes: &[DType::Bf16, DType::F16],
    kernels: &KERNELS,
};

/// One compiled configuration of `kernels/cp_async.cu` (`CP_ASYNC_VARIANT`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Variant {
    pub warps: u32,
    /// m16 row tiles per warp: each warp owns 16 * m_tiles query rows.
    pub m_tiles: u32,
    pub block_kv: u32,
    /// Slots in the cp.async ring.
    pub stages: u32,
    /// One barrier per tile (name suffix `b`): wait for K and V together, then refill the
    /// slot every warp has just finished with. Needs a 2-slot ring.
    pub one_barrier: bool,
    /// Row sums on the tensor cores (suffix `x`): P times a fragment of ones, 8 `mma` per
    /// tile instead of 64 `FADD` and the shuffles.
    pub rowsum_mma: bool,
    /// Lazy rescale (suffix `r`): a row's max moves only when it grows by more than 8
    /// (log2 units), and O is rescaled, just before P V, only when some row's max moved.
    pub lazy: bool,
    /// Chunked P (suffix `c`, one-barrier loop only): each k-step's exponentials right
    /// before its P V products, instead of all of P before P V.
    pub chunked: bool,
}

impl Variant {
    const fn new(warps: u32, m_tiles: u32, block_kv: u32, stages: u32) -> Variant {
        Variant {
            warps,
            m_tiles,
            block_kv,
            stages,
            one_barrier: false,
            rowsum_mma: false,
            lazy: false,
            chunked: false,
        }
    }

    /// `w8m1k64s2`: the kernel-name prefix after `cp_async_`, and the `FLASHLAB_STAGE5` value.
    pub fn name(&self) -> String {
        format!(
            "w{}m{}k{}s{}{}{}{}{}",
            self.warps,
            self.m_tiles,
            self.block_kv,
            self.stages,
            if self.one_barrier { "b" } else { "" },
            if self.rowsum_mma { "x" } else { "" },
            if self.lazy { "r" } else { "" },
            if self.chunked { "c" } else { "" }
        )
    }

    pub fn block_q(&self) -> u32 {
        16 * self.warps * self.m_tiles
    }

    /// The Q tile plus `stages` slots of K and V, 2-byte elements.
    pub fn smem_bytes(&self, head_dim: usize) -> u32 {
        (self.block_q() + 2 * self.stages * self.block_kv) * head_dim as u32 * 2
    }
}

/// FlashAttention-2's tile shape: 4 warps of 32 rows (two m16 tiles each), BLOCK_KV 64, a
/// 2-slot ring, K and V waited for separately. The default at head dim 128 until step 10
/// of the chapter.
pub const FA2_SHAPE: Variant = Variant::new(4, 2, 64, 2);

/// Every variant `CP_ASYNC_VARIANT` exports, in the same order.
pub const VARIANTS: &[Variant] = &[
    Variant::new(4, 1, 64, 2),
    Variant::new(8, 1, 64, 2),
    Variant::new(8, 1, 64, 3),
    Variant::new(4, 2, 32, 2),
    Variant::new(4, 2, 32, 3),
    FA2_SHAPE,
    Variant {
        one_barrier: true,
        ..FA2_SHAPE
    },
    Variant {
        one_barrier: true,
        ..Variant::new(4, 1, 64, 2)
    },
    Variant {
        lazy: true,
        ..FA2_SHAPE
    },
    D64_DEFAULT,
    Variant {
        chunked: false,
        ..D128_DEFAULT
    },
    D128_DEFAULT,
];

/// FA2's shape with one barrier per tile (P V inside the tile's straight-line code), row
/// sums on the tensor cores, the lazy rescale and chunked P: the default at head dim 128.
pub const D128_DEFAULT: Variant = Variant {
    one_barrier: true,
    rowsum_mma: true,
    lazy: true,
    chunked: true,
    ..FA2_SHAPE
};
/// One barrier and row sums by mma, without the lazy rescale or chunked P: the default at
/// head dim 64, where O's rescale is 64 FMUL per tile and the branch around it costs more
/// than it saves, and each k-step's 16 P V products are too few to hide its 16 exp2.
pub const D64_DEFAULT: Variant = Variant {
    one_barrier: true,
    rowsum_mma: true,
    ..FA2_SHAPE
};

/// The variant used when `FLASHLAB_STAGE5` is not set, chosen per head dim from the H200
/// measurements in the book's stage 5 chapter ("Tuning: predict, change, measure"); the
/// same one wins with and without a causal mask.
pub fn default_variant(head_dim: usize) -> Variant {
    if head_dim <= 64 {
        D64_DEFAULT
    } else {
        D128_DEFAULT
    }
}

/// The variant to launch: `FLASHLAB_STAGE5=<name>` (e.g. `w4m2k32s2`) if set, else the default.
pub fn variant(head_dim: usize) -> Result<Variant> {
    let Ok(name) = std::env::var("FLASHLAB_STAGE5") else {
        return Ok(default_variant(head_dim));
    };
    VARIANTS
        .iter()
        .copied()
        .find(|v| v.name() == name.trim())
        .ok_or_else(|| {
            let names: Vec<String> = VARIANTS.iter().map(Variant::name).collect();
            Error::InvalidProblem(format!(
                "FLASHLAB_STAGE5={name} is not a compiled variant; use one of {}",
                names.join(", ")
            ))
        })
}

pub struct CpAsync;
pub static STAGE: CpAsync = CpAsync;

impl Stage for CpAsync {
    fn info(&self) -> &'static StageInfo {
        &INFO
    }

    fn launch(&self, gpu: &Gpu, args: &LaunchArgs) -> Result<()> {
        let p = &args.problem;
        let v = variant(p.head_dim)?;
        let grid = (
            (p.seqlen_q as u32).div_ceil(v.block_q()),
            p.heads as u32,
            p.batch as u32,
        );
        let prefix = format!("cp_async_{}", v.name());
        let function = KERNELS.function(gpu, &kernel_name(&prefix, p.dtype, p.head_dim))?;
        gpu.launch(
            &function,
            grid,
            (v.warps * 32, 1, 1),
            v.smem_bytes(p.head_dim),
            &args.params,
        )
    }

    /// With two m16 tiles per warp at head dim 128, O takes 128 registers and S 64, and
    /// ptxas may keep a few loop invariants (copy cursors, ldmatrix bases) in local memory.
    /// The default at 128, `w4m2k64s2bxrc`, keeps 2-3 of them there (8-12 bytes stored,
    /// reloaded at the top of each tile, off the products' path); `w4m2k64s2bxr`, its
    /// predecessor, does not spill. The other builds of FA2's shape at 128 spill a little
    /// more and are kept because the chapter's tuning steps measure them
    /// (book: "Stage 5: cp.async pipelining"): the old default `w4m2k64s2`, `w4m2k64s2r`, and `w4m2k64s2b`
    /// and `w4m2k64s2bx`, the head-dim-64 shapes, whose d128 builds carry P V inside the
    /// tile's straight-line code without the lazy rescale's spare registers. These,
    /// bounded, are allowed; no other kernel may spill.
    fn tolerated_spill_bytes(&self, kernel: &str) -> u32 {
        match kernel {
            k if !k.ends_with("_d128") => 0,
            k if k.starts_with("cp_async_w4m2k64s2_") => 80,
            k if k.starts_with("cp_async_w4m2k64s2r_") => 160,
            k if k.starts_with("cp_async_w4m2k64s2b_") => 240,
            k if k.starts_with("cp_async_w4m2k64s2bx_") => 360,
            k if k.starts_with("cp_async_w4m2k64s2bxrc_") => 48,
            _ => 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every variant in the table has a kernel of that name for both dtypes and head
    /// dims (when the kernels were compiled), the names are unique, and the defaults are
    /// in the table, so `FLASHLAB_STAGE5` can name every one of them.
    #[test]
    fn variant_table_matches_the_compiled_kernels() {
        let names: Vec<String> = VARIANTS.iter().map(Variant::name).collect();
        let mut unique = names.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(
            unique.len(),
            names.len(),
            "duplicate variant names: {names:?}"
        );
        assert_eq!(default_variant(128).name(), "w4m2k64s2bxrc");
        assert_eq!(default_variant(64).name(), "w4m2k64s2bx");
        for d in [64, 128] {
            assert!(VARIANTS.contains(&default_variant(d)));
        }
        if KERNELS.not_compiled_reason().is_none() {
            let compiled: Vec<String> = KERNELS.resources().into_iter().map(|r| r.kernel).collect();
            for v in VARIANTS {
                for dtype in ["bf16", "f16"] {
                    for d in [64, 128] {
                        let k = format!("cp_async_{}_{dtype}_d{d}", v.name());
                        assert!(
                            compiled.contains(&k),
                            "{k} is in VARIANTS but was not compiled"
                        );
                    }
                }
            }
        }
    }

    /// FA2's shape at d128 needs 96 KiB: two blocks fit an H100/H200 SM (228 KiB).
    #[test]
    fn shared_memory_of_the_defaults() {
        assert_eq!(D128_DEFAULT.smem_bytes(128), 96 * 1024);
        assert_eq!(D64_DEFAULT.smem_bytes(64), 48 * 1024);
    }
}
