//! A PostgreSQL URL given to any command that takes `--db` (or set as `db` in the config): it is
//! used as PostgreSQL where the command has a shared store (review, quality) and refused by name
//! where it needs a SQLite file, and in no case does its password reach a message, a file name or
//! a file: every form libpq accepts (user:password@, a password holding `@`, `?password=`, a
//! key=value string, PGPASSWORD, a pgpass file).

use std::path::{Path, PathBuf};
use std::process::Command;

const SECRET: &str = "s3cretpw";

/// Every form, each pointing at a port nothing listens on (127.0.0.1:1).
fn forms() -> Vec<String> {
    vec![
        format!("postgres://ann:{SECRET}@127.0.0.1:1/db"),
        format!("postgresql://ann:x@{SECRET}@127.0.0.1:1/db"),
        format!("postgres://ann@127.0.0.1:1/db?password={SECRET}&sslmode=disable"),
        format!("host=127.0.0.1 port=1 user=ann password={SECRET} dbname=db"),
        format!("host=127.0.0.1 port=1 user=ann password='{SECRET} x' dbname=db"),
        // No password in the URL: PGPASSWORD and the pgpass file hold it (set for every run).
        "postgres://ann@127.0.0.1:1/db".to_string(),
    ]
}

fn commands(dir: &Path) -> Vec<Vec<String>> {
    let outputs = dir.join("outputs").display().to_string();
    let decisions = dir.join("decisions.jsonl").display().to_string();
    let bank = dir.join("bank").display().to_string();
    let s = |v: &[&str]| v.iter().map(|a| a.to_string()).collect::<Vec<_>>();
    vec![
        s(&["run", "--models", "local", "--limit", "1"]),
        s(&["score"]),
        s(&["report"]),
        s(&["detect"]),
        s(&["autohall", "--models", "smol"]),
        s(&["autohall", "--reread", "r1"]),
        s(&["autohall", "--analyse", "r1", "--topics-by", "smol"]),
        s(&["signals"]),
        s(&["entropy", "--judge", "smol"]),
        s(&["self-detect"]),
        s(&["selfcheck", "--models", "smol"]),
        s(&["quality", "--model", "local", "--limit", "1"]),
        s(&["review", "export"]),
        s(&["review", "stats"]),
        s(&["review", "import", &decisions]),
        s(&["review", "bank", &bank]),
        s(&["import", "--prism-outputs", &outputs]),
        s(&["export", "--prism-outputs", &outputs]),
        s(&["runs"]),
        s(&["runs", "name", "r1", "x"]),
        s(&["compare", "r1", "r2"]),
        s(&["work", "r1"]),
    ]
}

fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        out.push(p.clone());
        if p.is_dir() && !p.is_symlink() {
            out.extend(files_under(&p));
        }
    }
    out
}

/// No file whose name or bytes hold the password, and no file named after the URL.
fn assert_clean(dir: &Path, what: &str) {
    for p in files_under(dir) {
        let name = p.display().to_string();
        assert!(
            !name.contains("retpw") && !name.contains("postgres") && !name.contains("host="),
            "{what}: created {name}"
        );
        // The pgpass file and the config the test writes hold it on purpose.
        if p.is_file() && !name.ends_with("pgpass") && !name.ends_with("config.toml") {
            let bytes = std::fs::read(&p).unwrap();
            assert!(
                !String::from_utf8_lossy(&bytes).contains("retpw"),
                "{what}: the password is in {name}"
            );
        }
    }
}

fn prism(dir: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_prism"));
    let pgpass = dir.join("pgpass");
    c.current_dir(dir)
        .env("PRISM_CONFIG_DIR", dir.join("config"))
        .env("PRISM_DATA_DIR", dir.join("data"))
        .env("PGPASSWORD", SECRET)
        .env("PGPASSFILE", &pgpass)
        .env("NO_COLOR", "1");
    c
}

#[test]
fn no_password_reaches_a_message_or_a_file_under_any_url_form_or_command() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::create_dir_all(d.join("outputs/m/responses")).unwrap();
    std::fs::write(d.join("decisions.jsonl"), "").unwrap();
    let pgpass = d.join("pgpass");
    std::fs::write(&pgpass, format!("*:*:*:*:{SECRET}\n")).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&pgpass, std::fs::Permissions::from_mode(0o600)).unwrap();
    }
    for url in forms() {
        for cmd in commands(d) {
            let what = format!("prism {} --db {url}", cmd.join(" "));
            let out = prism(d).args(&cmd).arg("--db").arg(&url).output().unwrap();
            let text = format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            assert!(!text.contains("retpw"), "{what}: {text}");
            assert!(!out.status.success(), "{what} succeeded: {text}");
            // Either used as PostgreSQL (and the connection refused) or refused by name.
            assert!(
                text.contains("error connecting to server")
                    || text.contains("is a PostgreSQL database")
                    || text.contains("model file")
                    || text.contains("not installed"),
                "{what}: {text}"
            );
            assert_clean(d, &what);
        }
        // The same URL as the config's `db`: the review commands and quality use it.
        let config = d.join("config");
        std::fs::create_dir_all(&config).unwrap();
        std::fs::write(
            config.join("config.toml"),
            format!("db = {}\n", toml_string(&url)),
        )
        .unwrap();
        for cmd in [vec!["review", "stats"], vec!["quality", "--model", "local"]] {
            let what = format!("prism {} with db = {url} in the config", cmd.join(" "));
            let out = prism(d).args(&cmd).output().unwrap();
            let text = format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            assert!(!text.contains("retpw"), "{what}: {text}");
            assert!(
                text.contains("error connecting to server"),
                "{what}: {text}"
            );
            assert_clean(d, &what);
        }
        std::fs::remove_file(config.join("config.toml")).unwrap();
    }
}

fn toml_string(s: &str) -> String {
    format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
}
