//! The book's figures of the protocol models, under stable file names, with
//! `manifest-protocol.json` listing each file and its one-line caption (layout-viz's
//! `book` writes the layout figures and `manifest.json` beside them). The book links these
//! names, so a name here is a promise: rename only together with the book.

use std::path::Path;

use layout_viz::book::{BookError, Manifest};

use crate::pipeline::stage12;
use crate::ring::stage10;

/// The manifest's file name in the output directory.
pub const MANIFEST: &str = "manifest-protocol.json";

type Build = fn() -> String;

/// The book's figures: (file, caption, builder), in manifest order.
fn figures() -> Vec<(&'static str, &'static str, Build)> {
    vec![
        (
            "tma-ring-phases.svg",
            "Stage 10's K/V ring: each slot's mbarrier completes one phase per tile, waited on by parity",
            || {
                // Stage 10's ring at d = 128: each tile's K and V as two boxes of 64 bf16
                // columns (the 128-byte swizzle's span) by BLOCK_KV rows.
                let b = stage10::BLOCK_KV * 64 * 2;
                crate::ring::ring_phases(
                    stage10::NSTAGES,
                    6,
                    &[
                        ("K cols 0-63 land", b),
                        ("K cols 64-127 land", b),
                        ("V cols 0-63 land", b),
                        ("V cols 64-127 land", b),
                    ],
                )
            },
        ),
        (
            "warp-specialized-full-empty.svg",
            "Stage 12: the full and empty mbarriers of K's two-slot ring over four tiles, from the model the tests run in every order",
            // Stage 12's ring at d = 128, and its consumer warps: all but the producer
            // warpgroup's 4.
            || crate::pipeline::full_empty_svg(stage12::NSTAGES, 4, stage12::WARPS - 4),
        ),
        (
            "ping-pong-schedule.svg",
            "Stage 16: the intended schedule of the two consumer warpgroups, a model (not a measurement)",
            || crate::pingpong::schedule_svg(3),
        ),
        (
            "decode-split-combine.svg",
            "Stage 14: 1000 keys (16 tiles of 64) in 5 splits of 4 tiles, the last split empty; each block's (O_s, LSE_s) and the combine",
            || crate::decode::split_combine_svg(1000, 5),
        ),
        (
            "decode-gqa-packing.svg",
            "Stage 14: GQA packing, group 4 and 2 new tokens in the 16 rows of one m16 tile; K and V read once per K/V head, 32 MiB instead of 128 MiB",
            || crate::decode::gqa_packing_svg(32, 8, 2, 1, 8192, 128),
        ),
        (
            "decode-page-table.svg",
            "Stage 14: a paged cache of 3 sequences (40, 17, 70 keys) in pages of 16, the block table, the pool and cache_row for three keys",
            crate::decode::page_table_svg,
        ),
    ]
}

/// The manifest without writing anything.
pub fn manifest() -> Manifest {
    layout_viz::book::manifest_of(
        figures()
            .into_iter()
            .map(|(file, caption, _)| (file, caption)),
    )
}

/// Writes every figure and [`MANIFEST`] into `dir` (created if missing).
pub fn write_book(dir: &Path) -> Result<Manifest, BookError> {
    let figures = figures()
        .into_iter()
        .map(|(file, caption, build)| (file, caption, move || Ok::<_, BookError>(build())));
    layout_viz::book::write_figures(dir, figures, MANIFEST)
}
