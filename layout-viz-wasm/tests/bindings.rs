//! The bindings answer what the library (and so the CLI) answers, natively: the browser
//! check (`book/tools/playground-check.mjs`) then compares the page with the CLI itself.
use serde_json::Value;

use layout_viz::book;
use layout_viz_wasm::{apply_op, catalog, draw_atom, draw_bank, draw_layout, evaluate};

fn answer(json: String) -> Value {
    serde_json::from_str(&json).expect("every binding answers JSON")
}

fn words(v: &Value) -> Vec<&str> {
    v["cli"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w.as_str().unwrap())
        .collect()
}

#[test]
fn a_layout_is_the_cli_figure() {
    let a = answer(draw_layout("((2,2),8,16):((1,2),4,32)", "", 2, false));
    assert_eq!(
        a["svg"].as_str().unwrap(),
        book::layout_svg("((2,2),8,16):((1,2),4,32)", false).unwrap()
    );
    assert_eq!(words(&a), ["draw", "layout", "((2,2),8,16):((1,2),4,32)"]);
}

#[test]
fn cute_spelling_of_a_swizzle_is_the_same_figure() {
    let plain = answer(draw_layout("(8,64):(64,1)", "3,3,3", 2, false));
    for typed in ["Swizzle<3,3,3>", "Swizzle<3, 3, 3>", "Sw<3,3,3>"] {
        assert_eq!(
            answer(draw_layout("(8,64):(64,1)", typed, 2, false)),
            plain,
            "{typed}"
        );
        assert_eq!(
            answer(draw_bank(
                "(8,64):(64,1)",
                typed,
                "(8,4):(1,64)",
                "ldmatrix-x4",
                2
            )),
            answer(draw_bank(
                "(8,64):(64,1)",
                "3,3,3",
                "(8,4):(1,64)",
                "ldmatrix-x4",
                2
            )),
        );
    }
}

#[test]
fn a_swizzle_is_the_cli_swizzle_figure() {
    let a = answer(draw_layout("(8,64):(64,1)", " 3, 3,3 ", 2, false));
    assert_eq!(
        a["svg"].as_str().unwrap(),
        book::swizzle_svg("(8,64):(64,1)", Some((3, 3, 3)), 2).unwrap()
    );
    assert_eq!(
        words(&a),
        [
            "draw",
            "swizzle",
            "--bits",
            "3",
            "--base",
            "3",
            "--shift",
            "3",
            "--layout",
            "(8,64):(64,1)",
            "--elem-bytes",
            "2"
        ]
    );
}

#[test]
fn bad_input_gets_the_cli_message() {
    let a = answer(draw_layout("((2,2),8:(1,2)", "", 2, false));
    assert_eq!(
        a["error"].as_str().unwrap(),
        "layout `((2,2),8:(1,2)`: expected ',' or ')' in the tuple opened at column 1, found ':' at column 9\n  ((2,2),8:(1,2)\n          ^"
    );
    assert!(a.get("svg").is_none());
    // A bad swizzle is blamed on the swizzle, in the text as typed, with the command that
    // prints the same message; every view that reads the swizzle says the same.
    let a = answer(draw_layout("(8,64):(64,1)", "3,3,2", 2, false));
    assert_eq!(
        a["error"].as_str().unwrap(),
        "swizzle `3,3,2`: B = 3 is out of range for S = 2: |S| must be at least B (CuTe's rule), or the B bits read and the B bits they flip would overlap"
    );
    assert_eq!(a["field"], "swizzle");
    assert_eq!(
        words(&a),
        [
            "draw",
            "swizzle",
            "--swizzle",
            "3,3,2",
            "--layout",
            "(8,64):(64,1)"
        ]
    );
    for other in [
        answer(apply_op("coalesce", "(8,64):(64,1)", "", "3,3,2")),
        answer(evaluate("(8,64):(64,1)", "(1,1)", "3,3,2")),
        answer(draw_bank("(8,64):(64,1)", "3,3,2", "32:1", "ld32", 2)),
    ] {
        assert_eq!(other, a);
    }
    let a = answer(draw_layout("(8,64):(64,1)", "Swizzle<9, 3, 3>", 2, false));
    assert!(
        a["error"]
            .as_str()
            .unwrap()
            .starts_with("swizzle `Swizzle<9, 3, 3>`: B = 9 is out of range for S = 3"),
        "{a}"
    );
    let a = answer(draw_layout("(8,64):(64,1)", "3,3", 2, false));
    assert_eq!(
        a["error"].as_str().unwrap(),
        "swizzle `3,3`: expected B,M,S or CuTe's Swizzle<B,M,S>, three integers, e.g. 3,3,3 or Swizzle<3,3,3>"
    );
    let a = answer(apply_op("composition", "(8,64):(64,1)", "", ""));
    assert_eq!(
        a["error"].as_str().unwrap(),
        "usage: layout-viz op composition LAYOUT TILER (got 1 operands)"
    );
    let a = answer(apply_op("nope", "4:1", "", ""));
    assert!(
        a["error"]
            .as_str()
            .unwrap()
            .starts_with("unknown operation `nope`; known: coalesce, filter, composition")
    );
}

#[test]
fn operations_print_cute_notation() {
    let a = answer(apply_op("composition", "(6,2):(8,2)", "(4,3):(3,1)", ""));
    assert_eq!(a["text"], "((2,2),3):((24,2),8)");
    assert_eq!(
        a["svg"].as_str().unwrap(),
        book::layout_svg("((2,2),3):((24,2),8)", false).unwrap()
    );
    assert_eq!(
        answer(apply_op("complement", "4:1", "24", ""))["text"],
        "6:4"
    );
    assert_eq!(
        answer(apply_op("left-inverse", "(2,8):(8,1)", "", ""))["text"],
        "(8,2):(2,1)"
    );
    // A swizzle rides along through the operations that keep it.
    let a = answer(apply_op(
        "logical-divide",
        "(8,64):(64,1)",
        "[_,8]",
        "3,3,3",
    ));
    assert_eq!(a["text"], "Sw<3,3,3> o _0 o (8,(8,8)):(64,(1,8))");
    assert_eq!(
        words(&a),
        [
            "op",
            "logical-divide",
            "Sw<3,3,3> o _0 o (8,64):(64,1)",
            "[_,8]"
        ]
    );
}

#[test]
fn eval_is_the_cli_eval() {
    assert_eq!(
        answer(evaluate("((2,2),8,16):((1,2),4,32)", "((0,1),4,3)", ""))["text"],
        "114"
    );
    assert_eq!(
        answer(evaluate("(8,64):(64,1)", "(1,0)", "3,3,3"))["text"],
        "72"
    );
}

#[test]
fn stage_3_and_4_bank_maps() {
    let unswizzled = answer(draw_bank(
        "(8,64):(64,1)",
        "",
        "(8,4):(1,64)",
        "ldmatrix-x4",
        2,
    ));
    assert_eq!(
        unswizzled["text"],
        "ldmatrix.x4: 32 wavefronts, ideal 4 (8-way worst phase)"
    );
    let swizzled = answer(draw_bank(
        "(8,64):(64,1)",
        "3,3,3",
        "(8,4):(1,64)",
        "ldmatrix-x4",
        2,
    ));
    assert_eq!(
        swizzled["text"],
        "ldmatrix.x4: 4 wavefronts, ideal 4 (conflict-free)"
    );
    let (svg, _) = book::bank_layout_svg(
        "Sw<3,3,3> o _0 o (8,64):(64,1)",
        "(8,4):(1,64)",
        "ldmatrix-x4",
        2,
    )
    .unwrap();
    assert_eq!(swizzled["svg"].as_str().unwrap(), svg);
    let bad = answer(draw_bank(
        "(8,64):(64,1)",
        "",
        "(8,4):(1,64)",
        "ldmatrix-x3",
        2,
    ));
    assert_eq!(
        bad["error"].as_str().unwrap(),
        "unknown access `ldmatrix-x3`; known: ld32, ld64, ld128, st32, st64, st128, ldmatrix-x1|x2|x4[-trans]"
    );
}

#[test]
fn every_view_in_the_menu_draws() {
    let catalog = answer(catalog());
    let views = catalog["views"].as_array().unwrap();
    assert!(views.len() > 25, "{} views", views.len());
    for view in views {
        let id = view["id"].as_str().unwrap();
        let a = answer(draw_atom(id));
        assert!(a.get("error").is_none(), "{id}: {}", a["error"]);
        assert!(a["svg"].as_str().unwrap().starts_with("<svg"), "{id}");
    }
    for op in catalog["ops"].as_array().unwrap() {
        let name = op["name"].as_str().unwrap();
        assert!(a_usage_names(op["usage"].as_str().unwrap()), "{name}");
    }
    for access in catalog["accesses"].as_array().unwrap() {
        let a = answer(draw_bank(
            "(8,64):(64,1)",
            "",
            "(8,4):(1,64)",
            access.as_str().unwrap(),
            2,
        ));
        assert!(a.get("error").is_none(), "{access}: {}", a["error"]);
    }
}

fn a_usage_names(usage: &str) -> bool {
    ["LAYOUT", "BLOCK"]
        .iter()
        .any(|first| usage.starts_with(first))
}

#[test]
fn a_chunk_view_is_the_cli_chunk_figure() {
    let a = answer(draw_layout("(8,64):(64,1)", "", 2, true));
    assert_eq!(
        a["svg"].as_str().unwrap(),
        book::layout_chunks_svg("(8,64):(64,1)", 2).unwrap()
    );
    assert_eq!(
        words(&a),
        [
            "draw",
            "layout",
            "(8,64):(64,1)",
            "--chunks",
            "--elem-bytes",
            "2"
        ]
    );
    let s = answer(draw_layout("(8,64):(64,1)", "Swizzle<3,3,3>", 2, true));
    assert_eq!(
        s["svg"].as_str().unwrap(),
        book::swizzle_chunks_svg("(8,64):(64,1)", Some((3, 3, 3)), 2).unwrap()
    );
    assert_eq!(words(&s).last(), Some(&"--chunks"));
    // Column-major rows are no chunks: the CLI's message.
    assert!(
        answer(draw_layout("(8,64):(1,8)", "", 2, true))["error"]
            .as_str()
            .unwrap()
            .contains("not whole 16-byte chunks")
    );
}

#[test]
fn a_layout_past_the_cap_is_drawn_by_its_top_left_window() {
    use layout_viz_wasm::MAX_DRAWN;
    let cells = |a: &Value| {
        a["svg"]
            .as_str()
            .unwrap()
            .matches(r#"class="cell""#)
            .count() as u64
    };
    // 256 x 256: the top-left 32 x 32, and the command under it says so.
    let a = answer(draw_layout("(256,256):(256,1)", "", 2, false));
    assert_eq!(
        words(&a),
        ["draw", "layout", "(256,256):(256,1)", "--window", "32,32"]
    );
    assert_eq!(cells(&a), MAX_DRAWN);
    // A swizzle draws two grids, each half the cap; a chunk view windows its chunks.
    let s = answer(draw_layout("(256,256):(256,1)", "3,3,3", 2, false));
    assert!(cells(&s) <= MAX_DRAWN && words(&s).contains(&"--window"));
    let c = answer(draw_layout("(256,256):(256,1)", "", 2, true));
    assert_eq!(
        &words(&c)[3..],
        ["--chunks", "--elem-bytes", "2", "--window", "32,32"]
    );
    // One long row: whole rows do not fit, so the first MAX_DRAWN columns.
    let r = answer(draw_layout("65536:1", "", 4, false));
    assert_eq!(&words(&r)[3..], ["--window", "1,1024"]);
    // At the cap and under it, everything.
    assert!(!words(&answer(draw_layout("(32,32):(32,1)", "", 2, false))).contains(&"--window"));
    // An operation's result, drawn past the cap, says its window.
    let op = answer(apply_op("coalesce", "(256,256):(1,256)", "", ""));
    assert_eq!(op["window"], serde_json::json!([1, 1024]));
}
