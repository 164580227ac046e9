//! The prompts of contradiction detection, in our own words (METHODS.md §3): how an answer is
//! asked for again in other words, how a pair of answers is checked, how AutoHall asks for a
//! reference and for a classification.

use crate::provider::{ChatRequest, Message, Params};

/// Framings of an item's task prompt and question: each sampled answer is asked for through
/// one, cycled, so the samples do not come from one wording. The task prompt and the question
/// stay as they are.
pub const ITEM_VARIANTS: [&str; 8] = [
    "{prompt}\n\n{question}",
    "Please answer the question below.\n\n{prompt}\n\n{question}",
    "{prompt}\n\nHere is the question you need to answer:\n{question}",
    "Read the instructions, then the question, and answer it.\n\nInstructions:\n{prompt}\n\nQuestion:\n{question}",
    "You will be given a task and a question.\n\n{prompt}\n\n---\n{question}",
    "{prompt}\n\nAnswer the following as accurately as you can.\n{question}",
    "Task description:\n{prompt}\n\nInput:\n{question}\n\nYour answer:",
    "Consider this carefully.\n\n{prompt}\n\n{question}\n\nGive your answer.",
];

/// AutoHall's reference request, and seven paraphrases of it for the sampled references.
pub const REFERENCE_VARIANTS: [&str; 8] = [
    "Provide a reference for the following claim: the title of a source, where it was published, and a one-paragraph summary of what it says about the claim.\n\nClaim: {claim}",
    "Find a source that discusses this claim. Give its title, its publisher or venue, and a one-paragraph summary of its content.\n\nClaim: {claim}",
    "What reference would you cite for the claim below? Write the title, the source, and one paragraph summarising it.\n\nClaim: {claim}",
    "Claim: {claim}\n\nName a document that addresses this claim (title and where it appeared) and summarise it in one paragraph.",
    "I need background on a claim. Please give one reference (title, source) and a one-paragraph summary of what it reports.\n\nClaim: {claim}",
    "For the statement below, write a short reference entry: title, source, and a paragraph describing the evidence it presents.\n\nStatement: {claim}",
    "Give a citation relevant to this claim and a one-paragraph summary of its findings. Include the title and the source.\n\nClaim: {claim}",
    "Claim under review: {claim}\n\nProvide a supporting or refuting reference: its title, its source, and a one-paragraph summary.",
];

/// Fills `{name}` placeholders (one pass; braces in values survive).
fn fill(template: &str, values: &[(&str, &str)]) -> String {
    crate::eval::judge::fill(template, values)
}

/// Which reference wording sample `k` uses: the seven paraphrases, cycled.
pub fn reference_variant_index(k: u32) -> u32 {
    1 + k % (REFERENCE_VARIANTS.len() as u32 - 1)
}

fn user(text: String, temperature: Option<f64>) -> ChatRequest {
    ChatRequest {
        messages: vec![Message::user(text)],
        params: Params {
            temperature,
            ..Params::default()
        },
    }
}

/// The message of sample `k` of an item: the framings after the first (the first is how the
/// answer under test was asked), cycled. `prompt` may be empty (an item without a task prompt).
pub fn item_variant(k: u32, prompt: &str, question: &str) -> String {
    let others = ITEM_VARIANTS.len() - 1;
    let t = ITEM_VARIANTS[1 + k as usize % others];
    let mut text = fill(t, &[("prompt", prompt.trim_end()), ("question", question)]);
    // Without a task prompt the framings still hold the question, without blank runs.
    while text.contains("\n\n\n") {
        text = text.replace("\n\n\n", "\n\n");
    }
    text.trim().to_string()
}

/// Which framing sample `k` used (for the record).
pub fn item_variant_index(k: u32) -> u32 {
    1 + k % (ITEM_VARIANTS.len() as u32 - 1)
}

/// The reference request `k` for a claim (0 is AutoHall's own wording, asked for the reference
/// under test; the samples use 1.. cycled: see [`reference_variant_index`]).
pub fn reference_request(k: u32, claim: &str, temperature: Option<f64>) -> ChatRequest {
    let t = REFERENCE_VARIANTS[k as usize % REFERENCE_VARIANTS.len()];
    user(fill(t, &[("claim", claim)]), temperature)
}

pub use crate::provider::text_of;

/// AutoHall's classification: the claim and the model's own reference, true or false, at
/// temperature 0.
pub fn classification(claim: &str, reference: &str) -> ChatRequest {
    user(
        format!(
            "Here is a claim and a reference about it.\n\nClaim: {claim}\n\nReference:\n{reference}\n\nBased on the reference, is the claim true or false? Answer on the first line with exactly \"Answer: True\" or \"Answer: False\", then give a one-sentence reason."
        ),
        Some(0.0),
    )
}

/// A claim's reference request `k` in the user's wording when given (see
/// [`super::templates`]), else prism's; with the variant it used.
pub fn reference_request_with(
    t: &super::templates::Templates,
    k: u32,
    for_sample: bool,
    claim: &str,
) -> (ChatRequest, u32) {
    match t.reference(k, for_sample) {
        Some((i, tpl)) => (user(fill(tpl, &[("claim", claim)]), None), i),
        None => {
            let v = if for_sample {
                reference_variant_index(k)
            } else {
                0
            };
            (reference_request(v, claim, None), v)
        }
    }
}

/// The classification in the user's wording when given, else prism's.
pub fn classification_with(
    t: &super::templates::Templates,
    claim: &str,
    reference: &str,
) -> ChatRequest {
    match &t.classification {
        Some(tpl) => user(
            fill(tpl, &[("claim", claim), ("reference", reference)]),
            Some(0.0),
        ),
        None => classification(claim, reference),
    }
}

/// The pair check in wording `wording`: 0 is the user's `pair_check` when given, else prism's;
/// 1.. the user's `pair_variants`.
pub fn pair_check_with(
    t: &super::templates::Templates,
    wording: u32,
    question: &str,
    a: &str,
    b: &str,
) -> ChatRequest {
    let tpl = match wording {
        0 => t.pair_check.as_ref(),
        w => t.pair_variants.get(w as usize - 1),
    };
    match tpl {
        Some(tpl) => user(
            fill(tpl, &[("question", question), ("a", a), ("b", b)]),
            Some(0.0),
        ),
        None => pair_check(question, a, b),
    }
}

/// The pair check: do two answers to the same question contradict each other? At temperature
/// 0. The reply format is asked for in words, not as a template with placeholders: small models
/// copy placeholders back verbatim ("Verdict: CONFLICT or CONSISTENT"), and every reply was
/// unreadable; asked this way SmolLM2 135M answers "No, ..." (readable, if not wise), and strong
/// models give the verdict, the reason and both quotes.
pub fn pair_check(question: &str, a: &str, b: &str) -> ChatRequest {
    user(
        format!(
            "Two answers were given to the same question.\n\nQuestion: {question}\nAnswer A: {a}\nAnswer B: {b}\n\nDo the two answers contradict each other, so that they cannot both be true? Differences in wording, detail or length are not contradictions. First write Yes or No. Then explain why in one sentence. Then copy the phrases that clash, one from each answer, as Quote A: and Quote B:."
        ),
        Some(0.0),
    )
}
