//! The K/V cache of a decode run, built on the host: contiguous, or a pool of pages in a
//! shuffled order with a block table, as a serving engine's allocator leaves it. Every
//! slot no sequence owns (rows past a sequence's length, the tail of its last page,
//! spare pages) holds NaN, so a kernel that reads one and lets it reach O fails its
//! check instead of passing by luck.

use super::{DecodeProblem, KvLayout};
use crate::inputs::normal_bits;
use crate::{Error, Result};
use rand::SeedableRng;
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rayon::prelude::*;

/// Q and the cache as 16-bit patterns of the problem's dtype.
pub struct DecodeInputs {
    pub seed: u64,
    /// `[batch, seqlen_q, heads, head_dim]`.
    pub q: Vec<u16>,
    /// Contiguous: `[batch, capacity, kv_heads, head_dim]`; paged: `[pages, page_size,
    /// kv_heads, head_dim]`.
    pub k: Vec<u16>,
    pub v: Vec<u16>,
    /// Paged: `[batch, pages_per_seq]`; empty for a contiguous cache.
    pub block_table: Vec<i32>,
    pub pages: usize,
}

impl DecodeInputs {
    /// Seeded random Q, K and V, not zero-mean (as [`HostInputs`](crate::inputs::HostInputs)), with NaN in every
    /// slot no sequence owns; a paged cache's pages are handed out in a shuffled order.
    pub fn generate(p: &DecodeProblem, seed: u64) -> DecodeInputs {
        let d = p.dtype;
        let row = p.kv_heads * p.head_dim;
        let (rows, pages, block_table) = match p.layout {
            KvLayout::Contiguous => (p.batch * p.capacity(), 0, Vec::new()),
            KvLayout::Paged { page_size } => {
                let pages = p.pool_pages();
                let mut order: Vec<i32> = (0..pages as i32).collect();
                order.shuffle(&mut StdRng::seed_from_u64(seed ^ 0x9a9e));
                let used_pages: usize = (0..p.batch).map(|b| p.pages_of(b)).sum();
                let (used, spare) = order.split_at(used_pages);
                let width = p.pages_per_seq();
                let mut table = vec![0i32; p.batch * width];
                let mut next = used.iter();
                for b in 0..p.batch {
                    for (c, entry) in table[b * width..(b + 1) * width].iter_mut().enumerate() {
                        // Entries past a sequence's pages point at a spare page of NaN:
                        // a kernel must not read them.
                        *entry = if c < p.pages_of(b) {
                            *next.next().unwrap()
                        } else {
                            spare[0]
                        };
                    }
                }
                (pages * page_size, pages, table)
            }
        };
        let mut inputs = DecodeInputs {
            seed,
            q: normal_bits(p.q_len(), d, seed),
            k: normal_bits(rows * row, d, seed ^ 0x4b),
            v: normal_bits(rows * row, d, seed ^ 0x56),
            block_table,
            pages,
        };
        // Every cache row no sequence owns becomes NaN.
        let mut owned = vec![false; rows];
        for b in 0..p.batch {
            for j in 0..p.seqlens_k[b] {
                owned[inputs.key_row(p, b, j)] = true;
            }
        }
        let nan = d.to_bits(f32::NAN);
        for buf in [&mut inputs.k, &mut inputs.v] {
            buf.par_chunks_mut(row)
                .zip(owned.par_iter())
                .filter(|(_, owned)| !**owned)
                .for_each(|(r, _)| r.fill(nan));
        }
        inputs
    }

    /// The cache row (of `kv_heads * head_dim` elements) holding key j of sequence b.
    pub fn key_row(&self, p: &DecodeProblem, b: usize, j: usize) -> usize {
        match p.layout {
            KvLayout::Contiguous => b * p.capacity() + j,
            KvLayout::Paged { page_size } => {
                let page = self.block_table[b * p.pages_per_seq() + j / page_size] as usize;
                page * page_size + j % page_size
            }
        }
    }

    /// Sequence b's Q, K and V as a batch-1 prefill problem's inputs, K and V gathered
    /// through the layout, widened to f64 for the oracle
    /// ([`HostInputs::to_f64`](crate::inputs::HostInputs::to_f64)): what check_decode
    /// checks the kernel's rows of sequence b with. Written into `qkv` (whatever it held is
    /// overwritten). K and V are gathered and widened in one parallel pass: at
    /// long contexts they are gigabytes, and gathering them as 16-bit patterns first took
    /// half as long again. Passing the same buffers for each sequence saves mapping fresh
    /// memory each time, which costs more than the widening.
    pub fn sequence_f64(&self, p: &DecodeProblem, b: usize, qkv: &mut [Vec<f64>; 3]) {
        let row = p.kv_heads * p.head_dim;
        let q_rows = p.seqlen_q * p.heads * p.head_dim;
        let widen = |bits: u16| p.dtype.from_bits(bits) as f64;
        let [q, k, v] = qkv;
        q.clear();
        q.extend(
            self.q[b * q_rows..(b + 1) * q_rows]
                .iter()
                .map(|&bits| widen(bits)),
        );
        let len = p.seqlens_k[b] * row;
        for (out, buf) in [(k, &self.k), (v, &self.v)] {
            // `vec!` takes zeroed pages from the system untouched, so that the threads below
            // map them as they write; `resize` would zero them one by one on this thread.
            if out.capacity() < len {
                *out = vec![0.0; len];
            } else {
                out.resize(len, 0.0);
            }
            out.par_chunks_mut(row).enumerate().for_each(|(j, key)| {
                let r = self.key_row(p, b, j);
                for (x, &bits) in key.iter_mut().zip(&buf[r * row..(r + 1) * row]) {
                    *x = widen(bits);
                }
            });
        }
    }
}

/// Checks a block table as a kernel will use it: every page a sequence's keys fall in
/// must exist in the pool, and the table must have a column for each of them.
pub fn validate_block_table(p: &DecodeProblem, table: &[i32], pool_pages: usize) -> Result<()> {
    let KvLayout::Paged { .. } = p.layout else {
        return Ok(());
    };
    let width = p.pages_per_seq();
    if table.len() != p.batch * width {
        return Err(Error::InvalidProblem(format!(
            "the block table has {} entries; a batch of {} with up to {width} pages per sequence needs {} ([batch, pages_per_seq])",
            table.len(),
            p.batch,
            p.batch * width
        )));
    }
    for b in 0..p.batch {
        for c in 0..p.pages_of(b) {
            let page = table[b * width + c];
            if page < 0 || page as usize >= pool_pages {
                return Err(Error::InvalidProblem(format!(
                    "the block table points past the pool: sequence {b}'s page {c} is {page}, and the pool has pages 0 to {}",
                    pool_pages - 1
                )));
            }
        }
    }
    Ok(())
}

/// A cache length that a block table of `width` columns cannot cover.
pub fn check_table_covers(p: &DecodeProblem, width: usize) -> Result<()> {
    let Some(page_size) = p.layout.page_size() else {
        return Ok(());
    };
    if let Some(b) = (0..p.batch).find(|&b| p.pages_of(b) > width) {
        return Err(Error::InvalidProblem(format!(
            "sequence {b}'s cache of {} keys needs {} pages of {page_size}, but the block table covers {width} ({} keys)",
            p.seqlens_k[b],
            p.pages_of(b),
            width * page_size
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inputs::HostInputs;

    /// Sequence b's Q, K and V gathered row by row as 16-bit patterns: the plain statement
    /// that `sequence_f64` is checked against.
    fn sequence(inputs: &DecodeInputs, p: &DecodeProblem, b: usize) -> HostInputs {
        let row = p.kv_heads * p.head_dim;
        let q_rows = p.seqlen_q * p.heads * p.head_dim;
        let gather = |buf: &[u16]| {
            let mut out = Vec::with_capacity(p.seqlens_k[b] * row);
            for j in 0..p.seqlens_k[b] {
                let r = inputs.key_row(p, b, j);
                out.extend_from_slice(&buf[r * row..(r + 1) * row]);
            }
            out
        };
        HostInputs {
            dtype: p.dtype,
            seed: inputs.seed,
            q: inputs.q[b * q_rows..(b + 1) * q_rows].to_vec(),
            k: gather(&inputs.k),
            v: gather(&inputs.v),
        }
    }

    fn paged(lens: Vec<usize>, page_size: usize) -> DecodeProblem {
        DecodeProblem {
            seqlens_k: lens.clone(),
            layout: KvLayout::Paged { page_size },
            ..DecodeProblem::uniform(lens.len(), 4, 2, 1, 1, 16)
        }
    }

    /// Gathering sequence b through a shuffled table gives the same keys as the
    /// contiguous cache built from the same seed would hold, and only owned slots are
    /// finite.
    #[test]
    fn a_shuffled_page_table_gathers_every_key_once() {
        let p = paged(vec![17, 1000, 64], 16);
        let inputs = DecodeInputs::generate(&p, 5);
        assert_eq!(inputs.pages, p.pool_pages());
        assert_eq!(p.pool_pages(), 2 + 63 + 4 + (69 / 8));
        validate_block_table(&p, &inputs.block_table, inputs.pages).unwrap();
        // Not handed out in order.
        let first: Vec<i32> = inputs.block_table[p.pages_per_seq()..p.pages_per_seq() + 8].to_vec();
        assert!(first.windows(2).any(|w| w[1] != w[0] + 1), "{first:?}");
        let mut seen = std::collections::HashSet::new();
        // Reused from sequence to sequence, of other lengths, as check_decode does.
        let mut qkv = [Vec::new(), Vec::new(), Vec::new()];
        for b in 0..p.batch {
            for j in 0..p.seqlens_k[b] {
                assert!(
                    seen.insert(inputs.key_row(&p, b, j)),
                    "two keys share a row"
                );
            }
            let seq = sequence(&inputs, &p, b);
            inputs.sequence_f64(&p, b, &mut qkv);
            assert_eq!(qkv, [&seq.q, &seq.k, &seq.v].map(|bits| seq.to_f64(bits)));
            assert_eq!(seq.k.len(), p.seqlens_k[b] * 2 * 16);
            assert!(
                seq.k
                    .iter()
                    .chain(&seq.v)
                    .all(|&x| p.dtype.from_bits(x).is_finite())
            );
        }
        // Every row no key lives in is NaN: the last page's tail, the spare pages.
        let row = 2 * 16;
        let nan_rows = inputs
            .k
            .chunks(row)
            .filter(|r| p.dtype.from_bits(r[0]).is_nan())
            .count();
        assert_eq!(nan_rows, inputs.pages * 16 - 1081);
    }

    #[test]
    fn contiguous_rows_past_a_length_are_nan() {
        let mut p = paged(vec![3, 5], 16);
        p.layout = KvLayout::Contiguous;
        let inputs = DecodeInputs::generate(&p, 1);
        let row = 2 * 16;
        let is_nan = |r: usize| p.dtype.from_bits(inputs.v[r * row]).is_nan();
        assert!((0..3).all(|r| !is_nan(r)) && (3..5).all(is_nan));
        assert!((5..10).all(|r| !is_nan(r)));
    }

    #[test]
    fn bad_tables_are_refused_by_name() {
        let p = paged(vec![40, 20], 16);
        let inputs = DecodeInputs::generate(&p, 2);
        let mut past = inputs.block_table.clone();
        past[1] = inputs.pages as i32;
        let e = validate_block_table(&p, &past, inputs.pages)
            .unwrap_err()
            .to_string();
        assert!(e.contains("points past the pool"), "{e}");
        let e = validate_block_table(&p, &inputs.block_table[1..], inputs.pages)
            .unwrap_err()
            .to_string();
        assert!(e.contains("[batch, pages_per_seq]"), "{e}");
        let e = check_table_covers(&p, 2).unwrap_err().to_string();
        assert!(
            e.contains("needs 3 pages of 16, but the block table covers 2 (32 keys)"),
            "{e}"
        );
        check_table_covers(&p, 3).unwrap();
    }
}
