//! Hardware atoms as thread-value (TV) layouts: for each (thread, value) the (row, col) of
//! the tile it holds, and the inverse (every (thread, value) that holds a cell).
//!
//! Covered: SM80 `mma.sync.m16n8k16` and `m16n8k8` (A, B, C for f16/bf16), `ldmatrix`
//! x1/x2/x4 with and without `.trans` (address sources and destinations), 16-byte
//! `cp.async` thread layouts, SM90 `wgmma.m64nNk16` accumulator and register-A fragments,
//! and TMA boxes with their (optionally swizzled) placement in shared memory.
//!
//! The models are written from the PTX ISA's fragment tables as CuTe-style hierarchical
//! modes whose strides are steps in (row, col) — an independent formulation from the
//! kernels' closed-form index functions, so that `tests/atoms*.rs` comparing the two with
//! `kernel_fns` means something.

use serde::Serialize;
use thiserror::Error;

/// A (row, col) coordinate, as the headers' `flashlab::RowCol`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RowCol {
    pub row: u32,
    pub col: u32,
}

/// An atom name or parameter that does not describe a hardware atom.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum AtomError {
    #[error("unknown atom `{name}`; known: {known}")]
    Unknown { name: String, known: String },
    #[error("invalid {what}: {why}")]
    Invalid { what: String, why: String },
    #[error(transparent)]
    TooLarge(#[from] crate::figure_size::TooLarge),
}

fn invalid(what: &str, why: impl Into<String>) -> AtomError {
    AtomError::Invalid {
        what: what.to_string(),
        why: why.into(),
    }
}

/// One mode of a TV layout: `size` steps, each moving `drow` rows and `dcol` columns.
/// A zero step is a broadcast: several threads (or values) hold the same cell.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Mode {
    pub size: u32,
    pub drow: u32,
    pub dcol: u32,
}

const fn mode(size: u32, drow: u32, dcol: u32) -> Mode {
    Mode { size, drow, dcol }
}

/// Which register operand or data movement a TV atom describes; the renderer uses it to
/// name rows and columns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Operand {
    /// The A operand, rows m and columns k.
    A,
    /// The B operand, rows k and columns n.
    B,
    /// The C/D accumulator, rows m and columns n.
    C,
    /// A tile in memory, rows and columns of 16-bit elements.
    Tile,
}

impl Operand {
    /// The names of the row and column coordinates.
    pub fn axes(self) -> (&'static str, &'static str) {
        match self {
            Operand::A => ("m", "k"),
            Operand::B => ("k", "n"),
            Operand::C => ("m", "n"),
            Operand::Tile => ("row", "col"),
        }
    }
}

/// A thread-value layout over a `rows x cols` tile. Thread index and value index are each
/// decomposed colexicographically over their modes (first mode fastest), and the (row,
/// col) is the sum of the mode steps.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TvAtom {
    /// Stable name, as the CLI spells it (`mma-m16n8k16-a`).
    pub name: String,
    /// One-line human description, used as the figure title.
    pub title: String,
    pub operand: Operand,
    pub rows: u32,
    pub cols: u32,
    pub thread_modes: Vec<Mode>,
    pub value_modes: Vec<Mode>,
}

/// Decomposes `index` colexicographically over `modes` and sums their steps.
fn walk(modes: &[Mode], mut index: u32) -> (u32, u32) {
    let (mut row, mut col) = (0, 0);
    for m in modes {
        let c = index % m.size;
        index /= m.size;
        row += c * m.drow;
        col += c * m.dcol;
    }
    (row, col)
}

fn product(modes: &[Mode]) -> u32 {
    modes.iter().map(|m| m.size).product()
}

fn notation(modes: &[Mode], rows: u32) -> (String, String) {
    let shape: Vec<String> = modes.iter().map(|m| m.size.to_string()).collect();
    let stride: Vec<String> = modes
        .iter()
        .map(|m| (m.drow + rows * m.dcol).to_string())
        .collect();
    if modes.len() == 1 {
        (shape[0].clone(), stride[0].clone())
    } else {
        (
            format!("({})", shape.join(",")),
            format!("({})", stride.join(",")),
        )
    }
}

impl TvAtom {
    /// Number of threads (size of the thread modes).
    pub fn threads(&self) -> u32 {
        product(&self.thread_modes)
    }

    /// Number of values each thread holds.
    pub fn values(&self) -> u32 {
        product(&self.value_modes)
    }

    /// The cell that value `v` of thread `t` holds.
    pub fn coord(&self, t: u32, v: u32) -> RowCol {
        let (r0, c0) = walk(&self.thread_modes, t);
        let (r1, c1) = walk(&self.value_modes, v);
        RowCol {
            row: r0 + r1,
            col: c0 + c1,
        }
    }

    /// For each cell (row-major, `row * cols + col`), every (thread, value) that holds it,
    /// in increasing thread then value order.
    pub fn owners(&self) -> Vec<Vec<(u32, u32)>> {
        let mut cells = vec![Vec::new(); (self.rows * self.cols) as usize];
        for t in 0..self.threads() {
            for v in 0..self.values() {
                let rc = self.coord(t, v);
                if rc.row < self.rows && rc.col < self.cols {
                    cells[(rc.row * self.cols + rc.col) as usize].push((t, v));
                }
            }
        }
        cells
    }

    /// Every (thread, value) that holds cell (row, col).
    pub fn owners_of(&self, row: u32, col: u32) -> Vec<(u32, u32)> {
        let mut out = Vec::new();
        for t in 0..self.threads() {
            for v in 0..self.values() {
                if self.coord(t, v) == (RowCol { row, col }) {
                    out.push((t, v));
                }
            }
        }
        out
    }

    /// The same atom in CuTe notation, as a map (thread, value) -> column-major index
    /// `row + rows * col` of the tile, e.g. `((4,8),(2,2)):((32,1),(16,8))` for m16n8's C.
    pub fn cute_notation(&self) -> String {
        let (ts, td) = notation(&self.thread_modes, self.rows);
        let (vs, vd) = notation(&self.value_modes, self.rows);
        format!("({ts},{vs}):({td},{vd})")
    }

    /// The same atom with `copies` thread groups that hold the same cells, as when several
    /// warps of a tiled MMA all load the same B fragment.
    pub fn broadcast_over(mut self, copies: u32, name: &str, title: &str) -> TvAtom {
        self.thread_modes.push(mode(copies, 0, 0));
        self.name = name.to_string();
        self.title = title.to_string();
        self
    }
}

// The SM80 fragments, transcribed from the PTX ISA ("Matrix fragments for mma.m16n8k16"
// and "mma.m16n8k8"): with groupID = lane / 4 and threadID_in_group = lane % 4, a thread's
// first element sits at (groupID, 2 * threadID_in_group) of A and C, or at
// (2 * threadID_in_group, groupID) of B; the value modes list the register pairs.
const QUAD_ROWS: [Mode; 2] = [mode(4, 0, 2), mode(8, 1, 0)];
const QUAD_COLS: [Mode; 2] = [mode(4, 2, 0), mode(8, 0, 1)];

fn tv(
    name: &str,
    title: &str,
    operand: Operand,
    rows: u32,
    cols: u32,
    t: &[Mode],
    v: &[Mode],
) -> TvAtom {
    TvAtom {
        name: name.to_string(),
        title: title.to_string(),
        operand,
        rows,
        cols,
        thread_modes: t.to_vec(),
        value_modes: v.to_vec(),
    }
}

/// `mma.m16n8k16` A (16 x 16, m x k): a0..a7 = (a0,a1) row g, (a2,a3) row g+8, then the
/// same 8 columns on.
pub fn mma_m16n8k16_a() -> TvAtom {
    let v = [mode(2, 0, 1), mode(2, 8, 0), mode(2, 0, 8)];
    tv(
        "mma-m16n8k16-a",
        "mma.m16n8k16 A (16x16, f16/bf16)",
        Operand::A,
        16,
        16,
        &QUAD_ROWS,
        &v,
    )
}

/// `mma.m16n8k16` B (16 x 8, k x n): b0..b3 = (b0,b1) rows 2t, 2t+1, (b2,b3) 8 rows on.
pub fn mma_m16n8k16_b() -> TvAtom {
    let v = [mode(2, 1, 0), mode(2, 8, 0)];
    tv(
        "mma-m16n8k16-b",
        "mma.m16n8k16 B (16x8, f16/bf16)",
        Operand::B,
        16,
        8,
        &QUAD_COLS,
        &v,
    )
}

/// The m16n8 accumulator (16 x 8, m x n) of both m16n8k16 and m16n8k8: c0,c1 on row g,
/// c2,c3 on row g+8.
pub fn mma_m16n8_c(name: &str, title: &str) -> TvAtom {
    let v = [mode(2, 0, 1), mode(2, 8, 0)];
    tv(name, title, Operand::C, 16, 8, &QUAD_ROWS, &v)
}

/// `mma.m16n8k8` A (16 x 8, m x k): a0,a1 on row g, a2,a3 on row g+8.
pub fn mma_m16n8k8_a() -> TvAtom {
    let v = [mode(2, 0, 1), mode(2, 8, 0)];
    tv(
        "mma-m16n8k8-a",
        "mma.m16n8k8 A (16x8, f16/bf16)",
        Operand::A,
        16,
        8,
        &QUAD_ROWS,
        &v,
    )
}

/// `mma.m16n8k8` B (8 x 8, k x n): b0,b1 on rows 2t, 2t+1.
pub fn mma_m16n8k8_b() -> TvAtom {
    let v = [mode(2, 1, 0)];
    tv(
        "mma-m16n8k8-b",
        "mma.m16n8k8 B (8x8, f16/bf16)",
        Operand::B,
        8,
        8,
        &QUAD_COLS,
        &v,
    )
}

/// The three operands of one warp-level MMA instruction.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MmaAtom {
    pub name: String,
    pub title: String,
    pub m: u32,
    pub n: u32,
    pub k: u32,
    pub a: TvAtom,
    pub b: TvAtom,
    pub c: TvAtom,
}

/// `mma-m16n8k16` or `mma-m16n8k8`.
pub fn mma_by_name(name: &str) -> Result<MmaAtom, AtomError> {
    match name {
        "mma-m16n8k16" => Ok(MmaAtom {
            name: name.to_string(),
            title: "mma.sync.m16n8k16 (f16/bf16 in, f32 accumulate)".to_string(),
            m: 16,
            n: 8,
            k: 16,
            a: mma_m16n8k16_a(),
            b: mma_m16n8k16_b(),
            c: mma_m16n8_c("mma-m16n8k16-c", "mma.m16n8k16 C/D (16x8, f32)"),
        }),
        "mma-m16n8k8" => Ok(MmaAtom {
            name: name.to_string(),
            title: "mma.sync.m16n8k8 (f16/bf16 in, f32 accumulate)".to_string(),
            m: 16,
            n: 8,
            k: 8,
            a: mma_m16n8k8_a(),
            b: mma_m16n8k8_b(),
            c: mma_m16n8_c("mma-m16n8k8-c", "mma.m16n8k8 C/D (16x8, f32)"),
        }),
        _ => Err(AtomError::Unknown {
            name: name.to_string(),
            known: "mma-m16n8k16, mma-m16n8k8".to_string(),
        }),
    }
}

/// `ldmatrix.sync.aligned.m8n8.x{num}[.trans].shared.b16`, drawn over the stored data:
/// the `num` 8x8 matrices stacked vertically, so stored row `8m + r` is row r of matrix m
/// (16 bytes: 8 elements).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Ldmatrix {
    pub num: u32,
    pub trans: bool,
    /// Which lane supplies the address of each stored row: lane `l` (for `l < 8 * num`)
    /// gives the row `l`, and its 8 values are that row's elements.
    pub src: TvAtom,
    /// Which (lane, value) receives each stored element: value `i = 2 * reg + half`, as the
    /// kernels number fragment elements.
    pub dst: TvAtom,
}

/// The `ldmatrix` atom for `num` in {1, 2, 4}.
pub fn ldmatrix(num: u32, trans: bool) -> Result<Ldmatrix, AtomError> {
    if ![1, 2, 4].contains(&num) {
        return Err(invalid(
            "ldmatrix count",
            format!("x{num}: ldmatrix loads 1, 2 or 4 matrices"),
        ));
    }
    let suffix = if trans { "-trans" } else { "" };
    let tr = if trans { ".trans" } else { "" };
    let rows = 8 * num;
    let src = tv(
        &format!("ldmatrix-x{num}{suffix}-src"),
        &format!("ldmatrix.x{num}{tr}: lane l supplies the address of stored row l"),
        Operand::Tile,
        rows,
        8,
        &[mode(rows, 1, 0)],
        &[mode(8, 0, 1)],
    );
    // Without .trans, lane l's register m receives row l/4, columns 2(l%4), 2(l%4)+1 of
    // matrix m; with .trans the matrix arrives transposed, so the same register holds
    // rows 2(l%4), 2(l%4)+1 of column l/4 of the stored matrix.
    let (t, half) = if trans {
        (QUAD_COLS, mode(2, 1, 0))
    } else {
        (QUAD_ROWS, mode(2, 0, 1))
    };
    let dst = tv(
        &format!("ldmatrix-x{num}{suffix}"),
        &format!("ldmatrix.x{num}{tr}: destination registers (value = 2*reg + half)"),
        Operand::Tile,
        rows,
        8,
        &t,
        &[half, mode(num, 8, 0)],
    );
    Ok(Ldmatrix {
        num,
        trans,
        src,
        dst,
    })
}

/// The 16-byte `cp.async` copy of a `rows x cols` tile of `elem_bytes`-byte elements by
/// `threads` threads: consecutive threads take consecutive 16-byte chunks of a row (so a
/// warp's stores cover whole 128-byte lines), and the thread block steps down the rows.
pub fn cp_async(threads: u32, rows: u32, cols: u32, elem_bytes: u32) -> Result<TvAtom, AtomError> {
    if elem_bytes == 0 || 16 % elem_bytes != 0 {
        return Err(invalid(
            "element size",
            format!("{elem_bytes} bytes does not divide a 16-byte copy"),
        ));
    }
    if threads == 0 {
        return Err(invalid("thread count", "0 threads copy nothing"));
    }
    let per = 16 / elem_bytes;
    // A row is a whole number of 16-byte chunks, and the threads cover whole rows per
    // pass: the width is `per` times a divisor of `threads`.
    let widths: Vec<u32> = (1..=threads)
        .filter(|d| threads % d == 0)
        .map(|d| d * per)
        .collect();
    if !widths.contains(&cols) {
        return Err(invalid(
            "tile width",
            format!(
                "{cols} columns; with {threads} threads copying 16 bytes ({per} elements) each, the width must be one of {}",
                join(&widths)
            ),
        ));
    }
    let per_row = cols / per;
    let rows_per_pass = threads / per_row;
    if rows == 0 || rows % rows_per_pass != 0 {
        return Err(invalid(
            "tile height",
            format!(
                "{rows} rows; {cols} columns take {rows_per_pass} rows per pass of {threads} threads, so the height must be a multiple of {rows_per_pass}: {}, {}, {}, ...",
                rows_per_pass,
                2 * rows_per_pass,
                3 * rows_per_pass
            ),
        ));
    }
    crate::figure_size::check_cells(
        format_args!("cp-async-{rows}x{cols}"),
        &[rows.into(), cols.into()],
    )?;
    Ok(tv(
        &format!("cp-async-{rows}x{cols}"),
        &format!("cp.async 16B: {threads} threads copy a {rows}x{cols} tile, {per} elements each"),
        Operand::Tile,
        rows,
        cols,
        &[mode(per_row, 0, per), mode(rows_per_pass, 1, 0)],
        &[
            mode(per, 0, 1),
            mode(rows / rows_per_pass, rows_per_pass, 0),
        ],
    ))
}

fn join(values: &[u32]) -> String {
    values
        .iter()
        .map(u32::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

/// The valid N of `wgmma.m64nNk16`.
fn check_wgmma_n(n: u32) -> Result<(), AtomError> {
    if n == 0 || n > 256 || n % 8 != 0 {
        return Err(invalid(
            "wgmma N",
            format!("{n}: N must be a multiple of 8 in 8..=256"),
        ));
    }
    Ok(())
}

/// `wgmma.m64nNk16` accumulator (64 x N, f32) over the 128 threads of a warpgroup: warp w
/// owns rows 16w..16w+15 and, within each 8-column slice, the m16n8 C pattern; values run
/// (pair, row+8, next slice), as the PTX ISA numbers d0, d1, ...
pub fn wgmma_c(n: u32) -> Result<TvAtom, AtomError> {
    check_wgmma_n(n)?;
    Ok(tv(
        &format!("wgmma-m64n{n}k16-c"),
        &format!("wgmma.m64n{n}k16 accumulator (64x{n}, f32), 4 warps"),
        Operand::C,
        64,
        n,
        &[mode(4, 0, 2), mode(8, 1, 0), mode(4, 16, 0)],
        &[mode(2, 0, 1), mode(2, 8, 0), mode(n / 8, 0, 8)],
    ))
}

/// `wgmma.m64nNk16` A from registers (64 x 16, f16/bf16): warp w owns rows 16w..16w+15
/// with mma.m16n8k16's A pattern.
pub fn wgmma_a() -> TvAtom {
    tv(
        "wgmma-m64k16-a",
        "wgmma.m64nNk16 A in registers (64x16, f16/bf16), 4 warps",
        Operand::A,
        64,
        16,
        &[mode(4, 0, 2), mode(8, 1, 0), mode(4, 16, 0)],
        &[mode(2, 0, 1), mode(2, 8, 0), mode(2, 0, 8)],
    )
}

/// `wgmma.m64nNk32` A from registers at 8 bits (64 x 32, E4M3): warp w owns rows
/// 16w..16w+15; lane l holds row l / 4 (and + 8) and the four consecutive k from 4 (l % 4),
/// and again 16 further along k. Values run as the bytes of its four registers: 4
/// consecutive k a register (byte b is k + b), then row + 8, then k + 16. CuTe:
/// `((4,8,4),(4,2,2)):((256,1,16),(64,8,1024))`.
pub fn wgmma_a_fp8() -> TvAtom {
    tv(
        "wgmma-m64k32-a-fp8",
        "wgmma.m64nNk32 A in registers (64x32, E4M3), 4 warps",
        Operand::A,
        64,
        32,
        &[mode(4, 0, 4), mode(8, 1, 0), mode(4, 16, 0)],
        &[mode(4, 0, 1), mode(2, 8, 0), mode(2, 0, 16)],
    )
}

/// The key an FP8 kernel puts at position `k` (of 32) of a k-step of P V, so that P's
/// 8-bit A registers are the thread's own accumulator values of S, packed in order with no
/// exchange between threads: the accumulator gives lane l keys 2 (l % 4) + {0, 1} of each
/// 8-key slice, the 8-bit A wants 4 (l % 4) + {0..3} of each 16, so position k of the A
/// operand (and of V's transposed tile) holds key
/// `16 (k / 16) + 8 ((k % 4) / 2) + 2 ((k % 16) / 4) + k % 2`.
pub fn fp8_pv_key(k: u32) -> u32 {
    assert!(k < 32, "a k-step of the 8-bit wgmma has 32 keys");
    16 * (k / 16) + 8 * ((k % 4) / 2) + 2 * ((k % 16) / 4) + k % 2
}

/// The names `tv_by_name` accepts, for help texts and errors.
pub const TV_NAMES: &str = "mma-m16n8k16-a|b|c, mma-m16n8k8-a|b|c, mma-m16n8k16-b-4warps, \
ldmatrix-x1|x2|x4[-trans][-src], wgmma-m64n<N>k16-c, wgmma-m64n<N>k16-a, wgmma-m64k32-a-fp8, \
cp-async-<R>x<C>";

/// A TV atom by its CLI name.
pub fn tv_by_name(name: &str) -> Result<TvAtom, AtomError> {
    let unknown = || AtomError::Unknown {
        name: name.to_string(),
        known: TV_NAMES.to_string(),
    };
    match name {
        "mma-m16n8k16-a" => return Ok(mma_m16n8k16_a()),
        "mma-m16n8k16-b" => return Ok(mma_m16n8k16_b()),
        "mma-m16n8k16-c" => return Ok(mma_m16n8_c(name, "mma.m16n8k16 C/D (16x8, f32)")),
        "mma-m16n8k8-a" => return Ok(mma_m16n8k8_a()),
        "mma-m16n8k8-b" => return Ok(mma_m16n8k8_b()),
        "mma-m16n8k8-c" => return Ok(mma_m16n8_c(name, "mma.m16n8k8 C/D (16x8, f32)")),
        "wgmma-m64k32-a-fp8" => return Ok(wgmma_a_fp8()),
        "mma-m16n8k16-b-4warps" => {
            return Ok(mma_m16n8k16_b().broadcast_over(
                4,
                name,
                "mma.m16n8k16 B shared by 4 warps tiled along M (every cell has 4 owners)",
            ));
        }
        _ => {}
    }
    if let Some(rest) = name.strip_prefix("ldmatrix-x") {
        let (rest, src) = match rest.strip_suffix("-src") {
            Some(r) => (r, true),
            None => (rest, false),
        };
        let (num, trans) = match rest.strip_suffix("-trans") {
            Some(r) => (r, true),
            None => (rest, false),
        };
        let num: u32 = num.parse().map_err(|_| unknown())?;
        let l = ldmatrix(num, trans)?;
        return Ok(if src { l.src } else { l.dst });
    }
    if let Some(rest) = name.strip_prefix("wgmma-m64n") {
        if let Some(n) = rest.strip_suffix("k16-c") {
            return wgmma_c(n.parse().map_err(|_| unknown())?);
        }
        if let Some(n) = rest.strip_suffix("k16-a") {
            check_wgmma_n(n.parse().map_err(|_| unknown())?)?;
            return Ok(wgmma_a());
        }
    }
    if let Some(rest) = name.strip_prefix("cp-async-") {
        let (r, c) = rest.split_once('x').ok_or_else(unknown)?;
        let rows: u32 = r.parse().map_err(|_| unknown())?;
        let cols: u32 = c.parse().map_err(|_| unknown())?;
        return cp_async(128, rows, cols, 2);
    }
    Err(unknown())
}

/// The shared-memory swizzle modes of a TMA transfer (`CU_TENSOR_MAP_SWIZZLE_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum TmaSwizzle {
    None,
    B32,
    B64,
    B128,
}

impl TmaSwizzle {
    /// The span in bytes that one swizzle pattern covers along a row (the limit on the
    /// box's inner dimension), or `None` when unswizzled.
    pub fn span_bytes(self) -> Option<u32> {
        match self {
            TmaSwizzle::None => None,
            TmaSwizzle::B32 => Some(32),
            TmaSwizzle::B64 => Some(64),
            TmaSwizzle::B128 => Some(128),
        }
    }

    /// The byte-address swizzle: 16-byte units (M = 4), XORed by the row of 128-byte
    /// lines above them (S = 3), over 1, 2 or 3 bits.
    pub fn as_swizzle(self) -> Option<(u32, u32, u32)> {
        match self {
            TmaSwizzle::None => None,
            TmaSwizzle::B32 => Some((1, 4, 3)),
            TmaSwizzle::B64 => Some((2, 4, 3)),
            TmaSwizzle::B128 => Some((3, 4, 3)),
        }
    }

    /// `Swizzle<B,4,3>` on a byte offset (identity when unswizzled).
    pub fn apply(self, byte_offset: u64) -> u64 {
        match self.as_swizzle() {
            None => byte_offset,
            Some((b, m, s)) => {
                let mask = ((1u64 << b) - 1) << (m + s);
                byte_offset ^ ((byte_offset & mask) >> s)
            }
        }
    }
}

/// Where one element of a TMA box comes from and lands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct TmaCell {
    /// Coordinate inside the box.
    pub box_row: u32,
    pub box_col: u32,
    /// Coordinate in the global tensor, `None` when out of bounds (TMA writes zeros).
    pub global: Option<(u32, u32)>,
    /// Byte offset in shared memory from the (swizzle-atom aligned) destination.
    pub smem_byte: u64,
}

/// A 2-D TMA load: a `box_rows x box_cols` box at `origin` of a row-major global tensor,
/// stored row-major (rows of `box_cols * elem_bytes` bytes) in shared memory and swizzled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct TmaBox {
    pub tensor_rows: u32,
    pub tensor_cols: u32,
    pub box_rows: u32,
    pub box_cols: u32,
    pub origin_row: u32,
    pub origin_col: u32,
    pub elem_bytes: u32,
    pub swizzle: TmaSwizzle,
}

impl TmaBox {
    /// Checks the constraints `cuTensorMapEncodeTiled` enforces on a box.
    pub fn new(
        tensor: (u32, u32),
        boxdim: (u32, u32),
        origin: (u32, u32),
        elem_bytes: u32,
        swizzle: TmaSwizzle,
    ) -> Result<TmaBox, AtomError> {
        if ![1, 2, 4, 8].contains(&elem_bytes) {
            return Err(invalid("element size", format!("{elem_bytes} bytes")));
        }
        if boxdim.0 == 0 || boxdim.1 == 0 || boxdim.0 > 256 || boxdim.1 > 256 {
            return Err(invalid(
                "box",
                format!(
                    "{}x{}: each box dimension must be in 1..=256",
                    boxdim.0, boxdim.1
                ),
            ));
        }
        let inner = boxdim.1 * elem_bytes;
        if inner % 16 != 0 {
            return Err(invalid(
                "box",
                format!("inner dimension {inner} bytes is not a multiple of 16"),
            ));
        }
        // The hardware accepts inner rows shorter than the swizzle span, but how it pads
        // them is not something we can state from the ISA alone: draw only the case
        // CuTe generates (a box row fills the span) rather than guess.
        if let Some(span) = swizzle.span_bytes() {
            if inner != span {
                return Err(invalid(
                    "box",
                    format!(
                        "inner dimension {inner} bytes must equal the {span}B swizzle span to be drawn"
                    ),
                ));
            }
        }
        // Implied by the 256 x 256 limit above today; kept so a figure stays drawable if
        // that rule ever widens.
        crate::figure_size::check_cells(
            format_args!("TMA box {}x{}", boxdim.0, boxdim.1),
            &[boxdim.0.into(), boxdim.1.into()],
        )?;
        Ok(TmaBox {
            tensor_rows: tensor.0,
            tensor_cols: tensor.1,
            box_rows: boxdim.0,
            box_cols: boxdim.1,
            origin_row: origin.0,
            origin_col: origin.1,
            elem_bytes,
            swizzle,
        })
    }

    /// Every element of the box, row-major over the box.
    pub fn cells(&self) -> Vec<TmaCell> {
        let mut out = Vec::with_capacity((self.box_rows * self.box_cols) as usize);
        for r in 0..self.box_rows {
            for c in 0..self.box_cols {
                let (gr, gc) = (self.origin_row + r, self.origin_col + c);
                let inside = gr < self.tensor_rows && gc < self.tensor_cols;
                let linear = u64::from(r * self.box_cols + c) * u64::from(self.elem_bytes);
                out.push(TmaCell {
                    box_row: r,
                    box_col: c,
                    global: inside.then_some((gr, gc)),
                    smem_byte: self.swizzle.apply(linear),
                });
            }
        }
        out
    }
}
