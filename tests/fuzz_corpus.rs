//! Every input of the fuzz corpora (`fuzz/corpus/<target>/`, grown by `scripts/fuzz` with
//! cargo-fuzz and committed) through the same entry points the fuzz targets call: what once
//! crashed, hung or blew up stays fixed, in every `cargo test`.

use std::path::Path;

#[test]
fn every_corpus_input_runs_clean() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus");
    let mut total = 0;
    for (name, run) in prism::fuzzing::TARGETS {
        let dir = root.join(name);
        let mut n = 0;
        for e in std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .flatten()
        {
            // (A fuzzer running meanwhile may have replaced the file.)
            let Ok(data) = std::fs::read(e.path()) else {
                continue;
            };
            run(&data);
            n += 1;
        }
        assert!(n > 0, "the {name} corpus is empty");
        total += n;
    }
    assert!(total >= 60, "{total} inputs");
}
