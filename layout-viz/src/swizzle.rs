//! CuTe's `Swizzle<B, M, S>` (`include/cute/swizzle.hpp`) and the swizzled layouts built
//! from it, `ComposedLayout` (`include/cute/layout_composed.hpp`), plus `AnyLayout`, the
//! one type the CLI and the renderers take for "a plain or a swizzled layout".

use crate::int_tuple::IntTuple;
use crate::layout::{Layout, LayoutError};

/// `Swizzle<B, M, S>`: XOR the `B` bits starting at bit `M + max(S, 0)` (the "YYY" bits)
/// into the `B` bits starting at bit `M - min(S, 0)` (the "ZZZ" bits). A positive shift
/// moves YYY down onto ZZZ, a negative one moves it up, as in CuTe.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Swizzle {
    pub bits: u32,
    pub base: u32,
    pub shift: i32,
}

impl Swizzle {
    /// `Swizzle<B, M, S>`; panics where CuTe's `static_assert` fires (`|S| < B`).
    pub fn new(bits: u32, base: u32, shift: i32) -> Swizzle {
        Swizzle::try_new(bits, base, shift).unwrap_or_else(|e| panic!("{e}"))
    }

    /// `Swizzle<B, M, S>` with CuTe's requirement `|S| >= B` (so YYY and ZZZ never
    /// overlap) checked, and the masks kept inside 62 bits. The message names the
    /// parameter at fault, in the reader's terms, without repeating the swizzle (the
    /// caller says which text it came from).
    pub fn try_new(bits: u32, base: u32, shift: i32) -> Result<Swizzle, LayoutError> {
        Swizzle::check(bits as i64, base as i64, shift as i64).map_err(LayoutError::Invalid)?;
        Ok(Swizzle { bits, base, shift })
    }

    /// Whether `Swizzle<b, m, s>` is one CuTe accepts and our 64-bit offsets hold; if not,
    /// which of B, M and S is out of range, and why.
    pub fn check(b: i64, m: i64, s: i64) -> Result<(), String> {
        if !(0..=62).contains(&b) {
            return Err(format!(
                "B = {b} is out of range: B, the number of bits XORed, must be 0 to 62"
            ));
        }
        if !(0..=62).contains(&m) {
            return Err(format!(
                "M = {m} is out of range: M, the number of low bits kept whole, must be 0 to 62"
            ));
        }
        if !(-62..=62).contains(&s) {
            return Err(format!(
                "S = {s} is out of range: S, how far the bits are moved, must be -62 to 62"
            ));
        }
        if s.abs() < b {
            return Err(format!(
                "B = {b} is out of range for S = {s}: |S| must be at least B (CuTe's rule), or the B bits read and the B bits they flip would overlap"
            ));
        }
        if b + m + s.abs() > 62 {
            return Err(format!(
                "B + M + |S| = {} is out of range: the swizzle would reach past bit 62",
                b + m + s.abs()
            ));
        }
        Ok(())
    }

    /// The YYY mask: the bits that are read (CuTe's `yyy_msk`).
    pub fn yyy_mask(&self) -> i64 {
        ((1i64 << self.bits) - 1) << (self.base as i64 + self.shift.max(0) as i64)
    }

    /// The ZZZ mask: the bits that are flipped (CuTe's `zzz_msk`).
    pub fn zzz_mask(&self) -> i64 {
        ((1i64 << self.bits) - 1) << (self.base as i64 - self.shift.min(0) as i64)
    }

    /// `offset ^ shiftr(offset & yyy_msk, S)` (CuTe's `Swizzle::apply`); with `S >= 0` this
    /// is exactly the kernels' `flashlab::swizzle<B,M,S>` in `swizzle.cuh`.
    pub fn apply(&self, offset: i64) -> i64 {
        let yyy = offset & self.yyy_mask();
        let moved = if self.shift >= 0 {
            yyy >> self.shift
        } else {
            yyy << -self.shift
        };
        offset ^ moved
    }

    /// Offsets below this are permuted among themselves: `2^(B + M + |S|)`.
    pub fn period(&self) -> i64 {
        1i64 << (self.bits as i64 + self.base as i64 + self.shift.unsigned_abs() as i64)
    }
}

/// CuTe's `ComposedLayout<Swizzle, offset, Layout>`, printed `Sw<B,M,S> o off o L`:
/// coordinate -> `swizzle(offset + layout(coordinate))`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ComposedLayout {
    pub swizzle: Swizzle,
    pub offset: i64,
    pub layout: Layout,
}

impl ComposedLayout {
    /// `composition(Swizzle, offset, Layout)`.
    pub fn new(swizzle: Swizzle, offset: i64, layout: Layout) -> ComposedLayout {
        ComposedLayout {
            swizzle,
            offset,
            layout,
        }
    }

    /// 1-D colexicographic index to offset (CuTe's `ComposedLayout::operator()`).
    pub fn call(&self, idx: i64) -> i64 {
        self.swizzle.apply(self.offset + self.layout.call(idx))
    }

    /// Any coordinate `Layout::crd2idx` accepts, through the swizzle.
    pub fn crd2idx(&self, crd: &IntTuple) -> i64 {
        self.swizzle.apply(self.offset + self.layout.crd2idx(crd))
    }

    /// Fallible `crd2idx`, for coordinates typed by a user.
    pub fn try_crd2idx(&self, crd: &IntTuple) -> Result<i64, LayoutError> {
        Ok(self
            .swizzle
            .apply(self.offset + self.layout.try_crd2idx(crd)?))
    }

    /// Size of the domain: that of the inner layout (CuTe's `size`).
    pub fn size(&self) -> i64 {
        self.layout.size()
    }

    /// Shape of the domain: that of the inner layout (CuTe's `shape`).
    pub fn shape(&self) -> &IntTuple {
        &self.layout.shape
    }

    /// Replaces the inner layout by `f(inner)`, as CuTe does for composition, divides and
    /// products of a `ComposedLayout` (they act on `layout_b` and keep the swizzle).
    pub fn map_layout<E>(
        &self,
        f: impl FnOnce(&Layout) -> Result<Layout, E>,
    ) -> Result<ComposedLayout, E> {
        Ok(ComposedLayout {
            swizzle: self.swizzle,
            offset: self.offset,
            layout: f(&self.layout)?,
        })
    }
}

/// A plain layout or a swizzled one: whatever `parse_any_layout` reads.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum AnyLayout {
    Plain(Layout),
    Swizzled(ComposedLayout),
}

impl From<Layout> for AnyLayout {
    fn from(l: Layout) -> Self {
        AnyLayout::Plain(l)
    }
}

impl From<ComposedLayout> for AnyLayout {
    fn from(l: ComposedLayout) -> Self {
        AnyLayout::Swizzled(l)
    }
}

impl AnyLayout {
    /// 1-D colexicographic index to offset.
    pub fn call(&self, idx: i64) -> i64 {
        match self {
            AnyLayout::Plain(l) => l.call(idx),
            AnyLayout::Swizzled(c) => c.call(idx),
        }
    }

    /// Number of coordinates in the domain.
    pub fn size(&self) -> i64 {
        self.layout().size()
    }

    /// Shape of the domain.
    pub fn shape(&self) -> &IntTuple {
        &self.layout().shape
    }

    /// The layout before any swizzle: the layout itself, or a `ComposedLayout`'s inner one.
    pub fn layout(&self) -> &Layout {
        match self {
            AnyLayout::Plain(l) => l,
            AnyLayout::Swizzled(c) => &c.layout,
        }
    }

    /// Hierarchical, flat-per-mode or 1-D coordinate to offset; panics on a coordinate
    /// that does not fit the shape (see `try_crd2idx`).
    pub fn crd2idx(&self, crd: &IntTuple) -> i64 {
        match self {
            AnyLayout::Plain(l) => l.crd2idx(crd),
            AnyLayout::Swizzled(c) => c.crd2idx(crd),
        }
    }

    /// Fallible `crd2idx`, for coordinates typed by a user.
    pub fn try_crd2idx(&self, crd: &IntTuple) -> Result<i64, LayoutError> {
        match self {
            AnyLayout::Plain(l) => l.try_crd2idx(crd),
            AnyLayout::Swizzled(c) => c.try_crd2idx(crd),
        }
    }

    /// Applies a layout-to-layout operation to the (inner) layout, keeping any swizzle.
    pub fn map_layout<E>(
        &self,
        f: impl FnOnce(&Layout) -> Result<Layout, E>,
    ) -> Result<AnyLayout, E> {
        Ok(match self {
            AnyLayout::Plain(l) => AnyLayout::Plain(f(l)?),
            AnyLayout::Swizzled(c) => AnyLayout::Swizzled(c.map_layout(f)?),
        })
    }
}
