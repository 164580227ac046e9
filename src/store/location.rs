//! What a store's name means, decided once: a SQLite file on this machine, or a shared
//! PostgreSQL store (a `postgres://` URL or a libpq connection string). Every open in the store
//! starts from a [`Location`]; the backend it names is connected in one place,
//! [`AnyStore::connect`](super::AnyStore::connect).

use std::path::{Path, PathBuf};

use super::pg;

/// A store's name, parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Location {
    /// A SQLite file (made if missing when it is opened).
    File(PathBuf),
    /// A shared store's URL or connection string (it may hold a password: never a file name,
    /// never shown as it is).
    Shared(String),
}

impl Location {
    /// What `name` names. A name that is not UTF-8 is a file (no URL is).
    pub(crate) fn of(name: &Path) -> Location {
        match name.to_str().filter(|s| pg::is_url(s)) {
            Some(url) => Location::Shared(url.to_string()),
            None => Location::File(name.to_path_buf()),
        }
    }

    pub(crate) fn is_shared(&self) -> bool {
        matches!(self, Location::Shared(_))
    }

    /// Its name in messages: a file's path, or the URL without its password.
    pub(crate) fn shown(&self) -> String {
        match self {
            Location::File(p) => p.display().to_string(),
            Location::Shared(url) => pg::redact_url(url),
        }
    }

    /// The file, when it is one.
    pub(crate) fn file(&self) -> Option<&Path> {
        match self {
            Location::File(p) => Some(p),
            Location::Shared(_) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_is_a_file_or_a_shared_store() {
        let f = Location::of(Path::new("runs/prism.db"));
        assert_eq!(f, Location::File(PathBuf::from("runs/prism.db")));
        assert!(!f.is_shared() && f.file().is_some());
        for url in [
            "postgres://ann:secret@db/r",
            "host=db password=secret dbname=r",
        ] {
            let l = Location::of(Path::new(url));
            assert!(l.is_shared() && l.file().is_none(), "{url}");
            assert!(!l.shown().contains("secret"), "{}", l.shown());
        }
        // A file whose name merely has an '=' in it stays a file.
        assert!(!Location::of(Path::new("./a=b.db")).is_shared());
    }
}
