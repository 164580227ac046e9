//! Language detection for the `language` evaluator and the IFEval language checks.
//!
//! PRISM's rule (PRISM-FORMAT.md, "Details that decide close cases") is langdetect, the Python
//! port of Nakatani Shuyo's language-detection with its 55 profiles, seeded with 0. Detection is
//! a random walk over character n-grams, so any other detector disagrees with it on short and
//! odd texts ("B.", "[FALSE]", a fenced JSON snippet). The `langdetect` crate reproduces that
//! walk bit for bit (the same Mersenne Twister and floating-point order);
//! `tests/langdetect.rs` checks it against labels Python's langdetect 1.0.9 gave 2,000+ texts.
//!
//! Codes are ISO 639-1 plus `zh-cn` / `zh-tw`, which both count as `zh`.

use std::sync::LazyLock;

use langdetect::{Compat, DetectorFactory, Seed};

/// langdetect's languages: ISO 639-1 (its profile names, Chinese folded to `zh`), ISO 639-3 (so a
/// dataset that writes `fra` still compares), and the English name shown in details.
const LANGUAGES: &[(&str, &str, &str)] = &[
    ("af", "afr", "Afrikaans"),
    ("ar", "ara", "Arabic"),
    ("bg", "bul", "Bulgarian"),
    ("bn", "ben", "Bengali"),
    ("ca", "cat", "Catalan"),
    ("cs", "ces", "Czech"),
    ("cy", "cym", "Welsh"),
    ("da", "dan", "Danish"),
    ("de", "deu", "German"),
    ("el", "ell", "Greek"),
    ("en", "eng", "English"),
    ("es", "spa", "Spanish"),
    ("et", "est", "Estonian"),
    ("fa", "fas", "Persian"),
    ("fi", "fin", "Finnish"),
    ("fr", "fra", "French"),
    ("gu", "guj", "Gujarati"),
    ("he", "heb", "Hebrew"),
    ("hi", "hin", "Hindi"),
    ("hr", "hrv", "Croatian"),
    ("hu", "hun", "Hungarian"),
    ("id", "ind", "Indonesian"),
    ("it", "ita", "Italian"),
    ("ja", "jpn", "Japanese"),
    ("kn", "kan", "Kannada"),
    ("ko", "kor", "Korean"),
    ("lt", "lit", "Lithuanian"),
    ("lv", "lav", "Latvian"),
    ("mk", "mkd", "Macedonian"),
    ("ml", "mal", "Malayalam"),
    ("mr", "mar", "Marathi"),
    ("ne", "nep", "Nepali"),
    ("nl", "nld", "Dutch"),
    ("no", "nor", "Norwegian"),
    ("pa", "pan", "Punjabi"),
    ("pl", "pol", "Polish"),
    ("pt", "por", "Portuguese"),
    ("ro", "ron", "Romanian"),
    ("ru", "rus", "Russian"),
    ("sk", "slk", "Slovak"),
    ("sl", "slv", "Slovenian"),
    ("so", "som", "Somali"),
    ("sq", "sqi", "Albanian"),
    ("sv", "swe", "Swedish"),
    ("sw", "swa", "Swahili"),
    ("ta", "tam", "Tamil"),
    ("te", "tel", "Telugu"),
    ("th", "tha", "Thai"),
    ("tl", "tgl", "Tagalog"),
    ("tr", "tur", "Turkish"),
    ("uk", "ukr", "Ukrainian"),
    ("ur", "urd", "Urdu"),
    ("vi", "vie", "Vietnamese"),
    ("zh", "zho", "Chinese"),
];

/// A language code brought to the form comparisons use: lower case, 639-1 where a 639-3 code or
/// a regional variant was given (`zh-CN` → `zh`, `fra` → `fr`, `pt_BR` → `pt`).
pub fn canonical(code: &str) -> String {
    let c = code.trim().to_ascii_lowercase().replace('_', "-");
    let base = c.split('-').next().unwrap_or("");
    if base.len() == 3
        && let Some((two, _, _)) = LANGUAGES.iter().find(|(_, three, _)| *three == base)
    {
        return two.to_string();
    }
    match base {
        // Mandarin, Norwegian Bokmål / Nynorsk, the old code for Hebrew, Persian's macrolanguage.
        "cmn" => "zh".into(),
        "nb" | "nn" | "nob" | "nno" => "no".into(),
        "iw" => "he".into(),
        "pes" => "fa".into(),
        _ => base.to_string(),
    }
}

/// langdetect 1.0.9 with its built-in profiles, seeded with 0 as PRISM runs it. CPython 3.11's
/// summation and Unicode tables: the Python the fixture was made with (the detected label does
/// not change between Pythons on any fixture text; see tests/langdetect.rs).
static DETECTOR: LazyLock<DetectorFactory> = LazyLock::new(|| {
    let mut f = DetectorFactory::new(Compat::python(11));
    f.load_builtin(&DetectorFactory::builtin_files())
        .expect("langdetect's built-in profiles load");
    f.seed = Seed::Int(0);
    f
});

/// langdetect's own label (`en`, `zh-cn`, ...), or `None` when it cannot label the text (no
/// letters: it raises there).
pub fn detect_raw(text: &str) -> Option<String> {
    DETECTOR.detect(text).ok()
}

/// The detected language of `text` as an ISO 639-1 code (`zh-cn` and `zh-tw` as `zh`), or `None`
/// when nothing can be labelled.
pub fn detect(text: &str) -> Option<&'static str> {
    let raw = detect_raw(text)?;
    let base = canonical(&raw);
    LANGUAGES
        .iter()
        .find(|(two, _, _)| *two == base)
        .map(|(two, _, _)| *two)
}

/// Human name of a code (for details shown to users); the code itself when unknown.
pub fn name(code: &str) -> String {
    let c = canonical(code);
    LANGUAGES
        .iter()
        .find(|(two, _, _)| *two == c)
        .map(|(_, _, n)| n.to_string())
        .unwrap_or(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detects_the_languages_prism_asks_for() {
        let cases = [
            (
                "zh",
                "今天天气很好，我们一起去公园散步吧。那里有很多花和树。",
            ),
            (
                "ja",
                "今日はとても良い天気なので、公園に散歩に行きましょう。",
            ),
            (
                "fr",
                "Aujourd'hui il fait très beau, allons nous promener dans le parc.",
            ),
            (
                "de",
                "Heute ist das Wetter sehr schön, lass uns im Park spazieren gehen.",
            ),
            (
                "ru",
                "Сегодня очень хорошая погода, давайте пойдём гулять в парк.",
            ),
            (
                "es",
                "Hoy hace muy buen tiempo, vamos a pasear por el parque juntos.",
            ),
            (
                "en",
                "The weather is lovely today, so let us take a walk in the park.",
            ),
            (
                "bg",
                "Днес времето е много хубаво, хайде да се разходим в парка заедно.",
            ),
        ];
        for (want, text) in cases {
            assert_eq!(detect(text), Some(want), "{text}");
        }
        assert_eq!(detect("1234 ... !!"), None);
        assert_eq!(detect(""), None);
    }

    #[test]
    fn codes_are_compared_in_one_form() {
        assert_eq!(canonical("zh-cn"), "zh");
        assert_eq!(canonical("zh-TW"), "zh");
        assert_eq!(canonical("FRA"), "fr");
        assert_eq!(canonical("pt_BR"), "pt");
        assert_eq!(canonical("de"), "de");
        assert_eq!(name("fr"), "French");
        assert_eq!(name("zh-cn"), "Chinese");
    }
}
