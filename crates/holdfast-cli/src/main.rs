//! The `holdfast` program: parses the command line, runs one subcommand, prints its error as one
//! line and turns it into the exit code. Everything else lives in [`cli`].

mod cli;

fn main() -> std::process::ExitCode {
    cli::main()
}
