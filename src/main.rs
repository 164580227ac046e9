use clap::Parser;

fn main() {
    if let Some(msg) = prism::cpu::refusal() {
        eprintln!("{msg}");
        std::process::exit(1);
    }
    let args: Vec<String> = std::env::args().collect();
    // The embedded model's worker process (started by prism itself, never by hand): before
    // clap, so it needs no subcommand in the help and starts in as little time as possible.
    #[cfg(feature = "local")]
    if args.get(1).map(String::as_str) == Some(prism::provider::local::WORKER_SUBCOMMAND) {
        std::process::exit(prism::provider::local::worker::main(&args[2..]));
    }
    // A mistyped command is said as one, with the nearest command, before clap would read it
    // as a dataset path (`prism rnu`) or name the next word (`prism comapre a b`).
    if let Some(msg) = prism::cli::shell::mistyped_command(&args) {
        eprintln!("{msg}");
        std::process::exit(2);
    }
    let cli = prism::cli::Cli::parse_from(args);
    let result = prism::cli::main(cli);
    // Values a store held that this prism does not know were read as "unknown": each is named
    // once, after what the command printed.
    for note in prism::store::unknown::take() {
        prism::warn!("{note}");
    }
    match result {
        Ok(code) => std::process::exit(code),
        Err(e) => {
            prism::warn!("prism: {e:#}");
            // A run another prism holds, or a store that could not be written: the same
            // command can simply be run again later (EX_TEMPFAIL, which batch scripts retry).
            let temporary = e
                .downcast_ref::<prism::engine::harness::RunError>()
                .is_some_and(|r| r.is_temporary());
            std::process::exit(if temporary { 75 } else { 1 });
        }
    }
}
