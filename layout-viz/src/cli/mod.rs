//! One clap definition for every subcommand; each group lives in its own file.
mod algebra;
mod draw;

use clap::{Parser, Subcommand};

#[derive(Parser, Debug)]
#[command(
    name = "layout-viz",
    version,
    about = "CuTe layouts, fragments and bank conflicts, drawn as SVG"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Print the offset a layout maps a coordinate to.
    Eval(algebra::EvalArgs),
    /// Apply a layout operation and print the result in CuTe notation.
    Op(algebra::OpArgs),
    /// Draw one diagram as SVG.
    #[command(subcommand)]
    Draw(draw::DrawCommand),
    /// Write every layout, atom, swizzle and bank diagram the book uses.
    Book(draw::BookArgs),
}

pub fn run(cli: Cli) -> Result<(), Box<dyn std::error::Error>> {
    match cli.command {
        Command::Eval(args) => algebra::eval(args),
        Command::Op(args) => algebra::op(args),
        Command::Draw(cmd) => draw::draw(cmd),
        Command::Book(args) => draw::book(args),
    }
}
