//! PRISM's choice extraction on 12,000 responses made to find its close cases (Unicode letters
//! glued to the letter, case changes of "The answer is", line breaks and Python's extra
//! whitespace around the letter): prism extracts the letter Python's reference extracts
//! (`scripts/choice-fixture.py`, written from PRISM-FORMAT.md with Python's `re`), and so does the
//! Rust reference the `choice` fuzz target holds prism to, so that oracle is the rule too.

use serde_json::Value;

#[test]
fn prism_and_the_fuzz_oracle_extract_the_letter_python_extracts() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/choice/cases.jsonl"
    );
    let text = std::fs::read_to_string(path).unwrap();
    let (mut cases, mut wrong, mut oracle_wrong) = (0, Vec::new(), Vec::new());
    for line in text.lines() {
        let v: Value = serde_json::from_str(line).unwrap();
        let response = v["response"].as_str().unwrap();
        let n = v["n"].as_u64().unwrap() as usize;
        let want = v["letter"].as_str().and_then(|l| l.chars().next());
        cases += 1;
        let got = prism::eval::extract_choice(response, n);
        if got != want {
            wrong.push(format!(
                "{response:?} ({n} options): prism {got:?}, Python {want:?}"
            ));
        }
        let oracle = prism::fuzzing::choice_reference(response, n);
        if oracle != want {
            oracle_wrong.push(format!(
                "{response:?} ({n} options): oracle {oracle:?}, Python {want:?}"
            ));
        }
    }
    assert_eq!(cases, 12_000);
    assert!(
        wrong.is_empty(),
        "{} of {cases} differ, first: {:#?}",
        wrong.len(),
        &wrong[..wrong.len().min(10)]
    );
    assert!(
        oracle_wrong.is_empty(),
        "{} of {cases} differ, first: {:#?}",
        oracle_wrong.len(),
        &oracle_wrong[..oracle_wrong.len().min(10)]
    );
}

/// The cases of fidelity round three, each as PRISM-FORMAT.md decides it.
#[test]
fn the_letter_is_standalone_only_between_python_non_word_characters() {
    let x = |r: &str| prism::eval::extract_choice(r, 4);
    for glued in ["答案是B。", "选B", "ОтветB", "éB", "_B"] {
        assert_eq!(x(glued), None, "{glued}");
    }
    assert_eq!(x("I choose B\n所以答案是C"), Some('B'));
    assert_eq!(x("The answer is Definitely C"), Some('D'));
    assert_eq!(x("THE ANSWER IS B but maybe C is also fine"), Some('C'));
    assert_eq!(x("Answer C\nbut I also like D"), Some('C'));
    assert_eq!(x("My answer\nB is the one, and D is wrong"), Some('B'));
    assert_eq!(x("A\nx\nx\nx\nx\nx\nB ."), Some('A'));
    assert_eq!(x("Answer: A\nAnswer: C"), Some('A'));
}
