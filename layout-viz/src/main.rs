//! The `layout-viz` command line: evaluate and transform layouts, draw diagrams.
mod cli;

use clap::Parser;

fn main() {
    let args = cli::Cli::parse();
    if let Err(err) = cli::run(args) {
        eprintln!("layout-viz: {err}");
        std::process::exit(2);
    }
}
