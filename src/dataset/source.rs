//! Where dataset files come from: a directory on disk, or the sample data compiled into the binary.
//!
//! Loaders speak only in paths relative to the dataset root, so the same code reads both.

use std::collections::HashSet;
use std::fs;
use std::io::{self, BufRead, BufReader, Cursor, Read};
use std::path::{Path, PathBuf};

use include_dir::{Dir, include_dir};

/// The bundled sample release (`sample-data/`), so `prism` works from any directory.
pub static SAMPLE_DATA: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/sample-data");

#[derive(Debug, Clone)]
pub enum Source {
    Dir(PathBuf),
    Embedded(&'static Dir<'static>),
}

impl Source {
    pub fn sample() -> Self {
        Source::Embedded(&SAMPLE_DATA)
    }

    /// How a relative path is shown in messages.
    pub fn display(&self, rel: &str) -> String {
        match self {
            Source::Dir(root) => root.join(rel).display().to_string(),
            Source::Embedded(_) => format!("<sample-data>/{rel}"),
        }
    }

    /// A name for the whole source, shown in the title bar.
    pub fn label(&self) -> String {
        match self {
            Source::Dir(root) => root.display().to_string(),
            Source::Embedded(_) => "bundled sample data".to_string(),
        }
    }

    pub fn is_file(&self, rel: &str) -> bool {
        match self {
            Source::Dir(root) => confine(root, rel).is_ok_and(|p| p.is_file()),
            Source::Embedded(d) => d.get_file(rel).is_some(),
        }
    }

    /// Why `rel` cannot be read from this dataset (it lies outside it), if it cannot.
    pub fn outside(&self, rel: &str) -> Option<String> {
        match self {
            Source::Dir(root) => confine(root, rel).err().map(|e| e.to_string()),
            Source::Embedded(_) => None,
        }
    }

    pub fn is_dir(&self, rel: &str) -> bool {
        match self {
            Source::Dir(root) => root.join(rel).is_dir(),
            Source::Embedded(d) => rel.is_empty() || d.get_dir(rel).is_some(),
        }
    }

    pub fn open(&self, rel: &str) -> io::Result<Box<dyn BufRead + Send>> {
        match self {
            Source::Dir(root) => {
                let f = fs::File::open(confine(root, rel)?)?;
                Ok(Box::new(BufReader::with_capacity(1 << 16, f)))
            }
            Source::Embedded(d) => match d.get_file(rel) {
                Some(f) => Ok(Box::new(Cursor::new(f.contents()))),
                None => Err(io::Error::new(io::ErrorKind::NotFound, "no such file")),
            },
        }
    }

    /// Reads a whole (small) file, refusing anything over `max` bytes.
    pub fn read_bytes(&self, rel: &str, max: u64) -> io::Result<Vec<u8>> {
        let mut out = Vec::new();
        let mut r = self.open(rel)?.take(max + 1);
        r.read_to_end(&mut out)?;
        if out.len() as u64 > max {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("file is larger than {} MiB", max >> 20),
            ));
        }
        Ok(out)
    }

    /// Every file under `rel_dir` (recursively) whose name ends in `.{ext}`, as sorted relative paths.
    pub fn files_with_ext(&self, rel_dir: &str, ext: &str) -> Vec<String> {
        self.files_and_refused(rel_dir, ext).0
    }

    /// [`files_with_ext`](Self::files_with_ext), and the `.{ext}` entries refused because a
    /// symlink leads out of the dataset (named to the user, never read).
    pub fn files_and_refused(&self, rel_dir: &str, ext: &str) -> (Vec<String>, Vec<String>) {
        let mut out = Vec::new();
        let mut refused = Vec::new();
        match self {
            Source::Dir(root) => {
                if let Ok(dir) = confine(root, rel_dir) {
                    let real_root = fs::canonicalize(root).unwrap_or_else(|_| root.clone());
                    let mut seen = HashSet::new();
                    let mut w = Walk {
                        root,
                        real_root: &real_root,
                        ext,
                        seen: &mut seen,
                        out: &mut out,
                        refused: &mut refused,
                    };
                    w.walk(&dir);
                }
            }
            Source::Embedded(d) => {
                let dir = if rel_dir.is_empty() {
                    Some(*d)
                } else {
                    d.get_dir(rel_dir)
                };
                if let Some(dir) = dir {
                    walk_embedded(dir, ext, &mut out);
                }
            }
        }
        out.sort();
        refused.sort();
        (out, refused)
    }
}

/// Whether a relative path written in a dataset (a registry's `file`) leaves the directory it is
/// relative to before any symlink is looked at: absolute, or with a `..`.
pub(super) fn escapes(rel: &str) -> bool {
    use std::path::Component;
    Path::new(rel)
        .components()
        .any(|c| !matches!(c, Component::Normal(_) | Component::CurDir))
}

/// `root/rel`, if it stays inside the dataset: no absolute path, no `..`, and once symlinks are
/// resolved still under the root. A registry entry like `../../secret/private.jsonl` would
/// otherwise load (and send to model APIs) a file the user never pointed at.
fn confine(root: &Path, rel: &str) -> io::Result<PathBuf> {
    let outside = |why: &str| {
        io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!("{rel:?} is outside the dataset directory ({why})"),
        )
    };
    if escapes(rel) {
        return Err(outside("absolute or with `..`"));
    }
    let path = root.join(rel);
    // Resolve symlinks: a link inside the dataset must not lead out of it.
    if let (Ok(real_root), Ok(real)) = (fs::canonicalize(root), fs::canonicalize(&path))
        && !real.starts_with(&real_root)
    {
        return Err(outside("a symlink leads out of it"));
    }
    Ok(path)
}

/// Walks a directory for files ending in `.{ext}`. Symlinked directories are followed only
/// inside the dataset and each directory once (by device and inode), so `ln -s . loop` neither
/// repeats files nor hangs; a file or directory a symlink leads out of the dataset to is
/// refused and named.
struct Walk<'a> {
    root: &'a Path,
    real_root: &'a Path,
    ext: &'a str,
    seen: &'a mut HashSet<(u64, u64)>,
    out: &'a mut Vec<String>,
    refused: &'a mut Vec<String>,
}

impl Walk<'_> {
    fn rel(&self, p: &Path) -> Option<String> {
        p.strip_prefix(self.root)
            .ok()
            .map(|r| r.to_string_lossy().replace('\\', "/"))
    }

    fn walk(&mut self, dir: &Path) {
        use std::os::unix::fs::MetadataExt;
        let Ok(meta) = fs::metadata(dir) else { return };
        if !self.seen.insert((meta.dev(), meta.ino())) {
            return;
        }
        if !fs::canonicalize(dir).is_ok_and(|r| r.starts_with(self.real_root)) {
            if let Some(rel) = self.rel(dir) {
                self.refused.push(rel);
            }
            return;
        }
        let Ok(entries) = fs::read_dir(dir) else {
            return;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                self.walk(&p);
            } else if p.extension().and_then(|x| x.to_str()) == Some(self.ext)
                && let Some(rel) = self.rel(&p)
            {
                if fs::canonicalize(&p).is_ok_and(|r| r.starts_with(self.real_root)) {
                    self.out.push(rel);
                } else {
                    self.refused.push(rel);
                }
            }
        }
    }
}

fn walk_embedded(dir: &Dir<'static>, ext: &str, out: &mut Vec<String>) {
    for f in dir.files() {
        if f.path().extension().and_then(|x| x.to_str()) == Some(ext) {
            out.push(f.path().to_string_lossy().into_owned());
        }
    }
    for d in dir.dirs() {
        walk_embedded(d, ext, out);
    }
}
