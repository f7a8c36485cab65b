//! The FP8 stages' launch: the preprocessing that turns bf16 Q, K and V into E4M3 codes
//! with their scales (queued by [`PrefillStage::prepare`], timed apart from the attention),
//! and the attention kernel on those codes, with tensor maps of 8-bit elements.
//!
//! The workspace layout is `kernel-headers/include/flashlab/fp8.cuh`'s `Fp8Workspace`,
//! computed here with the same formula ([`Fp8Workspace::for_params`]): the amax of each
//! slice, then Q's and K's codes in their own layout, then V's transposed,
//! `[batch][kv_head][head_dim][keys_padded]`.

use crate::check::Emulation;
use crate::error::CudaContext as _;
use crate::kernels::kernel_name;
use crate::tensor_map::TensorMap;
use crate::tiled::ToleratedSpill;
use crate::tma::{AttnTensorMaps, SMEM_ALIGN_SLACK, timed_or_timeline_kernel};
use crate::{
    DType, Gpu, LaunchArgs, PrefillStage, Problem, QTiles, Result, Stage, StageInfo, Workload,
};
use cudarc::driver::sys::{CUtensorMapDataType, CUtensorMapSwizzle};
use reference::fp8_attention::{Fp8Recipe, Granularity};

/// `FP8_KEY_PAD` of `fp8.cuh`: V^T's rows are padded with zero codes to a multiple of this.
pub const KEY_PAD: usize = 64;
/// `QUANT_ROWS` and `QUANT_THREADS` of `fp8_quantize.cuh`: rows of one slice a block of the
/// preprocessing takes, and its threads.
pub const QUANT_ROWS: usize = 64;
pub const QUANT_THREADS: u32 = 256;
/// Codes a TMA box row of Q or K holds: 128 bytes, the 128-byte swizzle's span, or at head
/// dim 64 the whole 64-byte row under the 64-byte swizzle (`mainloop_fp8.cuh`'s `FP8_QK_BOX`).
pub fn box_codes(head_dim: usize) -> (u32, CUtensorMapSwizzle) {
    if head_dim < 128 {
        (
            head_dim as u32,
            CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_64B,
        )
    } else {
        (128, CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_128B)
    }
}

/// Keys a TMA box of a V^T tile holds, and its swizzle (`mainloop_fp8.cuh`'s `FP8_VT_BOX`): a
/// tile's whole 128-byte rows when its keys are a multiple of 128, else boxes of 64 keys
/// under the 64-byte swizzle (stage 27's 192).
pub fn vt_box_keys(block_kv: u32) -> (u32, CUtensorMapSwizzle) {
    if block_kv % 128 == 0 {
        (128, CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_128B)
    } else {
        (64, CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_64B)
    }
}

/// Byte offsets into the workspace (`AttnParams::scratch`), as `fp8_workspace` computes them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fp8Workspace {
    pub amax_bytes: usize,
    pub q: usize,
    pub k: usize,
    pub vt: usize,
    pub keys_padded: usize,
    pub bytes: usize,
}

fn align256(bytes: usize) -> usize {
    bytes.div_ceil(256) * 256
}

impl Fp8Workspace {
    pub fn for_problem(p: &Problem) -> Fp8Workspace {
        let s = &p.shape;
        let (bh, bkv) = (s.batch * s.heads, s.batch * s.kv_heads);
        let keys_padded = s.seqlen_k.div_ceil(KEY_PAD) * KEY_PAD;
        let amax_bytes = 4 * (bh + 2 * bkv);
        let q = align256(amax_bytes);
        let k = q + align256(bh * s.seqlen_q * s.head_dim);
        let vt = k + align256(bkv * s.seqlen_k * s.head_dim);
        let bytes = vt + bkv * s.head_dim * keys_padded;
        Fp8Workspace {
            amax_bytes,
            q,
            k,
            vt,
            keys_padded,
            bytes,
        }
    }
}

/// An FP8 stage: the tiles of its attention kernel (`<kernel>_bf16_d<D>`), its
/// preprocessing kernels (`<kernel>_amax_...`, `<kernel>_quantize_...`), and the recipe its
/// kernels follow, which the check emulates.
pub struct Fp8Stage {
    pub info: &'static StageInfo,
    pub kernel: &'static str,
    pub tiles: QTiles,
    /// Head dims whose kernels use other tiles than `tiles` (stage 27: more keys a tile at
    /// head dim 64, where S leaves registers for them), with those tiles.
    pub tiles_by_head_dim: &'static [(usize, QTiles)],
    /// `None`, or the seed of incoherent processing's random signs (`FP8_ROTATION_SEED`).
    pub rotation: Option<u64>,
    pub v_layout: VLayout,
    pub tolerated_spills: &'static [ToleratedSpill],
}

/// Who transposes V for P V (FP8 `wgmma` reads its shared-memory operands K-major only).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VLayout {
    /// The preparation writes V's codes transposed, `[batch][kv_head][d][keys]` (stages 20, 21).
    Transposed,
    /// The preparation writes V's codes as K's, `[batch][seqlen][kv_head][d]`, and the
    /// attention kernel transposes each tile in shared memory (stages 24 and 30): it loads them
    /// into a ring of their own, `kv_slots` tiles more.
    Natural,
}

impl Fp8Stage {
    /// The tiles the kernels for `head_dim` launch with.
    pub fn tiles_for(&self, head_dim: usize) -> QTiles {
        self.tiles_by_head_dim
            .iter()
            .find(|(d, _)| *d == head_dim)
            .map_or(self.tiles, |(_, t)| *t)
    }

    /// Q's tile and the K and V^T rings, a byte a code, then O's bf16 tile.
    pub fn smem_bytes(&self, head_dim: usize) -> u32 {
        let t = self.tiles_for(head_dim);
        let d = head_dim as u32;
        let v_in = match self.v_layout {
            VLayout::Transposed => 0,
            VLayout::Natural => t.kv_slots * t.block_kv * d,
        };
        (t.block_q + 2 * t.kv_slots * t.block_kv) * d + t.block_q * d * 2 + v_in
    }

    fn maps(&self, args: &LaunchArgs, ws: &Fp8Workspace) -> Result<AttnTensorMaps> {
        let p = &args.params;
        let s = &args.problem.shape;
        let d = s.head_dim as u64;
        let base = p.scratch;
        let (box_codes, swizzle) = box_codes(s.head_dim);
        let tiles = self.tiles_for(s.head_dim);
        let codes = |at: usize, seqlen: usize, heads: usize, rows: u32| {
            let (seqlen, heads) = (seqlen as u64, heads as u64);
            TensorMap::tiled(
                base + at as u64,
                CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_UINT8,
                &[d, heads, seqlen, s.batch as u64],
                &[d, heads * d, seqlen * heads * d],
                &[box_codes, 1, rows, 1],
                swizzle,
            )
        };
        let kp = ws.keys_padded as u64;
        let (vt_box, vt_swizzle) = vt_box_keys(tiles.block_kv);
        let kvh = s.kv_heads as u64;
        let v = match self.v_layout {
            VLayout::Transposed => TensorMap::tiled(
                base + ws.vt as u64,
                CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_UINT8,
                &[kp, d, kvh, s.batch as u64],
                &[kp, d * kp, kvh * d * kp],
                &[vt_box, s.head_dim as u32, 1, 1],
                vt_swizzle,
            )?,
            // Rows past seqlen_k arrive as zeros (TMA fills outside the tensor), as the
            // transposed layout's padding does.
            VLayout::Natural => codes(ws.vt, s.seqlen_k, s.kv_heads, tiles.block_kv)?,
        };
        Ok(AttnTensorMaps {
            q: codes(ws.q, s.seqlen_q, s.heads, tiles.block_q)?,
            k: codes(ws.k, s.seqlen_k, s.kv_heads, tiles.block_kv)?,
            v,
            o: TensorMap::bshd(
                p.o,
                DType::Bf16,
                (s.batch, s.seqlen_q, s.heads, s.head_dim),
                tiles.block_q,
            )?,
        })
    }
}

impl Stage for Fp8Stage {
    fn info(&self) -> &'static StageInfo {
        self.info
    }

    fn workload(&self) -> Workload<'_> {
        Workload::Prefill(self)
    }

    fn tolerated_spill_bytes(&self, kernel: &str) -> u32 {
        crate::tiled::tolerated(self.tolerated_spills, kernel)
    }
}

impl PrefillStage for Fp8Stage {
    fn scratch_elements(&self, problem: &Problem) -> usize {
        Fp8Workspace::for_problem(problem).bytes.div_ceil(4)
    }

    fn has_prepare(&self) -> bool {
        true
    }

    /// The amax of each slice (zeroed first), then the codes: Q's and K's, V's transposed.
    fn prepare(&self, gpu: &Gpu, args: &LaunchArgs) -> Result<()> {
        let s = &args.problem.shape;
        let ws = Fp8Workspace::for_problem(&args.problem);
        // SAFETY: the workspace holds `ws.bytes >= amax_bytes` bytes from `scratch` on, and
        // the memset is queued on the stream the kernels run on.
        unsafe {
            cudarc::driver::result::memset_d8_async(
                args.params.scratch,
                0,
                ws.amax_bytes,
                gpu.stream().cu_stream(),
            )
        }
        .during("zeroing the FP8 amax")?;
        let heads = s.heads.max(s.kv_heads) as u32;
        let z = 3 * s.batch as u32;
        let rows = |n: usize| n.div_ceil(QUANT_ROWS) as u32;
        let name = |what: &str| {
            kernel_name(
                &format!("{}_{what}", self.kernel),
                args.problem.dtype,
                s.head_dim,
            )
        };
        let amax = self.info.kernels.function(gpu, &name("amax"))?;
        let grid = (rows(s.seqlen_q.max(s.seqlen_k)), heads, z);
        gpu.launch(&amax, grid, (QUANT_THREADS, 1, 1), 0, &args.params)?;
        if args.fp8_scales == Granularity::PerTensor {
            // One block each for Q, K and V: every slice's amax becomes its tensor's.
            let per_tensor = self.info.kernels.function(gpu, &name("amax_per_tensor"))?;
            gpu.launch(
                &per_tensor,
                (3, 1, 1),
                (QUANT_THREADS, 1, 1),
                0,
                &args.params,
            )?;
        }
        let quantize = self.info.kernels.function(gpu, &name("quantize"))?;
        let grid = (rows(s.seqlen_q.max(ws.keys_padded)), heads, z);
        gpu.launch(&quantize, grid, (QUANT_THREADS, 1, 1), 0, &args.params)
    }

    fn launch(&self, gpu: &Gpu, args: &LaunchArgs) -> Result<()> {
        let p = &args.problem.shape;
        let t = self.tiles_for(p.head_dim);
        let function = timed_or_timeline_kernel(self.info, self.kernel, gpu, args)?;
        let ws = Fp8Workspace::for_problem(&args.problem);
        let maps = self.maps(args, &ws)?;
        gpu.launch_with_maps(
            &function,
            t.grid(p),
            (t.threads(), 1, 1),
            self.smem_bytes(p.head_dim) + SMEM_ALIGN_SLACK,
            &args.params,
            Some(&maps),
        )
    }

    fn emulation(&self, fp8_scales: Granularity) -> Emulation {
        Emulation::Fp8(Fp8Recipe {
            granularity: fp8_scales,
            incoherent: self.rotation,
        })
    }
}

/// Whether `stage` quantizes to FP8 (its check emulates an FP8 recipe).
pub fn is_fp8(stage: &dyn PrefillStage) -> bool {
    matches!(stage.emulation(Granularity::PerHead), Emulation::Fp8(_))
}

/// Refuses scales a stage's kernels cannot take: the FP8 stages' are per (batch, head) or per
/// tensor (per block of rows is the CPU emulation's alone, `flashlab accuracy`), and the
/// other stages have none to choose.
pub fn check_scales(stage: &dyn PrefillStage, scales: Granularity) -> Result<()> {
    let label = stage.info().label();
    match scales {
        Granularity::PerHead => Ok(()),
        Granularity::PerTensor if is_fp8(stage) => Ok(()),
        Granularity::PerTensor => Err(crate::Error::InvalidProblem(format!(
            "stage {label} computes in 16 bits and has no FP8 scales: --fp8-scales is for the FP8 stages"
        ))),
        Granularity::PerBlock { .. } => Err(crate::Error::InvalidProblem(format!(
            "stage {label} takes FP8 scales per (batch, head) or per tensor; per block of rows is the CPU emulation's alone (flashlab accuracy)"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stage with other tiles at one head dim (stage 27: 192 keys at d64) launches each
    /// head dim with its own: the shared memory, and V^T's boxes, follow the key tile.
    #[test]
    fn tiles_by_head_dim_set_the_shared_memory_and_the_v_boxes() {
        const TILES: QTiles = QTiles {
            warps: 12,
            block_q: 128,
            block_kv: 128,
            kv_slots: 2,
        };
        let stage = Fp8Stage {
            info: &crate::stage::fakes::PREFILL_INFO,
            kernel: "fake",
            tiles: TILES,
            tiles_by_head_dim: &[(
                64,
                QTiles {
                    block_kv: 192,
                    ..TILES
                },
            )],
            rotation: None,
            v_layout: VLayout::Transposed,
            tolerated_spills: &[],
        };
        assert_eq!(stage.tiles_for(64).block_kv, 192);
        assert_eq!(stage.tiles_for(128), TILES);
        // d64: Q 8 KiB + 2 x (K + V^T) 2 x 12 KiB + O's bf16 tile 16 KiB = 72 KiB; d128:
        // Q 16 + 2 x 2 x 16 + 32 = 112 KiB.
        assert_eq!(stage.smem_bytes(64), 72 * 1024);
        assert_eq!(stage.smem_bytes(128), 112 * 1024);
        assert_eq!(
            vt_box_keys(128),
            (128, CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_128B)
        );
        assert_eq!(
            vt_box_keys(192),
            (64, CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_64B)
        );
    }

    /// The offsets `fp8_workspace` computes in `fp8.cuh`, worked by hand for one problem:
    /// batch 2, 4 heads, 2 K/V heads, 100 queries, 70 keys, head dim 128.
    #[test]
    fn workspace_offsets_match_the_kernel_formula() {
        let mut p = Problem::new(2, 4, 100, 128);
        p.shape.kv_heads = 2;
        p.shape.seqlen_k = 70;
        let ws = Fp8Workspace::for_problem(&p);
        // amax: 4 x (8 + 2 x 4) = 64 bytes; Q at 256; Q's codes 8 x 100 x 128 = 102400;
        // K at 256 + 102400; K's codes 4 x 70 x 128 = 35840, aligned to 35840 (140 x 256).
        assert_eq!(ws.amax_bytes, 64);
        assert_eq!(ws.q, 256);
        assert_eq!(ws.k, 256 + 102_400);
        assert_eq!(ws.vt, 256 + 102_400 + 35_840);
        assert_eq!(ws.keys_padded, 128);
        assert_eq!(ws.bytes, ws.vt + 4 * 128 * 128);
        assert!([ws.q, ws.k, ws.vt].iter().all(|at| at % 256 == 0));
    }

    /// Scales per tensor are for the FP8 stages alone, and per block of rows for none.
    #[test]
    fn only_the_fp8_stages_take_scales_per_tensor() {
        use crate::stage::fakes::PREFILL;
        assert!(check_scales(&PREFILL, Granularity::PerHead).is_ok());
        let e = check_scales(&PREFILL, Granularity::PerTensor)
            .unwrap_err()
            .to_string();
        assert!(e.contains("has no FP8 scales"), "{e}");
        let e = check_scales(&PREFILL, Granularity::PerBlock { rows: 128 })
            .unwrap_err()
            .to_string();
        assert!(e.contains("per (batch, head) or per tensor"), "{e}");
        assert!(!is_fp8(&PREFILL));
    }
}
