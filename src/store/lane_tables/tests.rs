//! The descriptions held to the schemas, and rows moved forward only.

use super::*;
use crate::store::Store;

#[test]
fn every_described_table_matches_the_sqlite_schema() {
    let s = Store::open_in_memory().expect("store");
    for t in all() {
        let mut st = s
            .conn
            .prepare(&format!(
                "SELECT name, type, pk FROM pragma_table_info('{}')",
                t.name
            ))
            .expect("pragma");
        let cols: Vec<(String, String, i64)> = st
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .expect("query")
            .collect::<rusqlite::Result<_>>()
            .expect("rows");
        assert_eq!(cols.len(), t.cols.len(), "{}: column count", t.name);
        for (name, ty) in t.cols {
            let (_, sql_ty, _) = cols
                .iter()
                .find(|(n, _, _)| n == name)
                .unwrap_or_else(|| panic!("{}: no column {name}", t.name));
            let want = match ty {
                Col::Int | Col::Bool => "INTEGER",
                Col::Real => "REAL",
                Col::Text => "TEXT",
                Col::Blob => "BLOB",
            };
            assert_eq!(sql_ty, want, "{}.{name}", t.name);
        }
        let mut key: Vec<&str> = cols
            .iter()
            .filter(|c| c.2 > 0)
            .map(|c| c.0.as_str())
            .collect();
        key.sort();
        let mut described: Vec<&str> = t.cols[..t.key].iter().map(|c| c.0).collect();
        described.sort();
        assert_eq!(key, described, "{}: primary key", t.name);
    }
}

#[test]
fn a_runs_status_only_moves_forward() {
    let mut s = Store::open_in_memory().expect("store");
    let run = |status: &str| -> Row {
        vec![
            Val::Text("d1".into()),
            Val::Int(1),
            Val::Text("claims".into()),
            Val::Text("<sample-claims>".into()),
            Val::Text("{}".into()),
            Val::Text(status.into()),
        ]
    };
    let mut put = |status: &str| {
        s.put_lane_rows(&[(&DETECT_RUNS, vec![run(status)])], false)
            .expect("put")
    };
    assert_eq!(put("running"), 1);
    assert_eq!(put("cancelled"), 1);
    assert_eq!(
        put("running"),
        0,
        "a mirror's older copy never sets it back"
    );
    assert_eq!(put("finished"), 1);
    assert_eq!(put("cancelled"), 0);
    assert_eq!(put("running"), 0);
}

#[test]
fn a_row_only_moves_forward() {
    let mut s = Store::open_in_memory().expect("store");
    let row = |text: Option<&str>, error: Option<&str>| -> Row {
        vec![
            Val::Text("d1".into()),
            Val::Int(0),
            Val::Int(0),
            Val::Int(1),
            Val::Int(0),
            text.map_or(Val::Null, |t| Val::Text(t.into())),
            error.map_or(Val::Null, |t| Val::Text(t.into())),
            Val::Int(1),
            Val::Int(0),
            Val::Int(5),
        ]
    };
    let put = |s: &mut Store, r: Row, force: bool| {
        s.put_lane_rows(&[(&DETECT_SAMPLES, vec![r])], force)
            .expect("put")
    };
    assert_eq!(put(&mut s, row(None, Some("timeout")), false), 1);
    assert_eq!(
        put(&mut s, row(Some("Paris"), None), false),
        1,
        "an answer replaces a failure"
    );
    assert_eq!(
        put(&mut s, row(None, Some("timeout")), false),
        0,
        "a failure never replaces an answer"
    );
    assert_eq!(
        put(&mut s, row(Some("Lyon"), None), false),
        0,
        "an answer stays"
    );
    let got = s.lane_rows(&DETECT_SAMPLES, Some("d1")).expect("rows");
    assert_eq!(got, vec![row(Some("Paris"), None)]);
    assert_eq!(
        put(&mut s, row(Some("Lyon"), None), true),
        1,
        "a lane's own write goes in"
    );
    assert_eq!(
        s.lane_rows_by_key(&DETECT_SAMPLES, &[row(None, None)[..4].to_vec()])
            .expect("k"),
        vec![row(Some("Lyon"), None)]
    );
}
