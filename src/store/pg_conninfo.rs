//! What libpq reads in a connection string that the PostgreSQL driver does not: a service file
//! (`service=NAME`, from `PGSERVICEFILE`, `~/.pg_service.conf` or `PGSYSCONFDIR`), the
//! `verify-ca` and `verify-full` SSL modes, a `passfile`, and a pgpass file read as libpq reads
//! it (`\:` and `\\` escapes; a file others can read is not used). A keyword the driver does
//! not know is named in the error, instead of its bare "invalid connection string".

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Keywords the driver reads itself.
const DRIVER: [&str; 18] = [
    "user",
    "password",
    "dbname",
    "options",
    "application_name",
    "sslmode",
    "host",
    "hostaddr",
    "port",
    "connect_timeout",
    "tcp_user_timeout",
    "keepalives",
    "keepalives_idle",
    "keepalives_interval",
    "keepalives_retries",
    "target_session_attrs",
    "channel_binding",
    "load_balance_hosts",
];

/// A connection string made ready for the driver, and what it said of the password file.
#[derive(Debug, Default)]
pub(super) struct Prepared {
    pub text: String,
    /// `passfile=`: the pgpass file to read instead of `PGPASSFILE` / `~/.pgpass`.
    pub passfile: Option<PathBuf>,
}

/// `s` (a URL or a key=value string) with its service's settings added, its SSL mode in the
/// driver's words, and `passfile` taken out; an error names the part that is not supported.
pub(super) fn prepare(s: &str) -> Result<Prepared, String> {
    let t = s.trim();
    let lower = t.get(..13).unwrap_or(t).to_ascii_lowercase();
    if lower.starts_with("postgres://") || lower.starts_with("postgresql://") {
        let (base, query) = t.split_once('?').unwrap_or((t, ""));
        let mut params: Vec<(String, String)> = query
            .split('&')
            .filter(|p| !p.is_empty())
            .map(|p| {
                let (k, v) = p.split_once('=').unwrap_or((p, ""));
                (decode(k), decode(v))
            })
            .collect();
        let passfile = adapt(&mut params)?;
        let query: Vec<String> = params
            .iter()
            .map(|(k, v)| format!("{}={}", encode(k), encode(v)))
            .collect();
        let text = if query.is_empty() {
            base.to_string()
        } else {
            format!("{base}?{}", query.join("&"))
        };
        Ok(Prepared { text, passfile })
    } else {
        let mut params = conninfo_pairs(t)?;
        let passfile = adapt(&mut params)?;
        let text = params
            .iter()
            .map(|(k, v)| format!("{k}='{}'", v.replace('\\', "\\\\").replace('\'', "\\'")))
            .collect::<Vec<_>>()
            .join(" ");
        Ok(Prepared { text, passfile })
    }
}

/// Adds the service's settings (those not given), maps the SSL mode, takes `passfile` out and
/// checks every keyword is one the driver reads.
fn adapt(params: &mut Vec<(String, String)>) -> Result<Option<PathBuf>, String> {
    if let Some(pos) = params.iter().position(|(k, _)| k == "service") {
        let (_, name) = params.remove(pos);
        for (k, v) in service(&name)? {
            if !params.iter().any(|(p, _)| *p == k) {
                params.push((k, v));
            }
        }
    }
    let mut passfile = None;
    if let Some(pos) = params.iter().position(|(k, _)| k == "passfile") {
        passfile = Some(PathBuf::from(params.remove(pos).1));
    }
    for (k, v) in params.iter_mut() {
        if k == "sslmode" {
            // The driver encrypts and (with the TLS set up in `pg::tls`) always checks the
            // server's certificate and name: what libpq calls verify-full.
            *v = match v.as_str() {
                "disable" | "allow" => "disable",
                "prefer" => "prefer",
                "require" | "verify-ca" | "verify-full" => "require",
                other => {
                    return Err(format!(
                        "sslmode={other} is not an SSL mode (disable, allow, prefer, require, verify-ca, verify-full)"
                    ));
                }
            }
            .to_string();
        } else if !DRIVER.contains(&k.as_str()) {
            return Err(format!(
                "the connection keyword {k:?} is not supported here{}",
                match k.as_str() {
                    "sslrootcert" => " (set PGSSLROOTCERT to the CA's PEM file instead)",
                    "sslcert" | "sslkey" => " (client certificates are not supported)",
                    _ => "",
                }
            ));
        }
    }
    Ok(passfile)
}

/// A key=value connection string's pairs, values unquoted as libpq reads them.
fn conninfo_pairs(s: &str) -> Result<Vec<(String, String)>, String> {
    let mut out = Vec::new();
    let mut chars = s.chars().peekable();
    loop {
        while chars.peek().is_some_and(|c| c.is_whitespace()) {
            chars.next();
        }
        if chars.peek().is_none() {
            return Ok(out);
        }
        let mut key = String::new();
        while let Some(&c) = chars.peek() {
            if c == '=' || c.is_whitespace() {
                break;
            }
            key.push(c);
            chars.next();
        }
        while chars.peek().is_some_and(|c| c.is_whitespace()) {
            chars.next();
        }
        if chars.next() != Some('=') {
            return Err(format!("{key:?} has no value (key=value expected)"));
        }
        while chars.peek().is_some_and(|c| c.is_whitespace()) {
            chars.next();
        }
        let mut value = String::new();
        if chars.peek() == Some(&'\'') {
            chars.next();
            loop {
                match chars.next() {
                    Some('\\') => value.extend(chars.next()),
                    Some('\'') => break,
                    Some(c) => value.push(c),
                    None => return Err(format!("the value of {key:?} has no closing quote")),
                }
            }
        } else {
            while let Some(&c) = chars.peek() {
                if c.is_whitespace() {
                    break;
                }
                chars.next();
                if c == '\\' {
                    value.extend(chars.next());
                } else {
                    value.push(c);
                }
            }
        }
        out.push((key.to_ascii_lowercase(), value));
    }
}

/// The settings of service `name` from the first service file that has it: `PGSERVICEFILE`
/// (else `~/.pg_service.conf`), then `pg_service.conf` in `PGSYSCONFDIR` (else `/etc/postgresql-common`).
fn service(name: &str) -> Result<Vec<(String, String)>, String> {
    let mut files = Vec::new();
    match std::env::var_os("PGSERVICEFILE") {
        Some(f) => files.push(PathBuf::from(f)),
        None => {
            if let Some(h) = std::env::var_os("HOME") {
                files.push(Path::new(&h).join(".pg_service.conf"));
            }
        }
    }
    let sys = std::env::var_os("PGSYSCONFDIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/etc/postgresql-common"));
    files.push(sys.join("pg_service.conf"));
    for f in &files {
        let Ok(text) = std::fs::read_to_string(f) else {
            continue;
        };
        if let Some(s) = service_section(&text, name) {
            return Ok(s);
        }
    }
    Err(format!(
        "service {name:?} is in none of {}",
        files
            .iter()
            .map(|f| f.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    ))
}

/// The `[name]` section of a service file (INI: `key=value` lines, `#` comments).
fn service_section(text: &str, name: &str) -> Option<Vec<(String, String)>> {
    let mut sections: BTreeMap<String, Vec<(String, String)>> = BTreeMap::new();
    let mut current: Option<String> = None;
    for line in text.lines() {
        let l = line.trim();
        if l.is_empty() || l.starts_with('#') {
            continue;
        }
        if let Some(sec) = l.strip_prefix('[').and_then(|r| r.strip_suffix(']')) {
            current = Some(sec.trim().to_string());
            sections.entry(sec.trim().to_string()).or_default();
        } else if let (Some(sec), Some((k, v))) = (&current, l.split_once('=')) {
            sections
                .entry(sec.clone())
                .or_default()
                .push((k.trim().to_ascii_lowercase(), v.trim().to_string()));
        }
    }
    sections.remove(name)
}

/// The password for (host, port, database, user) from a pgpass file as libpq reads it: lines
/// of `host:port:database:user:password`, `*` matching anything, `\:` and `\\` escapes, `#`
/// comments. On Unix a file that its group or others can read is not used (libpq's rule),
/// and `warn` says so.
pub(super) fn pgpass_lookup(
    path: &Path,
    want: [&str; 4],
    warn: impl FnOnce(String),
) -> Option<String> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let meta = std::fs::metadata(path).ok()?;
        if !meta.is_file() {
            return None;
        }
        if meta.permissions().mode() & 0o077 != 0 {
            warn(format!(
                "password file {} has group or world access; permissions should be u=rw (0600) or less: not used",
                path.display()
            ));
            return None;
        }
    }
    let text = std::fs::read_to_string(path).ok()?;
    text.lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .find_map(|l| {
            let f = pgpass_fields(l)?;
            let ok = |pat: &str, v: &str| pat == "*" || pat == v;
            (0..4).all(|i| ok(&f[i], want[i])).then(|| f[4].clone())
        })
}

/// A pgpass line's five fields, unescaped (`None`: not five).
fn pgpass_fields(line: &str) -> Option<[String; 5]> {
    let mut fields: Vec<String> = vec![String::new()];
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => fields.last_mut()?.extend(chars.next()),
            ':' if fields.len() < 5 => fields.push(String::new()),
            c => fields.last_mut()?.push(c),
        }
    }
    fields.try_into().ok()
}

fn decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'%' if i + 2 < b.len() => {
                match u8::from_str_radix(std::str::from_utf8(&b[i + 1..i + 3]).unwrap_or(""), 16) {
                    Ok(v) => {
                        out.push(v);
                        i += 3;
                    }
                    Err(_) => {
                        out.push(b'%');
                        i += 1;
                    }
                }
            }
            c => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' | b'/' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pgpass_escapes_and_wildcards_read_as_libpq_reads_them() {
        assert_eq!(
            pgpass_fields(r"db:5432:*:ann:pa\:ss\\word").unwrap()[4],
            r"pa:ss\word"
        );
        assert_eq!(
            pgpass_fields("a:b:c:d:e:f").unwrap()[4],
            "e:f",
            "a password may hold ':' unescaped at the end"
        );
        assert!(pgpass_fields("a:b:c").is_none());
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("pgpass");
        std::fs::write(&f, "# comment\nother:*:*:*:no\ndb:*:*:ann:pa\\:ss\n").unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o644)).unwrap();
            let mut said = String::new();
            assert_eq!(
                pgpass_lookup(&f, ["db", "5432", "x", "ann"], |w| said = w),
                None
            );
            assert!(said.contains("group or world access"), "{said}");
            std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o600)).unwrap();
        }
        assert_eq!(
            pgpass_lookup(&f, ["db", "5432", "x", "ann"], |_| {}).as_deref(),
            Some("pa:ss")
        );
    }

    #[test]
    fn services_ssl_modes_and_unknown_keywords() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("services.conf");
        std::fs::write(
            &f,
            "# team\n[team]\nhost=db.example\nport=6543\ndbname=prism\nuser=ann\n\n[other]\nhost=x\n",
        )
        .unwrap();
        let section = service_section(&std::fs::read_to_string(&f).unwrap(), "team").unwrap();
        assert_eq!(section[0], ("host".into(), "db.example".into()));
        assert_eq!(section.len(), 4);
        // verify-full is what the driver's TLS here does: read as require.
        let p = prepare("host=db sslmode=verify-full").unwrap();
        assert_eq!(p.text, "host='db' sslmode='require'");
        let p = prepare("postgres://ann@db/x?sslmode=verify-ca&application_name=a%20b").unwrap();
        assert_eq!(
            p.text,
            "postgres://ann@db/x?sslmode=require&application_name=a%20b"
        );
        let e = prepare("host=db sslrootcert=/ca.pem").unwrap_err();
        assert!(
            e.contains("sslrootcert") && e.contains("PGSSLROOTCERT"),
            "{e}"
        );
        let e = prepare("postgres://db/x?sslmode=sometimes").unwrap_err();
        assert!(e.contains("sslmode=sometimes"), "{e}");
        let p = prepare("host=db passfile='/my pass'").unwrap();
        assert_eq!(p.passfile.as_deref(), Some(Path::new("/my pass")));
        assert_eq!(p.text, "host='db'");
    }
}
