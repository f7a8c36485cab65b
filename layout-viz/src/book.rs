//! Every layout, atom, swizzle and bank diagram the mdBook uses (protocol-viz's `book`
//! draws the figures of the protocol models), under stable file names, with a
//! `manifest.json` that lists each file and its one-line caption. The book links these names, so a name here
//! is a promise: rename only together with the book.

use std::path::Path;

use serde::Serialize;
use thiserror::Error;

use crate::atoms::{self, AtomError, TmaBox, TmaSwizzle};
use crate::bank::{self, BankError};
#[cfg(not(target_arch = "wasm32"))]
use crate::kernel_fns::{self, KernelFnError};
use crate::render::{self, LayoutGrid};
use crate::swizzle::AnyLayout;

/// A diagram that could not be built or written.
#[derive(Debug, Error)]
pub enum BookError {
    #[error("layout `{text}`: {why}")]
    Layout { text: String, why: String },
    /// A swizzle that is not one (blamed on the swizzle, in the text that gave it).
    #[error(transparent)]
    Swizzle(#[from] crate::notation::NotationError),
    #[error(transparent)]
    Atom(#[from] AtomError),
    #[error(transparent)]
    Bank(#[from] BankError),
    #[cfg(not(target_arch = "wasm32"))]
    #[error(transparent)]
    KernelFn(#[from] KernelFnError),
    #[error(transparent)]
    TooLarge(#[from] crate::figure_size::TooLarge),
    #[error("{path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
    #[error("manifest: {0}")]
    Json(#[from] serde_json::Error),
}

/// One entry of `manifest.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ManifestEntry {
    pub file: String,
    pub caption: String,
}

/// `manifest.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Manifest {
    pub figures: Vec<ManifestEntry>,
}

/// Parses a layout in CuTe notation (plain or swizzled).
pub fn parse(text: &str) -> Result<AnyLayout, BookError> {
    crate::notation::parse_any_layout(text).map_err(|e| BookError::Layout {
        text: text.to_string(),
        why: e.to_string(),
    })
}

/// Refuses a swizzled layout whose swizzle does not fit its inner layout's offsets
/// `0..offset + cosize`, rounded up to a power of two, `2^n`: one that flips a bit at or
/// above `n` sends offsets outside the layout's buffer (a kernel with it would read or
/// write outside its tile), and one that reads only bits at or above `n` changes nothing.
fn check_swizzle_fits(text: &str, layout: &AnyLayout) -> Result<(), BookError> {
    let AnyLayout::Swizzled(c) = layout else {
        return Ok(());
    };
    let end = c.offset + c.layout.cosize();
    let span_bits = 64 - (end - 1).max(0).leading_zeros();
    let sw = c.swizzle;
    let bit_range = |mask: i64| format!("{}-{}", mask.trailing_zeros(), 63 - mask.leading_zeros());
    let offsets = format!(
        "the layout's offsets 0-{} (bits 0-{})",
        end - 1,
        span_bits.max(1) - 1
    );
    let why = if 64 - sw.zzz_mask().leading_zeros() > span_bits {
        format!(
            "{sw} does not fit {}: it flips bits {}, above {offsets}, so swizzled offsets leave the layout's buffer",
            c.layout,
            bit_range(sw.zzz_mask())
        )
    } else if sw.yyy_mask().trailing_zeros() >= span_bits {
        format!(
            "{sw} does not fit {}: it reads bits {}, all above {offsets}, so it changes nothing",
            c.layout,
            bit_range(sw.yyy_mask())
        )
    } else {
        return Ok(());
    };
    Err(BookError::Layout {
        text: text.to_string(),
        why,
    })
}

/// How much of a layout's grid a figure draws.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Window {
    /// Every cell (up to [`MAX_CELLS`](crate::figure_size::MAX_CELLS)).
    All,
    /// The top-left rows x columns (of chunks, in a chunk view).
    Exactly(u32, u32),
    /// A top-left window of at most this many cells in each grid, near square, where the
    /// whole has more: the playground's cap, which keeps a redraw quick.
    AtMost(u64),
}

impl Window {
    fn pick(self, grid: &LayoutGrid) -> Option<(u32, u32)> {
        match self {
            Window::All => None,
            Window::Exactly(r, c) => Some((r, c)),
            Window::AtMost(cells) => grid.window_within(cells),
        }
    }

    /// The window to draw of a `rows x cols` grid, before any of it is computed.
    fn pick_dims(self, rows: u32, cols: u32) -> Option<(u32, u32)> {
        match self {
            Window::All => None,
            Window::Exactly(r, c) => Some((r, c)),
            Window::AtMost(cells) => render::window_within(rows, cols, cells),
        }
    }
}

/// A figure and the window it drew (rows, columns), None when it drew every cell.
pub type Drawn = (String, Option<(u32, u32)>);

fn drawn_window(svg: String, grid_of: Option<(u32, u32)>, rows: u32, cols: u32) -> Drawn {
    (svg, grid_of.map(|_| (rows, cols)))
}

/// The `draw layout` figure, or with `chunks` (the element's bytes) its chunk view,
/// drawing the part of the grid `window` says.
pub fn layout_figure(
    text: &str,
    path: bool,
    chunks: Option<u32>,
    window: Window,
) -> Result<Drawn, BookError> {
    let layout = parse(text)?;
    check_swizzle_fits(text, &layout)?;
    match chunks {
        None => {
            let grid = render::layout_grid_part(&layout, |r, c| window.pick_dims(r, c))?;
            let (of, rows, cols) = (grid.of, grid.rows, grid.cols);
            Ok(drawn_window(render::layout(&grid, path), of, rows, cols))
        }
        Some(elem_bytes) => {
            let grid = render::layout_grid(&layout)?;
            let chunked = render::chunk_grid(&grid, elem_bytes)
                .ok_or_else(|| not_chunks(text, elem_bytes))?;
            let picked = window.pick(&chunked);
            let svg = render::layout_chunks_window(&grid, elem_bytes, |_| picked)
                .ok_or_else(|| not_chunks(text, elem_bytes))?;
            Ok((
                svg,
                picked.map(|(r, c)| (r.min(chunked.rows), c.min(chunked.cols))),
            ))
        }
    }
}

fn not_chunks(text: &str, elem_bytes: u32) -> BookError {
    BookError::Layout {
        text: text.to_string(),
        why: format!("its rows are not whole 16-byte chunks of {elem_bytes}-byte elements"),
    }
}

/// The `draw swizzle` figure, or with `chunks` its chunk view, drawing the part of each
/// grid `window` says.
pub fn swizzle_figure(
    layout: &str,
    swizzle: Option<(u32, u32, i32)>,
    elem_bytes: u32,
    chunks: bool,
    window: Window,
) -> Result<Drawn, BookError> {
    if !chunks {
        let (before, after) = swizzle_grids_part(layout, swizzle, window)?;
        let (rows, cols) = (before.rows, before.cols);
        return Ok(drawn_window(
            render::swizzle(&before, &after, elem_bytes),
            before.of,
            rows,
            cols,
        ));
    }
    let (before, after) = swizzle_grids(layout, swizzle)?;
    let chunked = render::chunk_grid(&before, elem_bytes);
    let picked = chunked.as_ref().and_then(|g| window.pick(g));
    let svg = render::swizzle_chunks_window(&before, &after, elem_bytes, |_| picked).ok_or_else(
        || BookError::Layout {
            text: layout.to_string(),
            why: format!("the swizzle moves parts of 16-byte chunks of {elem_bytes}-byte elements"),
        },
    )?;
    let chunked = chunked.expect("drawn by chunks");
    Ok((
        svg,
        picked.map(|(r, c)| (r.min(chunked.rows), c.min(chunked.cols))),
    ))
}

/// The `draw layout` figure.
pub fn layout_svg(text: &str, path: bool) -> Result<String, BookError> {
    let layout = parse(text)?;
    check_swizzle_fits(text, &layout)?;
    Ok(render::layout(&render::layout_grid(&layout)?, path))
}

/// [`layout_svg`] by 16-byte chunks of `elem_bytes`-byte elements, for a tile too wide
/// to read element by element at the book's width.
pub fn layout_chunks_svg(text: &str, elem_bytes: u32) -> Result<String, BookError> {
    render::layout_chunks(&render::layout_grid(&parse(text)?)?, elem_bytes).ok_or_else(|| {
        BookError::Layout {
            text: text.to_string(),
            why: format!("its rows are not whole 16-byte chunks of {elem_bytes}-byte elements"),
        }
    })
}

/// The `draw swizzle` figure: `layout` before and after `Swizzle<bits, base, shift>`.
/// For the instances the kernels use, the swizzled offsets come from the kernels' own
/// `flashlab::swizzle` (host build); other ones from the algebra's `Swizzle::apply`.
pub fn swizzle_svg(
    layout: &str,
    swizzle: Option<(u32, u32, i32)>,
    elem_bytes: u32,
) -> Result<String, BookError> {
    let (before, after) = swizzle_grids(layout, swizzle)?;
    Ok(render::swizzle(&before, &after, elem_bytes))
}

/// [`swizzle_svg`] by 16-byte chunks: each row's chunks and where the swizzle puts them,
/// at a size the book's column shows.
pub fn swizzle_chunks_svg(
    layout: &str,
    swizzle: Option<(u32, u32, i32)>,
    elem_bytes: u32,
) -> Result<String, BookError> {
    let (before, after) = swizzle_grids(layout, swizzle)?;
    render::swizzle_chunks(&before, &after, elem_bytes).ok_or_else(|| BookError::Layout {
        text: layout.to_string(),
        why: format!("the swizzle moves parts of 16-byte chunks of {elem_bytes}-byte elements"),
    })
}

/// `layout`'s offsets before and after the swizzle, as grids.
fn swizzle_grids(
    layout: &str,
    swizzle: Option<(u32, u32, i32)>,
) -> Result<(LayoutGrid, LayoutGrid), BookError> {
    swizzle_grids_part(layout, swizzle, Window::All)
}

/// [`swizzle_grids`] holding only the window `window` picks of each (the same cells).
fn swizzle_grids_part(
    layout: &str,
    swizzle: Option<(u32, u32, i32)>,
    window: Window,
) -> Result<(LayoutGrid, LayoutGrid), BookError> {
    let parsed = parse(layout)?;
    let (plain, (bits, base, shift), offset) = match (&parsed, swizzle) {
        (AnyLayout::Plain(l), Some(sw)) => (l.clone(), sw, 0),
        (AnyLayout::Swizzled(c), None) => (
            c.layout.clone(),
            (c.swizzle.bits, c.swizzle.base, c.swizzle.shift),
            c.offset,
        ),
        (AnyLayout::Plain(_), None) => {
            return Err(BookError::Layout {
                text: layout.to_string(),
                why: "no swizzle: give --bits/--base/--shift or a layout like `Sw<3,3,3> o _0 o (8,64):(64,1)`".to_string(),
            });
        }
        (AnyLayout::Swizzled(_), Some(_)) => {
            return Err(BookError::Layout {
                text: layout.to_string(),
                why: "already swizzled: give either a swizzled layout or --bits/--base/--shift"
                    .to_string(),
            });
        }
    };
    // A bad swizzle is the swizzle's fault, not the layout's: say so, in CuTe's spelling.
    let sw = crate::swizzle::Swizzle::check(bits as i64, base as i64, shift as i64)
        .map(|()| crate::swizzle::Swizzle::new(bits, base, shift))
        .map_err(|why| crate::notation::NotationError::Swizzle {
            input: format!("Swizzle<{bits},{base},{shift}>"),
            why,
        })?;
    let part = |r, c| window.pick_dims(r, c);
    let before = render::layout_grid_part(&AnyLayout::Plain(plain.clone()), part)?;
    let after_layout = AnyLayout::Swizzled(crate::swizzle::ComposedLayout::new(sw, offset, plain));
    check_swizzle_fits(layout, &after_layout)?;
    #[cfg_attr(target_arch = "wasm32", allow(unused_mut))]
    let mut after: LayoutGrid = render::layout_grid_part(&after_layout, part)?;
    // On wasm32 (no host build) `Swizzle::apply` alone, which tests/kernel_fns.rs holds
    // equal to the kernels' function on every instance they use.
    #[cfg(not(target_arch = "wasm32"))]
    if shift >= 0 && kernel_fns::supported_swizzles().contains(&(bits, base, shift as u32)) {
        for (k, b) in after.offsets.iter_mut().zip(&before.offsets) {
            let o = u64::try_from(b + offset).map_err(|_| BookError::Layout {
                text: layout.to_string(),
                why: "negative offsets cannot be swizzled by the kernels' function".to_string(),
            })?;
            *k = kernel_fns::swizzle(bits, base, shift as u32, o)? as i64;
        }
    }
    Ok((before, after))
}

/// The `draw bank` figure and its report.
pub fn bank_svg(pattern: &str) -> Result<(String, bank::BankReport), BookError> {
    let access = bank::pattern(pattern)?;
    let report = bank::simulate(&access)?;
    Ok((render::bank_map(&access, &report), report))
}

/// The `draw bank --layout L --lanes LANES --access OP` figure and its report: the warp
/// access `bank::layout_access` builds from a layout typed in CuTe notation.
pub fn bank_layout_svg(
    layout: &str,
    lanes: &str,
    access: &str,
    elem_bytes: u32,
) -> Result<(String, bank::BankReport), BookError> {
    let parsed = parse(layout)?;
    check_swizzle_fits(layout, &parsed)?;
    let lanes = crate::notation::parse_layout_or_shape(lanes).map_err(|e| BookError::Layout {
        text: lanes.to_string(),
        why: e.to_string(),
    })?;
    let access = bank::layout_access(&parsed, &lanes, bank::Op::from_name(access)?, elem_bytes)?;
    let report = bank::simulate(&access)?;
    Ok((render::bank_map(&access, &report), report))
}

type Build = Box<dyn Fn() -> Result<String, BookError>>;

fn tv(name: &'static str) -> Build {
    Box::new(move || Ok(render::tv(&atoms::tv_by_name(name)?)))
}

fn bank_fig(name: &'static str) -> Build {
    Box::new(move || Ok(bank_svg(name)?.0))
}

fn ldsm(num: u32, trans: bool) -> Build {
    Box::new(move || Ok(render::ldmatrix(&atoms::ldmatrix(num, trans)?)))
}

fn tma(swizzle: TmaSwizzle) -> Build {
    Box::new(move || {
        Ok(render::tma(&TmaBox::new(
            (16, 128),
            (8, 64),
            (8, 64),
            2,
            swizzle,
        )?))
    })
}

/// The book's figures: (file, caption, builder), in manifest order.
fn figures() -> Vec<(&'static str, &'static str, Build)> {
    vec![
        (
            "layout-2x8-colex.svg",
            "(2,8):(1,2), column-major: offsets and the colexicographic walk",
            Box::new(|| layout_svg("(2,8):(1,2)", true)),
        ),
        (
            "layout-2x8-row.svg",
            "(2,8):(8,1), row-major: the same walk over different offsets",
            Box::new(|| layout_svg("(2,8):(8,1)", true)),
        ),
        (
            "layout-hier-4x8.svg",
            "((2,2),(4,2)):((1,8),(2,16)): a hierarchical layout",
            Box::new(|| layout_svg("((2,2),(4,2)):((1,8),(2,16))", true)),
        ),
        (
            "layout-8x64-rowmajor.svg",
            "(8,64):(64,1): one 8-row, 64-column bf16 half tile, as stage 3 stores it",
            Box::new(|| layout_svg("(8,64):(64,1)", false)),
        ),
        (
            "layout-8x64-rowmajor-chunks.svg",
            "(8,64):(64,1) by 16-byte chunks: the same tile, one cell per 8 bf16 elements",
            Box::new(|| layout_chunks_svg("(8,64):(64,1)", 2)),
        ),
        (
            "swizzle-333-8x64-chunks.svg",
            "Swizzle<3,3,3> on (8,64):(64,1) by 16-byte chunks: chunk c of row r lands in chunk c XOR r",
            Box::new(|| swizzle_chunks_svg("(8,64):(64,1)", Some((3, 3, 3)), 2)),
        ),
        (
            "swizzle-233-8x32-chunks.svg",
            "Swizzle<2,3,3> on (8,32):(32,1) by 16-byte chunks",
            Box::new(|| swizzle_chunks_svg("(8,32):(32,1)", Some((2, 3, 3)), 2)),
        ),
        (
            "swizzle-333-8x64.svg",
            "Swizzle<3,3,3> on (8,64):(64,1): each row's 16-byte chunks permuted by the row index",
            Box::new(|| swizzle_svg("(8,64):(64,1)", Some((3, 3, 3)), 2)),
        ),
        (
            "swizzle-233-8x32.svg",
            "Swizzle<2,3,3> on (8,32):(32,1): the 64-byte pattern",
            Box::new(|| swizzle_svg("(8,32):(32,1)", Some((2, 3, 3)), 2)),
        ),
        (
            "mma-m16n8k16.svg",
            "mma.sync.m16n8k16: A, B and C fragments of the 32 lanes",
            Box::new(|| Ok(render::mma(&atoms::mma_by_name("mma-m16n8k16")?))),
        ),
        (
            "mma-m16n8k8.svg",
            "mma.sync.m16n8k8: A, B and C fragments of the 32 lanes",
            Box::new(|| Ok(render::mma(&atoms::mma_by_name("mma-m16n8k8")?))),
        ),
        (
            "tv-mma-m16n8k16-c.svg",
            "The m16n8 accumulator: lane 0 holds (0,0), (0,1), (8,0), (8,1)",
            tv("mma-m16n8k16-c"),
        ),
        (
            "tv-mma-m16n8k16-b-4warps.svg",
            "B shared by 4 warps tiled along M: every cell has 4 owners",
            tv("mma-m16n8k16-b-4warps"),
        ),
        (
            "ldmatrix-x1.svg",
            "ldmatrix.x1: lanes 0-7 give row addresses, every lane receives 2 elements",
            ldsm(1, false),
        ),
        (
            "ldmatrix-x2.svg",
            "ldmatrix.x2: lanes 0-15 give row addresses of 2 matrices",
            ldsm(2, false),
        ),
        (
            "ldmatrix-x4.svg",
            "ldmatrix.x4: 32 row addresses, 4 registers per lane",
            ldsm(4, false),
        ),
        (
            "ldmatrix-x4-trans.svg",
            "ldmatrix.x4.trans: the same rows delivered transposed",
            ldsm(4, true),
        ),
        (
            "cp-async-32x64.svg",
            "cp.async 16B: 128 threads copy a 32x64 bf16 tile, 8 elements each, two passes",
            tv("cp-async-32x64"),
        ),
        (
            "wgmma-m64n64k16-c.svg",
            "wgmma.m64n64k16 accumulator: warp w owns rows 16w-16w+15",
            tv("wgmma-m64n64k16-c"),
        ),
        (
            "wgmma-m64n64k16-c-warps01.svg",
            "wgmma.m64n64k16 accumulator, rows 0-31 (warps 0 and 1) and columns 0-15: each warp's rows hold mma's m16n8 C pattern once per 8 columns",
            Box::new(|| {
                Ok(render::tv_window(
                    &atoms::tv_by_name("wgmma-m64n64k16-c")?,
                    0..32,
                    0..16,
                ))
            }),
        ),
        (
            "wgmma-m64k16-a.svg",
            "wgmma A from registers (64x16): mma's A pattern per warp",
            tv("wgmma-m64n64k16-a"),
        ),
        (
            "wgmma-m64k16-a-warps01.svg",
            "wgmma A from registers, rows 0-31 (warps 0 and 1): mma's A pattern per warp",
            Box::new(|| {
                Ok(render::tv_window(
                    &atoms::tv_by_name("wgmma-m64n64k16-a")?,
                    0..32,
                    0..16,
                ))
            }),
        ),
        (
            "wgmma-m64k32-a-fp8-warps01.svg",
            "wgmma A from registers at 8 bits (E4M3), rows 0-31 (warps 0 and 1): four consecutive k a register, 16 values a thread",
            Box::new(|| {
                Ok(render::tv_window(
                    &atoms::tv_by_name("wgmma-m64k32-a-fp8")?,
                    0..32,
                    0..32,
                ))
            }),
        ),
        (
            "fp8-p-from-s.svg",
            "P from S at 8 bits, lanes 0-3 of one k-step: with V's keys in fp8_pv_key order, each register of P packs four of its own thread's accumulator values",
            Box::new(|| Ok(crate::fp8::p_from_s_svg()?)),
        ),
        (
            "fp8-v-key-order.svg",
            "The order of V's keys in the transposed V tile (fp8_pv_key), one 32-key group, and its inverse (fp8_pv_column)",
            Box::new(|| Ok(crate::fp8::v_key_order_svg())),
        ),
        (
            "fp8-v-transpose.svg",
            "Stage 24's transpose of a V tile in shared memory: one warp instruction's 32 units, where each lane's four loads sit in the landed V tile and its four stores in V^T",
            Box::new(|| Ok(crate::fp8::v_transpose_svg())),
        ),
        (
            "fp8-v-matrix-transpose.svg",
            "Stage 30's transpose of one block of 16 keys by 32 head dims: each lane's four ldmatrix.trans registers in the landed V tile and its four stmatrix registers in V^T, coloured by matrix",
            Box::new(|| Ok(crate::fp8::v_matrix_transpose_svg())),
        ),
        (
            "backward-products.svg",
            "Stage 22's five products, per query block: a block's keys (K and V loaded once) against each query block's Q, dO, LSE and D; S, P, dP and dS recomputed in registers, dK and dV accumulated there, dQ's share added to global memory",
            Box::new(|| Ok(crate::backward::products_svg())),
        ),
        (
            "backward-warp-tiles.svg",
            "Stage 25's warp tiles, per step at d = 128 and d = 64: S and dP (queries by keys), dV and dK (keys by columns) and dQ (queries by columns), each split into its 8 warps' tiles, every warp in one colour across the products",
            Box::new(|| Ok(crate::backward_tiles::warp_tiles_svg())),
        ),
        (
            "tma-box-8x64.svg",
            "TMA: an 8x64 bf16 box into shared memory, unswizzled",
            tma(TmaSwizzle::None),
        ),
        (
            "tma-box-8x64-sw128.svg",
            "TMA: the same box with the 128B swizzle",
            tma(TmaSwizzle::B128),
        ),
        (
            "tma-box-8x16-sw32.svg",
            "TMA: an 8x16 box (32 bytes a row, the span) with the 32B swizzle",
            Box::new(|| Ok(crate::gmma::tma_landing_svg(TmaSwizzle::B32)?)),
        ),
        (
            "tma-box-8x32-sw64.svg",
            "TMA: an 8x32 box (64 bytes a row, the span) with the 64B swizzle",
            Box::new(|| Ok(crate::gmma::tma_landing_svg(TmaSwizzle::B64)?)),
        ),
        (
            "gmma-kmajor-interleave.svg",
            "wgmma K-major operand without a swizzle: core matrices of 8 rows x 16 bytes, LBO along K, SBO down",
            Box::new(|| Ok(crate::gmma::kmajor_svg(TmaSwizzle::None))),
        ),
        (
            "gmma-kmajor-sw32.svg",
            "wgmma K-major operand with the 32B swizzle: rows of 32 bytes, SBO per 8 rows",
            Box::new(|| Ok(crate::gmma::kmajor_svg(TmaSwizzle::B32))),
        ),
        (
            "gmma-kmajor-sw64.svg",
            "wgmma K-major operand with the 64B swizzle: rows of 64 bytes, SBO per 8 rows",
            Box::new(|| Ok(crate::gmma::kmajor_svg(TmaSwizzle::B64))),
        ),
        (
            "gmma-kmajor-sw128.svg",
            "wgmma K-major operand with the 128B swizzle (stage 11's Q and K): rows of 128 bytes, SBO 1024",
            Box::new(|| Ok(crate::gmma::kmajor_svg(TmaSwizzle::B128))),
        ),
        (
            "bank-stage3-ldmatrix.svg",
            "Stage 3: ldmatrix.x4 of Q from an unswizzled tile, 32 wavefronts vs 4",
            bank_fig("ldmatrix-q-unswizzled"),
        ),
        (
            "bank-stage4-ldmatrix.svg",
            "Stage 4: the same read under Swizzle<3,3,3>, 4 wavefronts (ideal)",
            bank_fig("ldmatrix-q-swizzled"),
        ),
        (
            "bank-stage3-ldmatrix-k.svg",
            "Stage 3: ldmatrix.x4 of K, unswizzled: 8-way conflicts",
            bank_fig("ldmatrix-k-unswizzled"),
        ),
        (
            "bank-stage4-ldmatrix-k.svg",
            "Stage 4: ldmatrix.x4 of K, swizzled: conflict-free",
            bank_fig("ldmatrix-k-swizzled"),
        ),
        (
            "bank-stage3-ldmatrix-v-trans.svg",
            "Stage 3: ldmatrix.x4.trans of V, unswizzled: 8-way conflicts",
            bank_fig("ldmatrix-v-trans-unswizzled"),
        ),
        (
            "bank-stage4-ldmatrix-v-trans.svg",
            "Stage 4: ldmatrix.x4.trans of V, swizzled: conflict-free",
            bank_fig("ldmatrix-v-trans-swizzled"),
        ),
        (
            "bank-cp-async-swizzled.svg",
            "cp.async 16B stores into a swizzled tile: still conflict-free",
            bank_fig("cp-async-swizzled"),
        ),
        (
            "bank-lds32-consecutive.svg",
            "32 lanes, 32 consecutive words: 1 wavefront",
            bank_fig("lds32-consecutive"),
        ),
        (
            "bank-lds32-broadcast.svg",
            "32 lanes, one word: a broadcast, 1 wavefront",
            bank_fig("lds32-broadcast"),
        ),
        (
            "bank-lds32-stride32.svg",
            "Stride of 32 words: every lane in bank 0, 32 wavefronts",
            bank_fig("lds32-stride32"),
        ),
    ]
}

/// The manifest without writing anything.
pub fn manifest() -> Manifest {
    manifest_of(
        figures()
            .into_iter()
            .map(|(file, caption, _)| (file, caption)),
    )
}

/// Writes every figure and `manifest.json` into `dir` (created if missing).
pub fn write_book(dir: &Path) -> Result<Manifest, BookError> {
    write_figures(dir, figures(), "manifest.json")
}

/// A manifest of (file, caption) pairs, in order.
pub fn manifest_of<'a>(figures: impl IntoIterator<Item = (&'a str, &'a str)>) -> Manifest {
    Manifest {
        figures: figures
            .into_iter()
            .map(|(file, caption)| ManifestEntry {
                file: file.to_string(),
                caption: caption.to_string(),
            })
            .collect(),
    }
}

fn write(path: &Path, content: &str) -> Result<(), BookError> {
    std::fs::write(path, content).map_err(|source| BookError::Io {
        path: path.display().to_string(),
        source,
    })
}

/// Draws each (file, caption, builder) figure into `dir` (created if missing) and writes
/// their manifest there as `manifest_file`: the one way the book's figures are written, by
/// this crate's `book` and by protocol-viz's.
pub fn write_figures<'a, F: Fn() -> Result<String, BookError>>(
    dir: &Path,
    figures: impl IntoIterator<Item = (&'a str, &'a str, F)>,
    manifest_file: &str,
) -> Result<Manifest, BookError> {
    std::fs::create_dir_all(dir).map_err(|source| BookError::Io {
        path: dir.display().to_string(),
        source,
    })?;
    let mut entries = Vec::new();
    for (file, caption, build) in figures {
        write(&dir.join(file), &build()?)?;
        entries.push((file, caption));
    }
    let manifest = manifest_of(entries);
    write(
        &dir.join(manifest_file),
        &(serde_json::to_string_pretty(&manifest)? + "\n"),
    )?;
    Ok(manifest)
}
