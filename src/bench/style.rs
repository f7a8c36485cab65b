//! What every bench figure shares, so that the sweep's figures ([`super::plots`]), the
//! ladder ([`super::ladder`]) and the decode figures ([`super::decode`]) look like one set:
//! the column width, the smallest text, the font, the stage and baseline colours, the
//! subtitle naming the run, and round axis bounds.

use super::output::short_commit;
use super::results::BenchResults;
use anyhow::anyhow;
use plotters::drawing::DrawingAreaErrorKind;
use plotters::style::RGBColor;

/// The width of every figure: the book's text column, where it is shown at 1:1 so its
/// text reads at the sizes below. Panels are stacked, one per row, rather than shrunk.
pub const FIGURE_W: u32 = 740;
/// The smallest text the figures use (tick labels), in CSS pixels.
pub const MIN_TEXT_PX: f64 = 12.0;

/// A sans-serif font of at least `px` CSS pixels as the SVG shows it: plotters' SVG
/// backend writes a style's size divided by 1.24 (its pixel-to-point guess), so ask for
/// 1.24 times more, rounded up (the chart's labels keep only whole sizes).
pub fn font(px: f64) -> (&'static str, f64) {
    ("sans-serif", (px * 1.24).ceil())
}

/// The first stages' colors (1-based: entry 0 is stage 1), so a stage keeps its color
/// across figures; [`stage_color`] continues the list for any number of stages.
pub const STAGE_COLORS: [RGBColor; 20] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
    RGBColor(127, 127, 127),
    RGBColor(70, 70, 200),
    RGBColor(0, 130, 100),
    RGBColor(220, 20, 60),
    RGBColor(0, 90, 160),
    RGBColor(200, 150, 0),
    RGBColor(90, 30, 120),
    RGBColor(0, 170, 120),
    RGBColor(160, 60, 0),
    RGBColor(90, 150, 220),
    RGBColor(120, 120, 0),
];

/// The color of stage `n` (1-based) in every figure: [`STAGE_COLORS`] for the first 20,
/// then hues a golden angle apart at two alternating lightnesses, so no stage ever takes
/// another's color as the table grows.
pub fn stage_color(n: u32) -> RGBColor {
    let i = n.max(1) as usize - 1;
    if let Some(&c) = STAGE_COLORS.get(i) {
        return c;
    }
    let k = (i - STAGE_COLORS.len()) as f64;
    let hue = (k * 137.507_764) % 360.0;
    let lightness = if (i - STAGE_COLORS.len()) % 2 == 0 {
        0.40
    } else {
        0.55
    };
    hsl(hue, 0.70, lightness)
}

/// An HSL color (hue in degrees, saturation and lightness in [0, 1]) as RGB.
fn hsl(h: f64, s: f64, l: f64) -> RGBColor {
    let c = (1.0 - (2.0 * l - 1.0).abs()) * s;
    let x = c * (1.0 - ((h / 60.0) % 2.0 - 1.0).abs());
    let (r, g, b) = match (h / 60.0) as u32 {
        0 => (c, x, 0.0),
        1 => (x, c, 0.0),
        2 => (0.0, c, x),
        3 => (0.0, x, c),
        4 => (x, 0.0, c),
        _ => (c, 0.0, x),
    };
    let m = l - c / 2.0;
    let byte = |v: f64| ((v + m) * 255.0).round().clamp(0.0, 255.0) as u8;
    RGBColor(byte(r), byte(g), byte(b))
}

pub fn baseline_color(name: &str) -> RGBColor {
    match name {
        "sdpa-flash" => RGBColor(0, 0, 0),
        "sdpa-cudnn" => RGBColor(90, 90, 90),
        "sdpa-efficient" => RGBColor(160, 160, 160),
        "flash-attn" => RGBColor(120, 0, 60),
        "flash-attn-3" => RGBColor(200, 0, 120),
        "flash-attn-4" => RGBColor(230, 80, 0),
        _ => RGBColor(60, 60, 120),
    }
}

pub fn plot_err<E: std::error::Error + Send + Sync + 'static>(
    e: DrawingAreaErrorKind<E>,
) -> anyhow::Error {
    anyhow!("drawing: {e}")
}

pub fn figure_subtitle(res: &BenchResults) -> String {
    let h = &res.header;
    format!(
        "{}, {} {}, commit {}",
        h.device.name,
        h.sweep.sweep.dtype,
        h.date_utc.get(..10).unwrap_or(&h.date_utc),
        short_commit(&h.git_commit)
    )
}

/// A round number at or above `x` (1, 2 or 5 times a power of ten).
pub fn nice_ceiling(x: f64) -> f64 {
    if x <= 0.0 || !x.is_finite() {
        return 1.0;
    }
    let p = 10f64.powf(x.log10().floor());
    for m in [1.0, 1.2, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0] {
        if m * p >= x {
            return m * p;
        }
    }
    10.0 * p
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_two_of_the_first_hundred_stages_share_a_color() {
        let colors: Vec<RGBColor> = (1..=100).map(stage_color).collect();
        for (i, a) in colors.iter().enumerate() {
            for (j, b) in colors.iter().enumerate().skip(i + 1) {
                assert!(a != b, "stages {} and {} share {a:?}", i + 1, j + 1);
            }
        }
        assert_eq!(
            stage_color(14),
            STAGE_COLORS[13],
            "the listed colors come first"
        );
    }
}
