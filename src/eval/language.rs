//! Language detection for the `language` evaluator and the IFEval language checks.
//!
//! Detection is whatlang's (a maintained, dependency-light trigram detector covering 70
//! languages); PRISM's data names languages by ISO 639-1 codes (`fr`, `zh`, `zh-cn`), whatlang by
//! ISO 639-3, so both sides are brought to 639-1 here. Chinese variants (`zh-cn`, `zh-tw`,
//! Mandarin) all count as `zh`.

use whatlang::Lang;

/// ISO 639-3 (whatlang) to ISO 639-1 (PRISM, langdetect).
const ISO639_3_TO_1: &[(&str, &str)] = &[
    ("epo", "eo"),
    ("eng", "en"),
    ("rus", "ru"),
    ("cmn", "zh"),
    ("spa", "es"),
    ("por", "pt"),
    ("ita", "it"),
    ("ben", "bn"),
    ("fra", "fr"),
    ("deu", "de"),
    ("ukr", "uk"),
    ("kat", "ka"),
    ("ara", "ar"),
    ("hin", "hi"),
    ("jpn", "ja"),
    ("heb", "he"),
    ("yid", "yi"),
    ("pol", "pl"),
    ("amh", "am"),
    ("jav", "jv"),
    ("kor", "ko"),
    ("nob", "no"),
    ("dan", "da"),
    ("swe", "sv"),
    ("fin", "fi"),
    ("tur", "tr"),
    ("nld", "nl"),
    ("hun", "hu"),
    ("ces", "cs"),
    ("ell", "el"),
    ("bul", "bg"),
    ("bel", "be"),
    ("mar", "mr"),
    ("kan", "kn"),
    ("ron", "ro"),
    ("slv", "sl"),
    ("hrv", "hr"),
    ("srp", "sr"),
    ("mkd", "mk"),
    ("lit", "lt"),
    ("lav", "lv"),
    ("est", "et"),
    ("tam", "ta"),
    ("vie", "vi"),
    ("urd", "ur"),
    ("tha", "th"),
    ("guj", "gu"),
    ("uzb", "uz"),
    ("pan", "pa"),
    ("aze", "az"),
    ("ind", "id"),
    ("tel", "te"),
    ("pes", "fa"),
    ("mal", "ml"),
    ("ori", "or"),
    ("mya", "my"),
    ("nep", "ne"),
    ("sin", "si"),
    ("khm", "km"),
    ("tuk", "tk"),
    ("aka", "ak"),
    ("zul", "zu"),
    ("sna", "sn"),
    ("afr", "af"),
    ("lat", "la"),
    ("slk", "sk"),
    ("cat", "ca"),
    ("tgl", "tl"),
    ("hye", "hy"),
    ("cym", "cy"),
];

/// A language code brought to the form comparisons use: lower case, 639-1 where a 639-3 code or
/// a regional variant was given (`zh-CN` → `zh`, `fra` → `fr`, `pt_BR` → `pt`).
pub fn canonical(code: &str) -> String {
    let c = code.trim().to_ascii_lowercase().replace('_', "-");
    let base = c.split('-').next().unwrap_or("").to_string();
    if base.len() == 3
        && let Some((_, two)) = ISO639_3_TO_1.iter().find(|(three, _)| *three == base)
    {
        return two.to_string();
    }
    match base.as_str() {
        // Norwegian Bokmål and Nynorsk are reported as Norwegian.
        "nb" | "nn" => "no".to_string(),
        "iw" => "he".to_string(),
        _ => base,
    }
}

/// The detected language of `text` as an ISO 639-1 code, or `None` when nothing reliable is
/// there to detect (no letters).
pub fn detect(text: &str) -> Option<&'static str> {
    let lang: Lang = whatlang::detect_lang(text)?;
    let code = lang.code();
    ISO639_3_TO_1
        .iter()
        .find(|(three, _)| *three == code)
        .map(|(_, two)| *two)
}

/// Human name of a 639-1 code when whatlang knows it (for details shown to users).
pub fn name(code: &str) -> String {
    let c = canonical(code);
    ISO639_3_TO_1
        .iter()
        .find(|(_, two)| *two == c)
        .and_then(|(three, _)| Lang::from_code(*three))
        .map(|l| l.eng_name().to_string())
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
    }

    #[test]
    fn codes_are_compared_in_one_form() {
        assert_eq!(canonical("zh-cn"), "zh");
        assert_eq!(canonical("zh-TW"), "zh");
        assert_eq!(canonical("FRA"), "fr");
        assert_eq!(canonical("pt_BR"), "pt");
        assert_eq!(canonical("de"), "de");
        assert_eq!(name("fr"), "French");
    }
}
