//! The kernels' index functions (host build) against layout-viz's own atom models and
//! against facts stated by hand from the PTX ISA.
use layout_viz::atoms::{self, TvAtom};
use layout_viz::kernel_fns::{self, RowCol};

fn rc(row: u32, col: u32) -> RowCol {
    RowCol { row, col }
}

/// Every (lane, value) of `atom` lands where the kernel function says.
fn agrees(atom: &TvAtom, f: fn(u32, u32) -> RowCol) {
    assert_eq!(atom.threads(), 32, "{}", atom.name);
    for lane in 0..32 {
        for v in 0..atom.values() {
            assert_eq!(
                atom.coord(lane, v),
                f(lane, v),
                "{} lane {lane} value {v}",
                atom.name
            );
        }
    }
}

#[test]
fn seed_fact_thread0_of_m16n8k16_c() {
    let cells: Vec<RowCol> = (0..4).map(|i| kernel_fns::mma_m16n8_c(0, i)).collect();
    assert_eq!(cells, vec![rc(0, 0), rc(0, 1), rc(8, 0), rc(8, 1)]);
}

#[test]
fn mma_fragments_match_the_atoms() {
    agrees(&atoms::mma_m16n8k16_a(), kernel_fns::mma_m16n8k16_a);
    agrees(&atoms::mma_m16n8k16_b(), kernel_fns::mma_m16n8k16_b);
    agrees(
        &atoms::tv_by_name("mma-m16n8k16-c").unwrap(),
        kernel_fns::mma_m16n8_c,
    );
    agrees(&atoms::mma_m16n8k8_a(), kernel_fns::mma_m16n8k8_a);
    agrees(&atoms::mma_m16n8k8_b(), kernel_fns::mma_m16n8k8_b);
    agrees(
        &atoms::tv_by_name("mma-m16n8k8-c").unwrap(),
        kernel_fns::mma_m16n8_c,
    );
}

#[test]
fn ldmatrix_matches_the_atoms() {
    for num in [1, 2, 4] {
        for trans in [false, true] {
            let l = atoms::ldmatrix(num, trans).unwrap();
            for lane in 0..32 {
                if lane < 8 * num {
                    // The model draws matrix m's rows as stored rows 8m..8m+7.
                    let (matrix, row) = kernel_fns::ldmatrix_address_of(lane);
                    assert_eq!(l.src.coord(lane, 0), rc(8 * matrix + row, 0));
                }
                for reg in 0..num {
                    for half in 0..2 {
                        let e = kernel_fns::ldmatrix_element(lane, half, trans);
                        assert_eq!(
                            l.dst.coord(lane, 2 * reg + half),
                            rc(8 * reg + e.row, e.col)
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn swizzle_333_by_hand() {
    // Row 1's first chunk moves to chunk 1; row 7's chunk 3 to chunk 4.
    assert_eq!(kernel_fns::swizzle(3, 3, 3, 64).unwrap(), 72);
    assert_eq!(
        kernel_fns::swizzle(3, 3, 3, 7 * 64 + 3 * 8 + 5).unwrap(),
        7 * 64 + 4 * 8 + 5
    );
    // Row 0 is left alone.
    for o in 0..64 {
        assert_eq!(kernel_fns::swizzle(3, 3, 3, o).unwrap(), o);
    }
}

#[test]
fn swizzles_are_permutations_of_their_period() {
    for (b, m, s) in kernel_fns::supported_swizzles() {
        let period = 1u64 << (b + m + s);
        let mut seen: Vec<u64> = (0..period)
            .map(|o| kernel_fns::swizzle(b, m, s, o).unwrap())
            .collect();
        seen.sort_unstable();
        assert_eq!(
            seen,
            (0..period).collect::<Vec<_>>(),
            "Swizzle<{b},{m},{s}>"
        );
    }
}

#[test]
fn unsupported_swizzle_is_a_typed_error() {
    let err = kernel_fns::swizzle(5, 0, 5, 1).unwrap_err();
    assert!(matches!(
        err,
        kernel_fns::KernelFnError::UnsupportedSwizzle { bits: 5, .. }
    ));
    assert!(err.to_string().contains("<3,3,3>"));
}

#[test]
fn supported_swizzles_include_the_stage4_one() {
    assert!(kernel_fns::supported_swizzles().contains(&(3, 3, 3)));
}

/// The stages' tile layout is the algebra's swizzle of the row-major offset:
/// Swizzle<3,3,log2(d) - 3>: <3,3,3> for head dim 64, <3,3,4> for 128 and <3,3,5> for 256
/// (smem_tile.cuh).
#[test]
fn tile_offsets_are_the_row_major_offset_swizzled() {
    use layout_viz::kernel_fns::{TILE_HEAD_DIMS, tile_offset};
    use layout_viz::swizzle::Swizzle;
    for d in TILE_HEAD_DIMS {
        let sw = Swizzle {
            bits: 3,
            base: 3,
            shift: d.trailing_zeros() as i32 - 3,
        };
        for row in 0..64 {
            for col in 0..d {
                let linear = u64::from(row * d + col);
                assert_eq!(tile_offset(d, false, row, col), Some(linear));
                assert_eq!(
                    tile_offset(d, true, row, col),
                    Some(sw.apply(linear as i64) as u64),
                    "d{d} ({row},{col})"
                );
            }
        }
    }
    assert_eq!(tile_offset(96, true, 0, 0), None);
}

/// Stage 6 steps its ldmatrix addresses instead of recomputing the swizzle: 16 columns
/// along is one XOR (an add for the unswizzled bit 6), 8 rows down is one add. Both
/// identities, in either order, over every tile position.
#[test]
fn swizzled_steps_equal_recomputing_the_offset() {
    use layout_viz::kernel_fns::{
        TILE_HEAD_DIMS, swizzled_step_cols, swizzled_step_rows, tile_offset,
    };
    for d in TILE_HEAD_DIMS {
        for row in 0..8 {
            for c0 in [0, 8] {
                let start = tile_offset(d, true, row, c0).unwrap();
                for kk in 0..d / 16 {
                    for n in 0..8 {
                        let want = tile_offset(d, true, row + 8 * n, c0 + 16 * kk);
                        let stepped =
                            swizzled_step_rows(d, swizzled_step_cols(start, kk).unwrap(), n)
                                .unwrap()
                                .unwrap();
                        assert_eq!(Some(stepped), want, "d{d} row {row} c0 {c0} kk {kk} n {n}");
                        // Rows first, then columns (stage 7's Q addresses): the same place.
                        let rows_first = swizzled_step_cols(
                            swizzled_step_rows(d, start, n).unwrap().unwrap(),
                            kk,
                        )
                        .unwrap();
                        assert_eq!(
                            Some(rows_first),
                            want,
                            "d{d} row {row} c0 {c0} kk {kk} n {n}"
                        );
                    }
                }
            }
        }
    }
}

/// At head dim 128 too (256-byte rows), the 8 row addresses of one ldmatrix phase at the
/// same column land in 8 different 16-byte bank groups under the stages' swizzle, and in
/// one group without it.
#[test]
fn d128_ldmatrix_phase_is_conflict_free_only_when_swizzled() {
    use layout_viz::kernel_fns::tile_offset;
    for col in (0..128).step_by(8) {
        let groups = |swizzled: bool| -> std::collections::BTreeSet<u64> {
            (0..8)
                .map(|row| (tile_offset(128, swizzled, row, col).unwrap() * 2 / 16) % 8)
                .collect()
        };
        assert_eq!(groups(true).len(), 8, "column {col}");
        assert_eq!(groups(false).len(), 1, "column {col}");
    }
}

/// Stage 23's epilogue (`store_dk_dv`, hopper/backward_epilogue.cuh) stages dK and dV in a
/// [128 keys][d] tile in the stages' swizzle (`tile_offset_swizzled`), then reads it back
/// 16 bytes a lane. Both warp-wide accesses are conflict-free, as the kernel's comment says:
/// the 4-byte stores of an accumulator's rows g and g + 8 (lane 4 g + t at column 8 n + 2 t,
/// 8 rows a store) and the 16-byte reads of whole rows (lane l at row 16 w + i * 32 / (d / 8)
/// + l / (d / 8), chunk l mod (d / 8)). Unswizzled, the stores would be 8-way.
#[test]
fn the_backward_epilogue_stages_dk_and_dv_without_bank_conflicts() {
    use layout_viz::bank::{Access, Op, simulate};
    use layout_viz::kernel_fns::tile_offset;
    let report = |name: &str, op: Op, addrs: Vec<Option<u64>>| {
        simulate(&Access {
            name: name.to_string(),
            description: String::new(),
            op,
            addrs,
        })
        .unwrap()
    };
    for d in [64u32, 128] {
        let chunks = d / 8;
        for warp in 0..8 {
            for r in 0..2 {
                for n in 0..d / 8 {
                    let at = |swizzled: bool| -> Vec<Option<u64>> {
                        (0..32)
                            .map(|lane| {
                                let (row, col) =
                                    (16 * warp + lane / 4 + 8 * r, 8 * n + 2 * (lane % 4));
                                Some(tile_offset(d, swizzled, row, col).unwrap() * 2)
                            })
                            .collect()
                    };
                    let store = Op::Access {
                        bits: 32,
                        store: true,
                    };
                    let swizzled = report("dK/dV staging store", store, at(true));
                    assert!(
                        swizzled.conflict_free(),
                        "d {d} warp {warp} r {r} n {n}: {} wavefronts",
                        swizzled.wavefronts
                    );
                    assert_eq!(
                        report("unswizzled", store, at(false)).max_way,
                        8,
                        "d {d} warp {warp} r {r} n {n}"
                    );
                }
            }
            for i in 0..16 * chunks / 32 {
                let addrs = (0..32)
                    .map(|lane| {
                        let (row, col) = (16 * warp + (i * 32 + lane) / chunks, lane % chunks * 8);
                        Some(tile_offset(d, true, row, col).unwrap() * 2)
                    })
                    .collect();
                let read = report(
                    "dK/dV read back",
                    Op::Access {
                        bits: 128,
                        store: false,
                    },
                    addrs,
                );
                assert!(
                    read.conflict_free(),
                    "d {d} warp {warp} read {i}: {} wavefronts",
                    read.wavefronts
                );
            }
        }
    }
}

/// The stage 10 kernel reads its tiles through `tile_offset_tma`; layout-viz's TMA model
/// (`TmaBox`, the figure of the box landing under the 128-byte swizzle) says where the
/// copy engine puts each element. They must agree for every element of both tile heights
/// and both head dims, box by box (a d128 tile is two 64-column boxes, one after the
/// other). The GPU probe holds the model itself to the hardware.
#[test]
fn tma_tile_offsets_are_where_the_tma_model_lands_each_element() {
    use layout_viz::atoms::{TmaBox, TmaSwizzle};
    for rows in kernel_fns::TMA_TILE_ROWS {
        for d in [64u32, 128] {
            for half in 0..d / 64 {
                let model = TmaBox::new((rows, d), (rows, 64), (0, 64 * half), 2, TmaSwizzle::B128)
                    .unwrap();
                for cell in model.cells() {
                    let box_base = u64::from(half * rows * 64) * 2;
                    let got =
                        kernel_fns::tile_offset_tma(rows, cell.box_row, 64 * half + cell.box_col)
                            .unwrap();
                    assert_eq!(
                        2 * got,
                        box_base + cell.smem_byte,
                        "rows {rows} d {d}: element ({}, {})",
                        cell.box_row,
                        64 * half + cell.box_col
                    );
                }
            }
        }
    }
}

/// The stepping identities stage 10 relies on, over whole tiles: 16 columns along is
/// `tma_step_cols`, 8 rows down is `tma_step_rows`, from any lane's starting column (0 or 8).
#[test]
fn tma_stepping_matches_the_offsets() {
    for rows in kernel_fns::TMA_TILE_ROWS {
        for row in 0..8 {
            for c0 in [0u32, 8] {
                let start = kernel_fns::tile_offset_tma(rows, row, c0).unwrap();
                for k in 0..8 {
                    for n in 0..rows / 8 {
                        let want =
                            kernel_fns::tile_offset_tma(rows, row + 8 * n, c0 + 16 * k).unwrap();
                        let stepped = kernel_fns::tma_step_rows(
                            kernel_fns::tma_step_cols(rows, start, k).unwrap().unwrap(),
                            n,
                        )
                        .unwrap();
                        assert_eq!(
                            stepped, want,
                            "rows {rows} ({row}, {c0}) + {k} col steps + {n} row steps"
                        );
                    }
                }
            }
        }
    }
}

/// An offset past the kernels' `int` is refused, not wrapped into a negative one.
#[test]
fn offsets_past_an_int_are_refused() {
    use kernel_fns::KernelFnError::OffsetOutOfRange;
    let past = i32::MAX as u64 + 1;
    assert_eq!(
        kernel_fns::swizzled_step_cols(past, 1),
        Err(OffsetOutOfRange(past))
    );
    assert_eq!(
        kernel_fns::swizzled_step_rows(64, past, 1),
        Err(OffsetOutOfRange(past))
    );
    assert_eq!(
        kernel_fns::tma_step_cols(64, past, 1),
        Err(OffsetOutOfRange(past))
    );
    assert_eq!(
        kernel_fns::tma_step_rows(past, 1),
        Err(OffsetOutOfRange(past))
    );
    assert_eq!(
        kernel_fns::swizzle(3, 4, 3, past),
        Err(OffsetOutOfRange(past))
    );
    assert_eq!(
        kernel_fns::tma_step_rows(0, 1),
        Ok(kernel_fns::tile_offset_tma(64, 8, 0).unwrap())
    );
}

/// The FP8 stages' quantization kernel writes key j of V into column `fp8_pv_column(j)` of
/// the transposed tile, and P V reads column k as key `fp8_pv_key(k)`: the kernel's function
/// is the inverse of layout-viz's, in every group of 32 keys.
#[test]
fn fp8_pv_column_inverts_fp8_pv_key() {
    for group in 0..4 {
        for k in 0..32 {
            let key = 32 * group + atoms::fp8_pv_key(k);
            assert_eq!(kernel_fns::fp8_pv_column(key), 32 * group + k, "key {key}");
        }
    }
}

/// A byte of a tile of 128-byte rows under the 128-byte swizzle (TMA's and wgmma's), CuTe's
/// `Swizzle<3, 4, 3>` on byte offsets: row `row`'s 16-byte chunk j sits at chunk j ^ (row % 8).
fn swizzled_128(row: u32, byte: u32) -> u32 {
    layout_viz::swizzle::Swizzle::new(3, 4, 3).apply(i64::from(row * 128 + byte)) as u32
}

/// Stage 24's transpose, run on the CPU with the kernel's own address functions: a landed V
/// tile (key k, head dim d) goes through every lane's 32 units, 4 loads, the 8 byte permutes
/// (word j of the result holds byte j of each loaded word, in load order) and 4 stores, and
/// every code must land at V^T's row d, column fp8_pv_column(k), each code written once.
#[test]
fn fp8_vt_transpose_puts_every_code_in_place() {
    let code = |key: u32, d: u32| (key * 131 + d * 7) as u8 ^ (d >> 2) as u8;
    let mut v = [0u8; 128 * 128];
    for key in 0..128 {
        for d in 0..128 {
            v[swizzled_128(key, d) as usize] = code(key, d);
        }
    }
    let mut vt = [0u8; 128 * 128];
    let mut written = [0u32; 128 * 128];
    for lane in 0..32 {
        for xyz in 0..8 {
            for u in 0..4 {
                let words: Vec<[u8; 4]> = (0..4)
                    .map(|i| {
                        let at = kernel_fns::fp8_vt_load(lane, xyz, u, i) as usize;
                        assert_eq!(at % 4, 0, "aligned 32-bit loads");
                        [v[at], v[at + 1], v[at + 2], v[at + 3]]
                    })
                    .collect();
                for j in 0..4 {
                    let at = kernel_fns::fp8_vt_store(lane, xyz, u, j) as usize;
                    assert_eq!(at % 4, 0, "aligned 32-bit stores");
                    for (i, w) in words.iter().enumerate() {
                        vt[at + i] = w[j as usize];
                        written[at + i] += 1;
                    }
                }
            }
        }
    }
    assert!(written.iter().all(|&n| n == 1), "each code written once");
    for key in 0..128 {
        for d in 0..128 {
            let col = kernel_fns::fp8_pv_column(key);
            assert_eq!(
                vt[swizzled_128(d, col) as usize],
                code(key, d),
                "key {key}, head dim {d}"
            );
        }
    }
}

/// Each of stage 24's transposing loads and stores, across a warp's 32 lanes, touches 32
/// different banks: a conflict-free access, one wavefront each.
#[test]
fn fp8_vt_transpose_has_no_bank_conflicts() {
    use layout_viz::bank::bank_of;
    for xyz in 0..8 {
        for u in 0..4 {
            for k in 0..4 {
                for (what, f) in [
                    (
                        "load",
                        kernel_fns::fp8_vt_load as fn(u32, u32, u32, u32) -> u32,
                    ),
                    ("store", kernel_fns::fp8_vt_store),
                ] {
                    let banks: std::collections::BTreeSet<u32> = (0..32)
                        .map(|lane| bank_of(f(lane, xyz, u, k) as u64))
                        .collect();
                    assert_eq!(banks.len(), 32, "{what} {k} of unit ({xyz}, {u})");
                }
            }
        }
    }
}

/// layout-viz's model of stage 24's transpose (which draws its figure) is the kernel's.
#[test]
fn fp8_vt_model_is_the_kernels() {
    for lane in 0..32 {
        for xyz in 0..8 {
            for u in 0..4 {
                for k in 0..4 {
                    assert_eq!(
                        layout_viz::fp8::vt_load(lane, xyz, u, k),
                        kernel_fns::fp8_vt_load(lane, xyz, u, k)
                    );
                    assert_eq!(
                        layout_viz::fp8::vt_store(lane, xyz, u, k),
                        kernel_fns::fp8_vt_store(lane, xyz, u, k)
                    );
                }
            }
        }
    }
}

/// Stage 30's kernel steps each lane's row to a run's first block (kb0 = 0 or 4), then
/// through its four blocks: the same rows as one step to each block.
#[test]
fn fp8_vt_matrix_steps_twice_as_once() {
    for lane in 0..32 {
        for g in 0..4 {
            for kb0 in [0, 4] {
                for j in 0..4 {
                    let (ld, st) = (
                        kernel_fns::fp8_vt_ldsm_row(lane, g, kb0),
                        kernel_fns::fp8_vt_stsm_row(lane, g, kb0),
                    );
                    assert_eq!(
                        kernel_fns::fp8_vt_ldsm_step(ld, 0, j),
                        kernel_fns::fp8_vt_ldsm_row(lane, g, kb0 + j)
                    );
                    assert_eq!(
                        kernel_fns::fp8_vt_stsm_step(st, 0, j),
                        kernel_fns::fp8_vt_stsm_row(lane, g, kb0 + j)
                    );
                }
            }
        }
    }
}

/// layout-viz's model of stage 30's row addresses (which draws its figure) is the kernel's.
#[test]
fn fp8_vt_matrix_model_is_the_kernels() {
    for lane in 0..32 {
        for g in 0..4 {
            for kb in 0..8 {
                assert_eq!(
                    layout_viz::fp8::vt_ldsm_row(lane, g, kb),
                    kernel_fns::fp8_vt_ldsm_row(lane, g, kb)
                );
                assert_eq!(
                    layout_viz::fp8::vt_stsm_row(lane, g, kb),
                    kernel_fns::fp8_vt_stsm_row(lane, g, kb)
                );
            }
        }
    }
}

/// PTX's `prmt` in its default mode (`__byte_perm`): byte i of the result is byte
/// `(s >> 4 i) & 7` of the eight bytes of y:x.
fn byte_perm(x: u32, y: u32, s: u32) -> u32 {
    let b = (u64::from(y) << 32) | u64::from(x);
    (0..4).fold(0, |acc, i| {
        acc | ((((b >> (8 * ((s >> (4 * i)) & 7))) & 0xff) as u32) << (8 * i))
    })
}

/// Stage 30's transpose, run on the CPU: for each block, `ldmatrix.x4.trans` from the row
/// addresses the kernel's `fp8_vt_ldsm_row` gives, each register's two 16-bit elements where
/// ldmatrix's fragment model (`ldmatrix_element`, checked against the atoms above) puts them;
/// the two permutes a pair of `fp8_vt_perm`; `stmatrix.x4` to `fp8_vt_stsm_row`'s rows, each
/// register where ldmatrix without `.trans` would have read it. Every code must land at V^T's
/// row d, column fp8_pv_column(k), written once, as stage 24's.
#[test]
fn fp8_vt_matrix_transpose_puts_every_code_in_place() {
    let code = |key: u32, d: u32| (key * 131 + d * 7) as u8 ^ (d >> 2) as u8;
    let mut v = [0u8; 128 * 128];
    for key in 0..128 {
        for d in 0..128 {
            v[swizzled_128(key, d) as usize] = code(key, d);
        }
    }
    let mut vt = [0u8; 128 * 128];
    let mut written = [0u32; 128 * 128];
    for g in 0..4 {
        for kb in 0..8 {
            let ld: Vec<usize> = (0..32)
                .map(|lane| kernel_fns::fp8_vt_ldsm_row(lane, g, kb) as usize)
                .collect();
            let st: Vec<usize> = (0..32)
                .map(|lane| kernel_fns::fp8_vt_stsm_row(lane, g, kb) as usize)
                .collect();
            assert!(ld.iter().chain(&st).all(|a| a % 16 == 0), "16-byte rows");
            for lane in 0..32 {
                let regs: Vec<u32> = (0..4)
                    .map(|m| {
                        (0..2).fold(0u32, |w, half| {
                            let e = kernel_fns::ldmatrix_element(lane, half, true);
                            let at = ld[(8 * m + e.row) as usize] + 2 * e.col as usize;
                            let pair = u32::from(v[at]) | (u32::from(v[at + 1]) << 8);
                            w | (pair << (16 * half))
                        })
                    })
                    .collect();
                for m in 0..4u32 {
                    let h = (2 * (m / 2)) as usize;
                    let y = byte_perm(regs[h], regs[h + 1], kernel_fns::fp8_vt_perm(lane, m));
                    for half in 0..2 {
                        let e = kernel_fns::ldmatrix_element(lane, half, false);
                        let at = st[(8 * m + e.row) as usize] + 2 * e.col as usize;
                        vt[at] = (y >> (16 * half)) as u8;
                        vt[at + 1] = (y >> (16 * half + 8)) as u8;
                        written[at] += 1;
                        written[at + 1] += 1;
                    }
                }
            }
        }
    }
    assert!(written.iter().all(|&n| n == 1), "each code written once");
    for key in 0..128 {
        for d in 0..128 {
            let col = kernel_fns::fp8_pv_column(key);
            assert_eq!(
                vt[swizzled_128(d, col) as usize],
                code(key, d),
                "key {key}, head dim {d}"
            );
        }
    }
}

/// Each of the 8 matrices of a block's `ldmatrix.x4.trans` and `stmatrix.x4` has its 8
/// 16-byte rows in 8 different groups of 4 banks, so each matrix is one conflict-free
/// wavefront.
#[test]
fn fp8_vt_matrix_transpose_has_no_bank_conflicts() {
    use layout_viz::bank::bank_of;
    for g in 0..4 {
        for kb in 0..8 {
            for (what, f) in [
                (
                    "ldmatrix",
                    kernel_fns::fp8_vt_ldsm_row as fn(u32, u32, u32) -> u32,
                ),
                ("stmatrix", kernel_fns::fp8_vt_stsm_row),
            ] {
                for m in 0..4 {
                    let banks: std::collections::BTreeSet<u32> = (0..8)
                        .flat_map(|r| {
                            let row = f(8 * m + r, g, kb);
                            (0..4).map(move |w| bank_of(u64::from(row + 4 * w)))
                        })
                        .collect();
                    assert_eq!(banks.len(), 32, "{what} matrix {m} of block ({g}, {kb})");
                }
            }
        }
    }
}
