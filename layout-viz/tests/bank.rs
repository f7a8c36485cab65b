//! The bank-conflict simulator on hand-checkable cases and the stages' real reads.
use layout_viz::bank::{self, Access, Op};

fn access(op: Op, addrs: impl IntoIterator<Item = u64>) -> Access {
    Access {
        name: "test".into(),
        description: String::new(),
        op,
        addrs: addrs.into_iter().map(Some).collect(),
    }
}

fn lds(bits: u32) -> Op {
    Op::Access { bits, store: false }
}

#[test]
fn consecutive_words_one_wavefront() {
    let r = bank::simulate(&access(lds(32), (0..32).map(|l| 4 * l))).unwrap();
    assert_eq!((r.wavefronts, r.ideal), (1, 1));
    assert!(r.conflict_free());
}

#[test]
fn same_word_is_a_broadcast() {
    let r = bank::simulate(&access(lds(32), [256; 32])).unwrap();
    assert_eq!((r.wavefronts, r.ideal), (1, 1));
}

#[test]
fn stride_32_words_is_32_way() {
    let r = bank::simulate(&access(lds(32), (0..32).map(|l| 128 * l))).unwrap();
    assert_eq!((r.wavefronts, r.ideal, r.max_way), (32, 1, 32));
    assert_eq!(r.phases[0].conflicts.len(), 1);
    assert_eq!(r.phases[0].conflicts[0].bank, 0);
    assert_eq!(r.phases[0].conflicts[0].lanes.len(), 32);
}

#[test]
fn two_lanes_same_bank_different_word_is_2_way() {
    let mut addrs: Vec<u64> = (0..32).map(|l| 4 * l).collect();
    addrs[1] = 128;
    let r = bank::simulate(&access(lds(32), addrs)).unwrap();
    assert_eq!(r.wavefronts, 2);
}

#[test]
fn wide_accesses_split_into_phases() {
    let r = bank::simulate(&access(lds(64), (0..32).map(|l| 8 * l))).unwrap();
    assert_eq!((r.phases.len(), r.wavefronts, r.ideal), (2, 2, 2));
    let r = bank::simulate(&access(lds(128), (0..32).map(|l| 16 * l))).unwrap();
    assert_eq!((r.phases.len(), r.wavefronts, r.ideal), (4, 4, 4));
    // 128-bit lanes 0..7 all in banks 0..3: 8 distinct words per bank in phase 0.
    let r = bank::simulate(&access(lds(128), (0..32).map(|l| 128 * l))).unwrap();
    assert_eq!((r.wavefronts, r.ideal, r.max_way), (32, 4, 8));
}

#[test]
fn seed_fact_one_ldmatrix_phase_of_an_unswizzled_half_tile() {
    // Lanes 0..7 read the first 16-byte chunk of rows 0..7 of an (8,64) bf16 tile.
    let mut addrs: Vec<Option<u64>> = (0..8).map(|r| Some(r * 128)).collect();
    addrs.resize(32, None);
    let unswizzled = Access {
        name: "u".into(),
        description: String::new(),
        op: Op::Ldmatrix {
            num: 1,
            trans: false,
        },
        addrs,
    };
    let r = bank::simulate(&unswizzled).unwrap();
    assert_eq!((r.wavefronts, r.ideal), (8, 1));
    assert_eq!(
        r.phases[0].conflicts.len(),
        4,
        "banks 0..3 each see 8 words"
    );

    // Under Swizzle<3,3,3> (element offsets) row r's chunk 0 moves to chunk r.
    let mut addrs: Vec<Option<u64>> = (0..8)
        .map(|r| Some(2 * layout_viz::kernel_fns::swizzle(3, 3, 3, r * 64).unwrap()))
        .collect();
    addrs.resize(32, None);
    let swizzled = Access {
        addrs,
        ..unswizzled
    };
    let r = bank::simulate(&swizzled).unwrap();
    assert_eq!((r.wavefronts, r.ideal), (1, 1));
}

#[test]
fn stage3_vs_stage4_ldmatrix_reads() {
    for operand in ["q", "k", "v-trans"] {
        let u = bank::simulate(&bank::pattern(&format!("ldmatrix-{operand}-unswizzled")).unwrap())
            .unwrap();
        assert_eq!(
            (u.wavefronts, u.ideal, u.max_way),
            (32, 4, 8),
            "{operand} unswizzled"
        );
        let s = bank::simulate(&bank::pattern(&format!("ldmatrix-{operand}-swizzled")).unwrap())
            .unwrap();
        assert_eq!((s.wavefronts, s.ideal), (4, 4), "{operand} swizzled");
    }
}

#[test]
fn stage_q_read_addresses() {
    let q = bank::pattern("ldmatrix-q-unswizzled").unwrap();
    // Lane 8 gives row 8 (matrix 1 = rows 8..15), lane 16 row 0 at column 8.
    assert_eq!(q.addrs[8], Some(8 * 128));
    assert_eq!(q.addrs[16], Some(16));
}

#[test]
fn cp_async_stores_are_conflict_free_either_way() {
    for name in ["cp-async-unswizzled", "cp-async-swizzled"] {
        let r = bank::simulate(&bank::pattern(name).unwrap()).unwrap();
        assert!(r.conflict_free(), "{name}");
    }
}

#[test]
fn named_patterns_all_simulate() {
    for (name, _) in bank::PATTERNS {
        bank::simulate(&bank::pattern(name).unwrap()).unwrap();
    }
    assert!(bank::pattern("nope").is_err());
}

#[test]
fn errors_not_panics() {
    assert!(matches!(
        bank::simulate(&access(lds(32), [0; 31])),
        Err(bank::BankError::LaneCount(31))
    ));
    assert!(matches!(
        bank::simulate(&access(lds(128), [8; 32])),
        Err(bank::BankError::Misaligned { .. })
    ));
    assert!(bank::simulate(&access(lds(16), [0; 32])).is_err());
}

#[test]
fn report_is_json() {
    let r = bank::simulate(&bank::pattern("ldmatrix-q-unswizzled").unwrap()).unwrap();
    let v: serde_json::Value = serde_json::to_value(&r).unwrap();
    assert_eq!(v["wavefronts"], 32);
    assert_eq!(v["ideal"], 4);
}

/// The playground (wasm32, no C++) computes the stage patterns from layout-viz's models:
/// they must be the very addresses the kernels' own functions give.
#[test]
fn named_patterns_from_the_models_are_the_kernels() {
    for (name, _) in bank::PATTERNS {
        assert_eq!(
            bank::pattern_with(name, &bank::IndexFns::MODELS).unwrap(),
            bank::pattern_with(name, &bank::IndexFns::KERNELS).unwrap(),
            "{name}"
        );
    }
}

#[test]
fn access_names() {
    assert_eq!(bank::Op::from_name("ld32").unwrap(), lds(32));
    assert_eq!(
        bank::Op::from_name("st128").unwrap(),
        Op::Access {
            bits: 128,
            store: true
        }
    );
    assert_eq!(
        bank::Op::from_name("ldmatrix-x2-trans").unwrap(),
        Op::Ldmatrix {
            num: 2,
            trans: true
        }
    );
    for bad in ["ld16", "ldmatrix-x3", "ldmatrix-x4-t", "lds32", ""] {
        assert!(
            matches!(
                bank::Op::from_name(bad),
                Err(bank::BankError::UnknownAccess { .. })
            ),
            "{bad}"
        );
    }
}

/// A layout and a lane layout give the stage reads: ldmatrix.x4 of rows l % 8 at column
/// 8 (l / 8) of the (8,64) row-major tile is stage 3's 8-way conflict, and under
/// Swizzle<3,3,3> stage 4's conflict-free read.
#[test]
fn layout_access_of_a_tile() {
    use layout_viz::notation::{parse_any_layout, parse_layout};
    let lanes = parse_layout("(8,4):(1,64)").unwrap();
    let ldsm = bank::Op::from_name("ldmatrix-x4").unwrap();
    let plain = parse_any_layout("(8,64):(64,1)").unwrap();
    let a = bank::layout_access(&plain, &lanes, ldsm, 2).unwrap();
    // Lane 9: row 1, column 8 -> element 72, byte 144.
    assert_eq!(a.addrs[9], Some(144));
    let r = bank::simulate(&a).unwrap();
    assert_eq!((r.wavefronts, r.ideal, r.max_way), (32, 4, 8));
    let swizzled = parse_any_layout("Sw<3,3,3> o _0 o (8,64):(64,1)").unwrap();
    let a = bank::layout_access(&swizzled, &lanes, ldsm, 2).unwrap();
    // Row 1's chunk 1 lands in chunk 0: element 64, byte 128.
    assert_eq!(a.addrs[9], Some(128));
    let r = bank::simulate(&a).unwrap();
    assert_eq!((r.wavefronts, r.ideal), (4, 4));
    // Fewer lanes than a warp, the rest idle: lane l reads row l, all in bank 0.
    let a = bank::layout_access(&plain, &parse_layout("8:1").unwrap(), lds(32), 2).unwrap();
    assert_eq!(a.addrs.iter().filter(|x| x.is_some()).count(), 8);
    assert_eq!(bank::simulate(&a).unwrap().wavefronts, 8);
}

#[test]
fn layout_access_errors() {
    use layout_viz::notation::{parse_any_layout, parse_layout};
    let tile = parse_any_layout("(8,64):(64,1)").unwrap();
    let err = |lanes: &str| {
        bank::layout_access(&tile, &parse_layout(lanes).unwrap(), lds(32), 2)
            .unwrap_err()
            .to_string()
    };
    assert_eq!(err("64:1"), "lanes 64:1: 64 lanes, more than a warp's 32");
    assert_eq!(
        err("32:32"),
        "lanes 32:32: lane 16 picks index 512, outside the layout's 0..512"
    );
    // Lane 8 reads (0,1): element 1, byte 2, not a 16-byte boundary.
    let ld128 = Op::Access {
        bits: 128,
        store: false,
    };
    let a = bank::layout_access(&tile, &parse_layout("32:1").unwrap(), ld128, 2).unwrap();
    assert!(matches!(
        bank::simulate(&a),
        Err(bank::BankError::Misaligned {
            lane: 8,
            addr: 2,
            bytes: 16
        })
    ));
}
