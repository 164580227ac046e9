//! Every input of the fuzz corpora through the same entry points the fuzz targets call: what
//! once crashed, hung or blew up stays fixed, in every `cargo test`. The corpora are committed
//! as one compressed archive per target (`fuzz/corpus/<target>.tar.gz`, minimised with `cargo
//! fuzz cmin` and packed by `scripts/fuzz`), read here in memory.

use std::io::Read;
use std::path::Path;

#[test]
fn every_corpus_input_runs_clean() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus");
    let mut total = 0;
    for (name, run) in prism::fuzzing::TARGETS {
        let path = root.join(format!("{name}.tar.gz"));
        let file = std::fs::File::open(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(file));
        let mut n = 0;
        for entry in archive.entries().unwrap() {
            let mut entry = entry.unwrap();
            if !entry.header().entry_type().is_file() {
                continue;
            }
            let mut data = Vec::new();
            entry.read_to_end(&mut data).unwrap();
            run(&data);
            n += 1;
        }
        assert!(n > 0, "the {name} corpus is empty");
        total += n;
    }
    assert!(total >= 60, "{total} inputs");
}
