//! How large a figure layout-viz draws: the cap on cells ([`MAX_CELLS`]) and the check
//! every figure of a layout or an atom passes before anything of its size is allocated.
//! Its own module, below both the atoms (which check their size as they are built) and
//! the renderers (which check what they are given), so neither depends on the other for it.

/// The most cells one panel draws: a 256 x 256 tile, four times the largest atom a
/// kernel uses (wgmma's 64 x 256 accumulator). Its SVG is about 25 MB already; a larger
/// one is unreadable, and a very large layout would exhaust memory before a byte is
/// written, so it is refused up front.
pub const MAX_CELLS: u64 = 65_536;

/// A figure with more cells than [`MAX_CELLS`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{what} has {cells} cells, more than the {MAX_CELLS} (256 x 256) layout-viz draws; draw a tile of it instead"
)]
pub struct TooLarge {
    /// What was to be drawn, e.g. `layout (100000,100000):(1,100000)`.
    pub what: String,
    /// Saturates at `u128::MAX` for shapes whose size does not fit even that.
    pub cells: u128,
}

/// Refuses a figure of `dims`' product of cells when it exceeds [`MAX_CELLS`]; called
/// before anything of that size is allocated.
pub fn check_cells(what: impl std::fmt::Display, dims: &[u64]) -> Result<(), TooLarge> {
    let cells = dims
        .iter()
        .fold(1u128, |acc, &d| acc.saturating_mul(u128::from(d)));
    if cells > u128::from(MAX_CELLS) {
        return Err(TooLarge {
            what: what.to_string(),
            cells,
        });
    }
    Ok(())
}

/// The width an SVG is drawn at (its viewBox's third number) and its smallest font-size,
/// which the book's figures keep within the column and at 10 px or more; `None` for text
/// without a viewBox.
pub fn drawn_width_and_smallest_text(svg: &str) -> Option<(f64, f64)> {
    let view_box = svg.split("viewBox=\"").nth(1)?.split('"').next()?;
    let width: f64 = view_box.split_whitespace().nth(2)?.parse().ok()?;
    let smallest = svg
        .split("font-size=\"")
        .skip(1)
        .filter_map(|s| s.split('"').next()?.parse::<f64>().ok())
        .fold(f64::INFINITY, f64::min);
    Some((width, smallest))
}
