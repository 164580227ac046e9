//! What the shell needs from prism: completions and manual pages, both made from the same clap
//! definition the commands parse with, so they cannot drift from it.

use std::io::Write;
use std::path::Path;

use clap::CommandFactory;

/// `prism completions SHELL`: the completion script on standard output.
pub(super) fn completions(shell: clap_complete::Shell) -> anyhow::Result<i32> {
    let mut cmd = super::Cli::command();
    // Made whole first: the generator panics on a write error (`| head` closes the pipe).
    let mut text = Vec::new();
    clap_complete::generate(shell, &mut cmd, "prism", &mut text);
    to_stdout(&text)
}

/// `bytes` on standard output; a reader that stopped reading (`| head`) is no error.
fn to_stdout(bytes: &[u8]) -> anyhow::Result<i32> {
    let mut out = std::io::stdout().lock();
    match out.write_all(bytes).and_then(|()| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(e.into()),
        _ => Ok(0),
    }
}

/// `prism man [--dir DIR]`: prism(1) on standard output, or every page into `dir`.
pub(super) fn man(dir: Option<&Path>) -> anyhow::Result<i32> {
    let cmd = super::Cli::command();
    match dir {
        None => {
            let mut page = Vec::new();
            clap_mangen::Man::new(cmd).render(&mut page)?;
            return to_stdout(&page);
        }
        Some(dir) => {
            std::fs::create_dir_all(dir)
                .map_err(|e| anyhow::anyhow!("creating {}: {e}", dir.display()))?;
            clap_mangen::generate_to(cmd, dir)
                .map_err(|e| anyhow::anyhow!("writing the pages into {}: {e}", dir.display()))?;
            crate::say!("manual pages written to {}", dir.display());
        }
    }
    Ok(0)
}
