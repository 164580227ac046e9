use clap::Parser;

fn main() {
    let cli = prism::cli::Cli::parse();
    match prism::cli::main(cli) {
        Ok(code) => std::process::exit(code),
        Err(e) => {
            prism::warn!("prism: {e:#}");
            std::process::exit(1);
        }
    }
}
