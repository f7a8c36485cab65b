//! `layout-viz eval` and `layout-viz op`: evaluate a layout at a coordinate, and apply
//! one of CuTe's layout operations, reading and printing CuTe's notation.

use clap::ValueEnum;
use serde_json::{Value, json};

use layout_viz::int_tuple::IntTuple;
use layout_viz::layout::{self as lo, Layout, Tiler};
use layout_viz::notation;
use layout_viz::swizzle::AnyLayout;

#[derive(clap::Args, Debug)]
#[command(after_help = "\
Examples:
  layout-viz eval \"((2,2),8,16):((1,2),4,32)\" \"((0,1),4,3)\"      # 114
  layout-viz eval \"((2,2),8,16):((1,2),4,32)\" 105                # same element, 1-D index
  layout-viz eval \"((2,2),8,16):((1,2),4,32)\" \"(2,4,3)\"          # flat coordinate per mode
  layout-viz eval \"Sw<3,3,3> o _0 o (8,64):(64,1)\" \"(1,0)\"       # 72")]
pub struct EvalArgs {
    /// The layout, e.g. "(8,64):(64,1)" or "Sw<3,3,3> o _0 o (8,64):(64,1)".
    pub layout: String,
    /// A 1-D index ("9"), a hierarchical coordinate ("((0,1),4,3)"), or one integer per
    /// mode ("(2,4,3)"), as CuTe's layout(crd) accepts.
    #[arg(allow_hyphen_values = true)]
    pub coord: String,
    /// Print {"offset": N} instead of N.
    #[arg(long)]
    pub json: bool,
}

/// The operations `op` knows, named as CuTe's functions in kebab-case.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
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

#[derive(clap::Args, Debug)]
#[command(after_help = "\
Operands:
  LAYOUT   CuTe notation \"shape:stride\", e.g. \"((2,4),8):((1,16),2)\" (\"_8\" accepted),
           or a bare shape \"(8,4)\" meaning its compact column-major layout (8,4):(1,8).
           composition, the divides and the products also take a swizzled layout
           \"Sw<3,3,3> o _0 o (8,64):(64,1)\"; they act on the layout and keep the swizzle.
  TILER    a layout \"8:2\" or an integer \"8\" (= 8:1) tiles the whole layout;
           a by-mode tiler is a list in square brackets, one tiler per mode:
             \"[8:1,4:2]\"   \"[_,4]\" (_ leaves a mode alone)   \"[(2,2):(1,4),8]\"
           a bare shape is by-mode with compact tilers, as in CuTe: \"(8,4)\" = \"[8:1,4:1]\".
  COTARGET an integer cosize bound, or a shape (as logical_divide uses it).
  PROFILE  an IntTuple whose terminals name the modes to coalesce separately, e.g. \"(1,1)\".

Examples:
  layout-viz op composition \"(6,2):(8,2)\" \"(4,3):(3,1)\"      # ((2,2),3):((24,2),8)
  layout-viz op complement 4:1 24                             # 6:4
  layout-viz op logical-divide \"(4,2,3):(2,1,8)\" 4:2          # ((2,2),(2,3)):((4,1),(2,8))
  layout-viz op zipped-divide \"(12,32):(32,1)\" \"[4:1,8:1]\"    # ((4,8),(3,4)):((32,1),(128,8))
  layout-viz op blocked-product \"(2,2):(1,2)\" \"(3,4):(1,3)\"")]
pub struct OpArgs {
    /// The operation.
    #[arg(value_enum)]
    pub name: OpName,
    /// Its operands (see below).
    #[arg(allow_hyphen_values = true)]
    pub args: Vec<String>,
    /// Print {"layout", "shape", "stride", "size", "cosize"} as JSON.
    #[arg(long)]
    pub json: bool,
}

type CliResult<T> = Result<T, Box<dyn std::error::Error>>;

/// `layout-viz eval LAYOUT COORD`.
pub fn eval(args: EvalArgs) -> CliResult<()> {
    let layout = notation::parse_any_layout(&args.layout)?;
    let coord = notation::parse_int_tuple(&args.coord)?;
    let offset = layout
        .try_crd2idx(&coord)
        .map_err(|e| format!("{coord} does not fit {layout}: {e}"))?;
    if args.json {
        println!("{}", json!({ "offset": offset }));
    } else {
        println!("{offset}");
    }
    Ok(())
}

/// `layout-viz op NAME ARG...`.
pub fn op(args: OpArgs) -> CliResult<()> {
    let result = apply(args.name, &args.args)?;
    if args.json {
        println!("{}", to_json(&result));
    } else {
        println!("{result}");
    }
    Ok(())
}

fn operands<'a>(
    name: OpName,
    args: &'a [String],
    min: usize,
    max: usize,
    usage: &str,
) -> CliResult<&'a [String]> {
    if args.len() < min || args.len() > max {
        let op = name
            .to_possible_value()
            .map(|v| v.get_name().to_string())
            .unwrap_or_default();
        return Err(format!(
            "usage: layout-viz op {op} {usage} (got {} operands)",
            args.len()
        )
        .into());
    }
    Ok(args)
}

/// A layout operand: CuTe notation, a bare shape, or a swizzled layout.
fn any_operand(s: &str) -> CliResult<AnyLayout> {
    if s.trim_start().starts_with("Sw") {
        Ok(notation::parse_any_layout(s)?)
    } else {
        Ok(AnyLayout::Plain(notation::parse_layout_or_shape(s)?))
    }
}

/// A layout operand that may not be swizzled.
fn plain_operand(name: OpName, s: &str) -> CliResult<Layout> {
    match any_operand(s)? {
        AnyLayout::Plain(l) => Ok(l),
        AnyLayout::Swizzled(_) => Err(format!(
            "{name:?} does not apply to a swizzled layout: give its inner layout"
        )
        .into()),
    }
}

fn tiler_operand(s: &str) -> CliResult<Tiler> {
    Ok(notation::parse_tiler(s)?)
}

/// Runs one operation on its textual operands.
pub fn apply(name: OpName, args: &[String]) -> CliResult<AnyLayout> {
    use OpName::*;
    type Op = fn(&Layout, &Tiler) -> Result<Layout, lo::LayoutError>;
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
        let a = operands(name, args, 2, 2, "LAYOUT TILER")?;
        let lhs = any_operand(&a[0])?;
        let tiler = tiler_operand(&a[1])?;
        return Ok(lhs.map_layout(|l| f(l, &tiler))?);
    }
    let plain = |l: Layout| Ok(AnyLayout::Plain(l));
    match name {
        Coalesce => {
            let a = operands(name, args, 1, 2, "LAYOUT [PROFILE]")?;
            let l = plain_operand(name, &a[0])?;
            match a.get(1) {
                None => plain(lo::coalesce(&l)),
                Some(p) => plain(lo::coalesce_by(&l, &notation::parse_int_tuple(p)?)?),
            }
        }
        Filter => {
            let a = operands(name, args, 1, 1, "LAYOUT")?;
            plain(lo::filter(&plain_operand(name, &a[0])?))
        }
        Complement => {
            let a = operands(name, args, 1, 2, "LAYOUT [COTARGET]")?;
            let l = plain_operand(name, &a[0])?;
            let cotarget = match a.get(1) {
                Some(c) => notation::parse_int_tuple(c)?,
                None => IntTuple::Int(l.cosize()),
            };
            plain(lo::complement_to(&l, &cotarget)?)
        }
        RightInverse => {
            let a = operands(name, args, 1, 1, "LAYOUT")?;
            plain(lo::right_inverse(&plain_operand(name, &a[0])?))
        }
        LeftInverse => {
            let a = operands(name, args, 1, 1, "LAYOUT")?;
            plain(lo::left_inverse(&plain_operand(name, &a[0])?)?)
        }
        BlockedProduct | RakedProduct => {
            let a = operands(name, args, 2, 2, "BLOCK LAYOUT")?;
            let block = plain_operand(name, &a[0])?;
            let tiler = plain_operand(name, &a[1])?;
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

fn to_json(l: &AnyLayout) -> Value {
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
