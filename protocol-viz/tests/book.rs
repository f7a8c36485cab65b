//! `book` writes every file of its manifest, the same bytes each time, each figure at most
//! the book's column wide with text of at least 10px.
use std::path::PathBuf;

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("protocol-viz-test-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// The figure's width (its viewBox) and its smallest font size.
fn width_and_smallest_text(svg: &str) -> (f64, f64) {
    layout_viz::figure_size::drawn_width_and_smallest_text(svg).expect("an SVG with a viewBox")
}

#[test]
fn book_writes_every_manifest_entry_and_each_fits_the_column() {
    let dir = scratch("book");
    let manifest = protocol_viz::book::write_book(&dir).unwrap();
    let json: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join(protocol_viz::book::MANIFEST)).unwrap(),
    )
    .unwrap();
    let listed = json["figures"].as_array().unwrap();
    assert_eq!(listed.len(), manifest.figures.len());
    for entry in listed {
        let file = entry["file"].as_str().unwrap();
        assert!(file.ends_with(".svg"));
        assert!(!entry["caption"].as_str().unwrap().is_empty());
        let svg = std::fs::read_to_string(dir.join(file)).unwrap();
        assert!(svg.starts_with("<svg") && svg.contains("<title>"), "{file}");
        let (width, smallest) = width_and_smallest_text(&svg);
        assert!(
            width <= layout_viz::render::COLUMN_W,
            "{file}: {width} px wide"
        );
        assert!(smallest >= 10.0, "{file}: {smallest} px text");
    }
    // layout-viz's `book` writes into the same directory: no file of the one is the other's.
    let layout = layout_viz::book::manifest();
    for entry in &manifest.figures {
        assert!(
            layout.figures.iter().all(|l| l.file != entry.file),
            "{}",
            entry.file
        );
    }
    // Deterministic: a second run writes the same bytes.
    let again = scratch("book-again");
    protocol_viz::book::write_book(&again).unwrap();
    for entry in &manifest.figures {
        assert_eq!(
            std::fs::read(dir.join(&entry.file)).unwrap(),
            std::fs::read(again.join(&entry.file)).unwrap()
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&again);
}
