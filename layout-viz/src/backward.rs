//! The backward pass's five products, drawn (`backward-products.svg`): what one thread
//! block of stage 22's main kernel computes for each query block it visits, each product
//! a row of rectangles sized by its operands' shapes, key-major as the kernel computes
//! them, and filled by where each operand comes from and where it goes.
//!
//! The shapes are not typed in: the block's keys and a step's query rows are stage 22's
//! own `BLOCK_KV` and `BLOCK_Q` (its `tiles.rs`, which the kernel asserts its constants
//! equal), and each product's shape is checked to compose before it is drawn
//! ([`Product::composes`]); the legend lists the operands of each kind as the rows draw them.
//! Book: "Stage 22: the backward pass", section "The five products".

use svg::node::element::{Group, Title};

use crate::render::PALETTE;
// fp8.rs's rules: the figure exactly the book's column wide (never scaled down), every
// text 12px or more.
use crate::svg_kit::{
    CHAR_W_12, HEADING_CHAR_W, INK, MARGIN, MAX_WIDTH, MUTED, document, legend, line, paragraph,
    rect, text, text_block, title_paragraph,
};

/// Stage 22's tile shapes, the one definition its kernels and its launcher use.
#[allow(dead_code)]
mod stage22 {
    include!("../../stages/22-backward/src/tiles.rs");
}
/// Keys one block of the main kernel owns (of one K/V head): the rows of its K and V
/// tiles, and the m rows of products 1-4.
pub const BLOCK_KV: u32 = stage22::BLOCK_KV;
/// Query rows per step of the block's loop: the rows of its Q and dO tiles.
pub const BLOCK_Q: u32 = stage22::BLOCK_Q;
/// Warps per block: each owns BLOCK_KV / WARPS keys, and 16 rows by a 1 / (WARPS / (BLOCK_Q
/// / 16)) slice of the columns of dQ.
pub const WARPS: u32 = stage22::WARPS;
/// The head dims stage 22 runs; the figure draws d at the largest.
pub const HEAD_DIMS: [u32; 2] = [64, 128];
/// Pixels per element of an operand's side: a 64-row tile is 40px tall, and product 5 (dS is
/// 64 x 128 at 128 keys a block) fits left of its notes.
pub const PX_PER_ELEMENT: f64 = 0.625;

/// The gap an operator (`=`, `+=`, `·`, `→`) takes between two rectangles.
const OP_GAP: f64 = 28.0;
/// Where the notes beside each product's drawing start.
const NOTES_X: f64 = 364.0;
/// A row term's strip (LSE, D) above the tile it applies to: its height and the room
/// it takes above the row's rectangles.
const STRIP_H: f64 = 16.0;
const STRIP_ROOM: f64 = 22.0;

/// Where an operand comes from and where it goes, which its fill says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kind {
    /// In shared memory from the block's start: K and V.
    LoadedOnce,
    /// Loaded for each query block: Q, dO and the rows' LSE and D.
    Streamed,
    /// Computed again in registers each step and never stored: S, P, dP, dS.
    Recomputed,
    /// Summed in registers across every query block, written once at the end: dK, dV.
    Accumulated,
    /// Added to global memory each step: dQ's share.
    ToGlobal,
}

impl Kind {
    pub const ALL: [Kind; 5] = [
        Kind::LoadedOnce,
        Kind::Streamed,
        Kind::Recomputed,
        Kind::Accumulated,
        Kind::ToGlobal,
    ];

    pub fn fill(self) -> &'static str {
        match self {
            Kind::LoadedOnce => PALETTE[0],
            Kind::Streamed => PALETTE[2],
            Kind::Recomputed => PALETTE[11],
            Kind::Accumulated => PALETTE[4],
            Kind::ToGlobal => PALETTE[3],
        }
    }

    /// The legend's words (followed there by the operands of the kind).
    pub fn meaning(self) -> &'static str {
        match self {
            Kind::LoadedOnce => "loaded once per block",
            Kind::Streamed => "streams in per query block",
            Kind::Recomputed => "recomputed in registers",
            Kind::Accumulated => "accumulates in registers",
            Kind::ToGlobal => "leaves to global memory each step (the block's share)",
        }
    }
}

/// One side of a tile: the block's keys, a step's query rows, or the head dim.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dim {
    Keys,
    Queries,
    HeadDim,
}

impl Dim {
    /// Elements along this side (d at the largest head dim).
    pub fn elements(self) -> u32 {
        match self {
            Dim::Keys => BLOCK_KV,
            Dim::Queries => BLOCK_Q,
            Dim::HeadDim => HEAD_DIMS[HEAD_DIMS.len() - 1],
        }
    }

    /// The side as the figure labels it: a number, or `d`.
    pub fn label(self) -> String {
        match self {
            Dim::HeadDim => "d".to_string(),
            _ => self.elements().to_string(),
        }
    }

    /// The side in words, for the tooltips.
    fn words(self) -> String {
        match self {
            Dim::Keys => format!("{BLOCK_KV} keys"),
            Dim::Queries => format!("{BLOCK_Q} queries"),
            Dim::HeadDim => "d".to_string(),
        }
    }

    fn px(self) -> f64 {
        f64::from(self.elements()) * PX_PER_ELEMENT
    }
}

/// A tile of a product: its name as drawn (`Q^T`), its rows and columns, its kind, and a
/// few words on where it lives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Operand {
    pub name: &'static str,
    pub rows: Dim,
    pub cols: Dim,
    pub kind: Kind,
    pub where_: &'static str,
}

impl Operand {
    /// The matrix's name without its transpose: the legend's.
    pub fn base(&self) -> &'static str {
        self.name.strip_suffix("^T").unwrap_or(self.name)
    }

    /// `64×d`: its rows by its columns.
    pub fn dims(&self) -> String {
        format!("{}×{}", self.rows.label(), self.cols.label())
    }

    fn tip(&self) -> String {
        format!(
            "{}: {} × {}, {}: {}",
            self.name,
            self.rows.words(),
            self.cols.words(),
            self.kind.meaning(),
            self.where_
        )
    }
}

/// A row term (one number per query row: LSE, D), drawn as a strip over the columns of
/// the tile it applies to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RowTerm {
    pub name: &'static str,
    pub what: &'static str,
}

/// What a product's result becomes in registers before the next product reads it:
/// `P^T = exp(scale·S^T − LSE)` after `S^T = K Q^T`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Then {
    pub formula: &'static str,
    pub term: RowTerm,
    pub result: Operand,
}

/// One of the five products: `result op a b`, then (for two of them) an elementwise step.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Product {
    pub result: Operand,
    /// `=` (computed afresh each step) or `+=` (added to).
    pub op: &'static str,
    pub a: Operand,
    pub b: Operand,
    pub then: Option<Then>,
    pub notes: Vec<String>,
}

impl Product {
    /// `S^T = K Q^T`: the product as the kernel's comments write it.
    pub fn label(&self) -> String {
        format!(
            "{} {} {} {}",
            self.result.name, self.op, self.a.name, self.b.name
        )
    }

    /// The heading: the label, and the elementwise step after it.
    pub fn heading(&self) -> String {
        match &self.then {
            Some(t) => format!("{}, then {}", self.label(), t.formula),
            None => self.label(),
        }
    }

    /// `a` times `b` has `result`'s shape (and the elementwise step keeps it).
    pub fn composes(&self) -> bool {
        self.a.cols == self.b.rows
            && (self.result.rows, self.result.cols) == (self.a.rows, self.b.cols)
            && self.then.as_ref().is_none_or(|t| {
                (t.result.rows, t.result.cols) == (self.result.rows, self.result.cols)
                    && t.result.cols == Dim::Queries
            })
    }
}

fn op(name: &'static str, rows: Dim, cols: Dim, kind: Kind, where_: &'static str) -> Operand {
    Operand {
        name,
        rows,
        cols,
        kind,
        where_,
    }
}

/// The five products of one step (one query block), in the order the book numbers them.
pub fn products() -> Vec<Product> {
    use Dim::{HeadDim, Keys, Queries};
    use Kind::{Accumulated, LoadedOnce, Recomputed, Streamed, ToGlobal};
    let k = |name| {
        op(
            name,
            Keys,
            HeadDim,
            LoadedOnce,
            "the block's K tile, in shared memory",
        )
    };
    let q_t = op(
        "Q^T",
        HeadDim,
        Queries,
        Streamed,
        "the step's Q tile, in shared memory (a ring of two slots), as B",
    );
    let q = op(
        "Q",
        Queries,
        HeadDim,
        Streamed,
        "the step's Q tile, read transposed (ldmatrix .trans)",
    );
    let d_o = op(
        "dO",
        Queries,
        HeadDim,
        Streamed,
        "the step's dO tile, in shared memory, read transposed (ldmatrix .trans)",
    );
    let d_o_t = op(
        "dO^T",
        HeadDim,
        Queries,
        Streamed,
        "the step's dO tile, in shared memory (a ring of two slots), as B",
    );
    let p_t = |where_| op("P^T", Keys, Queries, Recomputed, where_);
    let ds_t = |where_| op("dS^T", Keys, Queries, Recomputed, where_);
    vec![
        Product {
            result: op(
                "S^T",
                Keys,
                Queries,
                Recomputed,
                "the accumulator, never stored",
            ),
            op: "=",
            a: k("K"),
            b: q_t.clone(),
            then: Some(Then {
                formula: "P^T = exp(scale·S^T − LSE)",
                term: RowTerm {
                    name: "LSE",
                    what: "the forward's log-sum-exp of each query row, saved by the forward",
                },
                result: p_t("in place of S^T, in registers"),
            }),
            notes: vec![format!(
                "{BLOCK_KV} keys × {BLOCK_Q} queries. Recomputed, not stored: the forward kept only O and each row's LSE, and one exponential turns S^T back into the forward's P, already normalized. LSE is one number per query: a column here."
            )],
        },
        Product {
            result: op(
                "dV",
                Keys,
                HeadDim,
                Accumulated,
                "the accumulator, summed over every query block, written once at the end",
            ),
            op: "+=",
            a: p_t("the accumulator repacked as the A fragment"),
            b: d_o.clone(),
            then: None,
            notes: vec![format!(
                "{BLOCK_KV} keys × d. P^T goes from the accumulator straight into the A fragment; dV accumulates in registers across all query blocks."
            )],
        },
        Product {
            result: op(
                "dP^T",
                Keys,
                Queries,
                Recomputed,
                "the accumulator, never stored",
            ),
            op: "=",
            a: op(
                "V",
                Keys,
                HeadDim,
                LoadedOnce,
                "the block's V tile, in shared memory",
            ),
            b: d_o_t,
            then: Some(Then {
                formula: "dS^T = P^T ∘ (dP^T − D)",
                term: RowTerm {
                    name: "D",
                    what: "rowsum(dO∘O) of each query row, from the preprocess kernel",
                },
                result: ds_t(
                    "in place of dP^T, in registers; rounded once, and stored to shared memory for dQ",
                ),
            }),
            notes: vec![format!(
                "{BLOCK_KV} keys × {BLOCK_Q} queries, like S^T. D = rowsum(dO∘O), one number per query (a column here), from the preprocess kernel."
            )],
        },
        Product {
            result: op(
                "dK",
                Keys,
                HeadDim,
                Accumulated,
                "the accumulator, summed over every query block, times scale once at the end",
            ),
            op: "+=",
            a: ds_t("the accumulator repacked as the A fragment"),
            b: q,
            then: None,
            notes: vec![format!(
                "{BLOCK_KV} keys × d. dK accumulates in registers across all query blocks, and is multiplied by scale once, when written at the end."
            )],
        },
        Product {
            result: op(
                "dQ",
                Queries,
                HeadDim,
                ToGlobal,
                "added with atomicAdd into dQ's fp32 accumulator in global memory",
            ),
            op: "+=",
            a: op(
                "dS",
                Queries,
                Keys,
                Recomputed,
                "made in registers by product 3, read here from dS^T's tile in shared memory, transposed (ldmatrix .trans)",
            ),
            b: k("K"),
            then: None,
            notes: vec![format!(
                "{BLOCK_Q} queries × d; dS is dS^T, stored to shared memory after product 3 and read back transposed. Every key block of the sequence adds to these same rows of dQ, so this block adds its share with atomics into an fp32 buffer in global memory; a postprocess kernel scales and rounds it."
            )],
        },
    ]
}

/// An operand's rectangle: a `<g class="cell">` with its tooltip first (as render.rs
/// draws cells, so the book's hover text and the tests find it), its name inside, and
/// its dimensions under it.
fn tile(g: Group, x: f64, top: f64, o: &Operand) -> Group {
    let (w, h) = (o.cols.px(), o.rows.px());
    let cell = Group::new()
        .set("class", "cell")
        .add(Title::new(o.tip()))
        .add(
            rect(x, top, w, h, o.kind.fill())
                .set("stroke", INK)
                .set("stroke-width", 0.8),
        )
        .add(
            text(x + w / 2.0, top + h / 2.0 + 4.5, 13, o.name)
                .set("text-anchor", "middle")
                .set("font-weight", "bold"),
        )
        .add(
            text(x + w / 2.0, top + h + 15.0, 12, o.dims())
                .set("text-anchor", "middle")
                .set("fill", MUTED),
        );
    g.add(cell)
}

/// A row term's strip over the columns of the tile at `x` whose top is `top`.
fn strip(g: Group, x: f64, top: f64, w: f64, term: &RowTerm) -> Group {
    let y = top - STRIP_ROOM;
    let tip = format!(
        "{}: {BLOCK_Q} values, one per query (column), {}: {}",
        term.name,
        Kind::Streamed.meaning(),
        term.what
    );
    g.add(
        Group::new()
            .set("class", "cell")
            .add(Title::new(tip))
            .add(
                rect(x, y, w, STRIP_H, Kind::Streamed.fill())
                    .set("stroke", INK)
                    .set("stroke-width", 0.8),
            )
            .add(text(x + w / 2.0, y + 12.5, 12, term.name).set("text-anchor", "middle")),
    )
}

/// An operator centred in the gap from `x`, level with the middle of the row's first tile.
fn operator(g: Group, x: f64, mid: f64, symbol: &str) -> Group {
    g.add(
        text(x + OP_GAP / 2.0, mid + 5.5, 16, symbol)
            .set("text-anchor", "middle")
            .set("font-weight", "bold"),
    )
}

/// Draws product `n` (numbered from 1) from `y`: its heading across the column, then its
/// tiles on the left and its notes on the right. The group and the y below it.
fn draw_product(mut g: Group, mut y: f64, n: usize, p: &Product) -> (Group, f64) {
    (g, y) = paragraph(
        g,
        y,
        &[format!("{n}. {}", p.heading())],
        13,
        HEADING_CHAR_W,
        true,
    );
    y += 4.0;
    let top = y + if p.then.is_some() { STRIP_ROOM } else { 0.0 };
    let mid = top + p.result.rows.px() / 2.0;
    let mut x = MARGIN;
    let mut bottom: f64 = top;
    let mut place = |g: Group, x: &mut f64, o: &Operand| {
        let g = tile(g, *x, top, o);
        *x += o.cols.px();
        bottom = bottom.max(top + o.rows.px() + 20.0);
        g
    };
    g = place(g, &mut x, &p.result);
    g = operator(g, x, mid, p.op);
    x += OP_GAP;
    g = place(g, &mut x, &p.a);
    g = operator(g, x, mid, "·");
    x += OP_GAP;
    g = place(g, &mut x, &p.b);
    if let Some(t) = &p.then {
        g = operator(g, x, mid, "→");
        x += OP_GAP;
        g = strip(g, x, top, t.result.cols.px(), &t.term);
        g = place(g, &mut x, &t.result);
    }
    debug_assert!(x <= NOTES_X - 12.0, "product {n} runs into its notes");
    let (g, notes_end) = text_block(
        g,
        NOTES_X,
        y - 2.0,
        MAX_WIDTH - MARGIN - NOTES_X,
        &p.notes,
        12,
        CHAR_W_12,
        false,
    );
    (g, bottom.max(notes_end) + 10.0)
}

/// The legend: each kind's fill and meaning, with the operands of that kind as the rows
/// draw them (transposes named once), in the order they first appear.
pub fn legend_entries(products: &[Product]) -> Vec<(Kind, String)> {
    Kind::ALL
        .iter()
        .map(|&kind| {
            let mut names: Vec<&str> = Vec::new();
            for p in products {
                let mut seen = vec![&p.result, &p.a, &p.b];
                let then_names: Vec<(&str, Kind)> = p
                    .then
                    .iter()
                    .flat_map(|t| {
                        [
                            (t.term.name, Kind::Streamed),
                            (t.result.base(), t.result.kind),
                        ]
                    })
                    .collect();
                seen.retain(|o| o.kind == kind);
                for name in seen
                    .iter()
                    .map(|o| o.base())
                    .chain(then_names.iter().filter(|t| t.1 == kind).map(|t| t.0))
                {
                    if !names.contains(&name) {
                        names.push(name);
                    }
                }
            }
            (kind, format!("{}: {}", kind.meaning(), names.join(", ")))
        })
        .collect()
}

/// `backward-products.svg`: one block of stage 22's main kernel (BLOCK_KV keys of one K/V
/// head) at one step of its loop (one query block of BLOCK_Q rows): the five products,
/// each a row of tiles drawn to scale (d at 128), filled by kind, with notes beside it.
pub fn products_svg() -> String {
    let products = products();
    assert!(
        products.iter().all(Product::composes),
        "a product whose shapes do not compose"
    );
    let title = "The backward's five products, per query block";
    let (mut g, mut y) = title_paragraph(title);
    let dims: Vec<String> = HEAD_DIMS.iter().map(u32::to_string).collect();
    (g, y) = paragraph(
        g,
        y,
        &[format!(
            "One block of stage 22's main kernel owns BLOCK_KV = {BLOCK_KV} keys of one K/V head, its K and V tiles ({BLOCK_KV}×d) loaded once, and loops over the query blocks of BLOCK_Q = {BLOCK_Q} rows that see them (for every query head of the group). Each step: five mma.sync products, key-major. d = {} (drawn at {}).",
            dims.join(" or "),
            Dim::HeadDim.elements()
        )],
        12,
        CHAR_W_12,
        false,
    );
    y += 6.0;
    let entries: Vec<(&str, String)> = legend_entries(&products)
        .into_iter()
        .map(|(kind, label)| (kind.fill(), label))
        .collect();
    (g, y) = legend(g, y, &entries);
    for (i, p) in products.iter().enumerate() {
        g = g.add(line(MARGIN, y, MAX_WIDTH - MARGIN, y, "#cccccc", 1.0));
        (g, y) = draw_product(g, y + 10.0, i + 1, p);
    }
    g = g.add(line(MARGIN, y, MAX_WIDTH - MARGIN, y, "#cccccc", 1.0));
    y += 8.0;
    let caption = [format!(
        "Each of the {WARPS} warps owns {} of the block's keys: the m16 rows of products 1-4, and of its dV and dK, which stay in its registers until the last query block. For dQ the step's {BLOCK_Q} query rows are split among the warps, 16 rows by d/{} columns each, over all {BLOCK_KV} keys.",
        BLOCK_KV / WARPS,
        WARPS / (BLOCK_Q / 16)
    )];
    (g, y) = paragraph(g, y, &caption, 12, CHAR_W_12, false);
    document(MAX_WIDTH, (y + MARGIN).ceil(), title, g)
}
