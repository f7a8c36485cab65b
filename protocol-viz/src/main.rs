//! The `protocol-viz` command line: `protocol-viz book --out DIR` writes the book's figures
//! of the protocol models.
use std::path::PathBuf;

use clap::{Parser, Subcommand};

#[derive(Parser, Debug)]
#[command(
    name = "protocol-viz",
    version,
    about = "The Hopper stages' protocol models, drawn as SVG for the book"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Write every protocol figure the book uses, and their manifest.
    Book {
        /// Directory to write the SVGs and the manifest into.
        #[arg(long, value_name = "DIR")]
        out: PathBuf,
        /// Print the manifest as JSON on stdout.
        #[arg(long)]
        json: bool,
    },
}

fn main() {
    let Command::Book { out, json } = Cli::parse().command;
    match protocol_viz::book::write_book(&out) {
        Ok(manifest) if json => match serde_json::to_string_pretty(&manifest) {
            Ok(text) => println!("{text}"),
            Err(err) => {
                eprintln!("protocol-viz: {err}");
                std::process::exit(2);
            }
        },
        Ok(manifest) => eprintln!(
            "wrote {} figures and {} to {}",
            manifest.figures.len(),
            protocol_viz::book::MANIFEST,
            out.display()
        ),
        Err(err) => {
            eprintln!("protocol-viz: {err}");
            std::process::exit(2);
        }
    }
}
