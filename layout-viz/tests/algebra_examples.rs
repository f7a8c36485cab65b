//! Worked examples with known answers: the seeds' examples and results quoted in CuTe's
//! documentation (`media/docs/cpp/cute/02_layout_algebra.md`, CUTLASS 4.x), each
//! re-derived by hand in a comment so a reader can follow the algebra.

use layout_viz::int_tuple::{IntTuple, idx2crd};
use layout_viz::layout::*;
use layout_viz::notation::{parse_any_layout, parse_int_tuple, parse_layout, parse_tiler};
use layout_viz::swizzle::{AnyLayout, ComposedLayout, Swizzle};
use layout_viz::tup;

fn l(s: &str) -> Layout {
    parse_layout(s).unwrap()
}

fn t(s: &str) -> Tiler {
    parse_tiler(s).unwrap()
}

#[test]
fn hierarchical_coordinate_of_the_seed_example() {
    // ((2,2),8,16):((1,2),4,32) is compact column-major, so the offset of a coordinate is
    // its colexicographic index: ((0,1),4,3) -> (0 + 2*1) + 4*4 + 32*3 = 114.
    let a = l("((2,2),8,16):((1,2),4,32)");
    assert_eq!(a.crd2idx(&tup![(0, 1), 4, 3]), 114);
    // The same element as a flat coordinate per mode (mode 0 indexed 1-D) and as 1-D index.
    assert_eq!(a.crd2idx(&tup![2, 4, 3]), 114);
    assert_eq!(a.crd2idx(&IntTuple::Int(114)), 114);
    assert_eq!(a.call(114), 114);
    assert_eq!(idx2crd(114, &a.shape), tup![(0, 1), 4, 3]);
    assert_eq!(a.size(), 512);
    assert_eq!(a.cosize(), 512);
}

#[test]
fn row_major_2x8_visited_colexicographically() {
    // (2,8):(8,1): index i is coordinate (i % 2, i / 2), offset 8*(i%2) + i/2.
    let a = l("(2,8):(8,1)");
    assert_eq!(
        a.offsets(),
        vec![0, 8, 1, 9, 2, 10, 3, 11, 4, 12, 5, 13, 6, 14, 7, 15]
    );
    assert_eq!(Layout::row_major(tup![2, 8]), a);
    assert_eq!(Layout::column_major(tup![2, 8]), l("(2,8):(1,2)"));
}

#[test]
fn swizzled_columns() {
    // Sw<2,3,3> over (8,32):(32,1): row r starts at 32r; bits 6..7 (r >> 1) are XORed
    // into bits 3..4, so column 0 is 0, 32, 64^8, 96^8, 128^16, ...
    let a = parse_any_layout("Sw<2,3,3> o _0 o (8,32):(32,1)").unwrap();
    let col0: Vec<i64> = (0..8).map(|r| a.crd2idx(&tup![r, 0])).collect();
    assert_eq!(col0, vec![0, 32, 72, 104, 144, 176, 216, 248]);
    // Sw<3,3,3> over (8,64):(64,1): row r starts at 64r = r << 6 and r << 3 is XORed in,
    // so column 0 steps by 64 + 8 = 72.
    let b = parse_any_layout("Sw<3,3,3> o (8,64):(64,1)").unwrap();
    let col0: Vec<i64> = (0..8).map(|r| b.crd2idx(&tup![r, 0])).collect();
    assert_eq!(col0, (0..8).map(|r| 72 * r).collect::<Vec<_>>());
    assert_eq!(b.to_string(), "Sw<3,3,3> o _0 o (8,64):(64,1)");
    // Same function as the kernels' swizzle.cuh: offset ^ ((offset & yyy) >> S).
    let sw = Swizzle::new(3, 3, 3);
    for o in 0..1024 {
        assert_eq!(sw.apply(o), o ^ ((o & (0b111 << 6)) >> 3));
    }
}

#[test]
fn negative_shift_moves_bits_up() {
    // Sw<2,1,-3>: YYY = bits 1..2, ZZZ = bits 4..5 (CuTe's zzz_msk = mask << (M - S)).
    let sw = Swizzle::new(2, 1, -3);
    assert_eq!(sw.yyy_mask(), 0b110);
    assert_eq!(sw.zzz_mask(), 0b110000);
    assert_eq!(sw.apply(0b000110), 0b110110);
    assert_eq!(sw.apply(0b110000), 0b110000);
    assert!(Swizzle::try_new(3, 0, 2).is_err());
}

#[test]
fn composition_examples_from_the_cute_docs() {
    // 02_layout_algebra.md, "Composition": (6,2):(8,2) o (4,3):(3,1) = ((2,2),3):((24,2),8).
    // Mode 0, 4:3: dividing out stride 3 leaves (2,2):(24,2); mode 1, 3:1: (3):(8).
    assert_eq!(
        composition(&l("(6,2):(8,2)"), &l("(4,3):(3,1)")).unwrap(),
        l("((2,2),3):((24,2),8)")
    );
    // Same page: 20:2 o (5,4):(4,1) = (5,4):(8,2).
    assert_eq!(
        composition(&l("20:2"), &l("(5,4):(4,1)")).unwrap(),
        l("(5,4):(8,2)")
    );
    // Same page: (10,2):(16,4) o (5,4):(1,5) = (5,(2,2)):(16,(80,4)) with static integers.
    assert_eq!(
        composition(&l("(10,2):(16,4)"), &l("(5,4):(1,5)")).unwrap(),
        l("(5,(2,2)):(16,(80,4))")
    );
    // "By-mode Composition": (12,(4,8)):(59,(13,1)) o <3:4, 8:2> = (3,(2,4)):(236,(26,1)).
    let a = l("(12,(4,8)):(59,(13,1))");
    assert_eq!(
        composition(&a, &t("[3:4,8:2]")).unwrap(),
        l("(3,(2,4)):(236,(26,1))")
    );
    // A shape is a tiler of stride-1 layouts: a o (3,8) = (3,(4,2)):(59,(13,1)).
    assert_eq!(
        composition(&a, &tup![3, 8]).unwrap(),
        l("(3,(4,2)):(59,(13,1))")
    );
    // A by-mode tiler drops the modes it does not name, as CuTe's composition does.
    assert_eq!(
        composition(&l("(4,8,2):(1,4,32)"), &t("[2:2]")).unwrap(),
        l("(2):(2)")
    );
}

#[test]
fn composition_reports_cute_divisibility_failures() {
    // (6,3,2):(1,12,6) o 8:1: the first mode gives 6 elements, and 6 does not divide 8.
    let e = composition(&l("(6,3,2):(1,12,6)"), &l("8:1")).unwrap_err();
    assert!(e.to_string().contains("shape divisibility"), "{e}");
    // (4,3):(1,4) is compact and coalesces to 12:1, so any stride works there; a real
    // stride failure needs a stride that neither divides nor is below the mode: 6 vs 4.
    let e = composition(&l("(4,3):(1,100)"), &l("2:6")).unwrap_err();
    assert!(e.to_string().contains("stride divisibility"), "{e}");
}

#[test]
fn complement_examples_from_the_cute_docs() {
    // 02_layout_algebra.md, "Complement examples".
    let cases = [
        ("4:1", 24, "6:4"),
        ("6:4", 24, "4:1"),
        ("(4,6):(1,4)", 24, "1:0"),
        ("4:2", 24, "(2,3):(1,8)"),
        ("(2,4):(1,6)", 24, "3:2"),
        ("(2,2):(1,6)", 24, "(3,2):(2,12)"),
    ];
    for (a, bound, want) in cases {
        assert_eq!(
            complement(&l(a), bound).unwrap(),
            l(want),
            "complement({a}, {bound})"
        );
    }
    // Nothing reached: the complement is the whole co-target.
    assert_eq!(complement(&l("8:0"), 24).unwrap(), l("24:1"));
    // Overlapping modes are not injective: CuTe's static_assert, our error.
    assert!(complement(&l("(2,2):(1,1)"), 8).is_err());
}

#[test]
fn coalesce_and_filter_examples() {
    // 02_layout_algebra.md, "Coalesce": (2,(1,6)):(1,(6,2)) coalesces to 12:1.
    assert_eq!(coalesce(&l("(2,(1,6)):(1,(6,2))")), l("12:1"));
    // By-mode coalesce with profile (1,1) keeps the two modes: (2,(1,6)) -> (2,6).
    assert_eq!(
        coalesce_by(&l("(2,(1,6)):(1,(6,2))"), &tup![1, 1]).unwrap(),
        l("(2,6):(1,2)")
    );
    assert_eq!(coalesce(&l("(1,1):(3,5)")), l("1:0"));
    assert_eq!(coalesce(&l("(4,1):(1,0)")), l("4:1"));
    assert_eq!(filter(&l("(4,(2,3)):(0,(1,2))")), l("6:1"));
    assert_eq!(filter(&l("(4,1):(0,7)")), l("1:0"));
}

#[test]
fn inverses() {
    // (4,2):(2,1): index (a,b) -> 2a + b, so the inverse sends x = b + 2a to a + 4b.
    let a = l("(4,2):(2,1)");
    assert_eq!(right_inverse(&a), l("(2,4):(4,1)"));
    assert_eq!(left_inverse(&a).unwrap(), l("(2,4):(4,1)"));
    // 4:2 reaches only even offsets; CuTe >= 3.9 sends the odd gaps to stride 0.
    assert_eq!(left_inverse(&l("4:2")).unwrap(), l("(2,4):(0,1)"));
    // The right inverse stops where the image stops being contiguous from 0.
    assert_eq!(right_inverse(&l("(4,2):(1,8)")), l("4:1"));
    assert_eq!(right_inverse(&l("4:2")), l("1:0"));
    // Modes with stride 0 are skipped, not fatal: (4,32):(0,1) inverts to 32:4.
    assert_eq!(right_inverse(&l("(4,(8,2,2)):(0,(1,8,16))")), l("32:4"));
}

#[test]
fn logical_divide_examples_from_the_cute_docs() {
    // 02_layout_algebra.md, "Logical Divide 1-D Example": complement of 4:2 under 24 is
    // (2,3):(1,8), and (4,2,3):(2,1,8) o (4,(2,3)):(2,(1,8)) = ((2,2),(2,3)):((4,1),(2,8)).
    let a = l("(4,2,3):(2,1,8)");
    let b = l("4:2");
    let want = l("((2,2),(2,3)):((4,1),(2,8))");
    assert_eq!(logical_divide(&a, &b).unwrap(), want);
    let rest = complement(&b, a.size()).unwrap();
    assert_eq!(rest, l("(2,3):(1,8)"));
    assert_eq!(
        composition(&a, &Layout::from_modes(vec![b, rest])).unwrap(),
        want
    );

    // "Logical Divide 2-D Example": A = (9,(4,8)):(59,(13,1)), B = <3:3, (2,4):(1,8)>;
    // the tile of the zipped divide is the composition (3,(2,4)):(177,(13,2)) and the
    // result has shape ((3,8),(3,4)) by size.
    let a = l("(9,(4,8)):(59,(13,1))");
    let b = t("[3:3,(2,4):(1,8)]");
    let zd = zipped_divide(&a, &b).unwrap();
    assert_eq!(zd.mode(0), l("(3,(2,4)):(177,(13,2))"));
    assert_eq!(zd.mode(0), composition(&a, &b).unwrap());
    assert_eq!((zd.mode(0).size(), zd.mode(1).size()), (24, 12));
    let ld = logical_divide(&a, &b).unwrap();
    assert_eq!(
        (ld.mode(0).mode(0).size(), ld.mode(0).mode(1).size()),
        (3, 3)
    );
    assert_eq!(
        (ld.mode(1).mode(0).size(), ld.mode(1).mode(1).size()),
        (8, 4)
    );
}

#[test]
fn zipped_and_tiled_divide_shapes() {
    // A 12x32 row-major matrix split into 4x8 tiles: ((4,8),(3,4)).
    let a = l("(12,32):(32,1)");
    let tiler = t("[4:1,8:1]");
    assert_eq!(
        logical_divide(&a, &tiler).unwrap(),
        l("((4,3),(8,4)):((32,128),(1,8))")
    );
    assert_eq!(
        zipped_divide(&a, &tiler).unwrap(),
        l("((4,8),(3,4)):((32,1),(128,8))")
    );
    assert_eq!(
        tiled_divide(&a, &tiler).unwrap(),
        l("((4,8),3,4):((32,1),128,8)")
    );
    assert_eq!(
        flat_divide(&a, &tiler).unwrap(),
        l("(4,8,3,4):(32,1,128,8)")
    );
    // A plain shape is the same by-mode tiler, and `_` leaves a mode whole.
    assert_eq!(
        zipped_divide(&a, &tup![4, 8]).unwrap(),
        zipped_divide(&a, &tiler).unwrap()
    );
    assert_eq!(
        logical_divide(&a, &t("[_,8]")).unwrap(),
        l("(12,(8,4)):(32,(1,8))")
    );
}

#[test]
fn logical_product_examples_from_the_cute_docs() {
    // 02_layout_algebra.md, "Logical Product 1-D Example": A = (2,2):(4,1), B = 6:1;
    // complement of A under 24 is (2,3):(2,8), and the result is ((2,2),(2,3)):((4,1),(2,8)).
    let a = l("(2,2):(4,1)");
    assert_eq!(complement(&a, 24).unwrap(), l("(2,3):(2,8)"));
    assert_eq!(
        logical_product(&a, &l("6:1")).unwrap(),
        l("((2,2),(2,3)):((4,1),(2,8))")
    );
    // Same section, B = (4,2):(2,1): 8 tiles, visited in a different order. cosize(B) = 8,
    // so A* = complement(A, 32) = (2,4):(2,8); A* o 4:2 skips A*'s first mode (4:8) and
    // A* o 2:1 takes it (2:2).
    assert_eq!(complement(&a, 32).unwrap(), l("(2,4):(2,8)"));
    assert_eq!(
        logical_product(&a, &l("(4,2):(2,1)")).unwrap(),
        l("((2,2),(4,2)):((4,1),(8,2))")
    );
}

#[test]
fn blocked_and_raked_products() {
    // A 2x2 block over a 3x4 column-major arrangement of blocks.
    let block = l("(2,2):(1,2)");
    let tiler = l("(3,4):(1,3)");
    assert_eq!(
        blocked_product(&block, &tiler).unwrap(),
        l("((2,3),(2,4)):((1,4),(2,12))")
    );
    assert_eq!(
        raked_product(&block, &tiler).unwrap(),
        l("((3,2),(4,2)):((4,1),(12,2))")
    );
    // The docs' 2x5 row-major block over 3x4 (CUTLASS 4.x no longer coalesces mode 0,
    // which the docs' figure caption still mentions).
    assert_eq!(
        blocked_product(&l("(2,5):(5,1)"), &tiler).unwrap(),
        l("((2,3),(5,4)):((5,10),(1,30))")
    );
    // Ranks differ: the smaller one is padded with 1:0 modes.
    assert_eq!(
        blocked_product(&l("4:1"), &l("(2,3):(1,2)")).unwrap(),
        l("((4,2),(1,3)):((1,4),(0,8))")
    );
    // zipped/tiled products of a by-mode tiler act on each mode's own 1-D layout: mode 0,
    // 2:1 x 3:1 = (2,3):(1,2); mode 1, 2:2 x 4:1 = (2,(2,2)):(2,(1,4)) since the
    // complement of 2:2 fills offset 1 first.
    assert_eq!(
        zipped_product(&block, &tup![3, 4]).unwrap(),
        l("((2,2),(3,(2,2))):((1,2),(2,(1,4)))")
    );
    assert_eq!(
        tiled_product(&block, &tup![3, 4]).unwrap(),
        l("((2,2),3,(2,2)):((1,2),2,(1,4))")
    );
}

#[test]
fn swizzled_layouts_keep_the_swizzle_through_the_algebra() {
    let a = parse_any_layout("Sw<3,3,3> o _0 o (8,64):(64,1)").unwrap();
    let tile = a
        .map_layout(|inner| zipped_divide(inner, &tup![8, 8]))
        .unwrap();
    let AnyLayout::Swizzled(c) = &tile else {
        panic!("swizzle lost")
    };
    assert_eq!(c.layout, l("((8,8),(1,8)):((64,1),(0,8))"));
    assert_eq!(c.swizzle, Swizzle::new(3, 3, 3));
    // Element (r, c) of tile j is element (r, 8j + c) of the original.
    for j in 0..8 {
        for r in 0..8 {
            for col in 0..8 {
                let got = tile.crd2idx(&tup![(r, col), (0, j)]);
                assert_eq!(got, a.crd2idx(&tup![r, { 8 * j + col }]));
            }
        }
    }
    let off = ComposedLayout::new(Swizzle::new(1, 2, 3), 16, l("8:1"));
    assert_eq!(off.to_string(), "Sw<1,2,3> o 16 o 8:1");
    assert_eq!(
        parse_any_layout(&off.to_string()).unwrap(),
        AnyLayout::Swizzled(off)
    );
}

#[test]
fn notation_accepts_static_integers_and_reports_positions() {
    assert_eq!(
        parse_layout("(_8,_64):(_64,_1)").unwrap(),
        l("(8,64):(64,1)")
    );
    assert_eq!(
        parse_layout(" ( 2 , 4 ) : ( 1 , -2 ) ").unwrap(),
        l("(2,4):(1,-2)")
    );
    assert_eq!(parse_int_tuple("((2,_4),8)").unwrap(), tup![(2, 4), 8]);
    let e = parse_layout("((2,4),8):((1,16),2").unwrap_err().to_string();
    assert!(e.contains("column 20"), "{e}");
    let e = parse_layout("(2,4):(1,2,3)").unwrap_err().to_string();
    assert!(e.contains("not congruent"), "{e}");
    let e = parse_layout("(2,4)").unwrap_err().to_string();
    assert!(e.contains("expected ':'"), "{e}");
    assert!(parse_layout("(0,4):(1,0)").is_err());
    assert!(parse_any_layout("Sw<3,3,2> o 8:1").is_err());
    assert_eq!(t("(8,4)"), t("[8:1,4:1]"));
    assert_eq!(t("[_,(2,2):(1,4)]").to_string(), "[_,(2,2):(1,4)]");
}
