//! Property tests in the style of CUTLASS's pycute tests: every operation's defining
//! property checked at every index, over random small hierarchical layouts.

use std::collections::BTreeSet;

use layout_viz::int_tuple::{IntTuple, idx2crd, is_compatible};
use layout_viz::layout::*;
use layout_viz::notation::{parse_any_layout, parse_layout, parse_tiler};
use layout_viz::swizzle::{AnyLayout, ComposedLayout, Swizzle};
use proptest::prelude::*;

/// A random shape of depth <= 2 with small leaves.
fn shape() -> impl Strategy<Value = IntTuple> {
    let leaf = prop::sample::select(vec![1i64, 2, 2, 3, 4, 4, 6, 8]).prop_map(IntTuple::Int);
    leaf.prop_recursive(2, 8, 3, |inner| {
        prop::collection::vec(inner, 1..=3).prop_map(IntTuple::Tuple)
    })
}

/// Strides built the way real layouts are: the modes in a random order, each stride the
/// extent of the previous ones times an optional gap of 2 or 3, some modes broadcast
/// (stride 0). Such layouts satisfy CuTe's divisibility conditions often.
fn layout_with(zeros: bool) -> impl Strategy<Value = Layout> {
    shape()
        .prop_flat_map(move |s| {
            let n = s.flatten().len();
            (
                Just(s),
                Just(n).prop_shuffle_indices(),
                prop::collection::vec((0u8..10, 0u8..10), n),
            )
        })
        .prop_map(move |(s, order, knobs)| {
            let leaves = s.flatten();
            let mut strides = vec![0i64; leaves.len()];
            let mut cur = 1i64;
            for (&i, &(gap, zero)) in order.iter().zip(&knobs) {
                if zeros && zero < 2 {
                    continue;
                }
                if gap < 2 {
                    cur *= 2 + gap as i64;
                }
                strides[i] = cur;
                cur *= leaves[i];
            }
            Layout::new(s.clone(), s.unflatten_like(&strides))
        })
}

trait ShuffleIdx {
    fn prop_shuffle_indices(self) -> BoxedStrategy<Vec<usize>>;
}

impl ShuffleIdx for Just<usize> {
    fn prop_shuffle_indices(self) -> BoxedStrategy<Vec<usize>> {
        Just((0..self.0).collect::<Vec<_>>()).prop_shuffle().boxed()
    }
}

/// Layouts with arbitrary (also negative) strides, for notation round trips.
fn any_layout() -> impl Strategy<Value = Layout> {
    shape().prop_flat_map(|s| {
        let n = s.flatten().len();
        prop::collection::vec(-40i64..200, n)
            .prop_map(move |d| Layout::new(s.clone(), s.unflatten_like(&d)))
    })
}

/// The sizes of the top-level modes, as a shape `idx2crd` can split an index by.
fn mode_sizes(l: &Layout) -> IntTuple {
    match &l.shape {
        IntTuple::Int(_) => l.shape.clone(),
        IntTuple::Tuple(_) => {
            IntTuple::Tuple(l.modes().iter().map(|m| IntTuple::Int(m.size())).collect())
        }
    }
}

/// CuTe's *strong* divisibility conditions for `a o b`. CuTe only enforces a weaker form
/// (a stride smaller than a mode passes), and where only the weak form holds its result
/// need not be `a(b(i))`; this crate returns what CuTe returns, so the functional
/// property is checked only where the strong form holds.
fn strongly_divisible(a: &Layout, b: &Layout) -> bool {
    // CuTe coalesces `a` keeping a trailing size-1 mode as size 2 (`coalesce_x`).
    let mut leaves = a.shape.flatten();
    if let Some(last) = leaves.last_mut().filter(|l| **l == 1) {
        *last = 2;
    }
    let ca = coalesce(&Layout::new(
        a.shape.unflatten_like(&leaves),
        a.stride.clone(),
    ));
    let shapes = ca.shape.flatten();
    for (s, d) in b.shape.flatten().into_iter().zip(b.stride.flatten()) {
        if d == 0 {
            continue;
        }
        let (mut rest_shape, mut rest_stride) = (s, d);
        for &cs in &shapes[..shapes.len() - 1] {
            if rest_stride % cs != 0 && cs % rest_stride != 0 {
                return false;
            }
            let next_shape = (cs + rest_stride - 1) / rest_stride;
            if next_shape != 1 && rest_shape != 1 {
                let new_shape = next_shape.min(rest_shape);
                if rest_shape % new_shape != 0 {
                    return false;
                }
                rest_shape /= new_shape;
            }
            rest_stride = (rest_stride + cs - 1) / cs;
        }
    }
    true
}

fn image(l: &Layout) -> BTreeSet<i64> {
    l.offsets().into_iter().collect()
}

fn injective(l: &Layout) -> bool {
    image(l).len() as i64 == l.size()
}

proptest! {
    // Many properties hold only on admissible inputs (prop_assume!), so allow many rejects:
    // `PROPTEST_CASES=4096` must not abort for want of them.
    #![proptest_config(ProptestConfig { cases: 256, max_global_rejects: 1_000_000, .. ProptestConfig::default() })]

    #[test]
    fn crd2idx_agrees_across_coordinate_forms(a in layout_with(true)) {
        let flat_shape = mode_sizes(&a);
        for i in 0..a.size() {
            let want = a.call(i);
            prop_assert_eq!(a.crd2idx(&idx2crd(i, &a.shape)), want);
            prop_assert_eq!(a.crd2idx(&idx2crd(i, &flat_shape)), want);
            prop_assert_eq!(a.crd2idx(&IntTuple::Int(i)), want);
        }
    }

    #[test]
    fn coalesce_keeps_the_function(a in layout_with(true)) {
        let c = coalesce(&a);
        prop_assert_eq!(c.size(), a.size());
        prop_assert!(c.depth() <= 1);
        for i in 0..a.size() {
            prop_assert_eq!(c.call(i), a.call(i));
        }
        let s = c.shape.flatten();
        let d = c.stride.flatten();
        if c != Layout::int(1, 0) {
            prop_assert!(s.iter().all(|&x| x != 1), "{} keeps a size-1 mode", c);
        }
        for k in 1..s.len() {
            prop_assert!(s[k - 1] * d[k - 1] != d[k], "{} could coalesce further", c);
        }
    }

    #[test]
    fn filter_keeps_the_image(a in layout_with(true)) {
        let f = filter(&a);
        prop_assert_eq!(image(&f), image(&a));
        let s = f.shape.flatten();
        let d = f.stride.flatten();
        if f != Layout::int(1, 0) {
            prop_assert!(s.iter().zip(&d).all(|(&s, &d)| s != 1 && d != 0));
        }
    }

    #[test]
    fn composition_is_function_composition(a in layout_with(true), b in layout_with(true)) {
        prop_assume!(b.size() <= a.size() && b.cosize() <= a.size());
        prop_assume!(strongly_divisible(&a, &b));
        let r = composition(&a, &b).map_err(|e| TestCaseError::fail(format!("{a} o {b}: {e}")))?;
        prop_assert!(is_compatible(&b.shape, &r.shape), "{} not compatible with {}", r, b);
        for i in 0..b.size() {
            prop_assert_eq!(r.call(i), a.call(b.call(i)), "at {} for {} o {} = {}", i, a, b, r);
        }
    }

    #[test]
    fn composition_with_admissible_tilers_succeeds(a in layout_with(true), k in 0usize..4) {
        // Any prefix of a's flattened shape, as a compact layout, satisfies the conditions.
        let leaves = a.shape.flatten();
        let take = k.min(leaves.len());
        let b = Layout::column_major(IntTuple::ints(&leaves[..take.max(1)]));
        let r = composition(&a, &b).map_err(|e| TestCaseError::fail(format!("{a} o {b}: {e}")))?;
        for i in 0..b.size() {
            prop_assert_eq!(r.call(i), a.call(b.call(i)));
        }
        // By-mode with the layout's own shape reproduces it.
        let r = composition(&a, &a.shape).map_err(|e| TestCaseError::fail(format!("{a} o shape: {e}")))?;
        for i in 0..a.size() {
            prop_assert_eq!(r.call(i), a.call(i));
        }
    }

    #[test]
    fn complement_postconditions(a in layout_with(false), m in 1i64..4) {
        prop_assume!(injective(&a));
        let bound = a.cosize() * m;
        let c = complement(&a, bound).map_err(|e| TestCaseError::fail(format!("complement({a}): {e}")))?;
        // Ordered: strides increase, so offsets increase along the complement.
        let cd = c.stride.flatten();
        prop_assert!(cd.windows(2).all(|w| w[0] < w[1]), "{} not ordered", c);
        for j in 1..c.size() {
            prop_assert!(c.call(j) > c.call(j - 1));
        }
        // Disjoint: only offset 0 is shared.
        let ia = image(&a);
        for j in 1..c.size() {
            prop_assert!(!ia.contains(&c.call(j)), "{} meets {} at {}", c, a, c.call(j));
        }
        // Together they cover [0, size(A) * size(C)), which reaches the bound.
        let both = Layout::from_modes(vec![a.clone(), c.clone()]);
        let all = image(&both);
        prop_assert_eq!(all.len() as i64, both.size());
        prop_assert_eq!(all, (0..both.size()).collect::<BTreeSet<_>>());
        prop_assert!(both.size() >= bound);
    }

    #[test]
    fn right_inverse_inverts(a in layout_with(true)) {
        let r = right_inverse(&a);
        for i in 0..r.size() {
            prop_assert_eq!(a.call(r.call(i)), i, "{} r-inverse {}", a, r);
        }
    }

    #[test]
    fn left_inverse_inverts_injective_layouts(a in layout_with(false)) {
        prop_assume!(injective(&a));
        let l = left_inverse(&a).map_err(|e| TestCaseError::fail(format!("left_inverse({a}): {e}")))?;
        for i in 0..a.size() {
            prop_assert_eq!(l.call(a.call(i)), i, "{} l-inverse {}", a, l);
        }
    }

    #[test]
    fn logical_divide_is_composition_with_tile_and_rest(a in layout_with(true), k in 1usize..4) {
        let leaves = a.shape.flatten();
        let b = Layout::column_major(IntTuple::ints(&leaves[..k.min(leaves.len())]));
        let d = logical_divide(&a, &b).map_err(|e| TestCaseError::fail(format!("{a} / {b}: {e}")))?;
        let rest = complement_to(&b, &coalesce(&a).shape).unwrap();
        prop_assert_eq!(&d, &composition(&a, &Layout::from_modes(vec![b.clone(), rest])).unwrap());
        prop_assert_eq!(d.rank(), 2);
        prop_assert_eq!(d.mode(0).size(), b.size());
        prop_assert_eq!(d.size(), a.size());
        // The tile mode is the composition (zipped_divide's mode 0 in CuTe's docs).
        prop_assert_eq!(zipped_divide(&a, &b).unwrap().mode(0), composition(&a, &b).unwrap());
        for i in 0..d.size() {
            prop_assert_eq!(d.call(i), a.call(i), "a compact tiler keeps the order");
        }
    }

    #[test]
    fn zipped_and_tiled_divides_regroup_logical_divide(m0 in 1usize..4, m1 in 1usize..4, n0 in 1usize..3, n1 in 1usize..3) {
        // A (m0*n0*2) x (m1*n1*2) row-major matrix split by a 2-mode tiler.
        let (r, c) = ((m0 * n0 * 2) as i64, (m1 * n1 * 2) as i64);
        let a = Layout::row_major(IntTuple::ints(&[r, c]));
        let tiler = Tiler::ByMode(vec![(m0 as i64 * 2).to_tiler(), (m1 as i64).to_tiler()]);
        let l = logical_divide(&a, &tiler).unwrap();
        let z = zipped_divide(&a, &tiler).unwrap();
        let t = tiled_divide(&a, &tiler).unwrap();
        let (t0, t1) = (l.mode(0).mode(0).size(), l.mode(1).mode(0).size());
        let (r0, r1) = (l.mode(0).mode(1).size(), l.mode(1).mode(1).size());
        for i0 in 0..t0 { for i1 in 0..t1 { for j0 in 0..r0 { for j1 in 0..r1 {
            let want = l.crd2idx(&IntTuple::Tuple(vec![IntTuple::ints(&[i0, j0]), IntTuple::ints(&[i1, j1])]));
            let tile = IntTuple::ints(&[i0, i1]);
            prop_assert_eq!(z.crd2idx(&IntTuple::Tuple(vec![tile.clone(), IntTuple::ints(&[j0, j1])])), want);
            prop_assert_eq!(t.crd2idx(&IntTuple::Tuple(vec![tile, IntTuple::Int(j0), IntTuple::Int(j1)])), want);
        }}}}
    }

    #[test]
    fn logical_product_postconditions(a in layout_with(false), b in layout_with(false)) {
        prop_assume!(injective(&a) && injective(&b));
        let comp = complement(&a, a.size() * b.cosize()).unwrap();
        prop_assume!(strongly_divisible(&comp, &b));
        let p = logical_product(&a, &b).map_err(|e| TestCaseError::fail(format!("{a} x {b}: {e}")))?;
        prop_assert_eq!(p.rank(), 2);
        prop_assert_eq!(&p.mode(0), &a);
        prop_assert_eq!(&p.mode(1), &composition(&comp, &b).unwrap());
        prop_assert!(is_compatible(&b.shape, &p.mode(1).shape));
        prop_assert_eq!(p.size(), a.size() * b.size());
        prop_assert!(injective(&p), "{} x {} = {} is not injective", a, b, p);
    }

    #[test]
    fn blocked_and_raked_products_reassociate_modes(a in layout_with(false), b in layout_with(false)) {
        prop_assume!(injective(&a) && injective(&b));
        // The products' images are enumerated element by element below: a pair of large
        // layouts (a CI run drew one that held 4.7 GB and ran for over ten minutes) says
        // nothing the small ones do not.
        prop_assume!(a.size() * b.size() <= 1 << 14 && a.cosize() * b.cosize() <= 1 << 18);
        let r = a.rank().max(b.rank());
        // CuTe's zip cannot pair a one-mode tuple with an integer (a compile error there).
        prop_assume!(r > 1 || a.shape.is_int() == b.shape.is_int());
        let comp = complement(&a.append_to_rank(r), a.size() * b.cosize()).unwrap();
        prop_assume!(strongly_divisible(&comp, &b.append_to_rank(r)));
        // Rank 1: raked zips (complement∘B, A); when A is an integer and complement∘B a
        // tuple (e.g. 2:2 x 4:1 gives (2,2)), CuTe's zip does not compile, and ours refuses.
        let lp = logical_product(&a.append_to_rank(r), &b.append_to_rank(r)).unwrap();
        if r == 1 && lp.mode(0).shape.is_int() && !lp.mode(1).shape.is_int() {
            prop_assert!(raked_product(&a, &b).is_err(), "raked {} x {} should be refused as CuTe refuses it", a, b);
            return Ok(());
        }
        {
            let bp = blocked_product(&a, &b).map_err(|e| TestCaseError::fail(format!("blocked {a} x {b}: {e}")))?;
            let rp = raked_product(&a, &b).map_err(|e| TestCaseError::fail(format!("raked {a} x {b}: {e}")))?;
            prop_assert_eq!(bp.size(), a.size() * b.size());
            prop_assert_eq!(rp.size(), a.size() * b.size());
            prop_assert_eq!(bp.rank(), r);
            prop_assert_eq!(rp.rank(), r);
            prop_assert_eq!(image(&bp), image(&rp));
            let (pa, pb) = (a.append_to_rank(r), b.append_to_rank(r));
            for i in 0..r {
                if r > 1 {
                    // Mode i is (A_i, B_i) for blocked and (B_i, A_i) for raked, by size.
                    prop_assert_eq!(bp.mode(i).mode(0), pa.mode(i));
                    prop_assert_eq!(bp.mode(i).mode(1).size(), pb.mode(i).size());
                    prop_assert_eq!(rp.mode(i).mode(1), pa.mode(i));
                }
            }
            // The first block of the blocked product is A itself.
            let first: Vec<i64> = (0..a.size()).map(|i| {
                let crd = idx2crd(i, &mode_sizes(&pa));
                let crd = IntTuple::Tuple(crd.modes().into_iter().map(|c| IntTuple::Tuple(vec![c, IntTuple::Int(0)])).collect());
                // A rank-1 product is a one-mode tuple ((A,B)), reached through its mode 0.
                if r == 1 { bp.mode(0).crd2idx(crd.get(0)) } else { bp.crd2idx(&crd) }
            }).collect();
            prop_assert_eq!(first, a.offsets());
        }
    }

    #[test]
    fn swizzle_is_a_bijective_involution(b in 0u32..4, m in 0u32..4, extra in 0i32..3, neg in any::<bool>()) {
        let s = (b as i32 + extra) * if neg { -1 } else { 1 };
        let sw = Swizzle::new(b, m, s);
        let n = sw.period();
        let mut seen = vec![false; n as usize];
        for o in 0..n {
            let y = sw.apply(o);
            prop_assert!((0..n).contains(&y));
            prop_assert!(!seen[y as usize]);
            seen[y as usize] = true;
            prop_assert_eq!(sw.apply(y), o);
            // Bits below M and above the swizzled range are untouched.
            prop_assert_eq!(y & ((1 << m) - 1), o & ((1 << m) - 1));
            prop_assert_eq!(sw.apply(o + 5 * n), y + 5 * n);
        }
    }

    #[test]
    fn notation_round_trips(a in any_layout(), b in 0u32..4, m in 0u32..4, off in -3i64..40) {
        let text = a.to_string();
        prop_assert_eq!(&parse_layout(&text).unwrap(), &a);
        let any = AnyLayout::Plain(a.clone());
        prop_assert_eq!(parse_any_layout(&any.to_string()).unwrap(), any);
        let sw = AnyLayout::Swizzled(ComposedLayout::new(Swizzle::new(b, m, b as i32), off, a.clone()));
        prop_assert_eq!(parse_any_layout(&sw.to_string()).unwrap(), sw);
        let tiler = Tiler::ByMode(vec![Tiler::Layout(a.clone()), Tiler::Keep, Tiler::ByMode(vec![Tiler::Layout(a)])]);
        prop_assert_eq!(parse_tiler(&tiler.to_string()).unwrap(), tiler);
        // CuTe's static spelling reads the same.
        let mut statics = String::new();
        let mut prev = ' ';
        for c in text.chars() {
            if (c.is_ascii_digit() || c == '-') && !(prev.is_ascii_digit() || prev == '-') {
                statics.push('_');
            }
            statics.push(c);
            prev = c;
        }
        prop_assert_eq!(parse_layout(&statics).unwrap().to_string(), text);
    }
}
