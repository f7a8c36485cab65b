//! The `eval` and `op` subcommands end to end: outputs, `--json`, and clear errors with
//! exit code 2 on bad input.

use std::process::Command;

fn run(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_layout-viz"))
        .args(args)
        .output()
        .expect("runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

fn ok(args: &[&str]) -> String {
    let (code, out, err) = run(args);
    assert_eq!(code, 0, "{args:?}: {err}");
    out.trim_end().to_string()
}

#[test]
fn eval_accepts_every_coordinate_form() {
    let a = "((2,2),8,16):((1,2),4,32)";
    assert_eq!(ok(&["eval", a, "((0,1),4,3)"]), "114");
    assert_eq!(ok(&["eval", a, "(2,4,3)"]), "114");
    assert_eq!(ok(&["eval", a, "114"]), "114");
    assert_eq!(ok(&["eval", "(2,8):(8,1)", "3"]), "9");
    assert_eq!(
        ok(&["eval", "Sw<3,3,3> o _0 o (8,64):(64,1)", "(2,0)"]),
        "144"
    );
    assert_eq!(ok(&["eval", "Sw<2,3,3> o (8,32):(32,1)", "(2,0)"]), "72");
    let json: serde_json::Value =
        serde_json::from_str(&ok(&["eval", "--json", a, "((0,1),4,3)"])).unwrap();
    assert_eq!(json, serde_json::json!({ "offset": 114 }));
}

#[test]
fn op_prints_cute_notation() {
    assert_eq!(
        ok(&["op", "composition", "(6,2):(8,2)", "(4,3):(3,1)"]),
        "((2,2),3):((24,2),8)"
    );
    assert_eq!(ok(&["op", "complement", "4:1", "24"]), "6:4");
    assert_eq!(ok(&["op", "complement", "(4,6):(1,4)"]), "1:0");
    assert_eq!(ok(&["op", "coalesce", "(2,(1,6)):(1,(6,2))"]), "12:1");
    assert_eq!(
        ok(&["op", "coalesce", "(2,(1,6)):(1,(6,2))", "(1,1)"]),
        "(2,6):(1,2)"
    );
    assert_eq!(ok(&["op", "filter", "(4,(2,3)):(0,(1,2))"]), "6:1");
    assert_eq!(ok(&["op", "right-inverse", "(4,2):(2,1)"]), "(2,4):(4,1)");
    assert_eq!(ok(&["op", "left-inverse", "4:2"]), "(2,4):(0,1)");
    assert_eq!(
        ok(&["op", "logical-divide", "(4,2,3):(2,1,8)", "4:2"]),
        "((2,2),(2,3)):((4,1),(2,8))"
    );
    assert_eq!(
        ok(&["op", "zipped-divide", "(12,32):(32,1)", "[4:1,8:1]"]),
        "((4,8),(3,4)):((32,1),(128,8))"
    );
    assert_eq!(
        ok(&["op", "zipped-divide", "(12,32):(32,1)", "(4,8)"]),
        "((4,8),(3,4)):((32,1),(128,8))"
    );
    assert_eq!(
        ok(&["op", "tiled-divide", "(12,32):(32,1)", "[4,8]"]),
        "((4,8),3,4):((32,1),128,8)"
    );
    assert_eq!(
        ok(&["op", "logical-divide", "(12,32):(32,1)", "[_,8:1]"]),
        "(12,(8,4)):(32,(1,8))"
    );
    assert_eq!(
        ok(&["op", "logical-product", "(2,2):(4,1)", "6:1"]),
        "((2,2),(2,3)):((4,1),(2,8))"
    );
    assert_eq!(
        ok(&["op", "blocked-product", "(2,2):(1,2)", "(3,4):(1,3)"]),
        "((2,3),(2,4)):((1,4),(2,12))"
    );
    assert_eq!(
        ok(&["op", "raked-product", "(2,2)", "(3,4)"]),
        "((3,2),(4,2)):((4,1),(12,2))"
    );
    assert_eq!(
        ok(&["op", "zipped-product", "(2,2):(1,2)", "[3:1,4:1]"]),
        "((2,2),(3,(2,2))):((1,2),(2,(1,4)))"
    );
    assert_eq!(
        ok(&["op", "tiled-product", "(2,2):(1,2)", "(3,4)"]),
        "((2,2),3,(2,2)):((1,2),2,(1,4))"
    );
    assert_eq!(
        ok(&[
            "op",
            "zipped-divide",
            "Sw<3,3,3> o _0 o (8,64):(64,1)",
            "(8,8)"
        ]),
        "Sw<3,3,3> o _0 o ((8,8),(1,8)):((64,1),(0,8))"
    );
}

#[test]
fn op_json() {
    let out = ok(&["op", "--json", "complement", "4:2", "24"]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        v,
        serde_json::json!({ "layout": "(2,3):(1,8)", "shape": [2, 3], "stride": [1, 8], "size": 6, "cosize": 18 })
    );
}

#[test]
fn bad_input_is_a_clear_error_with_exit_code_2() {
    let cases: &[(&[&str], &str)] = &[
        (&["eval", "((2,4),8):((1,16),2", "0"], "column 20"),
        (&["eval", "(2,4):(1,2,3)", "0"], "not congruent"),
        (&["eval", "(2,4):(1,2)", "(1,2,3)"], "does not fit"),
        (&["eval", "(2,4):(1,2)", "((1,1),2)"], "does not fit"),
        (&["eval", "Sw<3,3> o 8:1", "0"], "expected ','"),
        // CuTe would extend the last mode past the end; a typed index there is a mistake.
        (&["eval", "(8,64):(64,1)", "-1"], "-1 is outside 0..512"),
        (&["eval", "(8,64):(64,1)", "1000"], "1000 is outside 0..512"),
        (&["eval", "(8,64):(64,1)", "512"], "512 is outside 0..512"),
        (&["eval", "(8,64):(64,1)", "(8,0)"], "8 is outside 0..8"),
        (&["eval", "(8,64):(64,1)", "(0,-1)"], "-1 is outside 0..64"),
        (
            &["eval", "((2,2),8):((1,2),4)", "((0,2),0)"],
            "2 is outside 0..2",
        ),
        (
            &["eval", "Sw<3,3,3> o (8,64):(64,1)", "512"],
            "outside 0..512",
        ),
        (
            &["eval", "(4294967296,4294967296,4294967296):(1,1,1)", "0"],
            "overflows 64 bits",
        ),
        (
            &["op", "composition", "(6,3,2):(1,12,6)", "8:1"],
            "divisibility",
        ),
        (&["op", "complement", "(2,2):(1,1)", "8"], "not injective"),
        (&["op", "composition", "8:1"], "usage"),
        (
            &["op", "logical-divide", "8:1", "[2,2]"],
            "tiler has 2 modes",
        ),
        (&["op", "logical-divide", "8:1", "[2:1,"], "expected"),
        (&["op", "right-inverse", "Sw<3,3,3> o 8:1"], "swizzled"),
        (&["op", "frobnicate", "8:1"], "invalid value"),
    ];
    for (args, needle) in cases {
        let (code, out, err) = run(args);
        assert_eq!(code, 2, "{args:?} exited {code}: {out}{err}");
        assert!(err.contains(needle), "{args:?}: {err:?} lacks {needle:?}");
        assert!(!err.contains("panicked"), "{args:?} panicked: {err}");
    }
}

/// `draw bank --layout --lanes --access`: the playground's bank map, from the CLI.
#[test]
fn draw_bank_of_a_layout() {
    let report = |layout: &str| -> serde_json::Value {
        serde_json::from_str(&ok(&[
            "draw",
            "bank",
            "--layout",
            layout,
            "--lanes",
            "(8,4):(1,64)",
            "--access",
            "ldmatrix-x4",
            "--json",
        ]))
        .unwrap()
    };
    let plain = report("(8,64):(64,1)");
    assert_eq!(
        (plain["wavefronts"].as_u64(), plain["ideal"].as_u64()),
        (Some(32), Some(4))
    );
    let swizzled = report("Sw<3,3,3> o _0 o (8,64):(64,1)");
    assert_eq!(
        (swizzled["wavefronts"].as_u64(), swizzled["ideal"].as_u64()),
        (Some(4), Some(4))
    );
    let (code, _, err) = run(&[
        "draw",
        "bank",
        "--layout",
        "(8,64):(64,1)",
        "--lanes",
        "(8,4):(1,64)",
        "--access",
        "ld16",
    ]);
    assert_eq!(code, 2);
    assert_eq!(
        err.trim_end(),
        "layout-viz: unknown access `ld16`; known: ld32, ld64, ld128, st32, st64, st128, ldmatrix-x1|x2|x4[-trans]"
    );
}
