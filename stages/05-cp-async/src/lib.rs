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
    /// Row sums on the tensor cores (name suffix `x`): P times ones.
    pub packed_exp: bool,
    /// No end-of-tile barrier (suffix `e`): the refill waits for the next tile's first
    /// barrier instead.
    pub no_end_barrier: bool,
    /// Lazy rescale (suffix `r`): the row max moves only by more than 2^8, and O is
    /// rescaled, before P V, only when some row's max moved.
    pub lazy: bool,
    /// Experiment only: which part is removed (0: none).
    pub ablation: u32,
}

impl Variant {
    const fn new(warps: u32, m_tiles: u32, block_kv: u32, stages: u32) -> Variant {
        Variant {
            warps,
            m_tiles,
            block_kv,
            stages,
            one_barrier: false,
            packed_exp: false,
            no_end_barrier: false,
            ablation: 0,
            lazy: false,
        }
    }

    /// `w8m1k64s2`: the kernel-name prefix after `cp_async_`, and the `FLASHLAB_STAGE5` value.
    pub fn name(&self) -> String {
        format!(
            "w{}m{}k{}s{}{}{}{}",
            self.warps,
            self.m_tiles,
            self.block_kv,
            self.stages,
            if self.one_barrier { "b" } else { "" },
            if self.packed_exp { "x" } else { "" },
            if self.no_end_barrier { "e" } else { "" }
        ) + if self.lazy { "r" } else { "" } + &if self.ablation > 0 { format!("a{}", self.ablation) } else { String::new() }
    }

    pub fn block_q(&self) -> u32 {
        16 * self.warps * self.m_tiles
    }

    /// The Q tile plus `stages` slots of K and V, 2-byte elements.
    pub fn smem_bytes(&self, head_dim: usize) -> u32 {
        (self.block_q() + 2 * self.stages * self.block_kv) * head_dim as u32 * 2
    }
}

/// Every variant `CP_ASYNC_VARIANT` exports, in the same order.
pub const VARIANTS: &[Variant] = &[
    Variant::new(4, 1, 64, 2),
    Variant::new(8, 1, 64, 2),
    Variant::new(8, 1, 64, 3),
    Variant::new(4, 2, 32, 2),
    Variant::new(4, 2, 32, 3),
    D128_DEFAULT,
    D64_DEFAULT,
    Variant {
        one_barrier: true,
        ..Variant::new(4, 1, 64, 2)
    },
    Variant {
        packed_exp: true,
        ..D128_DEFAULT
    },
    Variant {
        packed_exp: true,
        ..D64_DEFAULT
    },
    Variant {
        no_end_barrier: true,
        ..D128_DEFAULT
    },
    Variant {
        packed_exp: true,
        no_end_barrier: true,
        ..D128_DEFAULT
    },
    Variant { lazy: true, ..D128_DEFAULT },
    Variant { lazy: true, no_end_barrier: true, ..D128_DEFAULT },
    Variant { lazy: true, packed_exp: true, ..D64_DEFAULT },
    Variant { lazy: true, ..D64_DEFAULT },
];

/// Experiment only: `w4m2k64s2a<N>`, the default with one part removed (wrong results).
pub const ABLATIONS: u32 = 7;

/// 4 warps of 32 rows (two m16 tiles each), BLOCK_KV 64, a 2-slot ring, K and V waited
/// for separately: FlashAttention-2's shape, the default at head dim 128.
pub const D128_DEFAULT: Variant = Variant::new(4, 2, 64, 2);
/// The same shape with one barrier per tile (K and V waited for together): the default at
/// head dim 64, where the smaller O leaves the registers that P V inside the tile's
/// straight-line code needs.
pub const D64_DEFAULT: Variant = Variant {
    one_barrier: true,
    ..D128_DEFAULT
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
    if let Some(n) = name.trim().strip_prefix("w4m2k64s2a") {
        if n.parse::<u32>().is_ok_and(|n| (1..=ABLATIONS).contains(&n)) {
            return Ok(Variant { ablation: n.parse().unwrap(), ..D128_DEFAULT });
        }
    }
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
    /// ptxas keeps a few loop invariants (copy cursors, ldmatrix bases) in local memory,
    /// reloaded once per tile: 32 bytes for the default `w4m2k64s2`. `w4m2k64s2b` is the
    /// head-dim-64 default; its d128 build, P V inside each branch, spills more and is
    /// slower there (book: "Stage 5: cp.async pipelining"). These, bounded, are allowed;
    /// no other kernel may spill.
    fn tolerated_spill_bytes(&self, kernel: &str) -> u32 {
        match kernel {
            k if k.starts_with("cp_async_w4m2k64s2_") && k.ends_with("_d128") => 40,
            k if k.starts_with("cp_async_w4m2k64s2b_") && k.ends_with("_d128") => 240,
            _ => 0,
        }
    }
}
