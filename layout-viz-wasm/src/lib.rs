//! The book's playground calls layout-viz through these bindings, compiled to
//! `wasm32-unknown-unknown` and loaded by `book/src/playground/playground.js`.
//!
//! Each binding is one CLI command: it runs the library function that command runs and
//! answers with a JSON object, `{"svg", "text", "cli"}` or `{"error", "cli"}`, where
//! `error` is the message the CLI prints after `layout-viz: ` and `cli` the command's
//! arguments (shown on the page, so a reader can rerun it with `just layout`). Answers
//! are JSON strings rather than JavaScript exceptions so the same functions run, and are
//! tested, natively.

use serde_json::{Value, json};
use wasm_bindgen::prelude::wasm_bindgen;

use layout_viz::atoms::{self, TmaBox, TmaSwizzle};
use layout_viz::bank;
use layout_viz::ops::{self, OpName};
use layout_viz::{book, render};

type Answer = Result<(String, String), String>;

/// The most cells the playground draws of one grid of a layout (a swizzle draws two):
/// the top-left window of a larger layout, which the figure's caption and the command
/// under it (`--window`) name. Drawing costs about 0.1 ms a cell in the browser, SVG
/// and layout together, and the book's playground check holds a redraw under 200 ms up
/// to the CLI's 65,536 cells.
pub const MAX_DRAWN: u64 = 1024;

fn respond(cli: Vec<String>, answer: Answer) -> String {
    match answer {
        Ok((svg, text)) => json!({ "svg": svg, "text": text, "cli": cli }),
        Err(error) => json!({ "error": error, "cli": cli }),
    }
    .to_string()
}

/// `cli` with `--window ROWS,COLS` when the figure drew only part of its grid.
fn with_window(mut cli: Vec<String>, window: Option<(u32, u32)>) -> Vec<String> {
    if let Some((r, c)) = window {
        cli.push("--window".to_string());
        cli.push(format!("{r},{c}"));
    }
    cli
}

fn args(words: &[&str]) -> Vec<String> {
    words.iter().map(|w| w.to_string()).collect()
}

/// The swizzle as typed (`B,M,S`, `Sw<B,M,S>` or CuTe's `Swizzle<B,M,S>`; empty: none),
/// read by the same function as the CLI's `--swizzle`.
fn parse_swizzle(text: &str) -> Result<Option<(u32, u32, i32)>, String> {
    layout_viz::notation::parse_swizzle_spec(text)
        .map(|sw| sw.map(|sw| (sw.bits, sw.base, sw.shift)))
        .map_err(|e| e.to_string())
}

/// The answer to a swizzle that is not one, whatever the view: its message (the text as
/// typed, and which of B, M, S is out of range), `"field": "swizzle"` so the page blames
/// the swizzle's field, and the CLI command that prints the same message.
fn bad_swizzle(error: String, layout: &str, swizzle: &str) -> String {
    json!({
        "error": error,
        "field": "swizzle",
        "cli": args(&[
            "draw",
            "swizzle",
            "--swizzle",
            swizzle.trim(),
            "--layout",
            layout,
        ]),
    })
    .to_string()
}

/// The layout with the playground's swizzle around it, `Sw<B,M,S> o _0 o LAYOUT`, as the
/// CLI's operations and bank maps take it.
fn swizzled(layout: &str, swizzle: Option<(u32, u32, i32)>) -> String {
    match swizzle {
        None => layout.to_string(),
        Some((b, m, s)) => format!("Sw<{b},{m},{s}> o _0 o {layout}"),
    }
}

/// The layouts, operations, atoms and accesses the playground offers, for its menus.
#[wasm_bindgen]
pub fn catalog() -> String {
    let ops: Vec<Value> = OpName::all()
        .iter()
        .map(|op| json!({ "name": op.name(), "usage": op.usage() }))
        .collect();
    let mut views: Vec<Value> = Vec::new();
    let mut view = |id: String, label: String| views.push(json!({ "id": id, "label": label }));
    for name in [
        "mma-m16n8k16-a",
        "mma-m16n8k16-b",
        "mma-m16n8k16-c",
        "mma-m16n8k8-a",
        "mma-m16n8k8-b",
        "mma-m16n8k8-c",
        "mma-m16n8k16-b-4warps",
        "wgmma-m64n64k16-c",
        "wgmma-m64n64k16-a",
        "wgmma-m64k32-a-fp8",
        "cp-async-32x64",
    ] {
        view(format!("tv/{name}"), format!("TV atom {name}"));
    }
    for name in ["mma-m16n8k16", "mma-m16n8k8"] {
        view(format!("mma/{name}"), format!("MMA atom {name} (A, B, C)"));
    }
    for name in ["x1", "x2", "x4", "x4-trans"] {
        view(
            format!("ldmatrix/{name}"),
            format!("ldmatrix.{}", name.replace('-', ".")),
        );
    }
    for name in ["8x64", "8x64-sw128", "8x32-sw64", "8x16-sw32"] {
        view(format!("tma/{name}"), format!("TMA box {name}"));
    }
    for (name, _) in bank::PATTERNS {
        view(format!("bank/{name}"), format!("bank map {name}"));
    }
    json!({
        "ops": ops,
        "views": views,
        "accesses": ["ld32", "ld64", "ld128", "st32", "st64", "st128", "ldmatrix-x1", "ldmatrix-x2", "ldmatrix-x4", "ldmatrix-x4-trans"],
    })
    .to_string()
}

/// `draw layout LAYOUT`, or with a swizzle `B,M,S`, `draw swizzle --bits B --base M
/// --shift S --layout LAYOUT`: the layout before and after it; with `chunks`, by 16-byte
/// chunks of `elem_bytes`-byte elements (`--chunks`). A layout larger than
/// [`MAX_DRAWN`] cells is drawn by its top-left window (`--window`).
#[wasm_bindgen]
pub fn draw_layout(layout: &str, swizzle: &str, elem_bytes: u32, chunks: bool) -> String {
    let sw = match parse_swizzle(swizzle) {
        Ok(sw) => sw,
        Err(e) => return bad_swizzle(e, layout, swizzle),
    };
    match sw {
        None => {
            let mut cli = args(&["draw", "layout", layout]);
            if chunks {
                cli.extend(args(&["--chunks", "--elem-bytes", &elem_bytes.to_string()]));
            }
            let drawn = book::layout_figure(
                layout,
                false,
                chunks.then_some(elem_bytes),
                book::Window::AtMost(MAX_DRAWN),
            );
            match drawn {
                Ok((svg, window)) => respond(with_window(cli, window), Ok((svg, String::new()))),
                Err(e) => respond(cli, Err(e.to_string())),
            }
        }
        Some((b, m, s)) => {
            let mut cli = args(&[
                "draw",
                "swizzle",
                "--bits",
                &b.to_string(),
                "--base",
                &m.to_string(),
                "--shift",
                &s.to_string(),
                "--layout",
                layout,
                "--elem-bytes",
                &elem_bytes.to_string(),
            ]);
            if chunks {
                cli.push("--chunks".to_string());
            }
            let drawn = book::swizzle_figure(
                layout,
                Some((b, m, s)),
                elem_bytes,
                chunks,
                book::Window::AtMost(MAX_DRAWN / 2),
            );
            match drawn {
                Ok((svg, window)) => respond(with_window(cli, window), Ok((svg, String::new()))),
                Err(e) => respond(cli, Err(e.to_string())),
            }
        }
    }
}

/// `op NAME LAYOUT [ARG]` (the layout swizzled first when `swizzle` is `B,M,S`): the
/// result in CuTe notation as `text`, drawn as `draw layout RESULT` draws it.
#[wasm_bindgen]
pub fn apply_op(name: &str, layout: &str, arg: &str, swizzle: &str) -> String {
    let operand = match parse_swizzle(swizzle).map(|sw| swizzled(layout, sw)) {
        Ok(operand) => operand,
        Err(e) => return bad_swizzle(e, layout, swizzle),
    };
    let mut operands = vec![operand];
    if !arg.trim().is_empty() {
        operands.push(arg.to_string());
    }
    let mut cli = args(&["op", name]);
    cli.extend(operands.iter().cloned());
    let answer = OpName::from_name(name)
        .and_then(|op| ops::apply(op, &operands))
        .map_err(|e| e.to_string())
        .and_then(|result| {
            let text = result.to_string();
            let (svg, window) =
                book::layout_figure(&text, false, None, book::Window::AtMost(MAX_DRAWN))
                    .map_err(|e| e.to_string())?;
            Ok((svg, text, window))
        });
    match answer {
        // The result's figure is `draw layout RESULT`, windowed as that command would be.
        Ok((svg, text, window)) => {
            json!({ "svg": svg, "text": text, "cli": cli, "window": window.map(|(r, c)| [r, c]) })
                .to_string()
        }
        Err(error) => respond(cli, Err(error)),
    }
}

/// `eval LAYOUT COORD` (swizzled first when `swizzle` is `B,M,S`): the offset as `text`.
/// (Not named `eval`, which JavaScript reserves.)
#[wasm_bindgen]
pub fn evaluate(layout: &str, coord: &str, swizzle: &str) -> String {
    let operand = match parse_swizzle(swizzle).map(|sw| swizzled(layout, sw)) {
        Ok(operand) => operand,
        Err(e) => return bad_swizzle(e, layout, swizzle),
    };
    respond(
        args(&["eval", &operand, coord]),
        ops::eval(&operand, coord)
            .map(|offset| (String::new(), offset.to_string()))
            .map_err(|e| e.to_string()),
    )
}

/// A TMA box named `RxC` or `RxC-swN` (N = 32, 64, 128): `draw tma --box R,C --swizzle N`.
fn tma_box(name: &str) -> Result<(TmaBox, Vec<String>), String> {
    let bad = || format!("unknown TMA box `{name}`; expected ROWSxCOLS[-sw32|-sw64|-sw128]");
    let (dims, swizzle) = match name.split_once("-sw") {
        Some((dims, sw)) => (dims, sw),
        None => (name, "none"),
    };
    let (rows, cols) = dims.split_once('x').ok_or_else(bad)?;
    let rows: u32 = rows.parse().map_err(|_| bad())?;
    let cols: u32 = cols.parse().map_err(|_| bad())?;
    let mode = match swizzle {
        "none" => TmaSwizzle::None,
        "32" => TmaSwizzle::B32,
        "64" => TmaSwizzle::B64,
        "128" => TmaSwizzle::B128,
        _ => return Err(bad()),
    };
    let cli = args(&[
        "draw",
        "tma",
        "--box",
        &format!("{rows},{cols}"),
        "--swizzle",
        swizzle,
    ]);
    let b = TmaBox::new((16, 128), (rows, cols), (0, 0), 2, mode).map_err(|e| e.to_string())?;
    Ok((b, cli))
}

/// An atom or a named bank pattern, by the playground's view id: `tv/NAME` (`draw tv`),
/// `mma/NAME` (`draw mma`), `ldmatrix/xN[-trans]` (`draw ldmatrix`), `tma/BOX`
/// (`draw tma`) or `bank/NAME` (`draw bank`).
#[wasm_bindgen]
pub fn draw_atom(view: &str) -> String {
    let (kind, name) = view.split_once('/').unwrap_or((view, ""));
    let svg = |r: Result<String, String>| r.map(|svg| (svg, String::new()));
    match kind {
        "tv" => respond(
            args(&["draw", "tv", name]),
            svg(atoms::tv_by_name(name)
                .map(|a| render::tv(&a))
                .map_err(|e| e.to_string())),
        ),
        "mma" => respond(
            args(&["draw", "mma", name]),
            svg(atoms::mma_by_name(name)
                .map(|a| render::mma(&a))
                .map_err(|e| e.to_string())),
        ),
        "ldmatrix" => {
            let (num, trans) = match name.strip_suffix("-trans") {
                Some(n) => (n, true),
                None => (name, false),
            };
            let num = num.trim_start_matches('x');
            let mut cli = args(&["draw", "ldmatrix", "--num", num]);
            if trans {
                cli.push("--trans".to_string());
            }
            let answer = num
                .parse::<u32>()
                .map_err(|_| format!("unknown ldmatrix `{name}`; expected x1, x2 or x4[-trans]"))
                .and_then(|n| atoms::ldmatrix(n, trans).map_err(|e| e.to_string()))
                .map(|l| render::ldmatrix(&l));
            respond(cli, svg(answer))
        }
        "tma" => match tma_box(name) {
            Ok((b, cli)) => respond(cli, Ok((render::tma(&b), String::new()))),
            Err(e) => respond(Vec::new(), Err(e)),
        },
        "bank" => respond(
            args(&["draw", "bank", name]),
            book::bank_svg(name)
                .map(|(svg, report)| (svg, wavefront_text(&report)))
                .map_err(|e| e.to_string()),
        ),
        _ => respond(Vec::new(), Err(format!("unknown view `{view}`"))),
    }
}

fn wavefront_text(report: &bank::BankReport) -> String {
    format!(
        "{}: {} wavefronts, ideal {}{}",
        report.op,
        report.wavefronts,
        report.ideal,
        if report.conflict_free() {
            " (conflict-free)".to_string()
        } else {
            format!(" ({}-way worst phase)", report.max_way)
        }
    )
}

/// `draw bank --layout LAYOUT --lanes LANES --access ACCESS --elem-bytes E`, the layout
/// swizzled first when `swizzle` is `B,M,S`: the bank map of that warp access, its
/// wavefronts as `text`.
#[wasm_bindgen]
pub fn draw_bank(
    layout: &str,
    swizzle: &str,
    lanes: &str,
    access: &str,
    elem_bytes: u32,
) -> String {
    let operand = match parse_swizzle(swizzle).map(|sw| swizzled(layout, sw)) {
        Ok(operand) => operand,
        Err(e) => return bad_swizzle(e, layout, swizzle),
    };
    respond(
        args(&[
            "draw",
            "bank",
            "--layout",
            &operand,
            "--lanes",
            lanes,
            "--access",
            access,
            "--elem-bytes",
            &elem_bytes.to_string(),
        ]),
        book::bank_layout_svg(&operand, lanes, access, elem_bytes)
            .map(|(svg, report)| (svg, wavefront_text(&report)))
            .map_err(|e| e.to_string()),
    )
}
