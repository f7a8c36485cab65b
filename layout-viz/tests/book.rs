//! `book` writes every file of its manifest, and the CLI fails cleanly on bad input.
use std::path::PathBuf;
use std::process::Command;

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("layout-viz-test-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

#[test]
fn book_writes_every_manifest_entry() {
    let dir = scratch("book");
    let manifest = layout_viz::book::write_book(&dir).unwrap();
    assert!(manifest.figures.len() >= 20);
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("manifest.json")).unwrap()).unwrap();
    let listed = json["figures"].as_array().unwrap();
    assert_eq!(listed.len(), manifest.figures.len());
    for entry in listed {
        let file = entry["file"].as_str().unwrap();
        assert!(file.ends_with(".svg"));
        assert!(!entry["caption"].as_str().unwrap().is_empty());
        let svg = std::fs::read_to_string(dir.join(file)).unwrap();
        assert!(svg.starts_with("<svg") && svg.contains("<title>"), "{file}");
    }
    for promised in [
        "layout-2x8-colex.svg",
        "swizzle-333-8x64.svg",
        "mma-m16n8k16.svg",
        "ldmatrix-x4.svg",
        "ldmatrix-x4-trans.svg",
        "bank-stage3-ldmatrix.svg",
        "bank-stage4-ldmatrix.svg",
        "wgmma-m64n64k16-c.svg",
        "fp8-p-from-s.svg",
        "fp8-v-key-order.svg",
        "backward-products.svg",
        "backward-warp-tiles.svg",
    ] {
        assert!(dir.join(promised).is_file(), "{promised}");
    }
    // Deterministic: a second run writes the same bytes.
    let again = scratch("book-again");
    layout_viz::book::write_book(&again).unwrap();
    for entry in &manifest.figures {
        assert_eq!(
            std::fs::read(dir.join(&entry.file)).unwrap(),
            std::fs::read(again.join(&entry.file)).unwrap()
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&again);
}

fn cli(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_layout-viz"))
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn cli_bank_json() {
    let out = cli(&["draw", "bank", "ldmatrix-q-swizzled", "--json"]);
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (v["wavefronts"].as_u64(), v["ideal"].as_u64()),
        (Some(4), Some(4))
    );
}

#[test]
fn cli_draws_to_a_file() {
    let dir = scratch("cli");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("mma.svg");
    let out = cli(&[
        "draw",
        "mma",
        "mma-m16n8k16",
        "--out",
        file.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(std::fs::read_to_string(&file).unwrap().starts_with("<svg"));
    let out = cli(&[
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
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn cli_refuses_what_is_too_large_to_draw() {
    for (args, needle) in [
        (
            &["draw", "layout", "(100000,100000):(1,100000)"][..],
            "10000000000 cells, more than the 65536",
        ),
        (
            &[
                "draw",
                "swizzle",
                "--layout",
                "Sw<3,3,3> o (1024,1024):(1024,1)",
            ],
            "1048576 cells",
        ),
        (&["draw", "tv", "cp-async-4096x64"], "262144 cells"),
        (
            &["draw", "tv", "cp-async-16x24"],
            "one of 8, 16, 32, 64, 128, 256, 512, 1024",
        ),
    ] {
        let out = cli(args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
        assert!(out.stdout.is_empty(), "{args:?} wrote an SVG");
    }
}

#[test]
fn cli_bad_input_exits_2_with_a_message() {
    for args in [
        &["draw", "tv", "mma-m99"][..],
        &["draw", "layout", "(2,8"],
        &["draw", "ldmatrix", "--num", "3"],
        &["draw", "bank", "no-such-pattern"],
        &["draw", "tma", "--box", "8,64", "--swizzle", "64"],
        &[
            "draw", "swizzle", "--bits", "9", "--base", "0", "--shift", "1", "--layout", "8:1",
        ],
    ] {
        let out = cli(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("layout-viz:") || err.contains("error:"),
            "{args:?}: {err}"
        );
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
}
