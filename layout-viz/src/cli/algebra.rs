//! `layout-viz eval` and `layout-viz op`: evaluate a layout at a coordinate, and apply
//! one of CuTe's layout operations, reading and printing CuTe's notation.

use serde_json::json;

use layout_viz::ops::{self, OpName};

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
    let offset = ops::eval(&args.layout, &args.coord)?;
    if args.json {
        println!("{}", json!({ "offset": offset }));
    } else {
        println!("{offset}");
    }
    Ok(())
}

/// `layout-viz op NAME ARG...`.
pub fn op(args: OpArgs) -> CliResult<()> {
    let result = ops::apply(args.name, &args.args)?;
    if args.json {
        println!("{}", ops::summary_json(&result));
    } else {
        println!("{result}");
    }
    Ok(())
}
