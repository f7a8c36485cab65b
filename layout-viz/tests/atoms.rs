//! Hardware atoms against facts stated by hand from the PTX ISA and CuTe's traits.
use layout_viz::atoms::{self, RowCol, TmaBox, TmaSwizzle, TvAtom};

fn rc(row: u32, col: u32) -> RowCol {
    RowCol { row, col }
}

/// Each cell is held by exactly one (thread, value).
fn is_bijective(atom: &TvAtom) -> bool {
    atom.threads() * atom.values() == atom.rows * atom.cols
        && atom.owners().iter().all(|o| o.len() == 1)
}

#[test]
fn every_register_atom_covers_its_tile_once() {
    for name in [
        "mma-m16n8k16-a",
        "mma-m16n8k16-b",
        "mma-m16n8k16-c",
        "mma-m16n8k8-a",
        "mma-m16n8k8-b",
        "mma-m16n8k8-c",
        "ldmatrix-x1",
        "ldmatrix-x2",
        "ldmatrix-x4",
        "ldmatrix-x4-trans",
        "ldmatrix-x4-src",
        "wgmma-m64n64k16-c",
        "wgmma-m64n256k16-c",
        "wgmma-m64n8k16-a",
        "cp-async-64x64",
        "cp-async-128x64",
    ] {
        let atom = atoms::tv_by_name(name).unwrap();
        assert!(is_bijective(&atom), "{name}");
    }
}

#[test]
fn cute_notation_matches_cute_traits() {
    // SM80_16x8_Row (the C of m16n8k*) and the A of SM80_16x8x16, as CuTe's traits write
    // them over column-major (M, N) and (M, K).
    assert_eq!(
        atoms::tv_by_name("mma-m16n8k16-c").unwrap().cute_notation(),
        "((4,8),(2,2)):((32,1),(16,8))"
    );
    assert_eq!(
        atoms::mma_m16n8k16_a().cute_notation(),
        "((4,8),(2,2,2)):((32,1),(16,8,128))"
    );
    // wgmma's CLayout_64xN for N = 64.
    assert_eq!(
        atoms::wgmma_c(64).unwrap().cute_notation(),
        "((4,8,4),(2,2,8)):((128,1,16),(64,8,512))"
    );
}

#[test]
fn ptx_facts_mma() {
    let a = atoms::mma_m16n8k16_a();
    // Lane 5: groupID 1, threadID_in_group 1. a0 at (1, 2), a3 at (9, 3), a7 at (9, 11).
    assert_eq!(a.coord(5, 0), rc(1, 2));
    assert_eq!(a.coord(5, 3), rc(9, 3));
    assert_eq!(a.coord(5, 7), rc(9, 11));
    let b = atoms::mma_m16n8k16_b();
    // b2 of lane 6 (group 1, t 2): row 2*2 + 8 = 12, column 1.
    assert_eq!(b.coord(6, 2), rc(12, 1));
    assert_eq!(b.owners_of(15, 7), vec![(31, 3)]);
}

#[test]
fn wgmma_warp_w_owns_rows_16w() {
    let c = atoms::wgmma_c(64).unwrap();
    assert_eq!(c.threads(), 128);
    assert_eq!(c.values(), 32);
    for t in 0..128 {
        for v in 0..32 {
            let cell = c.coord(t, v);
            assert_eq!(cell.row / 16, t / 32, "thread {t} value {v}");
            // Within the warp and its 8-column slice: mma's C pattern.
            let lane = t % 32;
            let (i, slice) = (v % 4, v / 4);
            assert_eq!(cell.row % 16, lane / 4 + 8 * (i / 2));
            assert_eq!(cell.col, 8 * slice + 2 * (lane % 4) + i % 2);
        }
    }
    let a = atoms::wgmma_a();
    assert_eq!(a.coord(32, 0), rc(16, 0));
    assert_eq!(a.coord(127, 7), rc(63, 15));
}

#[test]
fn ldmatrix_facts() {
    let l = atoms::ldmatrix(4, false).unwrap();
    // Lane 9 supplies the address of matrix 1, row 1.
    assert_eq!(l.src.owners_of(9, 0), vec![(9, 0)]);
    // Lane 0 receives (0,0),(0,1) of each matrix in registers 0..3.
    assert_eq!(l.dst.coord(0, 2), rc(8, 0));
    assert_eq!(l.dst.coord(0, 7), rc(24, 1));
    let t = atoms::ldmatrix(4, true).unwrap();
    // With .trans, lane 1 (group 0, t 1) gets stored (2,0) and (3,0).
    assert_eq!(t.dst.coord(1, 0), rc(2, 0));
    assert_eq!(t.dst.coord(1, 1), rc(3, 0));
    assert!(atoms::ldmatrix(3, false).is_err());
    assert_eq!(atoms::ldmatrix(1, false).unwrap().src.threads(), 8);
}

#[test]
fn cp_async_128_threads_rows_of_64_bf16() {
    let c = atoms::cp_async(128, 128, 64, 2).unwrap();
    assert_eq!(c.values(), 64);
    // Thread 9: row 1, chunk 1; its value 8 is 16 rows down.
    assert_eq!(c.coord(9, 0), rc(1, 8));
    assert_eq!(c.coord(9, 7), rc(1, 15));
    assert_eq!(c.coord(9, 8), rc(17, 8));
    assert!(atoms::cp_async(128, 100, 64, 2).is_err());
    assert!(atoms::cp_async(128, 64, 60, 2).is_err());
}

#[test]
fn cp_async_errors_list_the_valid_sizes() {
    let width = atoms::tv_by_name("cp-async-16x24").unwrap_err().to_string();
    assert!(
        width.contains("one of 8, 16, 32, 64, 128, 256, 512, 1024"),
        "{width}"
    );
    let height = atoms::tv_by_name("cp-async-100x64")
        .unwrap_err()
        .to_string();
    assert!(height.contains("multiple of 16: 16, 32, 48"), "{height}");
    assert!(atoms::tv_by_name("cp-async-0x64").is_err());
    assert!(atoms::cp_async(0, 16, 64, 2).is_err());
    for (rows, cols) in [(128, 8), (16, 64), (1, 1024)] {
        assert!(atoms::cp_async(128, rows, cols, 2).is_ok(), "{rows}x{cols}");
    }
}

#[test]
fn broadcast_cells_have_every_owner() {
    let b = atoms::tv_by_name("mma-m16n8k16-b-4warps").unwrap();
    assert_eq!(b.threads(), 128);
    assert_eq!(b.owners_of(0, 0), vec![(0, 0), (32, 0), (64, 0), (96, 0)]);
    assert!(b.owners().iter().all(|o| o.len() == 4));
}

#[test]
fn unknown_atoms_are_errors() {
    assert!(atoms::tv_by_name("mma-m16n8k32-a").is_err());
    assert!(atoms::tv_by_name("wgmma-m64n12k16-c").is_err());
    assert!(atoms::tv_by_name("ldmatrix-xx").is_err());
    assert!(atoms::mma_by_name("mma-m8n8k4").is_err());
}

#[test]
fn tma_box_128b_swizzle() {
    let b = TmaBox::new((128, 64), (64, 64), (64, 0), 2, TmaSwizzle::B128).unwrap();
    let cells = b.cells();
    // Box row 1, chunk 0 lands in chunk 1 of smem line 1; row 0 is unchanged.
    let at = |r: u32, c: u32| cells[(r * 64 + c) as usize];
    assert_eq!(at(0, 8).smem_byte, 16);
    assert_eq!(at(1, 0).smem_byte, 128 + 16);
    assert_eq!(at(1, 0).global, Some((65, 0)));
    // A permutation of the box's bytes.
    let mut offs: Vec<u64> = cells.iter().map(|c| c.smem_byte).collect();
    offs.sort_unstable();
    assert_eq!(offs, (0..64 * 64).map(|i| 2 * i).collect::<Vec<_>>());
    // Out of bounds rows are marked.
    let edge = TmaBox::new((100, 64), (64, 64), (64, 0), 2, TmaSwizzle::None).unwrap();
    assert_eq!(edge.cells()[(40 * 64) as usize].global, None);
    // 128-byte rows cannot take a 64B swizzle.
    assert!(TmaBox::new((128, 64), (64, 64), (0, 0), 2, TmaSwizzle::B64).is_err());
}

#[test]
fn wgmma_fp8_a_covers_its_tile_once_and_matches_cute() {
    let a = atoms::wgmma_a_fp8();
    assert_eq!((a.threads(), a.values()), (128, 16));
    let owners = a.owners();
    assert!(
        owners.iter().all(|o| o.len() == 1),
        "every cell of the 64 x 32 tile once"
    );
    assert_eq!(
        a.cute_notation(),
        "((4,8,4),(4,2,2)):((256,1,16),(64,8,1024))"
    );
    // Lane 5 of warp 1: rows 16 + 1 and 16 + 9; k 4..7 and 20..23.
    assert_eq!(a.coord(37, 0), rc(17, 4));
    assert_eq!(a.coord(37, 3), rc(17, 7));
    assert_eq!(a.coord(37, 4), rc(25, 4));
    assert_eq!(a.coord(37, 8), rc(17, 20));
}

/// The reason for `fp8_pv_key`: with V's keys in that order, each thread's 8-bit A values
/// of P are its own accumulator values of S, in the accumulator's order: register r of a
/// k-step holds accumulator values {0, 1, 4, 5} + 8 (r / 2) + 2 (r % 2) of that step's 32
/// keys, so P is packed without any exchange between threads.
#[test]
fn fp8_pv_key_makes_p_a_packing_of_the_threads_own_accumulator() {
    let (c, a) = (atoms::wgmma_c(32).unwrap(), atoms::wgmma_a_fp8());
    let mut keys: Vec<u32> = (0..32).map(atoms::fp8_pv_key).collect();
    keys.sort();
    assert_eq!(
        keys,
        (0..32).collect::<Vec<_>>(),
        "a permutation of the 32 keys"
    );
    for t in 0..128 {
        for v in 0..16 {
            let cell = a.coord(t, v);
            let key = atoms::fp8_pv_key(cell.col);
            // The accumulator value of thread t that holds S(row, key).
            let r = v / 4;
            let cv = [0, 1, 4, 5][(v % 4) as usize] + 8 * (r / 2) + 2 * (r % 2);
            assert_eq!(c.coord(t, cv), rc(cell.row, key), "thread {t} byte {v}");
        }
    }
}
