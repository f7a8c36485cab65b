use clap::Parser;

fn main() {
    let cli = flashlab::cli::Cli::parse();
    std::process::exit(match flashlab::run(cli) {
        Ok(code) => code,
        Err(err) => {
            // `:#` prints every context and cause, outermost first, on one line.
            eprintln!("flashlab: {err:#}");
            2
        }
    });
}
