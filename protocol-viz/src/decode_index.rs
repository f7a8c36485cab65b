//! The values the decode kernels' index functions take and return
//! (`kernel-headers/include/flashlab/decode_index.cuh`): a split's key tiles, a packed row's token
//! and head, a K/V cache as `cache_row` sees it. Both the host build of those functions
//! ([`crate::kernel_fns`]) and the models and figures of them ([`crate::decode`]) speak
//! these types, so they live below both.

/// The key tiles `[begin, begin + count)` one split covers (`flashlab::SplitTiles`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SplitTiles {
    pub begin: u32,
    pub count: u32,
}

/// The query token and head of a packed row (`flashlab::PackedRow`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PackedRow {
    pub token: u32,
    pub head: u32,
}

/// A K/V cache as `cache_row` sees it.
#[derive(Debug, Clone, Copy)]
pub enum KvCache<'a> {
    /// `capacity` rows per sequence, sequence after sequence.
    Contiguous { capacity: u32 },
    /// A pool of pages of `page_size` rows and the block table `[batch, pages_per_seq]`.
    Paged {
        table: &'a [i32],
        pages_per_seq: u32,
        page_size: u32,
    },
}
