//! The pair-check and classification readers against real replies of the embedded models
//! (`smol`, SmolLM2 135M Instruct; `local`, Gemma 3 270M base), collected once from `prism
//! autohall` runs on Climate-FEVER claims (`scripts/collect-judge-replies.py`) and labelled by
//! hand (tests/fixtures/judge-replies/README.md says how). The rule: a reply is read as a verdict
//! only when a person reads the same verdict in it; what a person cannot read (an echo, a
//! question the model asked itself, "they contradict each other, but they can both be true") is
//! unreadable. A reader may leave a readable reply unread (it is asked again, then counted), but
//! the share read as a verdict a person reads otherwise must be 0.

use prism::dataset::claims::Truth;
use prism::detect::{parse, prompts};

#[derive(serde::Deserialize)]
struct Reply {
    kind: String,
    model: String,
    claim: String,
    #[serde(default)]
    reference: String,
    #[serde(default)]
    answer_a: String,
    #[serde(default)]
    answer_b: String,
    reply: String,
    label: String,
}

fn replies() -> Vec<Reply> {
    include_str!("fixtures/judge-replies/replies.jsonl")
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

/// What the reader makes of a reply, in the label's words.
fn read(r: &Reply) -> &'static str {
    match r.kind.as_str() {
        "pair" => {
            // The prompt as the run asked it (detect::run's pair question for claims).
            let req = prompts::pair_check(
                &format!("Give a reference for the claim: {}", r.claim),
                &r.answer_a,
                &r.answer_b,
            );
            match parse::read_pair_to(&r.reply, prompts::text_of(&req)) {
                Some(p) if p.conflict => "conflict",
                Some(_) => "consistent",
                None => "unreadable",
            }
        }
        "classification" => {
            let req = prompts::classification(&r.claim, &r.reference);
            match parse::read_truth_to(&r.reply, prompts::text_of(&req)) {
                Some(Truth::True) => "true",
                Some(Truth::False) => "false",
                None => "unreadable",
            }
        }
        k => panic!("unknown kind {k}"),
    }
}

#[test]
fn no_reply_is_read_as_a_verdict_a_person_reads_otherwise() {
    let all = replies();
    assert!(all.len() >= 150, "{} replies", all.len());
    let mut wrong = Vec::new();
    let mut read_ok = 0;
    let mut readable = 0;
    for (i, r) in all.iter().enumerate() {
        let got = read(r);
        if r.label != "unreadable" {
            readable += 1;
        }
        if got == r.label && got != "unreadable" {
            read_ok += 1;
        }
        if got != "unreadable" && got != r.label {
            wrong.push(format!(
                "line {}: {} {} labelled {} read {got}: {:?}",
                i + 1,
                r.model,
                r.kind,
                r.label,
                r.reply.chars().take(160).collect::<String>()
            ));
        }
    }
    assert!(
        wrong.is_empty(),
        "{} of {} replies read as a verdict a person reads otherwise:\n{}",
        wrong.len(),
        all.len(),
        wrong.join("\n")
    );
    // And the reader is of use: most replies a person can read, it reads.
    assert!(
        read_ok * 10 >= readable * 9,
        "read {read_ok} of {readable} readable replies"
    );
}
