//! The small SVG vocabulary of the column-width figures (`gmma.rs`, `ring.rs`,
//! `timeline.rs`; `render.rs` takes its width and character widths): colours, the font, the width limit, and text (wrapped to a width),
//! rectangles and lines with coordinates written compactly, paragraphs and legends. Written once so the figures
//! look alike and read at the book's width.

use svg::Document;
use svg::node::element::{Group, Line, Rectangle, Text, Title};

pub const INK: &str = "#222222";
pub const MUTED: &str = "#777777";
pub const MARK: &str = "#d62728";
pub const FONT: &str = "DejaVu Sans Mono, Menlo, Consolas, monospace";
pub const MARGIN: f64 = 20.0;
/// The widest a figure may be: the book's text column.
pub const MAX_WIDTH: f64 = 740.0;
/// The advance of one character of the monospace font at 11px and at 12px, for laying
/// out text by its length.
pub const CHAR_W_11: f64 = 6.65;
pub const CHAR_W_12: f64 = 7.3;

/// A figure's bold title and one line under it, from the top margin, added to `body`: the
/// group and the baseline of that second line (`pipeline.rs`, `pingpong.rs`).
pub fn heading(body: Group, title: impl Into<String>, subtitle: impl Into<String>) -> (Group, f64) {
    let y = MARGIN + 14.0;
    let body = body.add(text(MARGIN, y, 14, title).set("font-weight", "bold"));
    (body.add(text(MARGIN, y + 20.0, 12, subtitle)), y + 20.0)
}

/// One legend entry on the baseline `y` from `x`: a 14px swatch of `fill` and its 12px
/// label, added to `body`; the group and the x of the next entry.
pub fn swatch(body: Group, x: f64, y: f64, fill: &str, label: &str) -> (Group, f64) {
    let body = body
        .add(
            rect(x, y - 11.0, 14.0, 14.0, fill)
                .set("stroke", INK)
                .set("stroke-width", 0.5),
        )
        .add(text(x + 20.0, y, 12, label));
    (
        body,
        x + 20.0 + label.chars().count() as f64 * CHAR_W_12 + 18.0,
    )
}

/// Lines of text from `y` (the top of the first), at `x`, each wrapped to `width` at
/// `char_w` a character and spaced `size + 7` apart: the group and the y below them.
#[allow(clippy::too_many_arguments)]
pub fn text_block(
    mut g: Group,
    x: f64,
    mut y: f64,
    width: f64,
    lines: &[String],
    size: u32,
    char_w: f64,
    bold: bool,
) -> (Group, f64) {
    let chars = (width / char_w) as usize;
    for l in lines.iter().flat_map(|l| wrap(l, chars)) {
        let t = text(x, y + f64::from(size), size, l);
        g = g.add(if bold {
            t.set("font-weight", "bold")
        } else {
            t
        });
        y += f64::from(size) + 7.0;
    }
    (g, y)
}

/// The advance of one character of the 13px bold headings and of the 16px bold titles.
pub const HEADING_CHAR_W: f64 = 8.2;
pub const TITLE_CHAR_W: f64 = 10.0;

/// A figure's 16px bold title across the column from the top margin (`fp8.rs`,
/// `backward.rs`): the group and the y below it.
pub fn title_paragraph(title: &str) -> (Group, f64) {
    paragraph(
        Group::new(),
        MARGIN,
        &[title.to_string()],
        16,
        TITLE_CHAR_W,
        true,
    )
}

/// [`text_block`] across the column, from the left margin (`fp8.rs`, `backward.rs`).
pub fn paragraph(
    g: Group,
    y: f64,
    lines: &[String],
    size: u32,
    char_w: f64,
    bold: bool,
) -> (Group, f64) {
    text_block(
        g,
        MARGIN,
        y,
        MAX_WIDTH - 2.0 * MARGIN,
        lines,
        size,
        char_w,
        bold,
    )
}

/// Legend entries (a swatch and its label) from `y`, on as many lines as the column
/// needs: the group and the y below them.
pub fn legend(mut g: Group, mut y: f64, entries: &[(&str, String)]) -> (Group, f64) {
    let mut x = MARGIN;
    for (fill, label) in entries {
        // swatch's advance, without its gap after the last entry of a line.
        let w = 20.0 + label.chars().count() as f64 * CHAR_W_12;
        if x > MARGIN && x + w > MAX_WIDTH - MARGIN {
            (x, y) = (MARGIN, y + 22.0);
        }
        (g, x) = swatch(g, x, y + 12.0, fill, label);
    }
    (g, y + 26.0)
}

pub fn text(x: f64, y: f64, size: u32, content: impl Into<String>) -> Text {
    Text::new(content.into())
        .set("x", fmt(x))
        .set("y", fmt(y))
        .set("font-size", size)
        .set("font-family", FONT)
        .set("fill", INK)
}

/// `s` in lines of at most `max_chars` characters, broken at spaces; a word longer than a
/// line stays whole on its own.
pub fn wrap(s: &str, max_chars: usize) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    let mut current = String::new();
    for word in s.split_whitespace() {
        let len = current.chars().count();
        if len > 0 && len + 1 + word.chars().count() > max_chars {
            lines.push(std::mem::take(&mut current));
        }
        if !current.is_empty() {
            current.push(' ');
        }
        current.push_str(word);
    }
    if !current.is_empty() || lines.is_empty() {
        lines.push(current);
    }
    lines
}

pub fn fmt(v: f64) -> String {
    let s = format!("{v:.2}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

pub fn rect(x: f64, y: f64, w: f64, h: f64, fill: &str) -> Rectangle {
    Rectangle::new()
        .set("x", fmt(x))
        .set("y", fmt(y))
        .set("width", fmt(w))
        .set("height", fmt(h))
        .set("fill", fill)
}

pub fn line(x1: f64, y1: f64, x2: f64, y2: f64, stroke: &str, width: f64) -> Line {
    Line::new()
        .set("x1", fmt(x1))
        .set("y1", fmt(y1))
        .set("x2", fmt(x2))
        .set("y2", fmt(y2))
        .set("stroke", stroke)
        .set("stroke-width", fmt(width))
}

/// A whole figure: `body` on a white page of `width` x `height`, titled for hover and
/// screen readers.
pub fn document(width: f64, height: f64, title: &str, body: Group) -> String {
    Document::new()
        .set("viewBox", (0, 0, width, height))
        .set("width", width)
        .set("height", height)
        .add(Title::new(title))
        .add(
            Rectangle::new()
                .set("width", "100%")
                .set("height", "100%")
                .set("fill", "#ffffff"),
        )
        .add(body)
        .to_string()
        + "\n"
}

#[cfg(test)]
mod tests {
    use super::wrap;

    #[test]
    fn wrap_breaks_at_spaces_within_the_width() {
        assert_eq!(wrap("one two three four", 9), ["one two", "three", "four"]);
        assert_eq!(wrap("a·b c", 3), ["a·b", "c"]);
        assert_eq!(wrap("unbreakable word", 4), ["unbreakable", "word"]);
        assert_eq!(wrap("", 10), [""]);
    }
}
