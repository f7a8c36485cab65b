//! What the kernels share with the models, from the host build of the kernels' own headers
//! (`cpp/kernel_fns.cpp`, compiled by `build.rs`): the decode kernels' index functions
//! (`kernel-headers/include/flashlab/decode_index.cuh`) and the turns' named barriers and
//! counts (`hopper/turns.cuh`). The models read the kernels' code and numbers instead of
//! copying them.

use std::ffi::c_int;

use crate::decode_index::{KvCache, PackedRow, SplitTiles};

mod ffi {
    use std::ffi::c_int;

    unsafe extern "C" {
        pub fn fl_split_tiles(
            split: c_int,
            tiles_per_split: c_int,
            seqlen_k: c_int,
            block_kv: c_int,
            begin: *mut c_int,
            count: *mut c_int,
        );
        pub fn fl_cache_row(
            block_table: *const c_int,
            pages_per_seq: c_int,
            page_size: c_int,
            page_shift: c_int,
            capacity: c_int,
            b: c_int,
            j: c_int,
        ) -> i64;
        pub fn fl_unpack_row(
            group: c_int,
            kv_head: c_int,
            r: c_int,
            token: *mut c_int,
            head: *mut c_int,
        );
        pub fn fl_consumers_wrote_o() -> c_int;
        pub fn fl_mma_turn() -> c_int;
        pub fn fl_warpgroup_threads() -> c_int;
        pub fn fl_turn_threads() -> c_int;
    }
}

/// `flashlab::split_tiles` (decode_index.cuh, stage 14): the key tiles of `block_kv` keys
/// that split `split` covers in a sequence of `seqlen_k` keys, `tiles_per_split` a split.
pub fn split_tiles(split: u32, tiles_per_split: u32, seqlen_k: u32, block_kv: u32) -> SplitTiles {
    let (mut begin, mut count): (c_int, c_int) = (0, 0);
    // SAFETY: pure integer function writing two out-parameters that point at locals.
    unsafe {
        ffi::fl_split_tiles(
            split as c_int,
            tiles_per_split as c_int,
            seqlen_k as c_int,
            block_kv as c_int,
            &mut begin,
            &mut count,
        )
    };
    SplitTiles {
        begin: begin as u32,
        count: count as u32,
    }
}

/// `flashlab::cache_row` (decode_index.cuh, stage 14): the cache row holding key `j` of
/// sequence `b`. `None` where the kernel would read outside the block table, or for a page
/// size that is not a power of two (the kernel's shift and mask need one).
pub fn cache_row(cache: &KvCache, b: u32, j: u32) -> Option<u64> {
    let row = match *cache {
        KvCache::Contiguous { capacity } => {
            // SAFETY: a null table selects the contiguous case, which reads no memory.
            unsafe {
                ffi::fl_cache_row(
                    std::ptr::null(),
                    0,
                    0,
                    0,
                    capacity as c_int,
                    b as c_int,
                    j as c_int,
                )
            }
        }
        KvCache::Paged {
            table,
            pages_per_seq,
            page_size,
        } => {
            if !page_size.is_power_of_two() {
                return None;
            }
            let entry = u64::from(b) * u64::from(pages_per_seq) + u64::from(j / page_size);
            if entry >= table.len() as u64 {
                return None;
            }
            // SAFETY: the one entry the function reads, b * pages_per_seq + (j >> shift),
            // was just checked to lie inside `table`.
            unsafe {
                ffi::fl_cache_row(
                    table.as_ptr(),
                    pages_per_seq as c_int,
                    page_size as c_int,
                    page_size.trailing_zeros() as c_int,
                    0,
                    b as c_int,
                    j as c_int,
                )
            }
        }
    };
    u64::try_from(row).ok()
}

/// `flashlab::unpack_row` (decode_index.cuh, stage 14): the (token, query head) of packed
/// row `r` of K/V head `kv_head`'s tile, `group` query heads per K/V head.
pub fn unpack_row(group: u32, kv_head: u32, r: u32) -> PackedRow {
    let (mut token, mut head): (c_int, c_int) = (0, 0);
    // SAFETY: pure integer function writing two out-parameters that point at locals.
    unsafe {
        ffi::fl_unpack_row(
            group as c_int,
            kv_head as c_int,
            r as c_int,
            &mut token,
            &mut head,
        )
    };
    PackedRow {
        token: token as u32,
        head: head as u32,
    }
}

fn unsigned(value: c_int) -> u32 {
    u32::try_from(value).expect("the kernels' barrier ids and counts are not negative")
}

/// Named barrier `CONSUMERS_WROTE_O` (turns.cuh): every consumer warpgroup has put O in
/// shared memory.
pub fn consumers_wrote_o() -> u32 {
    // SAFETY: a getter of a constant, without arguments or state.
    unsigned(unsafe { ffi::fl_consumers_wrote_o() })
}

/// Named barrier `MMA_TURN` (turns.cuh): `MMA_TURN + c` is consumer `c`'s turn at the
/// tensor cores.
pub fn mma_turn() -> u32 {
    // SAFETY: as above.
    unsigned(unsafe { ffi::fl_mma_turn() })
}

/// `WARPGROUP_THREADS` (turns.cuh): the threads of a warpgroup, what one `bar.arrive` or
/// `bar.sync` of a consumer counts.
pub fn warpgroup_threads() -> u32 {
    // SAFETY: as above.
    unsigned(unsafe { ffi::fl_warpgroup_threads() })
}

/// `TURN_THREADS` (turns.cuh): what a turn's barrier counts before it completes.
pub fn turn_threads() -> u32 {
    // SAFETY: as above.
    unsigned(unsafe { ffi::fl_turn_threads() })
}
