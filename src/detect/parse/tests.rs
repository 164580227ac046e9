//! Tests of `parse`.

use super::*;

#[test]
fn the_reason_is_the_sentence_without_the_verdict_word_and_the_quotes() {
    let r = read_pair("Yes. The dates differ.\nQuote A: \"1969\"\nQuote B: \"1971\"").unwrap();
    assert!(r.conflict);
    assert_eq!(r.explanation, "The dates differ.");
    assert_eq!(r.quote_a.as_deref(), Some("1969"));
    let r = read_pair("No, both say Paris.\nQuote A: \"\"\nQuote B: \"\"").unwrap();
    assert_eq!(r.explanation, "both say Paris.");
    // An Explanation line wins; a reply that is only the verdict keeps it as the reason.
    let r = read_pair("Yes\nExplanation: A says 1969.\nQuote A: 1969").unwrap();
    assert_eq!(r.explanation, "A says 1969.");
    assert_eq!(read_pair("Yes.").unwrap().explanation, "Yes.");
}

/// What small models reply to the pair check when they answer nothing: the question copied
/// back (the reply that read as CONFLICT because it holds "contradict"), the format
/// repeated, both answers, only the answers quoted. And what they reply when they do answer,
/// around an echo.
#[test]
fn an_echo_of_the_prompt_is_no_verdict() {
    let req = crate::detect::prompts::pair_check(
        "Is the following claim true? Claim: Global warming is driven by the sun.",
        "The claim is false; the warming since 1950 is driven by greenhouse gases.",
        "Solar activity has been flat since 1950 while temperatures rose.",
    );
    let prompt = crate::detect::prompts::text_of(&req);
    let none = [
        "Claim: Global warming is driven by the sun. Do the two answers contradict each other, so that they cannot both be true? Differences in",
        "Do the two answers contradict each other, so that they cannot both be true?",
        "Differences in wording, detail or length are not contradictions.",
        "Yes or No",
        "Yes and no.",
        "First write Yes or No. Then explain why in one sentence.",
        "Answer A: The claim is false; the warming since 1950 is driven by greenhouse gases.\nAnswer B: Solar activity has been flat since 1950 while temperatures rose.",
        "Yes. The answers contradict. No, they do not.",
        // Real replies: a question the model asked itself, the question made a statement
        // three times (Gemma 3 270M, cut at 64 tokens).
        "The answer to the question \"Which of the two answers contradicts the claim?\" is \"No.\"",
        "  The two answers contradict each other, so that they cannot both be true.\n\nAnswer:  The two answers contradict each other, so that they cannot both be true.\n\nAnswer:  The two answers contradict each other",
    ];
    for reply in none {
        assert_eq!(read_pair_to(reply, prompt), None, "{reply:?}");
    }
    let read = [
        // Real SmolLM2 replies on Climate-FEVER claims.
        ("The answer is \"Yes\"", true),
        (
            "The two answers do not contradict each other, but rather highlight differences in wording, detail, or length.",
            false,
        ),
        ("No, they do not contradict each other.", false),
        (
            "Yes, the two answers contradict each other, so they cannot both be true.",
            true,
        ),
        (
            "Do the two answers contradict each other, so that they cannot both be true? No.",
            false,
        ),
        (
            "Yes. A blames greenhouse gases and B does not contradict that.\nQuote A: \"driven by greenhouse gases\"",
            true,
        ),
    ];
    for (reply, conflict) in read {
        let got = read_pair_to(reply, prompt).map(|r| r.conflict);
        assert_eq!(got, Some(conflict), "{reply:?}");
    }
    // A quote copies an answer by design: it is kept.
    let r = read_pair_to(
        "Yes.\nQuote A: \"the warming since 1950 is driven by greenhouse gases\"\nQuote B: \"Solar activity has been flat since 1950 while temperatures rose\"",
        prompt,
    )
    .unwrap();
    assert_eq!(
        r.quote_a.as_deref(),
        Some("the warming since 1950 is driven by greenhouse gases")
    );
}

#[test]
fn a_classification_that_repeats_its_format_or_its_claim_is_read_from_the_rest() {
    let req = crate::detect::prompts::classification(
        "It is false that the Moon is made of rock.",
        "The Moon is made of rock, as samples from Apollo show.",
    );
    let prompt = crate::detect::prompts::text_of(&req);
    for reply in [
        "Answer on the first line with exactly \"Answer: True\" or \"Answer: False\", then give a one-sentence reason.",
        "Based on the reference, is the claim true or false?",
        "Claim: It is false that the Moon is made of rock.",
    ] {
        assert_eq!(read_truth_to(reply, prompt), None, "{reply:?}");
    }
    assert_eq!(
        read_truth_to(
            "Claim: It is false that the Moon is made of rock.\nAnswer: False",
            prompt
        ),
        Some(Truth::False)
    );
    assert_eq!(read_truth_to("Answer: True", prompt), Some(Truth::True));
}

/// Pair replies and their verdicts (true: conflict). 60 phrasings: the format asked for,
/// JSON, verdicts first and last, both directions of "not", yes/no, refusals (None).
const PAIRS: &[(&str, Option<bool>)] = &[
    (
        "Verdict: CONFLICT\nExplanation: A says 1969, B says 1971.\nQuote A: \"1969\"\nQuote B: \"1971\"",
        Some(true),
    ),
    (
        "Verdict: CONSISTENT\nExplanation: Both say Paris.\nQuote A: \"\"\nQuote B: \"\"",
        Some(false),
    ),
    ("verdict: conflict", Some(true)),
    // What SmolLM2 135M replies to the pair check (a verdict first, then noise).
    (
        "No, the two answers do not contradict each other. The phrases \"differences in wording, detail or length\" and \"conflict with each other\" are not contradictory.",
        Some(false),
    ),
    (
        "Yes.\nExplanation: the dates differ.\nQuote A: \"1969\"\nQuote B: \"1971\"",
        Some(true),
    ),
    // A small model echoing the format names no verdict.
    (
        "The conflicting phrase from answer A is \"the conflicting phrase from answer B\" (or \"the conflicting phrase from answer B\")",
        None,
    ),
    (
        "Verdict: CONFLICT or CONSISTENT\nExplanation: one sentence saying why",
        None,
    ),
    (
        "Quote A: \"they conflict\"\nQuote B: \"\"\nVerdict: consistent",
        Some(false),
    ),
    ("VERDICT - consistent", Some(false)),
    ("Final verdict: CONFLICT", Some(true)),
    ("Answer: consistent", Some(false)),
    ("Decision: the answers conflict.", Some(true)),
    ("Conclusion: they are consistent.", Some(false)),
    (
        "{\"verdict\": \"conflict\", \"explanation\": \"dates differ\", \"quote_a\": \"1969\", \"quote_b\": \"1971\"}",
        Some(true),
    ),
    (
        "{\"verdict\": \"consistent\", \"explanation\": \"same\"}",
        Some(false),
    ),
    (
        "```json\n{\"contradiction\": true, \"reason\": \"x\"}\n```",
        Some(true),
    ),
    ("{\"contradiction\": false}", Some(false)),
    ("{\"contradict\": \"yes\"}", Some(true)),
    ("{\"conflict\": \"no\"}", Some(false)),
    (
        "Sure! {\"verdict\": \"CONFLICT\", \"explanation\": \"differ\"} Hope this helps.",
        Some(true),
    ),
    (
        "{\"contradictory\": false, \"explanation\": \"same city\"}",
        Some(false),
    ),
    (
        "Yes, they contradict each other: one says 5, the other 7.",
        Some(true),
    ),
    ("No, they do not contradict each other.", Some(false)),
    ("Yes.", Some(true)),
    ("No.", Some(false)),
    ("yes", Some(true)),
    ("No - both say the same thing.", Some(false)),
    ("The two answers contradict each other.", Some(true)),
    ("The answers do not contradict each other.", Some(false)),
    (
        "They don't contradict each other; B adds detail.",
        Some(false),
    ),
    ("These answers are contradictory.", Some(true)),
    ("These answers are not contradictory.", Some(false)),
    ("There is a contradiction between A and B.", Some(true)),
    ("There is no contradiction between them.", Some(false)),
    ("There's no real conflict here.", Some(false)),
    ("The answers are consistent with each other.", Some(false)),
    (
        "The answers are not consistent: A says north, B says south.",
        Some(true),
    ),
    ("The answers aren't consistent.", Some(true)),
    ("They are inconsistent.", Some(true)),
    ("The statements are incompatible.", Some(true)),
    ("The statements are compatible.", Some(false)),
    ("Both answers agree on the date.", Some(false)),
    ("The answers do not agree on the capital.", Some(true)),
    ("They disagree? No: they are in agreement.", Some(false)),
    ("Answer A clashes with answer B over the year.", Some(true)),
    (
        "A claims 206 bones while B claims 300; they conflict.",
        Some(true),
    ),
    (
        "Looking at both: A mentions Lyon, B mentions Lyon too. They are consistent.",
        Some(false),
    ),
    (
        "After comparing the dates, I find that the answers contradict.",
        Some(true),
    ),
    (
        "B is more detailed but does not conflict with A.",
        Some(false),
    ),
    ("There are no contradictions.", Some(false)),
    (
        "Non-contradictory: both describe the same event.",
        Some(false),
    ),
    ("Neither contradicts the other.", Some(false)),
    ("A says yes, B says no, so they contradict.", Some(true)),
    (
        "At first they seem to conflict, but they are consistent. Therefore, consistent.",
        Some(false),
    ),
    (
        "Some details differ, but overall there is no contradiction.",
        Some(false),
    ),
    (
        "One could say they are consistent in tone, but they contradict on the facts. Thus they contradict.",
        Some(true),
    ),
    ("CONFLICT", Some(true)),
    ("CONSISTENT", Some(false)),
    ("I cannot determine whether they contradict.", None),
    ("Not enough information to decide.", None),
    ("", None),
    ("The answers are about different things.", None),
    ("Hmm.", None),
    ("I'm unable to assess this.", None),
    (
        "They might conflict or might be consistent; it is unclear.",
        None,
    ),
];

#[test]
fn pair_replies_are_read_in_sixty_phrasings() {
    assert!(PAIRS.len() >= 50);
    for (reply, want) in PAIRS {
        let got = read_pair(reply).map(|r| r.conflict);
        assert_eq!(got, *want, "{reply:?}");
    }
}

#[test]
fn explanations_and_quotes_are_kept() {
    let r = read_pair(PAIRS[0].0).unwrap();
    assert_eq!(r.explanation, "A says 1969, B says 1971.");
    assert_eq!(r.quote_a.as_deref(), Some("1969"));
    assert_eq!(r.quote_b.as_deref(), Some("1971"));
    let r = read_pair(PAIRS[1].0).unwrap();
    assert_eq!((r.quote_a, r.quote_b), (None, None));
    let json = PAIRS
        .iter()
        .find(|p| p.0.starts_with("{\"verdict\": \"conflict\""))
        .unwrap();
    let r = read_pair(json.0).unwrap();
    assert_eq!(r.explanation, "dates differ");
    assert_eq!(r.quote_b.as_deref(), Some("1971"));
}

/// Classifications and their reading: 56 phrasings, both directions of "not", JSON, the
/// answer first or last, refusals (None).
const TRUTHS: &[(&str, Option<Truth>)] = &[
    (
        "Answer: True\nThe reference supports it.",
        Some(Truth::True),
    ),
    (
        "Answer: False\nThe reference says otherwise.",
        Some(Truth::False),
    ),
    ("answer: true", Some(Truth::True)),
    ("ANSWER: FALSE", Some(Truth::False)),
    ("Answer - True", Some(Truth::True)),
    ("Final answer: False.", Some(Truth::False)),
    ("Verdict: true", Some(Truth::True)),
    ("Classification: false", Some(Truth::False)),
    ("Label: True", Some(Truth::True)),
    ("True.", Some(Truth::True)),
    ("False.", Some(Truth::False)),
    ("true", Some(Truth::True)),
    ("FALSE", Some(Truth::False)),
    ("The claim is true.", Some(Truth::True)),
    ("The claim is false.", Some(Truth::False)),
    ("The claim is untrue.", Some(Truth::False)),
    ("The claim is not true.", Some(Truth::False)),
    ("The claim isn't true.", Some(Truth::False)),
    ("This is not false.", Some(Truth::True)),
    ("The claim is false, not true.", Some(Truth::False)),
    ("The claim is true, not false.", Some(Truth::True)),
    (
        "It is not true that the Sahara is in South America.",
        Some(Truth::False),
    ),
    ("The claim is correct.", Some(Truth::True)),
    ("The claim is incorrect.", Some(Truth::False)),
    ("The claim is not correct.", Some(Truth::False)),
    ("The statement is accurate.", Some(Truth::True)),
    ("The statement is inaccurate.", Some(Truth::False)),
    ("The statement is not accurate.", Some(Truth::False)),
    ("The claim is misleading.", Some(Truth::False)),
    (
        "The claim is supported by the reference.",
        Some(Truth::True),
    ),
    ("The claim is refuted by the reference.", Some(Truth::False)),
    (
        "Based on the reference, the claim is true. It matches the summary.",
        Some(Truth::True),
    ),
    (
        "Based on the reference the answer is: False",
        Some(Truth::False),
    ),
    (
        "After reading the reference, I conclude the claim is false.",
        Some(Truth::False),
    ),
    (
        "{\"answer\": \"True\", \"reason\": \"x\"}",
        Some(Truth::True),
    ),
    ("{\"answer\": \"false\"}", Some(Truth::False)),
    ("{\"answer\": true}", Some(Truth::True)),
    ("{\"answer\": false}", Some(Truth::False)),
    ("```json\n{\"label\": \"FALSE\"}\n```", Some(Truth::False)),
    ("{\"classification\": \"True\"}", Some(Truth::True)),
    (
        "The reference does not say much, but the claim is true.",
        Some(Truth::True),
    ),
    (
        "Reason: the claim contradicts the source.\nAnswer: False",
        Some(Truth::False),
    ),
    ("Reasoning first... Answer: True", Some(Truth::True)),
    ("**Answer: False**", Some(Truth::False)),
    ("Answer: **True**", Some(Truth::True)),
    ("The claim is never true.", Some(Truth::False)),
    (
        "That is not correct; the capital is Canberra.",
        Some(Truth::False),
    ),
    ("Yes, it is true.", Some(Truth::True)),
    ("No, that's false.", Some(Truth::False)),
    ("I cannot determine whether the claim is true.", None),
    ("Not enough information to say.", None),
    ("", None),
    ("The reference is about something else.", None),
    ("Hmm, hard to say.", None),
    ("I am unable to answer this.", None),
    ("Unclear.", None),
    // Released AutoHall replies that abstain while naming the question.
    ("It is unclear whether the claim is true or not.", None),
    ("One would need accurate information.", None),
    (
        "The question is whether it is true: it is false.",
        Some(Truth::False),
    ),
];

#[test]
fn classifications_are_read_in_fifty_phrasings_and_not_true_is_false() {
    assert!(TRUTHS.len() >= 50);
    for (reply, want) in TRUTHS {
        assert_eq!(read_truth(reply), *want, "{reply:?}");
    }
}

#[test]
fn refusals_without_content_are_told_from_references() {
    for r in [
        "I cannot provide a specific reference for this claim.",
        "I'm sorry, but I can't browse the internet to find sources.",
        "As an AI, I do not have access to external databases. I apologize.",
        "I am unable to provide a reference.",
        "",
        "No specific reference available.",
    ] {
        assert!(is_refusal(r), "{r:?}");
    }
    for r in [
        "Title: The Structure of DNA. Source: Nature, 1953. Summary: Watson and Crick describe the double helix of DNA, with two strands wound around each other and bases pairing across.",
        "I cannot provide a link, but here is a summary: the Berlin Wall fell on 9 November 1989 after weeks of protests in East Germany, and border crossings opened that night.",
        "Title: Canberra. Source: Encyclopaedia. Summary: Canberra is the capital city of Australia.",
    ] {
        assert!(!is_refusal(r), "{r:?}");
    }
}

/// Replies that say both (seen in the hand-labelled fixture of real SmolLM2 replies) are
/// no verdict; the question's own definition ("cannot both be true") is a conflict.
#[test]
fn a_reply_that_contradicts_itself_gives_no_verdict() {
    for reply in [
        "The two answers do contradict each other, but they can both be true.",
        "The two answers do contradict each other, but they can be reconciled by considering the context.",
        "The two answers contradict each other, but the first answer is not a contradiction.",
    ] {
        assert_eq!(read_pair(reply), None, "{reply:?}");
    }
    let c = |r: &str| read_pair(r).map(|p| p.conflict);
    assert_eq!(
        c("The two answers contradict each other, as they cannot both be true."),
        Some(true)
    );
    assert_eq!(
        c(
            "The answer is not a contradiction. The two answers are not mutually exclusive, and the two answers can both be true."
        ),
        Some(false)
    );
    // Classification: "not entirely true" is false; "true, but not a fact" says both.
    assert_eq!(
        read_truth("The claim is not entirely true."),
        Some(Truth::False)
    );
    assert_eq!(read_truth("The claim is true, but it's not a fact."), None);
    assert_eq!(read_truth("It is false, not true."), Some(Truth::False));
    assert_eq!(
        read_truth("The claim is not true. It has indeed grown, but it's not a fact."),
        Some(Truth::False)
    );
}
