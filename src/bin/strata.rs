//! The `strata` command-line tool.

fn main() -> std::process::ExitCode {
    strata_cli::main()
}
