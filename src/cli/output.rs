//! Where a command's output goes: stdout (no path, or `-`), or a file that is written whole to
//! a temporary file beside it and renamed over it, so an interrupted export never leaves half a
//! file, and never over a store: `-o prism.db` would destroy every run in it.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};

/// Writes what `write` produces to `path` (or stdout). `stores` are the databases the command
/// reads; writing over one of them, or over any SQLite file, is refused unless `force`.
/// Returns the file written, if any.
pub(crate) fn write_output(
    path: Option<&Path>,
    stores: &[&Path],
    force: bool,
    write: impl FnOnce(&mut dyn Write) -> anyhow::Result<()>,
) -> anyhow::Result<Option<PathBuf>> {
    let Some(path) = path.filter(|p| p.as_os_str() != "-") else {
        // On a terminal the output is made safe first (a CSV's model name may hold escapes);
        // piped or redirected, it is the data's own bytes.
        if std::io::IsTerminal::is_terminal(&std::io::stdout()) {
            let mut buf = Vec::new();
            write(&mut buf)?;
            crate::text::out(&String::from_utf8_lossy(&buf));
            return Ok(None);
        }
        let stdout = std::io::stdout();
        let mut out = std::io::BufWriter::new(stdout.lock());
        write(&mut out)?;
        out.flush()?;
        return Ok(None);
    };
    if !force {
        refuse_stores(path, stores)?;
    }
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let mut tmp = tempfile::Builder::new()
        .prefix(".prism-output")
        .tempfile_in(dir)
        .with_context(|| format!("writing {}", path.display()))?;
    {
        let mut out = std::io::BufWriter::new(tmp.as_file_mut());
        write(&mut out)?;
        out.flush()
            .with_context(|| format!("writing {}", path.display()))?;
    }
    // A temporary file is private (0600); the output gets what a new file usually has.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(path)
            .map(|m| m.permissions().mode())
            .unwrap_or(0o644);
        let _ = std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(mode));
    }
    tmp.persist(path)
        .with_context(|| format!("writing {}", path.display()))?;
    Ok(Some(path.to_path_buf()))
}

/// Refuses `path` when it is one of `stores` or any SQLite database (checked again when
/// writing; commands that work long before they write check first, so the refusal comes at once).
pub(crate) fn refuse_stores(path: &Path, stores: &[&Path]) -> anyhow::Result<()> {
    let Ok(target) = std::fs::canonicalize(path) else {
        return Ok(()); // a new file
    };
    let is_store = stores
        .iter()
        .filter_map(|s| std::fs::canonicalize(s).ok())
        .any(|s| s == target);
    let mut head = [0u8; 16];
    let sqlite = std::fs::File::open(&target)
        .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut head))
        .is_ok()
        && &head == b"SQLite format 3\0";
    if is_store || sqlite {
        bail!(
            "refusing to write over {}: it is {} (pass --force to replace it anyway)",
            path.display(),
            if is_store {
                "the store this command reads"
            } else {
                "a SQLite database"
            }
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_store_or_any_sqlite_file_is_never_overwritten_unless_forced() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("s.db");
        crate::store::Db::file(&db).read().unwrap();
        let write = |o: &mut dyn Write| -> anyhow::Result<()> { Ok(o.write_all(b"x\n")?) };
        let e = write_output(Some(&db), &[&db], false, write).unwrap_err();
        assert!(
            e.to_string().contains("the store this command reads"),
            "{e}"
        );
        let other = dir.path().join("other.db");
        std::fs::copy(&db, &other).unwrap();
        let e = write_output(Some(&other), &[&db], false, write).unwrap_err();
        assert!(e.to_string().contains("a SQLite database"), "{e}");
        assert!(crate::store::Db::file(&db).read().is_ok());
        // A plain file is replaced whole, keeping its mode; forced, a database too.
        let plain = dir.path().join("out.csv");
        std::fs::write(&plain, "old\n").unwrap();
        write_output(Some(&plain), &[&db], false, write).unwrap();
        assert_eq!(std::fs::read_to_string(&plain).unwrap(), "x\n");
        write_output(Some(&other), &[&db], true, write).unwrap();
        assert_eq!(std::fs::read_to_string(&other).unwrap(), "x\n");
        // A failed write leaves the old file as it was and no temporary file behind.
        let fail = |_: &mut dyn Write| -> anyhow::Result<()> { bail!("disk full") };
        assert!(write_output(Some(&plain), &[], false, fail).is_err());
        assert_eq!(std::fs::read_to_string(&plain).unwrap(), "x\n");
        let left: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().starts_with(".prism-output"))
            .collect();
        assert!(left.is_empty());
    }
}
