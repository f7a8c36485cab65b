//! The FP8 stage's register trick, drawn: how P's 8-bit A registers are packed from each
//! thread's own S accumulator ([`p_from_s_svg`]), and the order of V's keys in the
//! transposed V tile that makes that packing right ([`v_key_order_svg`]); and stage 24's
//! transpose of a V tile into that order in shared memory ([`v_transpose_svg`]).
//!
//! Both figures are computed, not typed in: S's cells come from the wgmma accumulator
//! ([`atoms::wgmma_c`]), P's bytes from the 8-bit register A layout
//! ([`atoms::wgmma_a_fp8`]), and the key at each k position from [`atoms::fp8_pv_key`].
//! Each byte of P is labelled with the S value it packs, found in the accumulator by its
//! (row, key); so a key order that sent a byte to another thread would show that other
//! thread's label, outlined in red, instead of being drawn as if it fitted.
//! Book: "A layouts primer", section "The 8-bit wgmma fragments"; "Stage 20: FP8",
//! section "P in the 8-bit A layout".

use std::collections::BTreeSet;

use svg::node::element::{Group, Title};

use crate::atoms::{self, AtomError, TvAtom};
use crate::render;
// gmma.rs's rules: the figure exactly the book's column wide (never scaled down), every
// text 12px or more.
use crate::svg_kit::{
    CHAR_W_12, HEADING_CHAR_W, INK, MARGIN, MARK, MAX_WIDTH, MUTED, document, legend, paragraph,
    rect, text, title_paragraph,
};

/// Keys of one k-step of P V at 8 bits (the K of `wgmma.m64nNk32`).
const KEYS: u32 = 32;
/// 8-bit values in a 32-bit register: [`atoms::wgmma_a_fp8`] numbers a thread's values
/// register by register, so value v is byte v % 4 of register v / 4.
const REGISTER_BYTES: u32 = 4;
/// The lanes drawn: one quad (group g = 0), which holds rows g and g + 8 of its warp's 16.
/// Every other quad of every warp repeats its pattern on its own two rows.
const QUAD: u32 = 4;
/// The P figure draws a k-step in two halves of 16 k, so that two lines of 12px text fit
/// in each of a half's cells at the column's width.
const HALF: u32 = 16;
/// The register the P figure follows in red, with the four S values it packs.
const SHOWN_THREAD: u32 = 1;
const SHOWN_REGISTER: u32 = 0;
/// Fills of S's 8-key column blocks in the key-order figure: palette entries other than
/// the four the quad's threads use, so a block is never mistaken for a thread, and
/// blocks 0 and 1 (2 and 3), whose keys interleave, far apart in tone.
const BLOCK_FILLS: [u64; 4] = [4, 11, 8, 5];
/// A cell no lane of the quad holds (render.rs's untouched cell).
const EMPTY_FILL: &str = "#f7f7f7";

/// The figure's cell: a `<g class="cell">` with its tooltip first (as render.rs draws
/// cells, so the book's hover text and the tests find it), a fill, and lines of text.
fn cell(x: f64, y: f64, w: f64, h: f64, fill: &str, lines: &[String], tip: &str) -> Group {
    let mut g = Group::new().set("class", "cell").add(Title::new(tip)).add(
        rect(x, y, w, h, fill)
            .set("stroke", "#555555")
            .set("stroke-width", 0.6),
    );
    let n = lines.len() as f64;
    for (i, l) in lines.iter().enumerate() {
        // Lines 14px apart, centred in the cell as a block.
        let baseline = y + h / 2.0 + 4.5 + 14.0 * (i as f64 - (n - 1.0) / 2.0);
        g = g.add(text(x + w / 2.0, baseline, 12, l.as_str()).set("text-anchor", "middle"));
    }
    g
}

/// An outline around cells (a register's bytes; the followed register in red).
fn outline(
    x: f64,
    y: f64,
    w: f64,
    h: f64,
    stroke: &str,
    width: f64,
) -> svg::node::element::Rectangle {
    rect(x, y, w, h, "none")
        .set("stroke", stroke)
        .set("stroke-width", width)
}

/// A muted header label right-aligned before `x`, and one value centred over each column.
fn header_row(
    mut g: Group,
    x0: f64,
    y: f64,
    cw: f64,
    label: &str,
    values: &[String],
    ink: &str,
) -> Group {
    g = g.add(
        text(x0 - 6.0, y, 12, label)
            .set("text-anchor", "end")
            .set("fill", MUTED),
    );
    for (i, v) in values.iter().enumerate() {
        g = g.add(
            text(x0 + (i as f64 + 0.5) * cw, y, 12, v.as_str())
                .set("text-anchor", "middle")
                .set("fill", ink),
        );
    }
    g
}

/// The (thread, value) of the quad that holds (row, col) of `atom`, if one does.
fn quad_owner(atom: &TvAtom, owners: &[Vec<(u32, u32)>], row: u32, col: u32) -> Option<(u32, u32)> {
    owners[(row * atom.cols + col) as usize]
        .iter()
        .copied()
        .find(|&(t, _)| t < QUAD)
}

/// The rows the quad holds in `atom`, in order (rows g and g + 8).
fn quad_rows(atom: &TvAtom) -> Vec<u32> {
    let rows: BTreeSet<u32> = (0..QUAD)
        .flat_map(|t| (0..atom.values()).map(move |v| (t, v)))
        .map(|(t, v)| atom.coord(t, v).row)
        .collect();
    rows.into_iter().collect()
}

/// `fp8-p-from-s.svg`: one k-step (32 keys) of one quad. For each half of the k-step, S's
/// cells in the keys' natural order, each labelled with the thread that holds it and its
/// index in that thread's accumulator; below them P's 8-bit A operand over the same rows,
/// each byte under its k position and the key fp8_pv_key puts there, labelled with the S
/// value it packs and outlined by register. Fills are threads: a byte filled like the S
/// cell it came from never left its thread.
pub fn p_from_s_svg() -> Result<String, AtomError> {
    let c = atoms::wgmma_c(KEYS)?;
    let a = atoms::wgmma_a_fp8();
    let (c_owners, a_owners) = (c.owners(), a.owners());
    let rows = quad_rows(&a);
    let title = "P from S at 8 bits: every byte of P is its own thread's S value";
    let (mut g, mut y) = title_paragraph(title);
    let rows_text: Vec<String> = rows.iter().map(u32::to_string).collect();
    (g, y) = paragraph(
        g,
        y,
        &[format!(
            "lanes 0-{} (rows {}) of k-step 0: S is the wgmma accumulator, P the 8-bit register A operand, with V's keys in fp8_pv_key order",
            QUAD - 1,
            rows_text.join(" and ")
        )],
        12,
        CHAR_W_12,
        false,
    );
    y += 8.0;

    // Where the followed register's bytes sit in P, and the S cells they came from.
    // (row, k, key) of each byte.
    let shown: Vec<(u32, u32, u32)> = (0..a.values())
        .filter(|v| v / REGISTER_BYTES == SHOWN_REGISTER)
        .map(|v| {
            let at = a.coord(SHOWN_THREAD, v);
            (at.row, at.col, atoms::fp8_pv_key(at.col))
        })
        .collect();

    let x0 = MARGIN + 46.0;
    let cw = ((MAX_WIDTH - MARGIN - x0) / f64::from(HALF)).floor();
    let ch = 34.0;
    for half in 0..KEYS / HALF {
        let ks: Vec<u32> = (half * HALF..(half + 1) * HALF).collect();
        let col_x = |i: usize| x0 + i as f64 * cw;
        // S, keys in their natural order.
        (g, y) = paragraph(
            g,
            y,
            &[format!(
                "S, keys {}-{} in their natural order: thread and accumulator value",
                ks[0],
                ks[ks.len() - 1]
            )],
            13,
            HEADING_CHAR_W,
            true,
        );
        y += 16.0;
        let keys_text: Vec<String> = ks.iter().map(u32::to_string).collect();
        g = header_row(g, x0, y - 4.0, cw, "key", &keys_text, MUTED);
        y += 4.0;
        for &row in &rows {
            g = g.add(
                text(x0 - 6.0, y + ch / 2.0 + 4.5, 12, format!("m{row}"))
                    .set("text-anchor", "end")
                    .set("fill", MUTED),
            );
            let mut red = Vec::new();
            for (i, &key) in ks.iter().enumerate() {
                let x = col_x(i);
                let (tip, lines, fill) = match quad_owner(&c, &c_owners, row, key) {
                    Some((t, v)) => (
                        format!("S row {row}, key {key}: thread {t}, accumulator value {v}"),
                        vec![format!("T{t}"), format!("v{v}")],
                        render::color(u64::from(t)),
                    ),
                    None => (
                        format!("S row {row}, key {key}: not in lanes 0-{}", QUAD - 1),
                        Vec::new(),
                        EMPTY_FILL,
                    ),
                };
                g = g.add(cell(x, y, cw, ch, fill, &lines, &tip));
                if shown.iter().any(|&(r, _, k)| r == row && k == key) {
                    red.push(outline(x, y, cw, ch, MARK, 2.5));
                }
            }
            for o in red {
                g = g.add(o);
            }
            y += ch;
        }
        y += 14.0;

        // P in the A layout: each byte under its k position and the key there.
        let registers: BTreeSet<u32> = rows
            .iter()
            .flat_map(|&row| ks.iter().map(move |&k| (row, k)))
            .filter_map(|(row, k)| quad_owner(&a, &a_owners, row, k))
            .map(|(_, v)| v / REGISTER_BYTES)
            .collect();
        let registers: Vec<String> = registers.iter().map(u32::to_string).collect();
        (g, y) = paragraph(
            g,
            y,
            &[format!(
                "P as the 8-bit A operand, k {}-{} (registers {}): the S value each byte packs",
                ks[0],
                ks[ks.len() - 1],
                registers.join(" and ")
            )],
            13,
            HEADING_CHAR_W,
            true,
        );
        y += 16.0;
        // Whose register reads each k: a label over each run of one thread's bytes.
        g = g.add(
            text(x0 - 6.0, y - 4.0, 12, "lane")
                .set("text-anchor", "end")
                .set("fill", MUTED),
        );
        let first_row = rows[0];
        let mut i = 0;
        while i < ks.len() {
            let t = quad_owner(&a, &a_owners, first_row, ks[i]).map(|(t, _)| t);
            let run = ks[i..]
                .iter()
                .take_while(|&&k| quad_owner(&a, &a_owners, first_row, k).map(|(t, _)| t) == t)
                .count();
            let label = t.map_or("-".to_string(), |t| format!("T{t}"));
            g = g.add(
                text(col_x(i) + run as f64 * cw / 2.0, y - 4.0, 12, label)
                    .set("text-anchor", "middle")
                    .set("font-weight", "bold"),
            );
            i += run;
        }
        y += 18.0;
        g = header_row(g, x0, y - 4.0, cw, "k", &keys_text, MUTED);
        y += 18.0;
        let pv_keys: Vec<String> = ks
            .iter()
            .map(|&k| atoms::fp8_pv_key(k).to_string())
            .collect();
        g = header_row(g, x0, y - 4.0, cw, "key", &pv_keys, INK);
        y += 4.0;
        for &row in &rows {
            let mut reg_label = BTreeSet::new();
            let (mut black, mut red) = (Vec::new(), Vec::new());
            for (i, &k) in ks.iter().enumerate() {
                let key = atoms::fp8_pv_key(k);
                let x = col_x(i);
                let Some((t, v)) = quad_owner(&a, &a_owners, row, k) else {
                    let tip = format!("P row {row}, k {k}: not in lanes 0-{}", QUAD - 1);
                    g = g.add(cell(x, y, cw, ch, EMPTY_FILL, &[], &tip));
                    continue;
                };
                let (r, byte) = (v / REGISTER_BYTES, v % REGISTER_BYTES);
                reg_label.insert(r);
                let source = quad_owner(&c, &c_owners, row, key);
                let (lines, from) = match source {
                    Some((ts, vs)) => (
                        vec![format!("T{ts}"), format!("v{vs}")],
                        format!("thread {ts}, accumulator value {vs}"),
                    ),
                    None => (
                        vec!["?".to_string()],
                        format!("not in lanes 0-{}", QUAD - 1),
                    ),
                };
                let tip = format!(
                    "P row {row}, k {k}: thread {t}, register {r}, byte {byte}; key {key} of S: {from}"
                );
                // Filled by the thread whose register holds the byte; labelled by the
                // thread whose accumulator held the value.
                g = g.add(cell(
                    x,
                    y,
                    cw,
                    ch,
                    render::color(u64::from(t)),
                    &lines,
                    &tip,
                ));
                if source.map(|(ts, _)| ts) != Some(t) {
                    red.push(outline(x, y, cw, ch, MARK, 2.5));
                }
                // A register's four bytes, outlined together where the run starts.
                if byte == 0 {
                    let bytes = (0..REGISTER_BYTES as usize)
                        .take_while(|&b| {
                            ks.get(i + b)
                                .and_then(|&k| quad_owner(&a, &a_owners, row, k))
                                == Some((t, REGISTER_BYTES * r + b as u32))
                        })
                        .count();
                    black.push(outline(x, y, bytes as f64 * cw, ch, INK, 2.0));
                    if t == SHOWN_THREAD && r == SHOWN_REGISTER {
                        red.push(outline(x, y, bytes as f64 * cw, ch, MARK, 2.5));
                    }
                }
            }
            // Outlines over the row's cells, red on top, so no neighbour's border hides
            // one of their edges.
            for o in black.into_iter().chain(red) {
                g = g.add(o);
            }
            let regs: Vec<String> = reg_label.iter().map(|r| format!("r{r}")).collect();
            g = g.add(
                text(
                    x0 - 6.0,
                    y + ch / 2.0 + 4.5,
                    12,
                    format!("m{row} {}", regs.join("/")),
                )
                .set("text-anchor", "end")
                .set("fill", MUTED),
            );
            y += ch;
        }
        y += 22.0;
    }

    let threads: Vec<(&str, String)> = (0..QUAD)
        .map(|t| (render::color(u64::from(t)), format!("T{t}: lane {t}")))
        .collect();
    (g, y) = legend(g, y, &threads);
    // Said from what the accumulator holds, so the sentence cannot claim a packing the
    // cells above do not show.
    let sources: Vec<(u32, u32)> = shown
        .iter()
        .filter_map(|&(row, _, key)| quad_owner(&c, &c_owners, row, key))
        .collect();
    let own = sources.len() == shown.len() && sources.iter().all(|&(t, _)| t == SHOWN_THREAD);
    let values: Vec<String> = sources
        .iter()
        .map(|&(t, v)| {
            if own {
                format!("v{v}")
            } else {
                format!("T{t} v{v}")
            }
        })
        .collect();
    let keys: Vec<String> = shown.iter().map(|s| s.2.to_string()).collect();
    let ks: Vec<u32> = shown.iter().map(|s| s.1).collect();
    // A thread's accumulator values per k-step: what k-step kk adds to each index, times kk.
    let per_step = c.values() * KEYS / c.cols;
    let caption = [
        "Cell: the S value, as the thread that holds it in its accumulator and its index there (T1 v4). Fill: the thread that holds the cell (S) or the register (P); black outline: one 32-bit register, four bytes.".to_string(),
        format!(
            "Red: thread {SHOWN_THREAD}'s register {SHOWN_REGISTER} packs {} {} (keys {}) into k {}-{}.",
            if own { "its own" } else { "the S values" },
            values.join(", "),
            keys.join(", "),
            ks.iter().min().copied().unwrap_or(0),
            ks.iter().max().copied().unwrap_or(0)
        ),
        format!(
            "k-step kk adds {per_step} kk to every value index and {KEYS} kk to every key and k; lane 4g + t holds rows g and g + 8 of its warp."
        ),
    ];
    (g, y) = paragraph(g, y, &caption, 12, CHAR_W_12, false);
    Ok(document(MAX_WIDTH, (y + MARGIN).ceil(), title, g))
}

/// `fp8-v-key-order.svg`: one 32-key group of the transposed V tile. Column k holds key
/// fp8_pv_key(k), filled by the 8-key column block of S the key comes from; above, the
/// lane whose A registers read each run of columns; below, the inverse (the column of each
/// key, the kernels' fp8_pv_column), computed by inverting fp8_pv_key.
pub fn v_key_order_svg() -> String {
    let a = atoms::wgmma_a_fp8();
    let a_owners = a.owners();
    let rows = quad_rows(&a);
    let title = "V's keys in the transposed V tile: the order P V reads them";
    let (mut g, mut y) = title_paragraph(title);
    (g, y) = paragraph(
        g,
        y,
        &[
            "one group of 32 keys; column k of V^T holds key 16(k/16) + 8((k%4)/2) + 2((k%16)/4) + k%2 (fp8_pv_key)"
                .to_string(),
        ],
        12,
        CHAR_W_12,
        false,
    );
    y += 12.0;
    let block_fill = |key: u32| render::color(BLOCK_FILLS[(key / 8) as usize % BLOCK_FILLS.len()]);
    let x0 = MARGIN + 54.0;
    let cw = ((MAX_WIDTH - MARGIN - x0) / f64::from(KEYS)).floor();
    let ch = 24.0;
    let ks: Vec<u32> = (0..KEYS).collect();

    // The lane whose registers read each run of columns: the quad's owner of P's (row, k),
    // the same thread for its two rows (two registers).
    g = g.add(
        text(x0 - 6.0, y + ch / 2.0 + 4.5, 12, "lane")
            .set("text-anchor", "end")
            .set("fill", MUTED),
    );
    let owner = |k: u32| -> Option<u32> { quad_owner(&a, &a_owners, rows[0], k).map(|(t, _)| t) };
    let mut i = 0;
    while i < ks.len() {
        let t = owner(ks[i]);
        let run = ks[i..].iter().take_while(|&&k| owner(k) == t).count();
        let (first, last) = (ks[i], ks[i + run - 1]);
        let regs: BTreeSet<u32> = rows
            .iter()
            .filter_map(|&row| quad_owner(&a, &a_owners, row, first))
            .map(|(_, v)| v / REGISTER_BYTES)
            .collect();
        let reg_names: Vec<String> = regs.iter().map(|r| format!("r{r}")).collect();
        let regs: Vec<String> = regs.iter().map(u32::to_string).collect();
        let (label, tip, fill) = match t {
            Some(t) => (
                format!("T{t} {}", reg_names.join(",")),
                format!(
                    "columns {first}-{last}: read by thread {t}'s registers {} (lane 4g + {t} of every warp)",
                    regs.join(" and ")
                ),
                render::color(u64::from(t)),
            ),
            None => (
                String::new(),
                format!("columns {first}-{last}: no lane of the quad"),
                EMPTY_FILL,
            ),
        };
        g = g.add(cell(
            x0 + i as f64 * cw,
            y,
            run as f64 * cw,
            ch,
            fill,
            &[label],
            &tip,
        ));
        i += run;
    }
    y += ch + 18.0;
    let ks_text: Vec<String> = ks.iter().map(u32::to_string).collect();
    g = header_row(g, x0, y - 4.0, cw, "k", &ks_text, MUTED);
    y += 4.0;
    g = g.add(
        text(x0 - 6.0, y + ch / 2.0 + 4.5, 12, "key")
            .set("text-anchor", "end")
            .set("fill", MUTED),
    );
    for (i, &k) in ks.iter().enumerate() {
        let key = atoms::fp8_pv_key(k);
        let tip = format!(
            "column {k} of V^T holds key {key}, from S's column block {}",
            key / 8
        );
        g = g.add(cell(
            x0 + i as f64 * cw,
            y,
            cw,
            ch,
            block_fill(key),
            &[key.to_string()],
            &tip,
        ));
    }
    // One A register's four k, outlined over the cells so no cell border hides an edge.
    let run = f64::from(REGISTER_BYTES) * cw;
    for i in (0..ks.len()).step_by(REGISTER_BYTES as usize) {
        g = g.add(outline(x0 + i as f64 * cw, y, run, ch, INK, 1.5));
    }
    y += ch + 16.0;

    // The inverse: where each key sits.
    (g, y) = paragraph(
        g,
        y,
        &["The inverse (fp8_pv_column): the column of V^T each key is written to".to_string()],
        13,
        HEADING_CHAR_W,
        true,
    );
    y += 16.0;
    g = header_row(g, x0, y - 4.0, cw, "key", &ks_text, MUTED);
    y += 4.0;
    g = g.add(
        text(x0 - 6.0, y + ch / 2.0 + 4.5, 12, "column")
            .set("text-anchor", "end")
            .set("fill", MUTED),
    );
    for (i, &key) in ks.iter().enumerate() {
        // Found by search rather than by a second formula, so the row is fp8_pv_key's
        // inverse by construction.
        let column = ks.iter().copied().find(|&k| atoms::fp8_pv_key(k) == key);
        let (label, tip) = match column {
            Some(col) => (
                col.to_string(),
                format!("key {key} sits in column {col} of V^T"),
            ),
            None => ("?".to_string(), format!("key {key} is in no column")),
        };
        g = g.add(cell(
            x0 + i as f64 * cw,
            y,
            cw,
            ch,
            block_fill(key),
            &[label],
            &tip,
        ));
    }
    y += ch + 18.0;

    let blocks: Vec<(&str, String)> = (0..KEYS / 8)
        .map(|b| {
            (
                block_fill(8 * b),
                format!("block {b}: keys {}-{}", 8 * b, 8 * b + 7),
            )
        })
        .collect();
    (g, y) = legend(g, y, &blocks);
    let caption = [
        "Fill: the 8-key column block of S a key is in; a lane's accumulator holds two neighbouring keys of every block, so each run of four columns (one 32-bit A register, outlined) takes two keys from each of two blocks.".to_string(),
        format!(
            "Every row of V^T (one head-dim column of V) is in this order; a tile of more keys repeats it per group: column {KEYS} kk + k holds key {KEYS} kk + fp8_pv_key(k). S and K keep the natural order."
        ),
    ];
    (g, y) = paragraph(g, y, &caption, 12, CHAR_W_12, false);
    document(MAX_WIDTH, (y + MARGIN).ceil(), title, g)
}

/// Rows and columns of stage 24's V tiles: 128 keys of 128 codes (d128), one 128-byte row each.
const VT_ROW_BYTES: u32 = 128;

/// Stage 24's lane-to-unit map, layout-viz's model of `fragments.cuh`'s `fp8_vt_q`: the
/// 16-key group q of unit `xyz` of `lane`.
fn vt_q(lane: u32, xyz: u32) -> u32 {
    let (a, c) = (lane & 3, lane >> 4);
    (((a >> 1) ^ (xyz & 1)) | ((c ^ ((xyz >> 1) & 1)) << 1)) + 4 * (xyz >> 2)
}

/// Stage 24's load `i` (0..4) of `lane`'s unit (`xyz` 0..8, `u` 0..4): its byte offset in
/// the landed V tile (keys of 128 codes, 128-byte swizzle). The model of `fragments.cuh`'s
/// `fp8_vt_load`, which `tests/kernel_fns.rs` holds it to.
pub fn vt_load(lane: u32, xyz: u32, u: u32, i: u32) -> u32 {
    let (a, b, c, odd) = (lane & 3, (lane >> 2) & 3, lane >> 4, i & 1);
    2048 * vt_q(lane, xyz)
        + 256 * b
        + 128 * odd
        + 1024 * (i >> 1)
        + 32 * (u ^ b)
        + 16 * (c ^ odd)
        + 4 * a
}

/// Stage 24's store `j` (0..4) of `lane`'s unit: its byte offset in V^T (head dims of 128
/// codes, keys in `fp8_pv_key` order, 128-byte swizzle). The model of `fp8_vt_store`.
pub fn vt_store(lane: u32, xyz: u32, u: u32, j: u32) -> u32 {
    let (a, b, c) = (lane & 3, (lane >> 2) & 3, lane >> 4);
    let row0 = 2048 * c + 512 * a + 4 * b + 16 * (vt_q(lane, xyz) ^ (4 * (a & 1)));
    (row0 ^ (16 * j)) + 128 * j + 4096 * u
}

/// Stage 30's row address for `ldmatrix.x4.trans`: lane `lane`'s byte offset in the landed V
/// tile for the block of head dims 32 `g` .. and keys 16 `kb` .. (row `lane % 8` of matrix
/// `lane / 8`: key `lane % 8` + 8 for matrices 1 and 3, the second 16 dims for 2 and 3). The
/// model of `fragments.cuh`'s `fp8_vt_ldsm_row`, which `tests/kernel_fns.rs` holds it to.
pub fn vt_ldsm_row(lane: u32, g: u32, kb: u32) -> u32 {
    let key = 16 * kb + (lane & 7) + 8 * ((lane >> 3) & 1);
    let chunk = 2 * g + (lane >> 4);
    key * VT_ROW_BYTES + 16 * (chunk ^ (key % 8))
}

/// The head dim that row `r` of stage 30's stored matrix `m` holds, within the block's 32:
/// 16 (m / 2) + 2 r + ((m % 2) ^ (r / 4)), so that a matrix's 8 rows have 8 different values
/// of d % 8.
pub fn vt_stsm_dim(m: u32, r: u32) -> u32 {
    16 * (m >> 1) + 2 * r + ((m & 1) ^ (r >> 2))
}

/// Stage 30's row address for `stmatrix.x4`: lane `lane`'s byte offset in V^T for block
/// (`g`, `kb`), row `lane % 8` of matrix `lane / 8`. The model of `fp8_vt_stsm_row`.
pub fn vt_stsm_row(lane: u32, g: u32, kb: u32) -> u32 {
    let d = 32 * g + vt_stsm_dim(lane >> 3, lane & 7);
    d * VT_ROW_BYTES + 16 * (kb ^ (d % 8))
}

/// The (row, byte within the row) that byte `offset` of a tile of 128-byte rows under the
/// 128-byte swizzle holds: CuTe's `Swizzle<3, 4, 3>` on byte offsets (row i's 16-byte chunk j
/// sits at chunk j ^ (i % 8)), which is its own inverse.
pub fn unswizzle_128(offset: u32) -> (u32, u32) {
    let logical = crate::swizzle::Swizzle::new(3, 4, 3).apply(i64::from(offset)) as u32;
    (logical / VT_ROW_BYTES, logical % VT_ROW_BYTES)
}

/// One tile of [`v_transpose_svg`]: a heading, a frame of `rows.0` x `cols.0` cells of
/// `cw` x `ch` pixels from `x0`, and the row and column indices every `rows.2` and `cols.2`.
struct TilePanel {
    heading: &'static str,
    x0: f64,
    cw: f64,
    ch: f64,
    rows: (u32, &'static str, u32),
    cols: (u32, &'static str, u32),
}

impl TilePanel {
    /// The heading, the labels and the frame from `y`: the group and the frame's top.
    fn draw(&self, mut g: Group, y: f64) -> (Group, f64) {
        let (mut g2, mut y) =
            paragraph(g, y, &[self.heading.to_string()], 13, HEADING_CHAR_W, true);
        y += 6.0;
        let (cols, col_name, col_step) = self.cols;
        for c in (0..cols).step_by(col_step as usize) {
            g2 = g2.add(
                text(
                    self.x0 + f64::from(c) * self.cw,
                    y + 8.0,
                    12,
                    format!("{col_name} {c}"),
                )
                .set("fill", MUTED),
            );
        }
        let top = y + 14.0;
        let (rows, row_name, row_step) = self.rows;
        g = g2.add(
            rect(
                self.x0,
                top,
                self.cw * f64::from(cols),
                self.ch * f64::from(rows),
                EMPTY_FILL,
            )
            .set("stroke", "#bbbbbb")
            .set("stroke-width", 0.6),
        );
        for r in (0..rows).step_by(row_step as usize) {
            g = g.add(
                text(
                    self.x0 - 6.0,
                    top + f64::from(r) * self.ch + 9.0,
                    12,
                    format!("{row_name} {r}"),
                )
                .set("text-anchor", "end")
                .set("fill", MUTED),
            );
        }
        (g, top)
    }

    /// A lane's block of `h` x `w` cells at (`row`, `col`), labelled with the lane.
    #[allow(clippy::too_many_arguments)]
    fn cell_at(
        &self,
        top: f64,
        row: u32,
        col: u32,
        h: u32,
        w: u32,
        fill: &str,
        lane: u32,
        tip: &str,
    ) -> Group {
        cell(
            self.x0 + f64::from(col) * self.cw,
            top + f64::from(row) * self.ch,
            f64::from(w) * self.cw,
            f64::from(h) * self.ch,
            fill,
            &[format!("T{lane}")],
            tip,
        )
    }
}

/// Stage 24's transpose, one warp instruction's units drawn: unit (x, y, z) = 0, u = 0 of
/// each of the 32 lanes, where its four loads sit in the landed V tile (two pairs of keys,
/// four head dims) and where its four stores sit in V^T (four head-dim rows, four
/// columns). Computed from [`vt_load`] and [`vt_store`] and unswizzled, so a unit drawn in
/// the wrong place would be the model's error, which the tests compare with the kernel's.
/// Book: "Stage 24: V transposed in the kernel", section "The transpose".
pub fn v_transpose_svg() -> String {
    use crate::bank::bank_of;
    const KEYS_DRAWN: u32 = 64;
    const DIMS_DRAWN: u32 = 32;
    let title = "Stage 24's transpose: one warp instruction's 32 units";
    let (mut g, mut y) = title_paragraph(title);
    (g, y) = paragraph(
        g,
        y,
        &["Unit (x, y, z) = 0, u = 0 of each lane: 4 words of 4 codes loaded from 4 keys of V, their bytes permuted, 4 words stored to 4 rows of V^T. A lane's cells carry its number; colours repeat every 16 lanes. Hover a cell for its offsets and banks.".to_string()],
        12,
        CHAR_W_12,
        false,
    );
    let lane_fill = |lane: u32| render::color(u64::from(lane % 16));
    let x0 = MARGIN + 60.0;

    // The landed V tile: keys (rows) by head dims (columns); each lane's two pairs of keys.
    y += 16.0;
    let v = TilePanel {
        heading: "The landed V tile: keys 0-63 (rows), head dims 0-31 (columns)",
        x0,
        cw: ((MAX_WIDTH - MARGIN - x0) / f64::from(DIMS_DRAWN)).floor(),
        ch: 9.0,
        rows: (KEYS_DRAWN, "key", 8),
        cols: (DIMS_DRAWN, "d", 8),
    };
    let top;
    (g, top) = v.draw(g, y);
    for lane in 0..32 {
        for pair in 0..2 {
            let loads = [
                vt_load(lane, 0, 0, 2 * pair),
                vt_load(lane, 0, 0, 2 * pair + 1),
            ];
            let (key, byte) = unswizzle_128(loads[0]);
            let tip = format!(
                "lane {lane}: keys {key} and {} at head dims {byte}-{}; loads {} and {} at bytes {} and {} (banks {} and {})",
                key + 1,
                byte + 3,
                2 * pair,
                2 * pair + 1,
                loads[0],
                loads[1],
                bank_of(u64::from(loads[0])),
                bank_of(u64::from(loads[1]))
            );
            g = g.add(v.cell_at(top, key, byte, 2, 4, lane_fill(lane), lane, &tip));
        }
    }
    y = top + v.ch * f64::from(KEYS_DRAWN) + 24.0;

    // V^T: head dims (rows) by columns (keys in fp8_pv_key order); each lane's 4 x 4 block.
    let vt = TilePanel {
        heading: "V^T: head dims 0-31 (rows), columns 0-63 (keys in fp8_pv_key order)",
        x0,
        cw: ((MAX_WIDTH - MARGIN - x0) / f64::from(KEYS_DRAWN)).floor(),
        ch: 18.0,
        rows: (DIMS_DRAWN, "d", 4),
        cols: (KEYS_DRAWN, "col", 16),
    };
    let top;
    (g, top) = vt.draw(g, y);
    for lane in 0..32 {
        let stores: Vec<u32> = (0..4).map(|j| vt_store(lane, 0, 0, j)).collect();
        let (d, col) = unswizzle_128(stores[0]);
        let banks: Vec<String> = stores
            .iter()
            .map(|&s| bank_of(u64::from(s)).to_string())
            .collect();
        let tip = format!(
            "lane {lane}: head dims {d}-{} at columns {col}-{} (keys {}); stores at banks {}",
            d + 3,
            col + 3,
            (col..col + 4)
                .map(|k| (32 * (k / 32) + atoms::fp8_pv_key(k % 32)).to_string())
                .collect::<Vec<_>>()
                .join(", "),
            banks.join(", ")
        );
        g = g.add(vt.cell_at(top, d, col, 4, 4, lane_fill(lane), lane, &tip));
    }
    y = top + vt.ch * f64::from(DIMS_DRAWN) + 18.0;
    let caption = [
        "Lane (a, b, c) = (lane % 4, lane / 4 % 4, lane / 16) loads keys 16q + 2b + {0, 1, 8, 9} at head dims 4g .. 4g + 3 (g = 4c + a here) and stores them to V^T's rows 4g .. 4g + 3 at columns 4(4q + b) .. + 3. In each of the 8 accesses of this instruction the 32 lanes touch 32 different banks; the other 31 instructions of a tile do the same for the rest of it.".to_string(),
    ];
    (g, y) = paragraph(g, y, &caption, 12, CHAR_W_12, false);
    document(MAX_WIDTH, (y + MARGIN).ceil(), title, g)
}

/// Stage 30's transpose, one block drawn (head dims 0-31, keys 0-15): where each lane's four
/// `ldmatrix.trans` registers come from in the landed V tile (2 keys by 2 head dims each) and
/// where its four `stmatrix` registers go in V^T (1 head dim by 4 columns each), coloured by
/// matrix. Computed from [`vt_ldsm_row`], [`vt_stsm_row`] and ldmatrix's fragment model
/// (lane L's register of a matrix is its rows 2 (L % 4), + 1 at column L / 4 when read
/// transposed, its row L / 4 at columns 2 (L % 4), + 1 when stored), unswizzled.
/// Book: "Stage 30: the transpose on ldmatrix and stmatrix".
pub fn v_matrix_transpose_svg() -> String {
    const KEYS: u32 = 16;
    const DIMS: u32 = 32;
    let title = "Stage 30's transpose: one block, one ldmatrix.x4.trans and one stmatrix.x4";
    let (mut g, mut y) = title_paragraph(title);
    (g, y) = paragraph(
        g,
        y,
        &["Each lane's four registers, coloured by the matrix they belong to: read transposed from V (2 keys by 2 head dims each), two byte permutes a pair, stored to V^T (1 head dim by 4 columns each). Hover a cell for the lane's row address and banks.".to_string()],
        12,
        CHAR_W_12,
        false,
    );
    let matrix_fill = |m: u32| render::color(u64::from(m));
    let x0 = MARGIN + 60.0;

    y += 16.0;
    let v = TilePanel {
        heading: "The landed V tile: keys 0-15 (rows), head dims 0-31 (columns)",
        x0,
        cw: ((MAX_WIDTH - MARGIN - x0) / f64::from(DIMS)).floor(),
        ch: 22.0,
        rows: (KEYS, "key", 4),
        cols: (DIMS, "d", 8),
    };
    let top;
    (g, top) = v.draw(g, y);
    for m in 0..4 {
        for lane in 0..32 {
            // Row 2 (lane % 4) of matrix m, read transposed: its address comes from lane 8m + that row.
            let row_lane = 8 * m + 2 * (lane & 3);
            let at = vt_ldsm_row(row_lane, 0, 0);
            let (key, byte) = unswizzle_128(at + 2 * (lane >> 2));
            let tip = format!(
                "lane {lane}, register {m}: keys {key}, {} at head dims {byte}, {}; matrix {m}'s rows {} and {} at bytes {at} and {} (lanes {row_lane} and {})",
                key + 1,
                byte + 1,
                2 * (lane & 3),
                2 * (lane & 3) + 1,
                vt_ldsm_row(row_lane + 1, 0, 0),
                row_lane + 1
            );
            g = g.add(v.cell_at(top, key, byte, 2, 2, matrix_fill(m), lane, &tip));
        }
    }
    y = top + v.ch * f64::from(KEYS) + 24.0;

    let vt = TilePanel {
        heading: "V^T: head dims 0-31 (rows), columns 0-15 (keys in fp8_pv_key order)",
        x0,
        cw: ((MAX_WIDTH - MARGIN - x0) / f64::from(KEYS)).floor(),
        ch: 14.0,
        rows: (DIMS, "d", 4),
        cols: (KEYS, "col", 4),
    };
    let top;
    (g, top) = vt.draw(g, y);
    for m in 0..4 {
        for lane in 0..32 {
            // Row lane / 4 of matrix m, stored: its address comes from lane 8m + lane / 4.
            let row_lane = 8 * m + (lane >> 2);
            let at = vt_stsm_row(row_lane, 0, 0) + 4 * (lane & 3);
            let (d, col) = unswizzle_128(at);
            let tip = format!(
                "lane {lane}, register {m}: head dim {d}, columns {col}-{} (keys {}); matrix {m}'s row {} at byte {at}, bank {}",
                col + 3,
                (col..col + 4)
                    .map(|k| atoms::fp8_pv_key(k % 32).to_string())
                    .collect::<Vec<_>>()
                    .join(", "),
                lane >> 2,
                crate::bank::bank_of(u64::from(at)),
            );
            g = g.add(vt.cell_at(top, d, col, 1, 4, matrix_fill(m), lane, &tip));
        }
    }
    y = top + vt.ch * f64::from(DIMS) + 18.0;
    let caption = [
        "Matrix 2h + e of the store holds head dims 16h + 2r + (e ^ (r / 4)) in its rows r = 0..7, even ones first then odd ones for e = 0, so that its 8 rows sit in 8 different rows of the swizzle's period: each matrix of both instructions is one conflict-free wavefront. The tile's other 31 blocks step from this one by immediates and one XOR.".to_string(),
    ];
    (g, y) = paragraph(g, y, &caption, 12, CHAR_W_12, false);
    document(MAX_WIDTH, (y + MARGIN).ceil(), title, g)
}

#[cfg(test)]
mod vt_tests {
    use super::*;

    /// The figure draws each lane twice in V (two pairs of keys) and once in V^T.
    #[test]
    fn the_transpose_figure_draws_every_lane() {
        let svg = v_transpose_svg();
        assert_eq!(svg.matches("class=\"cell\"").count(), 96);
        for lane in 0..32 {
            assert_eq!(
                svg.matches(&format!(">\nT{lane}\n<")).count(),
                3,
                "lane {lane}"
            );
        }
    }

    /// Stage 30's figure draws each lane four times in V and four times in V^T, and covers
    /// the block's 512 codes once in each.
    #[test]
    fn the_matrix_transpose_figure_draws_every_lane() {
        let svg = v_matrix_transpose_svg();
        assert_eq!(svg.matches("class=\"cell\"").count(), 256);
        for lane in 0..32 {
            assert_eq!(
                svg.matches(&format!(">\nT{lane}\n<")).count(),
                8,
                "lane {lane}"
            );
        }
    }

    /// The unswizzle inverts the swizzle the tiles are stored in.
    #[test]
    fn unswizzle_inverts_the_128_byte_swizzle() {
        for row in 0..128 {
            for byte in 0..128 {
                let at = row * 128 + (((byte / 16) ^ (row % 8)) * 16) + byte % 16;
                assert_eq!(unswizzle_128(at), (row, byte));
            }
        }
    }
}
