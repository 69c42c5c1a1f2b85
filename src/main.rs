//! The `tether` binary; everything lives in [`tether::cli`].

fn main() -> std::process::ExitCode {
    tether::cli::main()
}
