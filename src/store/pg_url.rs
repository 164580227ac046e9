//! Which names are PostgreSQL databases, and how they are shown: a URL or a libpq connection
//! string never reaches a message, a log or the screen with its password in it.

/// Whether `s` names a PostgreSQL database rather than a SQLite file: a `postgres://` or
/// `postgresql://` URL, or a libpq key=value connection string (`host=db user=ann ...`). Either
/// may hold a password, so such a value is never used as a file name.
pub(crate) fn is_url(s: &str) -> bool {
    let t = s.trim_start();
    let lower = t.get(..13).unwrap_or(t).to_ascii_lowercase();
    lower.starts_with("postgres://") || lower.starts_with("postgresql://") || is_conninfo(t)
}

/// A libpq connection string: its first word is `keyword=` with a keyword libpq knows.
fn is_conninfo(s: &str) -> bool {
    const KEYS: [&str; 12] = [
        "host",
        "hostaddr",
        "port",
        "dbname",
        "user",
        "password",
        "passfile",
        "service",
        "sslmode",
        "connect_timeout",
        "application_name",
        "options",
    ];
    s.split_once('=')
        .is_some_and(|(k, _)| KEYS.contains(&k.trim().to_ascii_lowercase().as_str()))
}

/// The `db_url` fuzz target (`crate::fuzzing`): a `--db` value told apart from a SQLite path,
/// shown without its password, and parsed as the PostgreSQL driver parses it. A password the
/// driver reads, when it is long enough to be told apart from the rest and appears once, never
/// shows in the redacted text.
#[doc(hidden)]
pub(crate) fn fuzz_db_url(data: &[u8]) {
    let t = String::from_utf8_lossy(data);
    let _ = is_url(&t);
    let shown = redact_url(&t);
    // The leak check holds for what can reach the redaction: a `--db` that is not valid UTF-8
    // is never taken for a URL (`to_str` fails, so it is a path), and U+FFFD from the lossy
    // conversion makes look-alike "passwords" out of unrelated bytes.
    if std::str::from_utf8(data).is_err() {
        return;
    }
    if let Ok(cfg) = t.parse::<postgres::Config>()
        && let Some(pw) = cfg.get_password()
        && let Ok(pw) = std::str::from_utf8(pw)
        && pw.len() >= 8
        && t.matches(pw).count() == 1
        && !pw.contains("***")
        && is_url(&t)
    {
        // The redaction's own marker is no leak: a "password" like `assword=*` is a piece of
        // `password=***` (a false alarm the fuzzer found), so the text is cut at the markers and
        // each piece looked at alone (taking the markers out instead joined the user to the
        // host, and `/pd/bdbs` + `\x05` read as the password `/pd/bdbs\x05`: another false alarm).
        let leaked = shown
            .split(":***@")
            .flat_map(|piece| piece.split("password=***"))
            .any(|piece| piece.contains(pw));
        assert!(!leaked, "password {pw:?} shown in {shown:?}");
    }
}

/// `url` with every password replaced by `***`: in the user info (`user:pw@host`, the password
/// may hold `@`), in a `password=` query parameter, and in a key=value connection string.
pub(crate) fn redact_url(url: &str) -> String {
    let shown = redact_text(url);
    // Whatever the text redaction missed (the db_url fuzz target keeps finding forms the
    // driver reads a password from): the password the driver would use is looked for in what
    // is shown, and if it is there the URL is shown rebuilt from its parts, without it.
    let Ok(cfg) = url.parse::<postgres::Config>() else {
        return shown;
    };
    match cfg.get_password() {
        Some(pw) if pw.len() >= 4 && contains(shown.as_bytes(), pw) => rebuilt(&cfg, pw),
        _ => shown,
    }
}

/// `postgres://user@host:port,…/dbname` from a parsed URL, any copy of `pw` in it as `***`
/// (a user named like the password), or a placeholder when even that would show it.
fn rebuilt(cfg: &postgres::Config, pw: &[u8]) -> String {
    let hosts: Vec<String> = cfg
        .get_hosts()
        .iter()
        .enumerate()
        .map(|(i, h)| {
            let name = match h {
                postgres::config::Host::Tcp(n) => n.clone(),
                postgres::config::Host::Unix(p) => p.display().to_string(),
            };
            match cfg.get_ports().get(i).or(cfg.get_ports().first()) {
                Some(port) => format!("{name}:{port}"),
                None => name,
            }
        })
        .collect();
    let user = cfg.get_user().map(|u| format!("{u}@")).unwrap_or_default();
    let db = cfg.get_dbname().unwrap_or("");
    let text = format!("postgres://{user}{}/{db}", hosts.join(","));
    let text = match std::str::from_utf8(pw) {
        Ok(p) => text.replace(p, "***"),
        Err(_) => text,
    };
    if contains(text.as_bytes(), pw) {
        "<a postgres url (not shown: it holds its password)>".into()
    } else {
        text
    }
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    !needle.is_empty() && hay.windows(needle.len()).any(|w| w == needle)
}

/// The text redaction: every password form the driver reads, replaced where it is written.
fn redact_text(url: &str) -> String {
    // Which form it is goes by how it starts: a key=value string may hold `://` in a value
    // (`host=x://y password=...`, found by the db_url fuzz target) and is still redacted as one.
    let trimmed = url.trim_start();
    let lower = trimmed.get(..13).unwrap_or(trimmed).to_ascii_lowercase();
    let is_uri = lower.starts_with("postgres://") || lower.starts_with("postgresql://");
    let split = if is_uri { url.split_once("://") } else { None };
    let Some((scheme, rest)) = split else {
        return if is_conninfo(trimmed) {
            redact_conninfo(url)
        } else {
            "<not a postgres url>".into()
        };
    };
    // The user info ends at the last `@`: a password may hold `@` (libpq takes it so).
    let rest = match rest.rsplit_once('@') {
        Some((cred, host)) => match cred.split_once(':') {
            Some((user, _)) => format!("{user}:***@{host}"),
            None => format!("{cred}@{host}"),
        },
        None => rest.to_string(),
    };
    // Every `password=` parameter, wherever a `?` or `&` opens one: the user info may hold a
    // `?` of its own (the db_url fuzz target found that), so the query's start is not
    // trusted; a value runs to the next `&`, as the driver reads it.
    // The driver percent-decodes parameter names, so `p%61ssword=` is a password too. A
    // password's value runs to the next `&` (it may hold `?`); any other parameter is read
    // only up to its `=`, so a later `?password=` inside it is still found.
    let rest = redact_password_params(&rest);
    format!("{scheme}://{rest}")
}

/// Every `password=` parameter opened by a `?` or `&`, anywhere in `s`, with its value (to the
/// next `&`) replaced by `***`.
fn redact_password_params(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = String::with_capacity(s.len());
    let (mut i, mut copied) = (0, 0);
    while i < b.len() {
        if matches!(b[i], b'?' | b'&') {
            let key_start = i + 1;
            let key_end = b[key_start..]
                .iter()
                .position(|&c| matches!(c, b'=' | b'&' | b'?'))
                .map(|p| key_start + p);
            if let Some(eq) = key_end.filter(|&e| b[e] == b'=')
                && percent_decoded(&s[key_start..eq]).eq_ignore_ascii_case("password")
            {
                let value_end = b[eq + 1..]
                    .iter()
                    .position(|&c| c == b'&')
                    .map_or(b.len(), |p| eq + 1 + p);
                out.push_str(&s[copied..=eq]);
                out.push_str("***");
                copied = value_end;
                i = value_end;
                continue;
            }
        }
        i += 1;
    }
    out.push_str(&s[copied..]);
    out
}

/// `%XX` escapes decoded (bytes that do not decode are kept as they are).
fn percent_decoded(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |c: u8| (c as char).to_digit(16);
        if b[i] == b'%'
            && let (Some(h), Some(l)) = (
                b.get(i + 1).and_then(|&c| hex(c)),
                b.get(i + 2).and_then(|&c| hex(c)),
            )
        {
            out.push((h * 16 + l) as u8);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// A key=value connection string with every `password` value as `***`, read as the driver
/// reads it: `key = value` pairs, a value bare (to the next whitespace, `\\` escaping) or
/// single-quoted (`\\'` escaping). A value that only looks like a key (`user= password=x`:
/// the user is `password=x`) is a value. From a point the string cannot be read on, the rest
/// is hidden.
fn redact_conninfo(s: &str) -> String {
    // By characters, as the driver reads it: its whitespace is Unicode's (U+00A0 included).
    let cs: Vec<(usize, char)> = s.char_indices().collect();
    let at = |k: usize| cs.get(k).map_or(s.len(), |c| c.0);
    let ws = |k: usize| cs.get(k).is_some_and(|c| c.1.is_whitespace());
    let is = |k: usize, ch: char| cs.get(k).is_some_and(|c| c.1 == ch);
    let n = cs.len();
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    loop {
        let start = i;
        while i < n && ws(i) {
            i += 1;
        }
        if i >= n {
            out.push_str(&s[at(start)..]);
            return out;
        }
        let key_start = i;
        while i < n && !ws(i) && !is(i, '=') {
            i += 1;
        }
        let key = &s[at(key_start)..at(i)];
        while i < n && ws(i) {
            i += 1;
        }
        if !is(i, '=') {
            out.push_str(&s[at(start)..at(key_start)]);
            out.push_str("***");
            return out;
        }
        i += 1;
        while i < n && ws(i) {
            i += 1;
        }
        let value_start = i;
        if is(i, '\'') {
            i += 1;
            let mut closed = false;
            while i < n {
                if is(i, '\\') {
                    i += 2;
                } else if is(i, '\'') {
                    i += 1;
                    closed = true;
                    break;
                } else {
                    i += 1;
                }
            }
            if !closed {
                out.push_str(&s[at(start)..at(value_start)]);
                out.push_str("***");
                return out;
            }
        } else {
            while i < n && !ws(i) {
                i += if is(i, '\\') { 2 } else { 1 };
            }
        }
        let i_end = i.min(n);
        out.push_str(&s[at(start)..at(value_start)]);
        if key.eq_ignore_ascii_case("password") {
            out.push_str("***");
        } else {
            out.push_str(&s[at(value_start)..at(i_end)]);
        }
        i = i_end;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_form_of_password_is_redacted() {
        let cases = [
            // A password holding `@` (libpq splits at the last one).
            (
                "postgres://ann:p@ss@db:5432/r",
                "postgres://ann:***@db:5432/r",
            ),
            ("postgres://ann:a@b@c@db/r", "postgres://ann:***@db/r"),
            (
                "postgres://ann@db/r?password=s3cret",
                "postgres://ann@db/r?password=***",
            ),
            (
                "postgresql://db/r?sslmode=disable&PASSWORD=s3cret&application_name=x",
                "postgresql://db/r?sslmode=disable&PASSWORD=***&application_name=x",
            ),
            ("POSTGRES://ann:s3cret@db/r", "POSTGRES://ann:***@db/r"),
            (
                "host=db user=ann password=s3cret dbname=r",
                "host=db user=ann password=*** dbname=r",
            ),
            ("host=db password = s3cret", "host=db password = ***"),
            (
                "host=db password='s3 \\'cret' dbname=r",
                "host=db password=*** dbname=r",
            ),
            ("dbname=r Password=s3cret", "dbname=r Password=***"),
        ];
        for (url, want) in cases {
            assert!(is_url(url), "{url}");
            let shown = redact_url(url);
            assert_eq!(shown, want, "{url}");
            assert!(!shown.contains("s3") && !shown.contains("ss@"), "{shown}");
        }
        assert!(is_url("host=db dbname=r") && is_url("  postgres://x"));
        // A `?` in the user info does not hide a later `?password=` (the db_url fuzz target).
        assert_eq!(
            redact_url("postgres://a?b:c@db/r?password=s3cretpw&x=1"),
            "postgres://a?b:***@db/r?password=***&x=1"
        );
        assert_eq!(
            redact_url("postgres://db/r?p%61ssword=s3cretpw"),
            "postgres://db/r?p%61ssword=***"
        );
        // A value that looks like a key is a value; the password after it is hidden (fuzz).
        assert_eq!(
            redact_url("host=db user= password=x password=s3cretpw"),
            "host=db user= password=x password=***"
        );
        assert_eq!(
            redact_url("host=db password='unclosed s3cretpw"),
            "host=db password=***"
        );
        // A key=value string with `://` in a value is still one (the db_url fuzz target).
        // (`postgres://x:5432` is no key=value pair: from there on nothing is shown.)
        let shown = redact_url("host=/t postgres://x:5432 password=s3cretpw");
        assert_eq!(shown, "host=/t ***");
        assert!(!is_url("runs.db") && !is_url("./a=b.db") && !is_url("my-host=x.db"));
    }

    /// The safety net under the text redaction: when the password the driver reads is still
    /// in the text, the URL is shown rebuilt from its parts without it.
    #[test]
    fn a_password_left_in_the_text_is_caught() {
        // The user is named like the password: the text redaction leaves it; the net hides it.
        assert_eq!(
            redact_url("postgres://s3cretpw:s3cretpw@db:6543/r"),
            "postgres://***@db:6543/r"
        );
        let cfg: postgres::Config = "host=db1,db2 port=1,2 user=ann dbname=r".parse().unwrap();
        assert_eq!(rebuilt(&cfg, b"zzzz"), "postgres://ann@db1:1,db2:2/r");
        // A password with stars in it is still taken out.
        let cfg: postgres::Config = "host=db user=a**b".parse().unwrap();
        assert_eq!(rebuilt(&cfg, b"a**b"), "postgres://***@db/");
        // Short passwords are left to the text redaction (a 1-letter "password" would star
        // out every such letter of the host).
        assert_eq!(
            redact_url("postgres://ann:x@db.example/r"),
            "postgres://ann:***@db.example/r"
        );
    }
}
