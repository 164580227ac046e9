//! Where dataset files come from: a directory on disk, or the sample data compiled into the binary.
//!
//! Loaders speak only in paths relative to the dataset root, so the same code reads both.

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
            Source::Dir(root) => root.join(rel).is_file(),
            Source::Embedded(d) => d.get_file(rel).is_some(),
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
                let f = fs::File::open(root.join(rel))?;
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
        let mut out = Vec::new();
        match self {
            Source::Dir(root) => walk(root, &root.join(rel_dir), ext, &mut out),
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
        out
    }
}

fn walk(root: &Path, dir: &Path, ext: &str, out: &mut Vec<String>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            walk(root, &p, ext, out);
        } else if p.extension().and_then(|x| x.to_str()) == Some(ext)
            && let Ok(rel) = p.strip_prefix(root)
        {
            out.push(rel.to_string_lossy().replace('\\', "/"));
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
