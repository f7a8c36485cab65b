//! CuTe's `IntTuple`: an integer or a tuple of `IntTuple`s, the type of every shape,
//! stride and coordinate in the layout algebra, with the arithmetic CuTe defines on it
//! (`include/cute/int_tuple.hpp`, `include/cute/stride.hpp`).
//!
//! CuTe distinguishes static (`_8`) from dynamic (`8`) integers; the *results* of the
//! algebra only agree with CuTe when everything is static (dynamic values stop CuTe
//! from merging or dropping modes), so every integer here behaves as a static one.

/// An integer or a (possibly nested) tuple of them: CuTe's `IntTuple`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum IntTuple {
    Int(i64),
    Tuple(Vec<IntTuple>),
}

use IntTuple::{Int, Tuple};

impl From<i64> for IntTuple {
    fn from(v: i64) -> Self {
        Int(v)
    }
}

impl From<Vec<IntTuple>> for IntTuple {
    fn from(v: Vec<IntTuple>) -> Self {
        Tuple(v)
    }
}

/// Builds an `IntTuple` from integers and nested tuples: `tup![(2, 4), 8]`; an item that
/// is more than one token goes in braces: `tup![i, { 8 * j }]`.
#[macro_export]
macro_rules! tup {
    (@one ( $($inner:tt),* )) => { $crate::int_tuple::IntTuple::Tuple(vec![$($crate::tup!(@one $inner)),*]) };
    (@one $e:expr) => { $crate::int_tuple::IntTuple::Int($e) };
    ($($x:tt),*) => { $crate::int_tuple::IntTuple::Tuple(vec![$($crate::tup!(@one $x)),*]) };
}

impl IntTuple {
    /// A tuple of plain integers.
    pub fn ints(v: &[i64]) -> IntTuple {
        Tuple(v.iter().map(|&x| Int(x)).collect())
    }

    /// True for a leaf integer (CuTe's `is_integral`).
    pub fn is_int(&self) -> bool {
        matches!(self, Int(_))
    }

    /// The integer, if this is one.
    pub fn as_int(&self) -> Option<i64> {
        match self {
            Int(v) => Some(*v),
            Tuple(_) => None,
        }
    }

    /// Number of top-level modes; an integer has rank 1 (CuTe's `rank`).
    pub fn rank(&self) -> usize {
        match self {
            Int(_) => 1,
            Tuple(v) => v.len(),
        }
    }

    /// Nesting depth: 0 for an integer (CuTe's `depth`).
    pub fn depth(&self) -> usize {
        match self {
            Int(_) => 0,
            Tuple(v) => 1 + v.iter().map(|x| x.depth()).max().unwrap_or(0),
        }
    }

    /// Product of all leaves (CuTe's `product`/`size`); 1 for the empty tuple.
    pub fn size(&self) -> i64 {
        match self {
            Int(v) => *v,
            Tuple(v) => v.iter().map(|x| x.size()).product(),
        }
    }

    /// Sum of all leaves (CuTe's `sum`).
    pub fn sum(&self) -> i64 {
        match self {
            Int(v) => *v,
            Tuple(v) => v.iter().map(|x| x.sum()).sum(),
        }
    }

    /// Mode `i` (CuTe's `get<i>`); an integer's only mode is itself.
    pub fn get(&self, i: usize) -> &IntTuple {
        match self {
            Int(_) => {
                assert!(i == 0, "an integer has only mode 0");
                self
            }
            Tuple(v) => &v[i],
        }
    }

    /// The modes as a slice-like vector; an integer is one mode (CuTe's `wrap`).
    pub fn modes(&self) -> Vec<IntTuple> {
        match self {
            Int(_) => vec![self.clone()],
            Tuple(v) => v.clone(),
        }
    }

    /// All leaves, left to right (CuTe's `flatten`, as a plain list).
    pub fn flatten(&self) -> Vec<i64> {
        let mut out = Vec::new();
        self.flatten_into(&mut out);
        out
    }

    fn flatten_into(&self, out: &mut Vec<i64>) {
        match self {
            Int(v) => out.push(*v),
            Tuple(v) => v.iter().for_each(|x| x.flatten_into(out)),
        }
    }

    /// CuTe's `flatten` as an `IntTuple`: an integer stays an integer, a tuple becomes
    /// a depth-1 tuple.
    pub fn flattened(&self) -> IntTuple {
        match self {
            Int(_) => self.clone(),
            Tuple(_) => IntTuple::ints(&self.flatten()),
        }
    }

    /// A one-mode tuple collapses to its mode (CuTe's `unwrap`).
    pub fn unwrap_single(self) -> IntTuple {
        match self {
            Tuple(mut v) if v.len() == 1 => v.pop().unwrap(),
            other => other,
        }
    }

    /// Same tree with every leaf mapped (CuTe's `transform_leaf`).
    pub fn map_leaves(&self, f: &mut impl FnMut(i64) -> i64) -> IntTuple {
        match self {
            Int(v) => Int(f(*v)),
            Tuple(v) => Tuple(v.iter().map(|x| x.map_leaves(f)).collect()),
        }
    }

    /// Rebuilds the profile of `self` from a flat list of leaves (CuTe's `unflatten`).
    pub fn unflatten_like(&self, leaves: &[i64]) -> IntTuple {
        let mut it = leaves.iter().copied();
        let out = self.map_leaves(&mut |_| it.next().expect("too few leaves to unflatten"));
        assert!(it.next().is_none(), "too many leaves to unflatten");
        out
    }
}

/// Same tree structure, leaf for leaf (CuTe's `is_congruent`).
pub fn is_congruent(a: &IntTuple, b: &IntTuple) -> bool {
    match (a, b) {
        (Int(_), Int(_)) => true,
        (Tuple(x), Tuple(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| is_congruent(p, q))
        }
        _ => false,
    }
}

/// `a`'s profile is a coarsening of `b`'s: an integer in `a` may stand for any subtree of
/// `b` (CuTe's `is_weakly_congruent`).
pub fn is_weakly_congruent(a: &IntTuple, b: &IntTuple) -> bool {
    match (a, b) {
        (Int(_), _) => true,
        (Tuple(_), Int(_)) => false,
        (Tuple(x), Tuple(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| is_weakly_congruent(p, q))
        }
    }
}

/// Shapes are compatible when `a`'s sizes agree with `b` and every integer of `a` may be
/// refined into the matching subtree of `b` (CuTe's `compatible`).
pub fn is_compatible(a: &IntTuple, b: &IntTuple) -> bool {
    match (a, b) {
        (Int(x), _) => *x == b.size(),
        (Tuple(_), Int(_)) => false,
        (Tuple(x), Tuple(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| is_compatible(p, q))
        }
    }
}

/// Quotient and remainder truncating toward zero, as C++ integer division (and so CuTe's
/// `divmod`) does.
fn divmod(a: i64, b: i64) -> (i64, i64) {
    (a / b, a % b)
}

/// Checks that every integer of `crd` lies inside the (sub-)shape it indexes: `0..size`.
/// `crd` must already have a form `crd2idx` accepts against `shape`.
pub fn check_in_bounds(crd: &IntTuple, shape: &IntTuple) -> Result<(), String> {
    match (crd, shape) {
        (Tuple(c), Tuple(s)) => c.iter().zip(s).try_for_each(|(c, s)| check_in_bounds(c, s)),
        (Int(c), s) => {
            let size = s.size();
            if (0..size).contains(c) {
                Ok(())
            } else if let Int(_) = s {
                Err(format!("{c} is outside 0..{size}"))
            } else {
                Err(format!("{c} is outside 0..{size} (the size of {s})"))
            }
        }
        (Tuple(_), Int(_)) => Err(format!(
            "coordinate {crd} is a tuple where the shape is {shape}"
        )),
    }
}

/// Maps a coordinate to an offset through `shape` and `stride` (CuTe's
/// `crd2idx(coord, shape, stride)`).
///
/// An integer coordinate against a tuple shape is split colexicographically; the last
/// mode takes whatever remains unreduced, as in CuTe, so indices past the size extend the
/// last mode. A tuple coordinate must match the shape's rank at that level.
pub fn crd2idx(crd: &IntTuple, shape: &IntTuple, stride: &IntTuple) -> Result<i64, String> {
    match (crd, shape, stride) {
        (Tuple(c), Tuple(s), Tuple(d)) => {
            if c.len() != s.len() || s.len() != d.len() {
                return Err(format!(
                    "coordinate {crd} has rank {}, shape {shape} has rank {}",
                    c.len(),
                    s.len()
                ));
            }
            let mut acc = 0i64;
            for ((ci, si), di) in c.iter().zip(s).zip(d) {
                acc += crd2idx(ci, si, di)?;
            }
            Ok(acc)
        }
        (Tuple(_), Int(_), _) => Err(format!(
            "coordinate {crd} is a tuple where the shape is the integer {shape}"
        )),
        (Int(c), Tuple(s), Tuple(d)) => {
            if s.len() != d.len() {
                return Err(format!(
                    "shape {shape} and stride {stride} are not congruent"
                ));
            }
            if s.is_empty() {
                return Ok(0);
            }
            let mut rest = *c;
            let mut acc = 0i64;
            for (si, di) in s.iter().zip(d).take(s.len() - 1) {
                let (q, r) = divmod(rest, si.size());
                acc += crd2idx(&Int(r), si, di)?;
                rest = q;
            }
            Ok(acc + crd2idx(&Int(rest), s.last().unwrap(), d.last().unwrap())?)
        }
        (Int(c), Int(_), Int(d)) => Ok(c * d),
        _ => Err(format!(
            "shape {shape} and stride {stride} are not congruent"
        )),
    }
}

/// Splits a 1-D index into a coordinate of `shape`, colexicographically (CuTe's
/// `idx2crd(idx, shape)`); the last mode of each level is left unreduced, as in CuTe.
pub fn idx2crd(idx: i64, shape: &IntTuple) -> IntTuple {
    match shape {
        Int(_) => Int(idx),
        Tuple(s) => {
            let mut rest = idx;
            let mut out = Vec::with_capacity(s.len());
            for (i, si) in s.iter().enumerate() {
                if i + 1 == s.len() {
                    out.push(idx2crd(rest, si));
                } else {
                    let (q, r) = divmod(rest, si.size());
                    out.push(idx2crd(r, si));
                    rest = q;
                }
            }
            Tuple(out)
        }
    }
}

/// Colexicographic index of a coordinate in `shape` (CuTe's `crd2idx(coord, shape)`):
/// `c0 + s0 * (c1 + s1 * ...)`.
pub fn crd2idx_colex(crd: &IntTuple, shape: &IntTuple) -> Result<i64, String> {
    crd2idx(crd, shape, &compact_col_major(shape, 1))
}

/// Exclusive prefix product of the leaves, shaped like `shape` (CuTe's `prefix_product`).
pub fn prefix_product(shape: &IntTuple) -> IntTuple {
    let mut run = 1;
    shape.map_leaves(&mut |s| {
        let d = run;
        run *= s;
        d
    })
}

/// Compact colexicographic strides for `shape`, starting at `current` (CuTe's
/// `compact_major<LayoutLeft>(shape, current)`); as in CuTe, a size-1 mode gets stride 0.
pub fn compact_col_major(shape: &IntTuple, current: i64) -> IntTuple {
    let mut run = current;
    shape.map_leaves(&mut |s| {
        if s == 1 {
            return 0;
        }
        let d = run;
        run *= s;
        d
    })
}

/// Compact lexicographic (row-major) strides for `shape`, starting at `current` (CuTe's
/// `compact_major<LayoutRight>(shape, current)`); a size-1 mode gets stride 0.
pub fn compact_row_major(shape: &IntTuple, current: i64) -> IntTuple {
    let leaves = shape.flatten();
    let mut strides = vec![0; leaves.len()];
    let mut run = current;
    for i in (0..leaves.len()).rev() {
        if leaves[i] != 1 {
            strides[i] = run;
            run *= leaves[i];
        }
    }
    shape.unflatten_like(&strides)
}

/// `ceil(a / b)` for integers (CuTe's integral `ceil_div`: `(a + b - 1) / b`).
pub fn ceil_div_int(a: i64, b: i64) -> i64 {
    (a + b - 1) / b
}

/// CuTe's `ceil_div(a, b)` with an integer divisor: for a tuple `a`, the divisor is
/// folded through the modes left to right, each mode absorbing what it can.
pub fn ceil_div(a: &IntTuple, b: i64) -> IntTuple {
    match a {
        Int(x) => Int(ceil_div_int(*x, b)),
        Tuple(v) => {
            let mut rest = Int(b);
            let mut out = Vec::with_capacity(v.len());
            for ai in v {
                let r = rest.size();
                out.push(ceil_div(ai, r));
                rest = Int(ceil_div_int(r, ai.size()));
            }
            Tuple(out)
        }
    }
}

/// CuTe's integral `shape_div(a, b)`: `ceil(a / b)`, with the weak divisibility check
/// (one must divide the other) reported as an error.
pub fn shape_div_int(a: i64, b: i64) -> Result<i64, String> {
    if b == 0 || (a % b != 0 && (a == 0 || b % a != 0)) {
        return Err(format!(
            "shape_div: neither of {a} and {b} divides the other"
        ));
    }
    Ok(ceil_div_int(a, b))
}

/// CuTe's `shape_div(a, b)` with an integer divisor: for a tuple, the divisor is folded
/// through the modes (`shape_div((4,5,6), 40) = (1,1,3)`).
pub fn shape_div(a: &IntTuple, b: i64) -> Result<IntTuple, String> {
    match a {
        Int(x) => Ok(Int(shape_div_int(*x, b)?)),
        Tuple(v) => {
            let mut rest = b;
            let mut out = Vec::with_capacity(v.len());
            for ai in v {
                out.push(shape_div(ai, rest)?);
                rest = shape_div_int(rest, ai.size())?;
            }
            Ok(Tuple(out))
        }
    }
}

/// Sum of leaf-wise products of two congruent tuples (CuTe's `inner_product`).
pub fn inner_product(a: &IntTuple, b: &IntTuple) -> i64 {
    a.flatten()
        .iter()
        .zip(b.flatten())
        .map(|(x, y)| x * y)
        .sum()
}

/// Sizes of each top-level mode (CuTe's `product_each`).
pub fn product_each(a: &IntTuple) -> IntTuple {
    match a {
        Int(_) => a.clone(),
        Tuple(v) => Tuple(v.iter().map(|x| Int(x.size())).collect()),
    }
}

/// Transposes a tuple of equal-rank tuples: `((a,b),(x,y)) -> ((a,x),(b,y))`; a tuple of
/// integers becomes a one-mode tuple of itself (CuTe's `zip`).
pub fn zip(t: &IntTuple) -> IntTuple {
    match t {
        Int(_) => t.clone(),
        Tuple(v) => match v.first() {
            Some(Tuple(first)) => {
                let r = first.len();
                Tuple(
                    (0..r)
                        .map(|j| Tuple(v.iter().map(|x| x.get(j).clone()).collect()))
                        .collect(),
                )
            }
            _ => Tuple(vec![t.clone()]),
        },
    }
}
