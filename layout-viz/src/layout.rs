//! CuTe's `Layout` (a shape and a congruent stride, a function from coordinates to
//! offsets) and its algebra: coalesce, filter, composition, complement, the inverses,
//! and the divides and products built on them, each mirroring the function of the same
//! name in `include/cute/layout.hpp` with every integer treated as static.
//!
//! Where CuTe takes a "Tiler" (a layout, an integer, `_`, or a by-mode tuple of those)
//! these functions take anything that implements [`IntoTiler`].

use crate::int_tuple::{self as it, IntTuple, IntTuple::Int, IntTuple::Tuple};

/// Why a layout could not be built or an operation does not apply; CuTe reports the
/// same conditions as `static_assert` failures.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LayoutError {
    #[error("shape {shape} and stride {stride} are not congruent")]
    NotCongruent { shape: IntTuple, stride: IntTuple },
    #[error("shapes must be positive, got {0}")]
    NonPositiveShape(IntTuple),
    #[error("coordinate: {0}")]
    Coordinate(String),
    /// `why` names the integer and the range it left, e.g. `9 is outside 0..8`.
    #[error("{why}")]
    OutOfBounds {
        coord: IntTuple,
        shape: IntTuple,
        why: String,
    },
    #[error("layout {shape}:{stride} is too large: its size or an offset overflows 64 bits")]
    Overflow { shape: IntTuple, stride: IntTuple },
    #[error("{op}: {msg}")]
    Algebra { op: &'static str, msg: String },
    #[error("{0}")]
    Invalid(String),
}

fn algebra_err(op: &'static str, msg: impl Into<String>) -> LayoutError {
    LayoutError::Algebra {
        op,
        msg: msg.into(),
    }
}

/// CuTe's `Layout<Shape, Stride>`: maps a coordinate of `shape` to the inner product of
/// the coordinate with `stride`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Layout {
    pub shape: IntTuple,
    pub stride: IntTuple,
}

impl Layout {
    /// `make_layout(shape, stride)`; panics if the two are not congruent or a shape is not
    /// positive (see [`Layout::try_new`]).
    pub fn new(shape: IntTuple, stride: IntTuple) -> Layout {
        Layout::try_new(shape, stride).unwrap_or_else(|e| panic!("{e}"))
    }

    /// `make_layout(shape, stride)`, checking congruence and positive shapes.
    pub fn try_new(shape: IntTuple, stride: IntTuple) -> Result<Layout, LayoutError> {
        if !it::is_congruent(&shape, &stride) {
            return Err(LayoutError::NotCongruent { shape, stride });
        }
        if shape.flatten().iter().any(|&s| s <= 0) {
            return Err(LayoutError::NonPositiveShape(shape));
        }
        // size() and every in-bounds offset must fit an i64, or arithmetic on them would
        // panic (debug) or wrap (release) far from the input that caused it.
        let (sizes, strides) = (shape.flatten(), stride.flatten());
        let size = sizes.iter().try_fold(1i64, |acc, &s| acc.checked_mul(s));
        let span = sizes.iter().zip(&strides).try_fold(0i64, |acc, (&s, &d)| {
            (s - 1).checked_mul(d.checked_abs()?)?.checked_add(acc)
        });
        if size.is_none() || span.is_none() {
            return Err(LayoutError::Overflow { shape, stride });
        }
        Ok(Layout { shape, stride })
    }

    /// `make_layout(shape)`: compact colexicographic strides, CuTe's default (`LayoutLeft`).
    pub fn column_major(shape: IntTuple) -> Layout {
        let stride = it::compact_col_major(&shape, 1);
        Layout::new(shape, stride)
    }

    /// `make_layout(shape, LayoutRight{})`: compact lexicographic strides.
    pub fn row_major(shape: IntTuple) -> Layout {
        let stride = it::compact_row_major(&shape, 1);
        Layout::new(shape, stride)
    }

    /// A rank-1 layout `shape:stride`.
    pub fn int(shape: i64, stride: i64) -> Layout {
        Layout::new(Int(shape), Int(stride))
    }

    /// `make_layout(layouts...)`: the layouts become the modes of one layout.
    pub fn from_modes(modes: Vec<Layout>) -> Layout {
        let (shape, stride) = modes.into_iter().map(|l| (l.shape, l.stride)).unzip();
        Layout {
            shape: Tuple(shape),
            stride: Tuple(stride),
        }
    }

    /// Number of coordinates (CuTe's `size`).
    pub fn size(&self) -> i64 {
        self.shape.size()
    }

    /// One past the largest offset magnitude reached: `1 + sum((s-1)*|d|)` (CuTe's
    /// `cosize`, the size of its `coshape`).
    pub fn cosize(&self) -> i64 {
        let s = self.shape.flatten();
        let d = self.stride.flatten();
        1 + s
            .iter()
            .zip(&d)
            .map(|(s, d)| (s - 1) * d.abs())
            .sum::<i64>()
    }

    /// Number of top-level modes (CuTe's `rank`).
    pub fn rank(&self) -> usize {
        self.shape.rank()
    }

    /// Nesting depth of the shape (CuTe's `depth`).
    pub fn depth(&self) -> usize {
        self.shape.depth()
    }

    /// Mode `i` as a layout (CuTe's `layout<i>`); a rank-1 integral layout is its own mode 0.
    pub fn mode(&self, i: usize) -> Layout {
        Layout {
            shape: self.shape.get(i).clone(),
            stride: self.stride.get(i).clone(),
        }
    }

    /// The top-level modes (CuTe's `get<i>` over `wrap(layout)`).
    pub fn modes(&self) -> Vec<Layout> {
        (0..self.rank()).map(|i| self.mode(i)).collect()
    }

    /// Shape and stride flattened to depth <= 1 (CuTe's `flatten`).
    pub fn flatten(&self) -> Layout {
        Layout {
            shape: self.shape.flattened(),
            stride: self.stride.flattened(),
        }
    }

    /// 1-D colexicographic index to offset (CuTe's `layout(idx)`). An index at or past
    /// `size()` keeps counting in the last mode, as CuTe does.
    pub fn call(&self, idx: i64) -> i64 {
        it::crd2idx(&Int(idx), &self.shape, &self.stride)
            .expect("a layout's shape and stride are congruent")
    }

    /// Coordinate to offset (CuTe's `layout(crd)`/`crd2idx`): the coordinate may be a 1-D
    /// index, a hierarchical coordinate, or any coarser profile where an integer stands
    /// for a whole sub-mode. As in CuTe, an integer past the end of a mode is not an
    /// error: the last mode keeps counting. Panics on a coordinate whose form does not
    /// fit the shape (see `try_crd2idx`).
    pub fn crd2idx(&self, crd: &IntTuple) -> i64 {
        it::crd2idx(crd, &self.shape, &self.stride).unwrap_or_else(|e| panic!("coordinate: {e}"))
    }

    /// Fallible `crd2idx`, for coordinates typed by a user: besides the form, every
    /// integer must lie inside its mode (a 1-D index in `0..size()`), since the offset
    /// CuTe computes past the end (the last mode extended) is rarely what was meant.
    pub fn try_crd2idx(&self, crd: &IntTuple) -> Result<i64, LayoutError> {
        let offset =
            it::crd2idx(crd, &self.shape, &self.stride).map_err(LayoutError::Coordinate)?;
        it::check_in_bounds(crd, &self.shape).map_err(|why| LayoutError::OutOfBounds {
            coord: crd.clone(),
            shape: self.shape.clone(),
            why,
        })?;
        Ok(offset)
    }

    /// The colexicographic coordinate of 1-D index `idx` (CuTe's `idx2crd(idx, shape)`).
    pub fn idx2crd(&self, idx: i64) -> IntTuple {
        it::idx2crd(idx, &self.shape)
    }

    /// Offsets at every index `0..size()`.
    pub fn offsets(&self) -> Vec<i64> {
        (0..self.size()).map(|i| self.call(i)).collect()
    }

    /// Pads to rank `n` with `1:0` modes (CuTe's `append<N>(layout)`).
    pub fn append_to_rank(&self, n: usize) -> Layout {
        if self.rank() >= n {
            return self.clone();
        }
        let mut modes = self.modes();
        modes.resize(n, Layout::int(1, 0));
        Layout::from_modes(modes)
    }
}

// ---------------------------------------------------------------------------------------
// Tilers

/// What CuTe accepts as a "Tiler": a layout (an integer `n` means `n:1`), `_` (leave the
/// mode alone), or a tuple applying one tiler per mode.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Tiler {
    Layout(Layout),
    Keep,
    ByMode(Vec<Tiler>),
}

/// Anything that can stand for a CuTe tiler: a `Layout`, a `Tiler`, an integer, or a shape
/// (an `IntTuple` is a by-mode tuple of compact tilers, as `make_shape` tilers are in CuTe).
pub trait IntoTiler {
    fn to_tiler(&self) -> Tiler;
}

impl IntoTiler for Tiler {
    fn to_tiler(&self) -> Tiler {
        self.clone()
    }
}

impl IntoTiler for Layout {
    fn to_tiler(&self) -> Tiler {
        Tiler::Layout(self.clone())
    }
}

impl IntoTiler for i64 {
    fn to_tiler(&self) -> Tiler {
        Tiler::Layout(Layout::int(*self, 1))
    }
}

impl IntoTiler for IntTuple {
    fn to_tiler(&self) -> Tiler {
        match self {
            Int(n) => n.to_tiler(),
            Tuple(v) => Tiler::ByMode(v.iter().map(|x| x.to_tiler()).collect()),
        }
    }
}

impl<T: IntoTiler> IntoTiler for [T] {
    fn to_tiler(&self) -> Tiler {
        Tiler::ByMode(self.iter().map(|x| x.to_tiler()).collect())
    }
}

impl<T: IntoTiler> IntoTiler for Vec<T> {
    fn to_tiler(&self) -> Tiler {
        self.as_slice().to_tiler()
    }
}

/// CuTe's `transform_layout(layout, tiler, f)`: `f` on each mode the tiler names, the
/// layout's remaining modes appended unchanged.
fn by_mode(
    op: &'static str,
    layout: &Layout,
    tilers: &[Tiler],
    keep_rest: bool,
    f: impl Fn(&Layout, &Tiler) -> Result<Layout, LayoutError>,
) -> Result<Layout, LayoutError> {
    if tilers.len() > layout.rank() {
        return Err(algebra_err(
            op,
            format!(
                "tiler has {} modes but {layout} has rank {}",
                tilers.len(),
                layout.rank()
            ),
        ));
    }
    let mut modes = Vec::with_capacity(layout.rank());
    for (i, t) in tilers.iter().enumerate() {
        modes.push(f(&layout.mode(i), t)?);
    }
    if keep_rest {
        modes.extend((tilers.len()..layout.rank()).map(|i| layout.mode(i)));
    }
    Ok(Layout::from_modes(modes))
}

// ---------------------------------------------------------------------------------------
// Coalesce and filter

/// CuTe's `detail::bw_coalesce`: walk the flat modes `old` from the back, starting from
/// `init`, dropping size-1 modes and merging a mode into the front one when
/// `shape * stride` reaches the front's stride.
fn bw_coalesce(old_shape: &[i64], old_stride: &[i64], init: (i64, i64)) -> Layout {
    let mut shape = vec![init.0];
    let mut stride = vec![init.1];
    for i in (0..old_shape.len()).rev() {
        let (s, d) = (old_shape[i], old_stride[i]);
        if s == 1 {
            continue;
        } else if shape.len() == 1 && shape[0] == 1 {
            shape[0] = s;
            stride[0] = d;
        } else if s * d == stride[0] {
            shape[0] *= s;
            stride[0] = d;
        } else {
            shape.insert(0, s);
            stride.insert(0, d);
        }
    }
    match shape.len() {
        1 if shape[0] == 1 => Layout::int(1, 0),
        1 => Layout {
            shape: Int(shape[0]),
            stride: Int(stride[0]),
        },
        _ => Layout {
            shape: IntTuple::ints(&shape),
            stride: IntTuple::ints(&stride),
        },
    }
}

/// Merges modes that can be merged without changing the function on `[0, size)`; the
/// result has depth <= 1 and the same size (CuTe's `coalesce(layout)`).
pub fn coalesce(layout: &Layout) -> Layout {
    let s = layout.shape.flatten();
    let d = layout.stride.flatten();
    let r = s.len();
    if r == 0 {
        return Layout::int(1, 0);
    }
    bw_coalesce(&s[..r - 1], &d[..r - 1], (s[r - 1], d[r - 1]))
}

/// Coalesces inside each mode named by `profile`'s terminals, keeping the modes apart
/// (CuTe's `coalesce(layout, trg_profile)`); e.g. profile `(1,1)` coalesces each of two modes.
pub fn coalesce_by(layout: &Layout, profile: &IntTuple) -> Result<Layout, LayoutError> {
    match profile {
        Int(_) => Ok(coalesce(layout)),
        Tuple(p) => {
            let tilers: Vec<Tiler> = p
                .iter()
                .map(|x| {
                    Tiler::Layout(Layout {
                        shape: x.clone(),
                        stride: x.clone(),
                    })
                })
                .collect();
            by_mode("coalesce", layout, &tilers, true, |l, t| match t {
                Tiler::Layout(pl) => coalesce_by(l, &pl.shape),
                _ => unreachable!("profiles map to layout tilers"),
            })
        }
    }
}

/// CuTe's `detail::coalesce_x`: like `coalesce`, but a trailing size-1 mode is kept as
/// size 2 so the function is also preserved past the end of the domain.
fn coalesce_x(layout: &Layout) -> Layout {
    let s = layout.shape.flatten();
    let d = layout.stride.flatten();
    let r = s.len();
    if r == 0 {
        return Layout::int(1, 0);
    }
    let last = if s[r - 1] == 1 { 2 } else { s[r - 1] };
    bw_coalesce(&s[..r - 1], &d[..r - 1], (last, d[r - 1]))
}

/// Gives every stride-0 mode size 1 (CuTe's `filter_zeros(layout)`).
pub fn filter_zeros(layout: &Layout) -> Layout {
    let s = layout.shape.flatten();
    let d = layout.stride.flatten();
    let shape: Vec<i64> = s
        .iter()
        .zip(&d)
        .map(|(&s, &d)| if d == 0 { 1 } else { s })
        .collect();
    Layout {
        shape: layout.shape.unflatten_like(&shape),
        stride: layout.stride.clone(),
    }
}

/// Drops stride-0 and size-1 modes and coalesces the rest: the layout's image, in order
/// (CuTe's `filter(layout)`); `1:0` when nothing is left.
pub fn filter(layout: &Layout) -> Layout {
    coalesce(&filter_zeros(layout))
}

// ---------------------------------------------------------------------------------------
// Composition

/// CuTe's `detail::composition_impl`: `lhs` already coalesced, `rhs` one layout.
fn composition_impl(
    lhs: &Layout,
    rhs_shape: &IntTuple,
    rhs_stride: &IntTuple,
) -> Result<Layout, LayoutError> {
    let (rs, rd) = match (rhs_shape, rhs_stride) {
        (Tuple(s), Tuple(d)) => {
            // Right-distributivity: compose each mode of the rhs separately.
            let modes = s
                .iter()
                .zip(d)
                .map(|(s, d)| composition_impl(lhs, s, d))
                .collect::<Result<Vec<_>, _>>()?;
            return Ok(Layout::from_modes(modes));
        }
        (Int(s), Int(d)) => (*s, *d),
        _ => {
            return Err(LayoutError::NotCongruent {
                shape: rhs_shape.clone(),
                stride: rhs_stride.clone(),
            });
        }
    };
    if rd == 0 {
        return Ok(Layout::int(rs, 0));
    }
    let (ls, ld) = match (&lhs.shape, &lhs.stride) {
        (Int(_), Int(d)) => return Ok(Layout::int(rs, rd * d)),
        _ => (lhs.shape.flatten(), lhs.stride.flatten()),
    };
    let r = ls.len();
    let mut result_shape = Vec::new();
    let mut result_stride = Vec::new();
    let mut rest_shape = rs;
    let mut rest_stride = rd;
    for i in 0..r - 1 {
        let (curr_shape, curr_stride) = (ls[i], ld[i]);
        if !(rest_stride % curr_shape == 0 || rest_stride < curr_shape) {
            return Err(algebra_err(
                "composition",
                format!(
                    "stride divisibility condition fails: rhs stride {rest_stride} against lhs mode of size {curr_shape} \
                     (the stride must be a multiple of the size, or smaller than it)"
                ),
            ));
        }
        let next_shape = it::ceil_div_int(curr_shape, rest_stride.abs());
        let next_stride = it::ceil_div_int(rest_stride.abs(), curr_shape) * rest_stride.signum();
        if next_shape != 1 && rest_shape != 1 {
            let new_shape = next_shape.min(rest_shape);
            if rest_shape % new_shape != 0 {
                return Err(algebra_err(
                    "composition",
                    format!(
                        "shape divisibility condition fails: {new_shape} does not divide the remaining rhs size {rest_shape}"
                    ),
                ));
            }
            result_shape.push(new_shape);
            result_stride.push(rest_stride * curr_stride);
            rest_shape /= new_shape;
        }
        rest_stride = next_stride;
    }
    if result_shape.is_empty() {
        Ok(Layout::int(rest_shape, rest_stride * ld[r - 1]))
    } else if rest_shape == 1 {
        if result_shape.len() == 1 {
            Ok(Layout::int(result_shape[0], result_stride[0]))
        } else {
            Ok(Layout {
                shape: IntTuple::ints(&result_shape),
                stride: IntTuple::ints(&result_stride),
            })
        }
    } else {
        result_shape.push(rest_shape);
        result_stride.push(rest_stride * ld[r - 1]);
        Ok(Layout {
            shape: IntTuple::ints(&result_shape),
            stride: IntTuple::ints(&result_stride),
        })
    }
}

/// Functional composition `lhs o rhs`: `R(c) = lhs(rhs(c))` for every coordinate `c` of
/// `rhs`, with a shape compatible with `rhs`'s (CuTe's `composition(lhs, rhs)`).
///
/// A by-mode tiler composes mode `i` of `lhs` with tiler `i` and, as in CuTe, drops the
/// modes of `lhs` the tiler does not name; `_` keeps a mode as is. Fails where CuTe's
/// stride or shape divisibility `static_assert` would.
pub fn composition<T: IntoTiler + ?Sized>(lhs: &Layout, rhs: &T) -> Result<Layout, LayoutError> {
    match rhs.to_tiler() {
        Tiler::Layout(r) => composition_impl(&coalesce_x(lhs), &r.shape, &r.stride),
        Tiler::Keep => Ok(lhs.clone()),
        Tiler::ByMode(ts) => by_mode("composition", lhs, &ts, false, composition::<Tiler>),
    }
}

// ---------------------------------------------------------------------------------------
// Complement

/// The layout of the offsets in `[0, cosize_bound)` that `layout` does not reach, ordered
/// with increasing strides (CuTe's `complement(layout, cosize_bound)`).
pub fn complement(layout: &Layout, cosize_bound: i64) -> Result<Layout, LayoutError> {
    complement_to(layout, &Int(cosize_bound))
}

/// `complement` with a shape as its co-target, as `logical_divide` uses it: the rest is
/// sized by folding the last stride through the co-target's modes (CuTe's
/// `complement(layout, cotarget)` with a tuple `cotarget`).
pub fn complement_to(layout: &Layout, cotarget: &IntTuple) -> Result<Layout, LayoutError> {
    let f = filter(layout);
    if f.stride == Int(0) {
        // Nothing is reached: the complement is all of the co-target, `make_layout(size)`.
        return Ok(Layout::column_major(Int(cotarget.size())));
    }
    let mut shapes = f.shape.flatten();
    let mut strides = f.stride.flatten();
    if strides.iter().any(|&d| d < 0) {
        return Err(algebra_err(
            "complement",
            format!("{layout} has a negative stride; CuTe's complement needs non-negative strides"),
        ));
    }
    let r = shapes.len();
    let mut result_shape = Vec::with_capacity(r + 1);
    let mut result_stride = vec![1i64];
    for i in 0..r {
        let min_stride = *strides.iter().min().unwrap();
        let min_idx = strides.iter().position(|&d| d == min_stride).unwrap();
        let new_shape = min_stride / result_stride[i];
        if new_shape == 0 {
            return Err(algebra_err(
                "complement",
                format!("{layout} is not injective (two modes overlap)"),
            ));
        }
        result_shape.push(new_shape);
        let new_stride = min_stride * shapes[min_idx];
        shapes.remove(min_idx);
        strides.remove(min_idx);
        if i + 1 < r {
            result_stride.push(new_stride);
        } else {
            // The last mode's reach starts the "rest" mode that fills up to the co-target.
            let rest_shape = it::ceil_div(cotarget, new_stride).size();
            result_shape.push(rest_shape);
            result_stride.push(new_stride);
        }
    }
    Ok(coalesce(&Layout {
        shape: IntTuple::ints(&result_shape),
        stride: IntTuple::ints(&result_stride),
    }))
}

// ---------------------------------------------------------------------------------------
// Inverses

/// CuTe's `detail::exchange_sort` on (key, value) pairs, kept verbatim in behaviour so
/// that ties between equal strides resolve the way CuTe's do.
fn exchange_sort_by_key(mut a: Vec<(i64, usize)>) -> Vec<(i64, usize)> {
    for i in 0..a.len() {
        for j in i + 1..a.len() {
            if a[j].0 < a[i].0 {
                a.swap(i, j);
            }
        }
    }
    a
}

fn exclusive_prefix(shape: &[i64]) -> Vec<i64> {
    let mut out = Vec::with_capacity(shape.len());
    let mut run = 1;
    for &s in shape {
        out.push(run);
        run *= s;
    }
    out
}

/// A layout `R` with `layout(R(i)) == i` for every `i < size(R)`, as large as the
/// contiguous part of `layout`'s image starting at 0 allows (CuTe's `right_inverse`).
pub fn right_inverse(layout: &Layout) -> Layout {
    let c = coalesce(layout);
    let shape = c.shape.flatten();
    let stride = c.stride.flatten();
    let pre = exclusive_prefix(&shape);
    let sorted = exchange_sort_by_key(stride.iter().copied().zip(0..).collect());
    let mut rs = vec![1i64];
    let mut rd = vec![0i64];
    let mut curr = 1i64;
    for (d, i) in sorted {
        if d == curr {
            rs.push(shape[i]);
            rd.push(pre[i]);
            curr = shape[i] * d;
        }
    }
    coalesce(&Layout {
        shape: IntTuple::ints(&rs),
        stride: IntTuple::ints(&rd),
    })
}

/// A layout `L'` with `L'(layout(i)) == i` for every `i < size(layout)` when `layout` is
/// injective (CuTe's `left_inverse`, the CUTLASS >= 3.9 construction: strides sorted,
/// each one's gap becomes a stride-0 or stride-prefix mode).
pub fn left_inverse(layout: &Layout) -> Result<Layout, LayoutError> {
    let c = coalesce(layout);
    let shape = c.shape.flatten();
    let stride = c.stride.flatten();
    if stride.iter().any(|&d| d < 0) {
        return Err(algebra_err(
            "left_inverse",
            format!(
                "{layout} has a negative stride; CuTe's left_inverse needs non-negative strides"
            ),
        ));
    }
    let pre = exclusive_prefix(&shape);
    let sorted = exchange_sort_by_key(stride.iter().copied().zip(0..).collect());
    let mut rs: Vec<i64> = Vec::new();
    let mut rd = vec![0i64];
    for &(d, i) in &sorted {
        if d == 0 {
            continue;
        }
        let covered: i64 = rs.iter().product();
        if d % covered != 0 {
            return Err(algebra_err(
                "left_inverse",
                format!(
                    "stride {d} is not a multiple of {covered}, the extent covered by the smaller strides (divisibility condition)"
                ),
            ));
        }
        rs.push(d / covered);
        rd.push(pre[i]);
    }
    rs.push(shape[sorted.last().unwrap().1]);
    Ok(coalesce(&Layout {
        shape: IntTuple::ints(&rs),
        stride: IntTuple::ints(&rd),
    }))
}

// ---------------------------------------------------------------------------------------
// Divides

/// Splits `layout` into tiles: `((tile), (rest))` for a layout tiler, applied mode by mode
/// for a by-mode tiler (CuTe's `logical_divide`); with a layout tiler `B` it is
/// `composition(layout, make_layout(B, complement(B, shape(coalesce(layout)))))`.
pub fn logical_divide<T: IntoTiler + ?Sized>(
    layout: &Layout,
    tiler: &T,
) -> Result<Layout, LayoutError> {
    match tiler.to_tiler() {
        Tiler::Layout(b) => {
            let rest = complement_to(&b, &coalesce(layout).shape)?;
            composition(layout, &Layout::from_modes(vec![b, rest]))
        }
        Tiler::Keep => Ok(layout.clone()),
        Tiler::ByMode(ts) => by_mode("logical_divide", layout, &ts, true, |l, t| {
            logical_divide(l, t)
        }),
    }
}

/// CuTe's `zip2_by(t, guide)`: gathers the first and second halves of the rank-2 modes at
/// the guide's terminals into `((firsts...), (seconds..., extra modes...))`.
fn zip2_by(t: &IntTuple, guide: &Tiler) -> Result<IntTuple, LayoutError> {
    match guide {
        Tiler::ByMode(g) => {
            let tm = match t {
                Tuple(v) if v.len() >= g.len() => v,
                _ => {
                    return Err(algebra_err(
                        "zip",
                        format!("{t} has fewer modes than the tiler"),
                    ));
                }
            };
            let mut firsts = Vec::new();
            let mut seconds = Vec::new();
            for (ti, gi) in tm.iter().zip(g) {
                let split = zip2_by(ti, gi)?;
                firsts.push(split.get(0).clone());
                seconds.push(split.get(1).clone());
            }
            seconds.extend(tm.iter().skip(g.len()).cloned());
            Ok(Tuple(vec![Tuple(firsts), Tuple(seconds)]))
        }
        _ => {
            if t.rank() != 2 || t.is_int() {
                return Err(algebra_err(
                    "zip",
                    format!("{t} is not a (tile, rest) pair; `_` modes cannot be zipped"),
                ));
            }
            Ok(t.clone())
        }
    }
}

/// CuTe's `tile_unzip(layout, tiler)`.
fn tile_unzip(layout: &Layout, tiler: &Tiler) -> Result<Layout, LayoutError> {
    Ok(Layout {
        shape: zip2_by(&layout.shape, tiler)?,
        stride: zip2_by(&layout.stride, tiler)?,
    })
}

/// Unpacks the second mode of a rank-2 layout one level: CuTe's `result(_, repeat<R1>(_))`.
fn unpack_second(l: &Layout) -> Layout {
    let mut modes = vec![l.mode(0)];
    let second = l.mode(1);
    if second.rank() > 1 {
        modes.extend(second.modes())
    } else {
        modes.push(second)
    }
    Layout::from_modes(modes)
}

/// `logical_divide` with the tiles gathered into mode 0 and the rest into mode 1:
/// `((TILE...), (REST...))` (CuTe's `zipped_divide`).
pub fn zipped_divide<T: IntoTiler + ?Sized>(
    layout: &Layout,
    tiler: &T,
) -> Result<Layout, LayoutError> {
    let t = tiler.to_tiler();
    tile_unzip(&logical_divide(layout, &t)?, &t)
}

/// `zipped_divide` with the rest modes unpacked: `((TILE...), REST0, REST1, ...)`
/// (CuTe's `tiled_divide`).
pub fn tiled_divide<T: IntoTiler + ?Sized>(
    layout: &Layout,
    tiler: &T,
) -> Result<Layout, LayoutError> {
    Ok(unpack_second(&zipped_divide(layout, tiler)?))
}

/// `zipped_divide` with both modes unpacked: `(TILE0, TILE1, ..., REST0, REST1, ...)`
/// (CuTe's `flat_divide`).
pub fn flat_divide<T: IntoTiler + ?Sized>(
    layout: &Layout,
    tiler: &T,
) -> Result<Layout, LayoutError> {
    Ok(unpack_both(&zipped_divide(layout, tiler)?))
}

fn unpack_both(l: &Layout) -> Layout {
    let mut modes = Vec::new();
    for m in [l.mode(0), l.mode(1)] {
        if m.rank() > 1 {
            modes.extend(m.modes())
        } else {
            modes.push(m)
        }
    }
    Layout::from_modes(modes)
}

// ---------------------------------------------------------------------------------------
// Products

/// Repeats `block` over `tiler`: `(block, complement(block) o tiler)` for a layout tiler,
/// mode by mode for a by-mode tiler (CuTe's `logical_product`).
pub fn logical_product<T: IntoTiler + ?Sized>(
    block: &Layout,
    tiler: &T,
) -> Result<Layout, LayoutError> {
    match tiler.to_tiler() {
        Tiler::Layout(t) => {
            let comp = complement(block, block.size() * t.cosize())?;
            Ok(Layout::from_modes(vec![
                block.clone(),
                composition(&comp, &t)?,
            ]))
        }
        Tiler::Keep => Ok(block.clone()),
        Tiler::ByMode(ts) => by_mode("logical_product", block, &ts, true, |l, t| {
            logical_product(l, t)
        }),
    }
}

/// `logical_product` with the block modes gathered into mode 0 and the repetitions into
/// mode 1 (CuTe's `zipped_product`).
pub fn zipped_product<T: IntoTiler + ?Sized>(
    block: &Layout,
    tiler: &T,
) -> Result<Layout, LayoutError> {
    let t = tiler.to_tiler();
    tile_unzip(&logical_product(block, &t)?, &t)
}

/// `zipped_product` with the repetition modes unpacked (CuTe's `tiled_product`).
pub fn tiled_product<T: IntoTiler + ?Sized>(
    block: &Layout,
    tiler: &T,
) -> Result<Layout, LayoutError> {
    Ok(unpack_second(&zipped_product(block, tiler)?))
}

/// `zipped_product` with both modes unpacked (CuTe's `flat_product`).
pub fn flat_product<T: IntoTiler + ?Sized>(
    block: &Layout,
    tiler: &T,
) -> Result<Layout, LayoutError> {
    Ok(unpack_both(&zipped_product(block, tiler)?))
}

/// CuTe's `zip(layoutA, layoutB)`: pairs mode `i` of `a` with mode `i` of `b`.
fn zip_layouts(a: &Layout, b: &Layout) -> Result<Layout, LayoutError> {
    let zip = |x: &IntTuple, y: &IntTuple| -> Result<IntTuple, LayoutError> {
        if let (Tuple(xs), Tuple(ys)) = (x, y) {
            if xs.len() != ys.len() {
                return Err(algebra_err(
                    "zip",
                    format!("{x} and {y} have different ranks"),
                ));
            }
        }
        if !x.is_int() && y.is_int() {
            return Err(algebra_err(
                "zip",
                format!("{x} and {y} have different ranks"),
            ));
        }
        Ok(it::zip(&Tuple(vec![x.clone(), y.clone()])))
    };
    Ok(Layout {
        shape: zip(&a.shape, &b.shape)?,
        stride: zip(&a.stride, &b.stride)?,
    })
}

/// Repeats `block` as a whole at every position of `tiler`, mode by mode: mode `i` of the
/// result is `(block_i, tiler_i)` (CuTe's `blocked_product`; rank = max of the ranks).
pub fn blocked_product(block: &Layout, tiler: &Layout) -> Result<Layout, LayoutError> {
    let r = block.rank().max(tiler.rank());
    let result = logical_product(&block.append_to_rank(r), &tiler.append_to_rank(r))?;
    zip_layouts(&result.mode(0), &result.mode(1))
}

/// Interleaves the repetitions of `block` element by element: mode `i` of the result is
/// `(tiler_i, block_i)` (CuTe's `raked_product`).
pub fn raked_product(block: &Layout, tiler: &Layout) -> Result<Layout, LayoutError> {
    let r = block.rank().max(tiler.rank());
    let result = logical_product(&block.append_to_rank(r), &tiler.append_to_rank(r))?;
    zip_layouts(&result.mode(1), &result.mode(0))
}
