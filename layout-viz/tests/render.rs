//! The renderers write well-formed, deterministic SVG with a tooltip on every cell.
use layout_viz::atoms;
use layout_viz::bank;
use layout_viz::book;
use layout_viz::figure_size;
use layout_viz::render;
use svg::node::element::tag::Type;
use svg::parser::Event;

/// Parses `svg` back, checks every tag closes in order, and returns (number of cell
/// groups, number of cell groups whose first child is a <title>).
fn check(svg: &str) -> (usize, usize) {
    let mut stack: Vec<(String, bool)> = Vec::new();
    let (mut cells, mut titled) = (0, 0);
    let mut expect_title = false;
    for event in svg::read(svg).expect("parses") {
        match event {
            Event::Error(e) => panic!("parse error: {e:?}"),
            Event::Tag(name, Type::Start, attrs) => {
                if expect_title {
                    if name == "title" {
                        titled += 1;
                    }
                    expect_title = false;
                }
                let is_cell =
                    name == "g" && attrs.get("class").map(|v| v.to_string()) == Some("cell".into());
                if is_cell {
                    cells += 1;
                    expect_title = true;
                }
                stack.push((name.to_string(), is_cell));
            }
            Event::Tag(name, Type::End, _) => {
                let (open, _) = stack.pop().expect("a close tag without an open one");
                assert_eq!(open, name, "mismatched tags");
            }
            Event::Tag(_, Type::Empty, _) => expect_title = false,
            _ => {}
        }
    }
    assert!(stack.is_empty(), "unclosed tags: {stack:?}");
    assert!(svg.starts_with("<svg"), "an SVG root");
    (cells, titled)
}

fn all_cells_titled(svg: &str, expected_cells: usize) {
    let (cells, titled) = check(svg);
    assert_eq!(cells, expected_cells);
    assert_eq!(titled, expected_cells, "every cell has a <title>");
}

#[test]
fn layout_grid_with_path() {
    let svg = book::layout_svg("(2,8):(1,2)", true).unwrap();
    all_cells_titled(&svg, 16);
    assert!(svg.contains("<polyline"));
    assert!(svg.contains("index 3 -&gt; offset 3") || svg.contains("index 3 -> offset 3"));
    // Rank 1 is one row.
    all_cells_titled(&book::layout_svg("8:2", false).unwrap(), 8);
}

#[test]
fn swizzle_uses_the_kernels_function() {
    let svg = book::swizzle_svg("(8,64):(64,1)", Some((3, 3, 3)), 2).unwrap();
    all_cells_titled(&svg, 2 * 8 * 64);
    // Row 1, chunk 0 moves to chunk 1: offset 64 -> 72.
    assert!(svg.contains("cell (1,0) coord (1,0): offset 64 -&gt; swizzled 72"));
    // The swizzled-layout spelling is accepted too.
    let again = book::swizzle_svg("Sw<3,3,3> o _0 o (8,64):(64,1)", None, 2).unwrap();
    assert!(again.contains("swizzled 72"));
    assert!(book::swizzle_svg("(8,64):(64,1)", None, 2).is_err());
}

#[test]
fn tv_lists_every_owner() {
    let atom = atoms::tv_by_name("mma-m16n8k16-b-4warps").unwrap();
    let svg = render::tv(&atom);
    all_cells_titled(&svg, 16 * 8);
    assert!(svg.contains("k=0 n=0: T0V0, T32V0, T64V0, T96V0"));
    for t in [0, 32, 64, 96] {
        assert!(svg.contains(&format!("\nT{t}V0\n")), "label of T{t}");
    }
}

#[test]
fn mma_has_three_panels() {
    let svg = render::mma(&atoms::mma_by_name("mma-m16n8k16").unwrap());
    all_cells_titled(&svg, 16 * 16 + 16 * 8 + 16 * 8);
    assert_eq!(svg.matches("class=\"panel\"").count(), 3);
    assert!(svg.contains("m=8 n=1: T0V3"));
}

#[test]
fn ldmatrix_figure() {
    let svg = render::ldmatrix(&atoms::ldmatrix(4, true).unwrap());
    all_cells_titled(&svg, 32 + 32 * 8);
    assert!(svg.contains("16-byte row address from lane 9"));
}

#[test]
fn bank_map_highlights_conflicts() {
    let access = bank::pattern("ldmatrix-q-unswizzled").unwrap();
    let report = bank::simulate(&access).unwrap();
    let svg = render::bank_map(&access, &report);
    // 4 phases x 32 banks x the 8 lines each phase's 8 lanes read (16 in all: a phase's
    // panel leaves out the lines only other phases touch).
    all_cells_titled(&svg, 4 * 8 * 32);
    assert!(svg.contains("32 wavefronts vs 4 ideal"));
    assert!(svg.contains("stroke=\"#d62728\""));
    let access = bank::pattern("ldmatrix-q-swizzled").unwrap();
    let svg = render::bank_map(&access, &bank::simulate(&access).unwrap());
    assert!(svg.contains("4 wavefronts vs 4 ideal (conflict-free)"));
    assert!(!svg.contains("stroke=\"#d62728\""));
}

#[test]
fn tma_figure() {
    let b = atoms::TmaBox::new((16, 128), (8, 64), (8, 64), 2, atoms::TmaSwizzle::B128).unwrap();
    all_cells_titled(&render::tma(&b), 2 * 8 * 8);
    let svg = render::tma(&b);
    // Box row 1's first chunk lands in chunk 1 of shared-memory row 1.
    assert!(svg.contains(
        "smem bytes 144-159 (row 1, chunk 1, banks 4-7): box row 1, columns 0-7, global (9, 64-71)"
    ));
}

#[test]
fn byte_identical_across_runs() {
    let run = || {
        let access = bank::pattern("ldmatrix-k-unswizzled").unwrap();
        vec![
            book::layout_svg("((2,2),(4,2)):((1,8),(2,16))", true).unwrap(),
            book::swizzle_svg("(8,32):(32,1)", Some((2, 3, 3)), 2).unwrap(),
            render::tv(&atoms::wgmma_c(16).unwrap()),
            render::mma(&atoms::mma_by_name("mma-m16n8k8").unwrap()),
            render::ldmatrix(&atoms::ldmatrix(2, false).unwrap()),
            render::bank_map(&access, &bank::simulate(&access).unwrap()),
        ]
    };
    assert_eq!(run(), run());
}

#[test]
fn figures_past_max_cells_are_refused_before_allocating() {
    // 10^10 cells: building the grid would need tens of GB.
    let err = book::layout_svg("(100000,100000):(1,100000)", false).unwrap_err();
    let msg = err.to_string();
    assert!(msg.contains("10000000000 cells"), "{msg}");
    assert!(msg.contains(&figure_size::MAX_CELLS.to_string()), "{msg}");
    // Both the plain and the swizzled spelling of a swizzle figure.
    assert!(book::swizzle_svg("(1024,1024):(1024,1)", Some((3, 3, 3)), 2).is_err());
    assert!(book::swizzle_svg("Sw<3,3,3> o _0 o (1024,1024):(1024,1)", None, 2).is_err());
    // A TV atom: cp.async tiles are the only atoms whose size the name chooses.
    assert!(matches!(
        atoms::cp_async(128, 128, 1024, 2),
        Err(atoms::AtomError::TooLarge(_))
    ));
    // At the limit is still drawn.
    assert!(figure_size::check_cells("a 256 x 256 tile", &[256, 256]).is_ok());
    assert!(figure_size::check_cells("a 256 x 257 tile", &[256, 257]).is_err());
    // A size past u64 saturates rather than overflowing.
    assert!(figure_size::check_cells("huge", &[u64::MAX, u64::MAX, 2]).is_err());
}

#[test]
fn bounded_figures_stay_under_max_cells() {
    // Bank maps come from 32 lanes, so no pattern comes near the limit.
    for (name, _) in bank::PATTERNS {
        let access = bank::pattern(name).unwrap();
        let (cells, _) = check(&render::bank_map(
            &access,
            &bank::simulate(&access).unwrap(),
        ));
        assert!(
            cells as u64 <= figure_size::MAX_CELLS / 8,
            "{name}: {cells}"
        );
    }
    // The largest TMA box (256 x 256 of 8-byte elements) draws 2 panels of 256 x 128
    // chunks: exactly the limit.
    let b = atoms::TmaBox::new((256, 256), (256, 256), (0, 0), 8, atoms::TmaSwizzle::None).unwrap();
    assert_eq!(
        2 * u64::from(b.box_rows) * u64::from(b.box_cols * b.elem_bytes / 16),
        figure_size::MAX_CELLS
    );
}

/// The width an SVG is drawn at (its viewBox) and its smallest font-size.
fn width_and_smallest_text(svg: &str) -> (f64, f64) {
    layout_viz::figure_size::drawn_width_and_smallest_text(svg).expect("an SVG with a viewBox")
}

#[test]
fn swizzle_by_chunks_moves_whole_chunks_as_the_kernels_function_does() {
    let svg = book::swizzle_chunks_svg("(8,64):(64,1)", Some((3, 3, 3)), 2).unwrap();
    all_cells_titled(&svg, 2 * 8 * 8);
    // Row 1's chunk 0 (offsets 64-71) lands on chunk 1 of its line: 72-79.
    assert!(svg.contains("row 1, chunk 0 = coords (1,0)..(1,7): offsets 64-71, chunk 0 of its 128-byte line, banks 0-3; swizzled to 72"));
    assert!(svg.contains("row 1, chunk 0 = coords (1,0)..(1,7): offsets 72-79, chunk 1 of its 128-byte line, banks 4-7; unswizzled 64"));
    // Row 7's chunk 7 (7 XOR 7 = 0) lands first in its line.
    assert!(svg.contains("row 7, chunk 7 = coords (7,56)..(7,63): offsets 448-455, chunk 0"));
    // A swizzle below the chunk (base 2: 4-element units) moves halves of chunks: no
    // chunk view of it, rather than one that hides what moves.
    assert!(book::swizzle_chunks_svg("(8,64):(64,1)", Some((3, 2, 3)), 2).is_err());
    // Column-major rows are not chunks either.
    assert!(book::layout_chunks_svg("(8,64):(1,8)", 2).is_err());
    all_cells_titled(&book::layout_chunks_svg("(8,64):(64,1)", 2).unwrap(), 8 * 8);
}

#[test]
fn bank_map_names_each_lane_once_per_run_of_banks() {
    let access = bank::pattern("ldmatrix-q-unswizzled").unwrap();
    let svg = render::bank_map(&access, &bank::simulate(&access).unwrap());
    // Lane 8's 16 bytes are banks 0-3 of line 1024: one label over four cells, each
    // still with its own tooltip.
    assert_eq!(svg.matches("\nL8\n").count(), 1);
    for b in 0..4 {
        assert!(svg.contains(&format!(
            "byte {}, bank {b}, phase 1: lane(s) 8;",
            1024 + 4 * b
        )));
    }
    // 4-byte loads: a lane is one bank, too narrow for `L`; 32 lanes on one word: ×32.
    let access = bank::pattern("lds32-consecutive").unwrap();
    let svg = render::bank_map(&access, &bank::simulate(&access).unwrap());
    assert!(svg.contains("\n31\n") && !svg.contains("\nL31\n"));
    let access = bank::pattern("lds32-broadcast").unwrap();
    let svg = render::bank_map(&access, &bank::simulate(&access).unwrap());
    assert!(svg.contains("\n×32\n"));
}

#[test]
fn tv_runs_and_windows_keep_the_atoms_owners() {
    // cp.async: thread 5 copies 8 consecutive elements per pass, one label per run.
    let svg = render::tv(&atoms::tv_by_name("cp-async-32x64").unwrap());
    all_cells_titled(&svg, 32 * 64);
    assert_eq!(svg.matches("\nT5 V0-7\n").count(), 1);
    assert_eq!(svg.matches("\nT5 V8-15\n").count(), 1);
    // A window keeps the atom's coordinates: wgmma's row 16 is warp 1's first (T32).
    let atom = atoms::tv_by_name("wgmma-m64n64k16-c").unwrap();
    let svg = render::tv_window(&atom, 0..32, 0..16);
    all_cells_titled(&svg, 32 * 16);
    assert!(svg.contains("m=16 n=0: T32V0"));
    assert!(svg.contains("Shown: m 0-31 and n 0-15 of the 64x64 atom"));
    // The mma atom, too wide for the column on one line, stacks T over V.
    let svg = render::mma(&atoms::mma_by_name("mma-m16n8k16").unwrap());
    assert!(svg.contains("\nT31\n") && svg.contains("\nV7\n"));
}

#[test]
fn the_figures_the_book_shows_fit_its_column() {
    // Drawn at most the column's width with text of at least 10px, so the page shows them
    // at full size (the browser check measures what the page draws).
    let dir = std::env::temp_dir().join(format!("layout-viz-fit-{}", std::process::id()));
    let manifest = book::write_book(&dir).unwrap();
    // The whole figures behind a readable view, which the book links but does not show.
    let whole = [
        (
            "layout-8x64-rowmajor.svg",
            "layout-8x64-rowmajor-chunks.svg",
        ),
        ("swizzle-333-8x64.svg", "swizzle-333-8x64-chunks.svg"),
        ("swizzle-233-8x32.svg", "swizzle-233-8x32-chunks.svg"),
        ("wgmma-m64n64k16-c.svg", "wgmma-m64n64k16-c-warps01.svg"),
    ];
    for entry in &manifest.figures {
        let svg = std::fs::read_to_string(dir.join(&entry.file)).unwrap();
        let (width, smallest) = width_and_smallest_text(&svg);
        if let Some((_, view)) = whole.iter().find(|(w, _)| *w == entry.file) {
            assert!(
                width > render::COLUMN_W,
                "{}: fits now; show it instead of {view}",
                entry.file
            );
            continue;
        }
        assert!(width <= render::COLUMN_W, "{}: {width} px wide", entry.file);
        assert!(smallest >= 10.0, "{}: {smallest} px text", entry.file);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A swizzle that does not fit the layout's offsets is refused with a reason, in the
/// layout figure and the swizzle figure alike (the playground shows the same message).
#[test]
fn swizzles_that_do_not_fit_are_refused() {
    let err = |r: Result<String, book::BookError>| r.unwrap_err().to_string();
    assert_eq!(
        err(book::layout_svg("Sw<2,0,-3> o _0 o 8:1", false)),
        "layout `Sw<2,0,-3> o _0 o 8:1`: Sw<2,0,-3> does not fit 8:1: it flips bits 3-4, above the layout's offsets 0-7 (bits 0-2), so swizzled offsets leave the layout's buffer"
    );
    assert_eq!(
        err(book::swizzle_svg("(8,8):(8,1)", Some((3, 3, 3)), 2)),
        "layout `(8,8):(8,1)`: Sw<3,3,3> does not fit (8,8):(8,1): it reads bits 6-8, all above the layout's offsets 0-63 (bits 0-5), so it changes nothing"
    );
    // Fitting ones, including a sub-tile of a 64-wide tile and a partial 8x32 use.
    for (layout, sw) in [
        ("(8,64):(64,1)", (3, 3, 3)),
        ("(8,8):(64,1)", (3, 3, 3)),
        ("(8,32):(32,1)", (3, 3, 3)),
        ("(8,32):(32,1)", (2, 3, 3)),
    ] {
        book::swizzle_svg(layout, Some(sw), 2).unwrap();
    }
}

/// A figure's cells, in drawing order: each `<g class="cell">`'s tooltip, the fill of its
/// first rectangle and its text labels.
fn cells(svg: &str) -> Vec<(String, String, Vec<String>)> {
    let mut out = Vec::new();
    let mut current: Option<(String, String, Vec<String>)> = None;
    // What the next text event is: the tooltip or a label.
    let (mut in_title, mut in_text) = (false, false);
    for event in svg::read(svg).expect("parses") {
        match event {
            Event::Tag("g", Type::Start, attrs)
                if attrs.get("class").map(|v| v.to_string()) == Some("cell".into()) =>
            {
                current = Some((String::new(), String::new(), Vec::new()));
            }
            Event::Tag("g", Type::End, _) => out.extend(current.take()),
            Event::Tag("title", t, _) => in_title = t == Type::Start,
            Event::Tag("text", t, _) => in_text = t == Type::Start,
            Event::Tag("rect", _, attrs) => {
                if let Some(c) = current.as_mut().filter(|c| c.1.is_empty()) {
                    c.1 = attrs.get("fill").map(|v| v.to_string()).unwrap_or_default();
                }
            }
            Event::Text(s) => {
                if let Some(c) = current.as_mut() {
                    if in_title {
                        c.0 = s.trim().to_string();
                    } else if in_text {
                        c.2.push(s.trim().to_string());
                    }
                }
            }
            _ => {}
        }
    }
    out
}

/// The integers in `s`, in order.
fn numbers(s: &str) -> Vec<u32> {
    s.split(|c: char| !c.is_ascii_digit())
        .filter(|w| !w.is_empty())
        .map(|w| w.parse().unwrap())
        .collect()
}

/// The FP8 stage's P figure against the fragment tables stated by hand (the PTX ISA's, as
/// the book gives them) and the packing `p_from_s` does: S's cells where the accumulator
/// puts them, and every byte of P the value of its own thread that the kernel packs there.
#[test]
fn fp8_p_from_s_shows_each_register_packing_its_own_threads_accumulator() {
    let svg = layout_viz::fp8::p_from_s_svg().unwrap();
    all_cells_titled(&svg, 2 * 2 * 32);
    let all = cells(&svg);
    let (s, p): (Vec<_>, Vec<_>) = all.iter().partition(|c| c.0.starts_with("S row"));
    assert!(p.iter().all(|c| c.0.starts_with("P row")), "{p:?}");
    // S: value 4n + e of lane t (group 0) is row 8 (e / 2), column 8n + 2t + e % 2.
    let mut s_fill = std::collections::BTreeMap::new();
    for (tip, fill, labels) in &s {
        let [row, key, t, v] = numbers(tip)[..] else {
            panic!("{tip}")
        };
        let (n, e) = (v / 4, v % 4);
        assert_eq!((row, key), (8 * (e / 2), 8 * n + 2 * t + e % 2), "{tip}");
        assert_eq!(labels, &[format!("T{t}"), format!("v{v}")], "{tip}");
        assert_eq!(fill, render::color(t.into()), "{tip}");
        assert!(s_fill.insert((row, key), fill.clone()).is_none(), "{tip}");
    }
    assert_eq!(s_fill.len(), 2 * 32, "rows 0 and 8, keys 0-31, once each");
    // P: byte j of lane t's register r is row 8 (r % 2), k 4t + j + 16 (r / 2); it packs
    // the S value at key fp8_pv_key(k), which is the same lane's value
    // 8 (r / 2) + 2 (r % 2) + {0, 1, 4, 5}[j] (k-step 0 of `p_from_s`).
    let mut seen = std::collections::BTreeSet::new();
    for (tip, fill, labels) in &p {
        let [row, k, t, r, j, key, from, v] = numbers(tip)[..] else {
            panic!("{tip}")
        };
        assert_eq!((row, k), (8 * (r % 2), 4 * t + j + 16 * (r / 2)), "{tip}");
        assert_eq!(key, atoms::fp8_pv_key(k), "{tip}");
        assert_eq!(from, t, "{tip}: a value crosses threads");
        assert_eq!(
            v,
            8 * (r / 2) + 2 * (r % 2) + [0, 1, 4, 5][j as usize],
            "{tip}"
        );
        assert_eq!(labels, &[format!("T{t}"), format!("v{v}")], "{tip}");
        assert_eq!(
            fill,
            &s_fill[&(row, key)],
            "{tip}: filled unlike its S cell"
        );
        assert!(seen.insert((row, k)), "{tip}");
    }
    assert_eq!(seen.len(), 2 * 32, "rows 0 and 8, k 0-31, once each");
    // Red marks only the register the caption follows (its 4 S cells and its 4 bytes): no
    // byte is outlined as coming from another thread.
    assert_eq!(svg.matches("stroke=\"#d62728\"").count(), 4 + 1);
    assert!(svg.contains("register 0 packs its own v0, v1, v4, v5 (keys 2, 3, 10, 11) into k 4-7"));
}

/// The key-order figure: column k labelled fp8_pv_key(k), the inverse row its inverse,
/// and each run of 4 columns under the lane whose A registers read it (k 4t .. 4t + 3,
/// and 16 further, of lane 4g + t: registers 0 and 1, then 2 and 3).
#[test]
fn fp8_v_key_order_labels_each_column_with_fp8_pv_key_and_its_inverse() {
    let svg = layout_viz::fp8::v_key_order_svg();
    all_cells_titled(&svg, 8 + 32 + 32);
    let (mut columns, mut inverse, mut runs) = (0, 0, 0);
    let mut block_fill = std::collections::BTreeMap::new();
    for (tip, fill, labels) in cells(&svg) {
        let n = numbers(&tip);
        if tip.starts_with("column ") {
            let [k, key, block] = n[..] else {
                panic!("{tip}")
            };
            assert_eq!(key, atoms::fp8_pv_key(k), "{tip}");
            assert_eq!(labels, [key.to_string()], "{tip}");
            assert_eq!(block, key / 8, "{tip}");
            // One fill per block of S, a different one for each block.
            assert_eq!(
                block_fill.entry(block).or_insert(fill.clone()),
                &fill,
                "{tip}"
            );
            columns += 1;
        } else if tip.starts_with("key ") {
            let [key, col] = n[..] else { panic!("{tip}") };
            assert_eq!(atoms::fp8_pv_key(col), key, "{tip}");
            assert_eq!(labels, [col.to_string()], "{tip}");
            assert_eq!(block_fill.get(&(key / 8)), Some(&fill), "{tip}");
            inverse += 1;
        } else {
            let [first, last, t, r0, r1, ..] = n[..] else {
                panic!("{tip}")
            };
            assert_eq!((first % 16, last), (4 * t, first + 3), "{tip}");
            assert_eq!((r0, r1), (2 * (first / 16), 2 * (first / 16) + 1), "{tip}");
            assert_eq!(labels, [format!("T{t} r{r0},r{r1}")], "{tip}");
            runs += 1;
        }
    }
    assert_eq!((columns, inverse, runs), (32, 32, 8));
    let fills: std::collections::BTreeSet<_> = block_fill.values().collect();
    assert_eq!(fills.len(), 4, "the four blocks of S look different");
}

/// Every cell's tooltip with its first rectangle's width and height.
fn cell_sizes(svg: &str) -> Vec<(String, f64, f64)> {
    let mut out = Vec::new();
    let mut current: Option<(String, f64, f64)> = None;
    let mut in_title = false;
    for event in svg::read(svg).expect("parses") {
        match event {
            Event::Tag("g", Type::Start, attrs)
                if attrs.get("class").map(|v| v.to_string()) == Some("cell".into()) =>
            {
                current = Some((String::new(), 0.0, 0.0));
            }
            Event::Tag("g", Type::End, _) => out.extend(current.take()),
            Event::Tag("title", t, _) => in_title = t == Type::Start,
            Event::Tag("rect", _, attrs) => {
                if let Some(c) = current.as_mut().filter(|c| c.1 == 0.0) {
                    let num = |k: &str| attrs.get(k).unwrap().to_string().parse::<f64>().unwrap();
                    (c.1, c.2) = (num("width"), num("height"));
                }
            }
            Event::Text(s) if in_title => {
                if let Some(c) = current.as_mut() {
                    c.0 = s.trim().to_string();
                }
            }
            _ => {}
        }
    }
    out
}

/// The backward's five products as stage 22's main kernel computes them, key-major, at
/// its tile sizes: BLOCK_KV keys (the m rows of products 1-4, 16 per warp) and BLOCK_Q
/// query rows, each tile drawn to scale and filled by its kind.
#[test]
fn backward_products_are_the_kernels_five_at_its_tile_sizes() {
    use layout_viz::backward::{
        self, BLOCK_KV, BLOCK_Q, Dim, HEAD_DIMS, Kind, PX_PER_ELEMENT, WARPS,
    };
    // What the caption says of the warps: each owns the m16 rows of its keys' products,
    // and takes 16 of dQ's rows by a slice of its columns (the kernel asserts both).
    assert_eq!(BLOCK_KV, WARPS * 16);
    const { assert!(BLOCK_Q % 16 == 0 && WARPS % (BLOCK_Q / 16) == 0) };
    let products = backward::products();
    let labels: Vec<String> = products.iter().map(|p| p.label()).collect();
    assert_eq!(
        labels,
        [
            "S^T = K Q^T",
            "dV += P^T dO",
            "dP^T = V dO^T",
            "dK += dS^T Q",
            "dQ += dS K"
        ]
    );
    for (i, p) in products.iter().enumerate() {
        assert!(p.composes(), "{}", p.label());
        // Key-major: the block's keys are the rows of every product but dQ's.
        let rows = if i < 4 { Dim::Keys } else { Dim::Queries };
        assert_eq!(p.result.rows, rows, "{}", p.label());
    }
    let svg = backward::products_svg();
    for (n, heading) in [
        "S^T = K Q^T, then P^T = exp(scale·S^T − LSE)",
        "dV += P^T dO",
        "dP^T = V dO^T, then dS^T = P^T ∘ (dP^T − D)",
        "dK += dS^T Q",
        "dQ += dS K",
    ]
    .iter()
    .enumerate()
    {
        assert!(
            svg.contains(&format!(">\n{}. {heading}\n<", n + 1)),
            "{heading}"
        );
    }
    assert!(svg.contains(&format!("BLOCK_KV = {BLOCK_KV} keys")));
    assert!(svg.contains(&format!("BLOCK_Q = {BLOCK_Q} rows")));
    // The legend names each kind's operands, as the rows draw them.
    for entry in [
        "loaded once per block: K, V",
        "streams in per query block: Q, LSE, dO, D",
        "recomputed in registers: S, P, dP, dS",
        "accumulates in registers: dV, dK",
        "leaves to global memory each step (the block's share): dQ",
    ] {
        assert!(
            svg.contains(&format!(">\n{entry}\n<")) || svg.contains(&entry.replace('\'', "&apos;")),
            "{entry}"
        );
    }

    // 15 tiles of the products, P^T and dS^T after two of them, and the LSE and D strips.
    all_cells_titled(&svg, 5 * 3 + 2 + 2);
    let sizes = cell_sizes(&svg);
    let all = cells(&svg);
    let side = |words: &str| -> (u32, &str) {
        match words {
            "d" => (HEAD_DIMS[HEAD_DIMS.len() - 1], "d"),
            w if w.ends_with(" keys") => (BLOCK_KV, "keys"),
            w if w.ends_with(" queries") => (BLOCK_Q, "queries"),
            w => panic!("{w}"),
        }
    };
    let mut tiles = 0;
    for ((tip, w, h), (tip2, fill, labels)) in sizes.iter().zip(&all) {
        assert_eq!(tip, tip2);
        let kind = Kind::ALL
            .into_iter()
            .find(|k| tip.contains(k.meaning()))
            .unwrap_or_else(|| panic!("{tip}: no kind"));
        assert_eq!(fill, kind.fill(), "{tip}");
        let (name, rest) = tip.split_once(": ").unwrap();
        if name == "LSE" || name == "D" {
            // One value per query: a strip across the columns of P^T or dS^T.
            assert_eq!(kind, Kind::Streamed, "{tip}");
            assert!(
                rest.starts_with(&format!("{BLOCK_Q} values, one per query")),
                "{tip}"
            );
            assert_eq!(*w, f64::from(BLOCK_Q) * PX_PER_ELEMENT, "{tip}");
            assert_eq!(labels, &[name.to_string()], "{tip}");
            continue;
        }
        let shape = rest.split(',').next().unwrap();
        let (r, c) = shape.split_once(" × ").unwrap();
        let ((rows, rw), (cols, cw)) = (side(r), side(c));
        if r != "d" {
            assert_eq!(r, format!("{rows} {rw}"), "{tip}");
        }
        assert_eq!(
            (*w, *h),
            (
                f64::from(cols) * PX_PER_ELEMENT,
                f64::from(rows) * PX_PER_ELEMENT
            ),
            "{tip}"
        );
        let label = |n: u32, words: &str| {
            if words == "d" {
                "d".to_string()
            } else {
                n.to_string()
            }
        };
        assert_eq!(
            labels,
            &[
                name.to_string(),
                format!("{}×{}", label(rows, rw), label(cols, cw))
            ],
            "{tip}"
        );
        let expected = match name {
            "K" | "V" => Kind::LoadedOnce,
            "Q" | "Q^T" | "dO" | "dO^T" => Kind::Streamed,
            "S^T" | "P^T" | "dP^T" | "dS^T" | "dS" => Kind::Recomputed,
            "dK" | "dV" => Kind::Accumulated,
            "dQ" => Kind::ToGlobal,
            other => panic!("{other}: not an operand of the five products"),
        };
        assert_eq!(kind, expected, "{tip}");
        tiles += 1;
    }
    assert_eq!(tiles, 5 * 3 + 2);
}
