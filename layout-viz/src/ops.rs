//! The layout operations by name, read from and printed in CuTe notation: what
//! `layout-viz eval` and `layout-viz op` run, and what the book's playground calls, so
//! both parse the same operands and say the same thing about bad ones.

use serde_json::{Value, json};
use thiserror::Error;

use crate::int_tuple::IntTuple;
use crate::layout::{self as lo, Layout, LayoutError, Tiler};
use crate::notation::{self, NotationError};
use crate::swizzle::AnyLayout;

/// Operands that do not make an operation.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum OpError {
    /// An operand that is not CuTe notation.
    #[error(transparent)]
    Notation(#[from] NotationError),
    /// Operands the operation is not defined on (e.g. a non-injective left inverse).
    #[error(transparent)]
    Layout(#[from] LayoutError),
    /// The wrong number of operands.
    #[error("usage: layout-viz op {op} {usage} (got {got} operands)")]
    Usage {
        op: &'static str,
        usage: &'static str,
        got: usize,
    },
    /// A swizzled layout given to an operation CuTe defines on plain layouts only.
    #[error("{0:?} does not apply to a swizzled layout: give its inner layout")]
    Swizzled(OpName),
    /// An operation name `OpName::from_name` does not know.
    #[error("unknown operation `{name}`; known: {known}")]
    Unknown { name: String, known: String },
    /// A coordinate outside the layout's shape (`eval`).
    #[error("{coord} does not fit {layout}: {source}")]
    Coordinate {
        coord: IntTuple,
        layout: String,
        source: LayoutError,
    },
}

/// The operations `op` knows, named as CuTe's functions in kebab-case.
// The variants' docs are clap's help text, where [PROFILE] is an optional argument, not a link.
#[allow(rustdoc::broken_intra_doc_links)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum OpName {
    /// coalesce LAYOUT [PROFILE]
    Coalesce,
    /// filter LAYOUT
    Filter,
    /// composition LAYOUT TILER
    Composition,
    /// complement LAYOUT [COTARGET]   (default cotarget: cosize(LAYOUT))
    Complement,
    /// right-inverse LAYOUT
    RightInverse,
    /// left-inverse LAYOUT
    LeftInverse,
    /// logical-divide LAYOUT TILER
    LogicalDivide,
    /// zipped-divide LAYOUT TILER
    ZippedDivide,
    /// tiled-divide LAYOUT TILER
    TiledDivide,
    /// flat-divide LAYOUT TILER
    FlatDivide,
    /// logical-product BLOCK TILER
    LogicalProduct,
    /// zipped-product BLOCK TILER
    ZippedProduct,
    /// tiled-product BLOCK TILER
    TiledProduct,
    /// flat-product BLOCK TILER
    FlatProduct,
    /// blocked-product BLOCK LAYOUT
    BlockedProduct,
    /// raked-product BLOCK LAYOUT
    RakedProduct,
}

impl OpName {
    /// Every operation, in the order `layout-viz op --help` lists them.
    pub fn all() -> &'static [OpName] {
        <OpName as clap::ValueEnum>::value_variants()
    }

    /// The kebab-case name the CLI takes, e.g. `logical-divide`.
    pub fn name(self) -> &'static str {
        use OpName::*;
        match self {
            Coalesce => "coalesce",
            Filter => "filter",
            Composition => "composition",
            Complement => "complement",
            RightInverse => "right-inverse",
            LeftInverse => "left-inverse",
            LogicalDivide => "logical-divide",
            ZippedDivide => "zipped-divide",
            TiledDivide => "tiled-divide",
            FlatDivide => "flat-divide",
            LogicalProduct => "logical-product",
            ZippedProduct => "zipped-product",
            TiledProduct => "tiled-product",
            FlatProduct => "flat-product",
            BlockedProduct => "blocked-product",
            RakedProduct => "raked-product",
        }
    }

    /// The operands after the name, as `usage` spells them, e.g. `LAYOUT TILER`.
    pub fn usage(self) -> &'static str {
        use OpName::*;
        match self {
            Coalesce => "LAYOUT [PROFILE]",
            Filter | RightInverse | LeftInverse => "LAYOUT",
            Complement => "LAYOUT [COTARGET]",
            BlockedProduct | RakedProduct => "BLOCK LAYOUT",
            LogicalProduct | ZippedProduct | TiledProduct | FlatProduct => "BLOCK TILER",
            Composition | LogicalDivide | ZippedDivide | TiledDivide | FlatDivide => "LAYOUT TILER",
        }
    }

    /// An operation by its kebab-case name.
    pub fn from_name(name: &str) -> Result<OpName, OpError> {
        OpName::all()
            .iter()
            .copied()
            .find(|op| op.name() == name)
            .ok_or_else(|| OpError::Unknown {
                name: name.to_string(),
                known: OpName::all()
                    .iter()
                    .map(|op| op.name())
                    .collect::<Vec<_>>()
                    .join(", "),
            })
    }
}

/// `layout-viz eval LAYOUT COORD`: the offset `layout` maps `coord` to.
pub fn eval(layout: &str, coord: &str) -> Result<i64, OpError> {
    let layout = notation::parse_any_layout(layout)?;
    let coord = notation::parse_int_tuple(coord)?;
    layout
        .try_crd2idx(&coord)
        .map_err(|source| OpError::Coordinate {
            coord,
            layout: layout.to_string(),
            source,
        })
}

fn operands<S: AsRef<str>>(
    name: OpName,
    args: &[S],
    min: usize,
    max: usize,
) -> Result<(), OpError> {
    if args.len() < min || args.len() > max {
        return Err(OpError::Usage {
            op: name.name(),
            usage: name.usage(),
            got: args.len(),
        });
    }
    Ok(())
}

/// A layout operand: CuTe notation, a bare shape, or a swizzled layout.
fn any_operand(s: &str) -> Result<AnyLayout, OpError> {
    if s.trim_start().starts_with("Sw") {
        Ok(notation::parse_any_layout(s)?)
    } else {
        Ok(AnyLayout::Plain(notation::parse_layout_or_shape(s)?))
    }
}

/// A layout operand that may not be swizzled.
fn plain_operand(name: OpName, s: &str) -> Result<Layout, OpError> {
    match any_operand(s)? {
        AnyLayout::Plain(l) => Ok(l),
        AnyLayout::Swizzled(_) => Err(OpError::Swizzled(name)),
    }
}

/// Runs one operation on its textual operands (`layout-viz op NAME ARG...`).
pub fn apply<S: AsRef<str>>(name: OpName, args: &[S]) -> Result<AnyLayout, OpError> {
    use OpName::*;
    type Op = fn(&Layout, &Tiler) -> Result<Layout, LayoutError>;
    let arg = |i: usize| args[i].as_ref();
    let tiled: Option<Op> = match name {
        Composition => Some(lo::composition::<Tiler>),
        LogicalDivide => Some(lo::logical_divide::<Tiler>),
        ZippedDivide => Some(lo::zipped_divide::<Tiler>),
        TiledDivide => Some(lo::tiled_divide::<Tiler>),
        FlatDivide => Some(lo::flat_divide::<Tiler>),
        LogicalProduct => Some(lo::logical_product::<Tiler>),
        ZippedProduct => Some(lo::zipped_product::<Tiler>),
        TiledProduct => Some(lo::tiled_product::<Tiler>),
        FlatProduct => Some(lo::flat_product::<Tiler>),
        _ => None,
    };
    if let Some(f) = tiled {
        operands(name, args, 2, 2)?;
        let lhs = any_operand(arg(0))?;
        let tiler = notation::parse_tiler(arg(1))?;
        return Ok(lhs.map_layout(|l| f(l, &tiler))?);
    }
    let plain = |l: Layout| Ok(AnyLayout::Plain(l));
    match name {
        Coalesce => {
            operands(name, args, 1, 2)?;
            let l = plain_operand(name, arg(0))?;
            match args.get(1) {
                None => plain(lo::coalesce(&l)),
                Some(p) => plain(lo::coalesce_by(
                    &l,
                    &notation::parse_int_tuple(p.as_ref())?,
                )?),
            }
        }
        Filter => {
            operands(name, args, 1, 1)?;
            plain(lo::filter(&plain_operand(name, arg(0))?))
        }
        Complement => {
            operands(name, args, 1, 2)?;
            let l = plain_operand(name, arg(0))?;
            let cotarget = match args.get(1) {
                Some(c) => notation::parse_int_tuple(c.as_ref())?,
                None => IntTuple::Int(l.cosize()),
            };
            plain(lo::complement_to(&l, &cotarget)?)
        }
        RightInverse => {
            operands(name, args, 1, 1)?;
            plain(lo::right_inverse(&plain_operand(name, arg(0))?))
        }
        LeftInverse => {
            operands(name, args, 1, 1)?;
            plain(lo::left_inverse(&plain_operand(name, arg(0))?)?)
        }
        BlockedProduct | RakedProduct => {
            operands(name, args, 2, 2)?;
            let block = plain_operand(name, arg(0))?;
            let tiler = plain_operand(name, arg(1))?;
            if name == BlockedProduct {
                plain(lo::blocked_product(&block, &tiler)?)
            } else {
                plain(lo::raked_product(&block, &tiler)?)
            }
        }
        _ => unreachable!("tiled operations are handled above"),
    }
}

fn int_tuple_json(t: &IntTuple) -> Value {
    match t {
        IntTuple::Int(v) => json!(v),
        IntTuple::Tuple(v) => Value::Array(v.iter().map(int_tuple_json).collect()),
    }
}

/// `op --json`'s summary of a layout: {"layout", "shape", "stride", "size", "cosize"},
/// plus "swizzle" and "offset" for a swizzled one.
pub fn summary_json(l: &AnyLayout) -> Value {
    let inner = l.layout();
    let mut v = json!({
        "layout": l.to_string(),
        "shape": int_tuple_json(&inner.shape),
        "stride": int_tuple_json(&inner.stride),
        "size": inner.size(),
        "cosize": inner.cosize(),
    });
    if let AnyLayout::Swizzled(c) = l {
        v["swizzle"] = json!(c.swizzle.to_string());
        v["offset"] = json!(c.offset);
    }
    v
}
