//! `layout-viz draw <kind>`: one diagram as SVG (to `--out` or stdout), and `layout-viz
//! book --out DIR`: every layout, atom, swizzle and bank diagram the book uses plus
//! `manifest.json` (protocol-viz draws the rest). `--json` prints what a script would
//! read (the atom, the bank report, the manifest) on stdout.

use std::io::Write;
use std::path::PathBuf;

use clap::{Args, Subcommand, ValueEnum};
use serde::Serialize;

use layout_viz::atoms::{self, TmaBox, TmaSwizzle};
use layout_viz::{bank, book, render};

type CliResult = Result<(), Box<dyn std::error::Error>>;

#[derive(Args, Debug)]
pub struct Output {
    /// Where to write the SVG (stdout when omitted).
    #[arg(long, value_name = "FILE.svg")]
    out: Option<PathBuf>,
}

#[derive(Subcommand, Debug)]
pub enum DrawCommand {
    /// A layout's offsets as a grid, e.g. "(2,8):(1,2)" or "Sw<3,3,3> o _0 o (8,64):(64,1)".
    Layout {
        layout: String,
        /// Draw the colexicographic walk through indices 0, 1, 2, ...
        #[arg(long, conflicts_with_all = ["chunks", "window"])]
        path: bool,
        /// One cell per 16-byte chunk of --elem-bytes elements (a wide row-major tile at a
        /// readable size), where every run of 16 bytes along a row is at consecutive offsets.
        #[arg(long)]
        chunks: bool,
        /// Bytes per element, for --chunks.
        #[arg(long, default_value_t = 2, requires = "chunks")]
        elem_bytes: u32,
        /// Only the top-left ROWS,COLS of the grid (of chunks, with --chunks), e.g. "32,32".
        #[arg(long, value_name = "ROWS,COLS", value_parser = parse_window)]
        window: Option<(u32, u32)>,
        #[command(flatten)]
        out: Output,
    },
    /// A layout before and after a swizzle, colored by 16-byte chunk.
    Swizzle {
        /// Swizzle<B, M, S>: B, the number of bits XORed.
        #[arg(long, requires_all = ["base", "shift"])]
        bits: Option<u32>,
        /// M: the bits kept whole (log2 of the unit, in elements).
        #[arg(long, requires_all = ["bits", "shift"])]
        base: Option<u32>,
        /// S: how far down the XOR source bits are moved.
        #[arg(long, requires_all = ["bits", "base"], allow_hyphen_values = true)]
        shift: Option<i32>,
        /// The whole swizzle, as the playground takes it: "3,3,3", "Sw<3,3,3>" or CuTe's
        /// "Swizzle<3,3,3>" (instead of --bits/--base/--shift).
        #[arg(long, conflicts_with_all = ["bits", "base", "shift"], allow_hyphen_values = true)]
        swizzle: Option<String>,
        /// The layout, plain (with --bits/--base/--shift) or already swizzled.
        #[arg(long)]
        layout: String,
        /// Bytes per element, for the chunk coloring.
        #[arg(long, default_value_t = 2)]
        elem_bytes: u32,
        /// One cell per 16-byte chunk: the permutation the swizzle is, row by row.
        #[arg(long)]
        chunks: bool,
        /// Only the top-left ROWS,COLS of each grid (of chunks, with --chunks).
        #[arg(long, value_name = "ROWS,COLS", value_parser = parse_window)]
        window: Option<(u32, u32)>,
        #[command(flatten)]
        out: Output,
    },
    /// A thread-value layout: every (thread, value) that holds each cell.
    Tv {
        /// mma-m16n8k16-a|b|c, mma-m16n8k8-a|b|c, mma-m16n8k16-b-4warps,
        /// ldmatrix-x1|x2|x4[-trans][-src], wgmma-m64n<N>k16-c|a, cp-async-<R>x<C>
        atom: String,
        /// Print the atom (modes, CuTe notation, owners of each cell) as JSON.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        out: Output,
    },
    /// An MMA atom: A left, B above, C bottom right.
    Mma {
        /// mma-m16n8k16 or mma-m16n8k8
        atom: String,
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        out: Output,
    },
    /// ldmatrix: the lanes that give row addresses and the registers that receive elements.
    Ldmatrix {
        /// Matrices per instruction: 1, 2 or 4.
        #[arg(long, default_value_t = 4)]
        num: u32,
        #[arg(long)]
        trans: bool,
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        out: Output,
    },
    /// A bank map of a named shared-memory access, or of a warp's access through a layout
    /// (--layout, --lanes, --access), with its wavefront count.
    #[command(after_help = "\
Examples:
  layout-viz draw bank ldmatrix-q-swizzled
  layout-viz draw bank --layout \"Sw<3,3,3> o _0 o (8,64):(64,1)\" --lanes \"(8,4):(1,64)\" --access ldmatrix-x4")]
    Bank {
        /// ldmatrix-q-unswizzled, ldmatrix-q-swizzled, ... (`--list` shows them all)
        #[arg(required_unless_present_any = ["list", "layout"], conflicts_with = "layout")]
        pattern: Option<String>,
        /// The tile, plain or swizzled: lane l touches its element at index LANES(l).
        #[arg(long, requires = "lanes")]
        layout: Option<String>,
        /// A layout from lane to the tile's 1-D index, of size at most 32 (the other lanes
        /// idle), e.g. "(8,4):(1,64)": lane l at row l%8, column 8(l/8) of a (8,64) tile.
        #[arg(long, requires = "layout")]
        lanes: Option<String>,
        /// The instruction: ld32, ld64, ld128, st32, st64, st128, ldmatrix-x1|x2|x4[-trans].
        #[arg(long, default_value = "ld32")]
        access: String,
        /// Bytes per element of the tile.
        #[arg(long, default_value_t = 2)]
        elem_bytes: u32,
        /// Print wavefronts, ideal and conflicts as JSON.
        #[arg(long)]
        json: bool,
        /// List the named patterns.
        #[arg(long)]
        list: bool,
        #[command(flatten)]
        out: Output,
    },
    /// A TMA box: its place in the global tensor and in (swizzled) shared memory.
    Tma {
        /// Global tensor ROWS,COLS.
        #[arg(long, value_parser = pair, default_value = "16,128")]
        tensor: (u32, u32),
        /// Box ROWS,COLS.
        #[arg(long = "box", value_parser = pair, default_value = "8,64")]
        boxdim: (u32, u32),
        /// Box origin ROW,COL in the tensor.
        #[arg(long, value_parser = pair, default_value = "0,0")]
        origin: (u32, u32),
        #[arg(long, default_value_t = 2)]
        elem_bytes: u32,
        #[arg(long, value_enum, default_value_t = SwizzleMode::None)]
        swizzle: SwizzleMode,
        #[command(flatten)]
        out: Output,
    },
}

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum SwizzleMode {
    None,
    #[value(name = "32")]
    B32,
    #[value(name = "64")]
    B64,
    #[value(name = "128")]
    B128,
}

fn pair(s: &str) -> Result<(u32, u32), String> {
    let (a, b) = s
        .split_once(',')
        .ok_or_else(|| format!("expected A,B, got `{s}`"))?;
    let parse = |x: &str| x.trim().parse::<u32>().map_err(|e| format!("`{x}`: {e}"));
    Ok((parse(a)?, parse(b)?))
}

#[derive(Args, Debug)]
pub struct BookArgs {
    /// Directory to write the SVGs and manifest.json into.
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
    /// Print the manifest as JSON on stdout.
    #[arg(long)]
    json: bool,
}

fn emit(out: &Output, svg: &str) -> CliResult {
    match &out.out {
        Some(path) => {
            std::fs::write(path, svg).map_err(|e| format!("{}: {e}", path.display()).into())
        }
        None => write_stdout(svg),
    }
}

/// Writes to stdout; a reader that closes the pipe early (`| head`) is not an error.
fn write_stdout(text: &str) -> CliResult {
    let mut stdout = std::io::stdout().lock();
    match stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
    {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(e.into()),
        _ => Ok(()),
    }
}

fn print_json<T: Serialize>(value: &T) -> CliResult {
    write_stdout(&(serde_json::to_string_pretty(value)? + "\n"))
}

/// An atom with its inverse spelled out, for `--json`.
#[derive(Serialize)]
struct TvJson<'a> {
    atom: &'a atoms::TvAtom,
    threads: u32,
    values: u32,
    cute: String,
    /// owners[row][col] = [[thread, value], ...]
    owners: Vec<Vec<Vec<(u32, u32)>>>,
}

fn tv_json(atom: &atoms::TvAtom) -> TvJson<'_> {
    let owners = atom.owners();
    TvJson {
        atom,
        threads: atom.threads(),
        values: atom.values(),
        cute: atom.cute_notation(),
        owners: owners
            .chunks(atom.cols as usize)
            .map(|row| row.to_vec())
            .collect(),
    }
}

/// `--window ROWS,COLS`: two counts of at least 1.
fn parse_window(text: &str) -> Result<(u32, u32), String> {
    let bad = || format!("`{text}`: expected ROWS,COLS, two counts of at least 1, e.g. 32,32");
    let (r, c) = text.split_once(',').ok_or_else(bad)?;
    let (r, c): (u32, u32) = (
        r.trim().parse().map_err(|_| bad())?,
        c.trim().parse().map_err(|_| bad())?,
    );
    if r == 0 || c == 0 {
        return Err(bad());
    }
    Ok((r, c))
}

pub fn draw(cmd: DrawCommand) -> CliResult {
    match cmd {
        DrawCommand::Layout {
            layout,
            path,
            chunks,
            elem_bytes,
            window,
            out,
        } => {
            if elem_bytes == 0 {
                return Err("--elem-bytes must be at least 1".into());
            }
            let window = window.map_or(book::Window::All, |(r, c)| book::Window::Exactly(r, c));
            let chunks = chunks.then_some(elem_bytes);
            emit(&out, &book::layout_figure(&layout, path, chunks, window)?.0)
        }
        DrawCommand::Swizzle {
            bits,
            base,
            shift,
            swizzle,
            layout,
            elem_bytes,
            chunks,
            window,
            out,
        } => {
            if elem_bytes == 0 {
                return Err("--elem-bytes must be at least 1".into());
            }
            let sw = match (bits, base, shift, swizzle) {
                (Some(b), Some(m), Some(s), _) => Some((b, m, s)),
                (_, _, _, Some(text)) => layout_viz::notation::parse_swizzle_spec(&text)?
                    .map(|sw| (sw.bits, sw.base, sw.shift)),
                _ => None,
            };
            let window = window.map_or(book::Window::All, |(r, c)| book::Window::Exactly(r, c));
            emit(
                &out,
                &book::swizzle_figure(&layout, sw, elem_bytes, chunks, window)?.0,
            )
        }
        DrawCommand::Tv { atom, json, out } => {
            let atom = atoms::tv_by_name(&atom)?;
            if json {
                print_json(&tv_json(&atom))?;
                if out.out.is_none() {
                    return Ok(());
                }
            }
            emit(&out, &render::tv(&atom))
        }
        DrawCommand::Mma { atom, json, out } => {
            let atom = atoms::mma_by_name(&atom)?;
            if json {
                print_json(&atom)?;
                if out.out.is_none() {
                    return Ok(());
                }
            }
            emit(&out, &render::mma(&atom))
        }
        DrawCommand::Ldmatrix {
            num,
            trans,
            json,
            out,
        } => {
            let l = atoms::ldmatrix(num, trans)?;
            if json {
                print_json(&l)?;
                if out.out.is_none() {
                    return Ok(());
                }
            }
            emit(&out, &render::ldmatrix(&l))
        }
        DrawCommand::Bank {
            pattern,
            layout,
            lanes,
            access,
            elem_bytes,
            json,
            list,
            out,
        } => {
            if list {
                let list: String = bank::PATTERNS
                    .iter()
                    .map(|(name, what)| format!("{name:30} {what}\n"))
                    .collect();
                return write_stdout(&list);
            }
            let (svg, report) = match (pattern, layout, lanes) {
                (_, Some(layout), Some(lanes)) => {
                    book::bank_layout_svg(&layout, &lanes, &access, elem_bytes)?
                }
                (Some(pattern), _, _) => book::bank_svg(&pattern)?,
                _ => return Err("a pattern name, or --layout and --lanes, is required".into()),
            };
            if json {
                print_json(&report)?;
                if out.out.is_none() {
                    return Ok(());
                }
            }
            emit(&out, &svg)
        }
        DrawCommand::Tma {
            tensor,
            boxdim,
            origin,
            elem_bytes,
            swizzle,
            out,
        } => {
            let swizzle = match swizzle {
                SwizzleMode::None => TmaSwizzle::None,
                SwizzleMode::B32 => TmaSwizzle::B32,
                SwizzleMode::B64 => TmaSwizzle::B64,
                SwizzleMode::B128 => TmaSwizzle::B128,
            };
            let b = TmaBox::new(tensor, boxdim, origin, elem_bytes, swizzle)?;
            emit(&out, &render::tma(&b))
        }
    }
}

pub fn book(args: BookArgs) -> CliResult {
    let manifest = book::write_book(&args.out)?;
    if args.json {
        print_json(&manifest)?;
    } else {
        eprintln!(
            "wrote {} figures and manifest.json to {}",
            manifest.figures.len(),
            args.out.display()
        );
    }
    Ok(())
}
