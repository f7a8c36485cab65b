//! `flashlab schedule` on the record of the profile beside FlashAttention-4
//! (`bench/records/cpu-schedule/`): the listings of stage 16's and FlashAttention-4's d128
//! kernels (FlashAttention-4's compiled on a CPU by `bench/profile/fa4_sass.py`) joined to
//! the Nsight Compute source pages recorded on the H200 (`h200-prefill/hopper/profile/`).
//! The join holds instruction for instruction, the `wait` samples follow the stall counts,
//! and the phase totals are the ones the book's Results quote. CPU only: the records are
//! committed, nothing here runs a kernel.

use sass_schedule::{
    LoopSchedule, SourcePage, StallRow, Way, main_loop, parse_listing, read_text, stall_versus_wait,
};
use std::path::Path;

const SCHEDULE: &str = "bench/records/cpu-schedule";
const PROFILE: &str = "bench/records/h200-prefill/hopper/profile";

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The one kernel of a listing of the record.
fn function(listing: &str) -> sass_schedule::Function {
    let text = read_text(&root().join(SCHEDULE).join(listing)).unwrap();
    let mut functions = parse_listing(&text).unwrap();
    assert_eq!(functions.len(), 1, "{listing} holds one kernel");
    functions.remove(0)
}

/// The record's listing of `kernel`, its source page, its main loop by the way executed
/// and the stall table.
fn profiled(listing: &str, page: &str) -> (sass_schedule::Function, LoopSchedule, Vec<StallRow>) {
    let f = function(listing);
    let page = SourcePage::parse(&read_text(&root().join(PROFILE).join(page)).unwrap()).unwrap();
    let rows = page.join(&f).unwrap_or_else(|e| panic!("{listing}: {e}"));
    let s = main_loop(&f, Some(rows)).expect("a main loop");
    assert_eq!(s.way, Way::Executed);
    let table = stall_versus_wait(&f, rows);
    (f, s, table)
}

fn per_million(table: &[StallRow], stall: u8) -> f64 {
    table
        .iter()
        .find(|r| r.stall == stall)
        .map_or(f64::NAN, StallRow::wait_per_million)
}

/// A warp held by a stall count is a warp Nsight Compute samples as stalled on `wait`: an
/// instruction with a stall of 1 leaves no `wait` sample on the next, and the samples per
/// execution grow with the stall, in both kernels.
#[test]
fn the_wait_samples_follow_the_stall_counts() {
    for (listing, page) in [
        ("stage16-d128.sass.gz", "stage16-sass.csv.gz"),
        ("fa4-d128.sass.gz", "fa4-sass.csv.gz"),
    ] {
        let (_, _, table) = profiled(listing, page);
        let one = table.iter().find(|r| r.stall == 1).unwrap();
        assert!(one.executed > 100_000_000, "{listing}: {one:?}");
        assert_eq!(one.wait_after, 0, "{listing}: a stall of 1 holds no warp");
        let (two, four, seven) = (
            per_million(&table, 2),
            per_million(&table, 4),
            per_million(&table, 7),
        );
        assert!(
            two > 50.0 && four > 1.5 * two && seven > 1.8 * four,
            "{listing}: {two} {four} {seven}"
        );
    }
}

/// The phase tables the book's Results show: the loop each kernel's warps executed, its
/// instructions, static cycles, samples and `wait` samples, as recorded.
#[test]
fn the_loops_of_record_are_as_the_book_quotes_them() {
    let (f, s, _) = profiled("stage16-d128.sass.gz", "stage16-sass.csv.gz");
    let totals = |s: &LoopSchedule| {
        (
            s.path.len(),
            s.static_cycles(),
            s.phases.iter().filter_map(|p| p.samples).sum::<u64>(),
            s.phases.iter().filter_map(|p| p.wait).sum::<u64>(),
        )
    };
    assert_eq!(f.name, "overlap_bf16_d128");
    assert_eq!(totals(&s), (499, 1174, 72066, 28130));
    assert_eq!(
        (
            s.count(&f, "HGMMA"),
            s.count(&f, "MUFU"),
            s.count(&f, "F2FP")
        ),
        (16, 66, 32)
    );
    let (g, t, _) = profiled("fa4-d128.sass.gz", "fa4-sass.csv.gz");
    assert!(g.name.contains("FlashAttentionForwardSm90"), "{}", g.name);
    assert_eq!(totals(&t), (450, 900, 66598, 20624));
    assert_eq!(
        (
            t.count(&g, "HGMMA"),
            t.count(&g, "MUFU"),
            t.count(&g, "F2FP")
        ),
        (16, 66, 32)
    );
    // Where stage 16's 274 more cycles are: the wgmma issue (the descriptors) and the
    // softmax's end (P packed after the last exponential); 9 phases against 9.
    let phase_cycles =
        |s: &LoopSchedule| s.phases.iter().map(|p| p.static_cycles).collect::<Vec<_>>();
    assert_eq!(phase_cycles(&s), vec![23, 7, 33, 11, 151, 114, 6, 722, 107]);
    assert_eq!(phase_cycles(&t), vec![23, 7, 17, 51, 8, 86, 6, 247, 455]);
}

/// Without a profile, the lightest way around is the way the warps took in both kernels:
/// no mask, the lazy rescale skipped, no wait retried.
#[test]
fn the_lightest_way_is_the_way_executed() {
    for (listing, page) in [
        ("stage16-d128.sass.gz", "stage16-sass.csv.gz"),
        ("fa4-d128.sass.gz", "fa4-sass.csv.gz"),
    ] {
        let (f, executed, _) = profiled(listing, page);
        let lightest = main_loop(&f, None).unwrap();
        assert_eq!(lightest.way, Way::Lightest);
        assert_eq!(lightest.path, executed.path, "{listing}");
    }
}

/// FlashAttention-4's loops at the three head dims, compiled on a CPU: fewer static cycles
/// than stage 19's at each (`bench/records/cpu-schedule/README.md`).
#[test]
fn flashattention4_loops_at_each_head_dim() {
    for (d, hgmma, mufu, cycles) in [(64, 12, 66, 870), (128, 16, 66, 900), (256, 21, 42, 808)] {
        let f = function(&format!("fa4-d{d}.sass.gz"));
        let s = main_loop(&f, None).unwrap();
        assert_eq!(
            (s.count(&f, "HGMMA"), s.count(&f, "MUFU"), s.static_cycles()),
            (hgmma, mufu, cycles),
            "d{d}"
        );
    }
}

/// The record's tables are what `flashlab schedule --markdown` prints for its listings: the
/// book includes them, so they are generated, never typed.
#[test]
fn the_records_tables_are_the_tools_output() {
    let tables = [
        ("stage16-d128", Some("stage16-sass.csv.gz")),
        ("fa4-d128", Some("fa4-sass.csv.gz")),
        ("fa4-d64", None),
        ("fa4-d256", None),
        ("stage19-d64", None),
        ("stage19-d128", None),
        ("stage19-d256", None),
    ];
    for (name, page) in tables {
        let f = function(&format!("{name}.sass.gz"));
        let page = page.map(|p| {
            SourcePage::parse(&read_text(&root().join(PROFILE).join(p)).unwrap()).unwrap()
        });
        let rows = page.as_ref().map(|p| p.join(&f).unwrap());
        let s = main_loop(&f, rows).unwrap();
        let committed =
            std::fs::read_to_string(root().join(SCHEDULE).join(format!("{name}.md"))).unwrap();
        assert_eq!(
            committed,
            flashlab::schedule::markdown(&f, &s, rows),
            "{name}.md: run the README's command again"
        );
    }
}
