//! One item on one page (`prism report --item ID --format html`): the question, the reference,
//! and every stored answer of a run to it, each with its score and, where the run stored them,
//! its tokens shaded by probability (hover a token for its probability and the alternatives
//! the model weighed), its perplexity and its least likely token. Self-contained HTML; model text
//! is sanitised and escaped.

use super::html::esc;
use crate::provider::TokenLogprob;
use crate::text::sanitize;

/// One stored answer as the page shows it.
#[derive(Debug, Clone)]
pub struct AnswerView {
    pub model: String,
    pub sample: u32,
    pub text: Option<String>,
    pub error: Option<String>,
    /// PRISM's score and the evaluator that gave it.
    pub score: Option<(f64, String)>,
    /// Its tokens, only when they spell the answer (`eval::whitebox::shown_tokens`).
    pub tokens: Option<Vec<TokenLogprob>>,
    /// What to say of its tokens (left out as they came, or not matching the answer).
    pub tokens_note: Option<String>,
}

/// The page's content.
#[derive(Debug, Clone)]
pub struct ItemView {
    pub run_id: String,
    pub item_id: String,
    pub task_id: String,
    pub question: String,
    pub reference: Option<String>,
    pub answers: Vec<AnswerView>,
}

const STYLE: &str = "body{font-family:system-ui,sans-serif;margin:2rem;color:#222;max-width:1100px}
h1{font-size:1.3rem}.q{font-size:1.05rem;margin:.5rem 0}.ref{color:#555}
.a{border:1px solid #ccc;border-radius:6px;padding:.6rem .8rem;margin:1rem 0}
.h{font-weight:600;margin-bottom:.4rem}.m{color:#666;font-weight:400}
.txt{white-space:pre-wrap;line-height:1.6}
.t{border-radius:2px}.p1{background:#f4f4f4}.p2{background:#ffe9a8}.p3{background:#ffc48a;text-decoration:underline}
.p4{background:#ff9d8f;text-decoration:underline;font-weight:700}
.err{color:#a00}.legend span{padding:0 .4rem;margin-right:.4rem}";

/// The class of a token's probability: the terminal's bands (likely plain; underlined below
/// 0.5, bold below 0.2), so the page reads without colour too.
fn class(p: f64) -> &'static str {
    use crate::eval::whitebox::{Band, band};
    match band(p) {
        Band::Likely => "p1",
        Band::Fair => "p2",
        Band::Unlikely => "p3",
        Band::VeryUnlikely => "p4",
    }
}

/// A token's hover text: its probability, then the alternatives, most likely first.
fn hover(tok: &TokenLogprob) -> String {
    let alts = crate::eval::whitebox::alternatives(tok, 5);
    let mut s = format!("p {:.3}", f64::from(tok.logprob).exp());
    if !alts.is_empty() {
        s.push_str(" · instead: ");
        s.push_str(
            &alts
                .iter()
                .map(|(a, p)| format!("{:?} {p:.3}", sanitize(a)))
                .collect::<Vec<_>>()
                .join(", "),
        );
    }
    s
}

/// The page.
pub fn html(v: &ItemView) -> String {
    let mut s = format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{} · prism</title><style>{STYLE}</style></head><body>\n",
        esc(&v.item_id)
    );
    s.push_str(&format!(
        "<h1>{} <span class=\"m\">{} · run {}</span></h1>\n<div class=\"q\">{}</div>\n",
        esc(&v.item_id),
        esc(&v.task_id),
        esc(&v.run_id),
        esc(&sanitize(&v.question))
    ));
    if let Some(r) = &v.reference {
        s.push_str(&format!(
            "<div class=\"ref\">reference: {}</div>\n",
            esc(&sanitize(r))
        ));
    }
    s.push_str("<p class=\"legend\">Token probability: <span class=\"p1\">≥ 0.8</span><span class=\"p2\">≥ 0.5</span><span class=\"p3\">≥ 0.2 (underlined)</span><span class=\"p4\">&lt; 0.2 (bold)</span> · hover a token for its alternatives.</p>\n");
    for a in &v.answers {
        let mut facts = vec![format!("sample {}", a.sample + 1)];
        if let Some((score, ev)) = &a.score {
            facts.push(format!("score {score:.2} ({})", esc(ev)));
        }
        if let Some(w) = a.tokens.as_deref().and_then(crate::eval::whitebox::scores) {
            facts.push(format!(
                "perplexity {:.1} · least likely token p {:.3}",
                w.perplexity,
                w.min_logprob.exp()
            ));
        }
        if let Some(n) = &a.tokens_note {
            facts.push(esc(&crate::text::one_line(n)));
        }
        s.push_str(&format!(
            "<div class=\"a\"><div class=\"h\">{} <span class=\"m\">{}</span></div>\n<div class=\"txt\">",
            esc(&a.model),
            facts.join(" · ")
        ));
        match (&a.tokens, &a.text, &a.error) {
            (Some(tokens), _, _) => {
                for tok in tokens {
                    let p = f64::from(tok.logprob).exp();
                    s.push_str(&format!(
                        "<span class=\"t {}\" title=\"{}\">{}</span>",
                        class(p),
                        esc(&hover(tok)),
                        esc(&sanitize(&tok.token))
                    ));
                }
            }
            (None, Some(t), _) => s.push_str(&esc(&sanitize(t))),
            (None, None, Some(e)) => {
                s.push_str(&format!("<span class=\"err\">failed: {}</span>", esc(e)))
            }
            (None, None, None) => s.push_str("<span class=\"m\">(no answer)</span>"),
        }
        s.push_str("</div></div>\n");
    }
    if v.answers.is_empty() {
        s.push_str("<p>No stored answer to this item in the run.</p>\n");
    }
    s.push_str("</body></html>\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Tokens become spans with their class and hover text; hostile model text is escaped and
    /// its control sequences are gone; an answer without tokens is plain text.
    #[test]
    fn an_item_page_shades_tokens_and_escapes_model_text() {
        let tok = |t: &str, p: f64, top: &[(&str, f64)]| TokenLogprob {
            token: t.into(),
            logprob: p.ln() as f32,
            top: top
                .iter()
                .map(|(a, q)| (a.to_string(), q.ln() as f32))
                .collect(),
        };
        let v = ItemView {
            run_id: "r1".into(),
            item_id: "KE-X-1".into(),
            task_id: "KE-X".into(),
            question: "Capital of <France>?".into(),
            reference: Some("Paris".into()),
            answers: vec![
                AnswerView {
                    model: "m<script>".into(),
                    sample: 0,
                    text: Some("Lyon".into()),
                    error: None,
                    score: Some((0.0, "exact".into())),
                    tokens: Some(vec![
                        tok("<b>Ly", 0.1, &[(" Paris", 0.7), ("<b>Ly", 0.1)]),
                        tok("on\u{1b}[31m", 0.9, &[]),
                    ]),
                    tokens_note: None,
                },
                AnswerView {
                    model: "n".into(),
                    sample: 1,
                    text: Some("Paris & co".into()),
                    error: None,
                    score: None,
                    tokens: None,
                    tokens_note: None,
                },
            ],
        };
        let h = html(&v);
        assert!(h.contains("Capital of &lt;France&gt;?"));
        assert!(!h.contains("<script>") && h.contains("m&lt;script&gt;"));
        assert!(h.contains(
            "<span class=\"t p4\" title=\"p 0.100 · instead: &quot; Paris&quot; 0.700\">&lt;b&gt;Ly</span>"
        ));
        assert!(
            h.contains("<span class=\"t p1\" title=\"p 0.900\">on</span>"),
            "{h}"
        );
        assert!(!h.contains('\u{1b}') && !h.contains("[31m"));
        assert!(h.contains("Paris &amp; co"));
        assert!(h.contains("score 0.00 (exact)"));
        assert!(h.contains("perplexity 3.3"));
    }
}
