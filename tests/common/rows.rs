//! Stores compared row for row: every described table (`store::tables::every`), each row as
//! text, with what differs by nature between two runs of the same commands (run ids, times,
//! latencies, temporary paths, the mocks' addresses) named or blanked.
#![allow(dead_code)] // each test file uses some of it

use std::collections::BTreeMap;
use std::path::Path;

use prism::store::tables;
use rusqlite::types::ValueRef;

/// A store's every described table, each row as text, with run ids named by their order
/// and what differs by nature (times, latencies) left out; rows sorted.
pub fn rows(path: &Path, ids: &[String]) -> BTreeMap<&'static str, Vec<String>> {
    rows_without(path, ids, &[])
}

/// The same, leaving out these columns too.
pub fn rows_without(
    path: &Path,
    ids: &[String],
    also: &[&str],
) -> BTreeMap<&'static str, Vec<String>> {
    let c = rusqlite::Connection::open(path).unwrap();
    let mut volatile = vec![
        "created_at",
        "updated_at",
        "latency_ms",
        "first_token_ms",
        "joined_at",
    ];
    volatile.extend_from_slice(also);
    let mut out = BTreeMap::new();
    for t in tables::every() {
        let cols: Vec<&str> = t
            .cols
            .iter()
            .map(|c| c.0)
            .filter(|c| !volatile.contains(c))
            // A calibration's uid holds the time it was saved.
            .filter(|c| !(t.name == "judge_calibrations" && *c == "uid"))
            .collect();
        let mut st = c
            .prepare(&format!("SELECT {} FROM {}", cols.join(", "), t.name))
            .unwrap();
        let mut got: Vec<String> = st
            .query_map([], |r| {
                let vals: Vec<String> = (0..cols.len())
                    .map(|i| match r.get_ref(i).unwrap() {
                        ValueRef::Null => "NULL".to_string(),
                        ValueRef::Integer(v) => v.to_string(),
                        ValueRef::Real(v) => v.to_string(),
                        ValueRef::Text(t) => format!("{:?}", String::from_utf8_lossy(t)),
                        ValueRef::Blob(b) => format!("{b:?}"),
                    })
                    .collect();
                Ok(vals.join(" | "))
            })
            .unwrap()
            .map(|r| same_ids(&r.unwrap(), ids))
            .collect();
        got.sort();
        out.insert(t.name, got);
    }
    out
}

/// Text with each run id named by its order (`RUN0`, `RUN1`, ...), and times, paths and the
/// mocks' addresses, which differ by nature, blanked.
pub fn same_ids(text: &str, ids: &[String]) -> String {
    let mut s = text.to_string();
    for (i, id) in ids.iter().enumerate() {
        s = s.replace(id.as_str(), &format!("RUN{i}"));
    }
    let times = regex::Regex::new(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}( UTC)?").unwrap();
    let dirs = regex::Regex::new(r"/tmp/\.tmp\w+").unwrap();
    let mocks = regex::Regex::new(r"127\.0\.0\.1:\d+").unwrap();
    let s = times.replace_all(&s, "TIME");
    let s = dirs.replace_all(&s, "DIR");
    mocks.replace_all(&s, "MOCK").into_owned()
}

/// Rows per table, from a shared store (PostgreSQL, by URL): copied whole into a file with
/// `prism db copy`, as a third machine would see it.
pub fn shared_rows(
    url: &str,
    ids: &[String],
    also: &[&str],
) -> BTreeMap<&'static str, Vec<String>> {
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("copy.db");
    assert_cmd::Command::cargo_bin("prism")
        .unwrap()
        .args(["db", "copy", url, copy.to_str().unwrap()])
        .assert()
        .success();
    rows_without(&copy, ids, also)
}
