//! PRISM's language rule is Python's langdetect 1.0.9 seeded with 0. The fixture holds 2,000+
//! texts (sentences in 40+ languages, every IFE-LgC language, cut to one or two words, upper-
//! and lower-cased, mixed scripts, code, numbers, answer labels like "B." and "[FALSE]", empty
//! and blank text, and prism-mini's questions) with the label Python gave each
//! (`scripts/langdetect-fixture.py`); prism must give the same label for every one.

use prism::eval::language;

#[test]
fn every_fixture_text_gets_pythons_label() {
    let text = include_str!("fixtures/langdetect.jsonl");
    let mut n = 0;
    let mut wrong = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let v: serde_json::Value = serde_json::from_str(line).expect("fixture line is JSON");
        let t = v["text"].as_str().expect("text");
        let want = v["lang"].as_str().map(str::to_string);
        let got = language::detect_raw(t);
        if got != want {
            wrong.push(format!(
                "line {}: {t:?}: python {want:?}, prism {got:?}",
                i + 1
            ));
        }
        n += 1;
    }
    assert!(n >= 1000, "the fixture has only {n} texts");
    assert!(
        wrong.is_empty(),
        "{} of {n} labels differ:\n{}",
        wrong.len(),
        wrong[..wrong.len().min(30)].join("\n")
    );
}

#[test]
fn chinese_variants_count_as_chinese_and_no_letters_is_no_language() {
    assert_eq!(
        language::detect("今天天气很好，我们一起去公园散步吧。"),
        Some("zh")
    );
    for t in ["", "   ", "1234", "!!!", "3.14"] {
        assert_eq!(language::detect(t), None, "{t:?}");
    }
}
