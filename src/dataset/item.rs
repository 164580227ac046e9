//! The item model and the parsing of one JSONL record into it.
//!
//! Every field of the source is kept: the ones PRISM defines get typed slots, anything else is kept
//! verbatim in `extra`. Parsing never fails on a wrong field type: it records a per-field problem
//! instead, so validation can say `file:line: field: reason` rather than "bad line".

use std::fmt;

use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

/// One benchmark item.
#[derive(Debug, Clone, PartialEq)]
pub struct Item {
    pub id: Box<str>,
    /// Index into `Dataset::tasks`.
    pub task: u32,
    pub source_id: Option<Box<str>>,
    pub question: Box<str>,
    pub answer: Option<Box<str>>,
    /// RE-LF answer options, without letters (letters are added when the prompt is built).
    pub options: Option<Box<[Box<str>]>>,
    /// RE-PF intermediate steps: strings or lists (often triples), kept as given.
    pub procedure: Option<Box<[Value]>>,
    pub test_input: Option<Box<str>>,
    pub test_output: Option<Box<str>>,
    /// IFE-EF requested output format.
    pub format: Option<Box<str>>,
    /// IFE-LC inclusive `[min, max]` word count.
    pub word_range: Option<[i64; 2]>,
    /// IFE-LgC required response language.
    pub language: Option<Box<str>>,
    pub instruction_id: Option<Box<str>>,
    /// IFEval arguments: a list of objects, often `{}`.
    pub kwargs: Option<Box<[Value]>>,
    /// Fields PRISM does not define, kept as they were.
    pub extra: Box<[(Box<str>, Value)]>,
    /// 1-based line in the source file.
    pub line: u32,
}

impl Item {
    /// Whether a field the evaluators rely on is present (used by validation).
    pub fn has_field(&self, name: &str) -> bool {
        match name {
            "answer" => self.answer.is_some(),
            "options" => self.options.as_ref().is_some_and(|o| !o.is_empty()),
            "procedure" => self.procedure.is_some(),
            "test_input" => self.test_input.is_some(),
            "format" => self.format.is_some(),
            "word_range" => self.word_range.is_some(),
            "language" => self.language.is_some(),
            "instruction_id" => self.instruction_id.is_some(),
            "kwargs" => self.kwargs.is_some(),
            _ => self.extra.iter().any(|(k, _)| &**k == name),
        }
    }

    /// Text that `/` search looks in, part by part (id first).
    pub fn search_fields(&self) -> impl Iterator<Item = &str> {
        [
            Some(&*self.id),
            Some(&*self.question),
            self.answer.as_deref(),
            self.source_id.as_deref(),
        ]
        .into_iter()
        .flatten()
        .chain(self.options.iter().flat_map(|o| o.iter().map(|s| &**s)))
    }
}

/// A record as read from one line, before it is tied to a task.
#[derive(Debug, Default)]
pub struct Record {
    pub id: Option<Box<str>>,
    pub task: Option<Box<str>>,
    pub source_id: Option<Box<str>>,
    pub question: Option<Box<str>>,
    pub answer: Option<Box<str>>,
    pub options: Option<Box<[Box<str>]>>,
    pub procedure: Option<Box<[Value]>>,
    pub test_input: Option<Box<str>>,
    pub test_output: Option<Box<str>>,
    pub format: Option<Box<str>>,
    pub word_range: Option<[i64; 2]>,
    pub language: Option<Box<str>>,
    pub instruction_id: Option<Box<str>>,
    pub kwargs: Option<Box<[Value]>>,
    /// Plain-JSONL only: where the item sits in the taxonomy, and how it is scored.
    pub dimension: Option<Box<str>>,
    pub category: Option<Box<str>>,
    pub evaluator: Option<Box<str>>,
    pub prompt: Option<Box<str>>,
    pub extra: Vec<(Box<str>, Value)>,
    /// Fields present with the wrong type or shape: (field, reason).
    pub field_errors: Vec<(&'static str, String)>,
}

/// Why a line could not be read as a record at all.
#[derive(Debug)]
pub enum LineError {
    Json(serde_json::Error),
    NotObject(&'static str),
}

impl fmt::Display for LineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LineError::Json(e) => write!(f, "invalid JSON: {e}"),
            LineError::NotObject(kind) => write!(f, "expected a JSON object, found {kind}"),
        }
    }
}

impl Record {
    pub fn parse(line: &str) -> Result<Record, LineError> {
        let mut de = serde_json::Deserializer::from_str(line);
        let rec = match de.deserialize_any(RecordVisitor) {
            Ok(Ok(rec)) => rec,
            Ok(Err(kind)) => return Err(LineError::NotObject(kind)),
            Err(e) => return Err(LineError::Json(e)),
        };
        de.end().map_err(LineError::Json)?;
        Ok(rec)
    }
}

/// Visits the top level of a line: an object becomes a [`Record`]; anything else is reported by
/// kind (without failing the deserializer, so the caller can word the error).
struct RecordVisitor;

impl<'de> Visitor<'de> for RecordVisitor {
    type Value = Result<Record, &'static str>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut r = Record::default();
        while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            macro_rules! text {
                ($slot:ident, $name:literal, $numbers:expr) => {{
                    let v: Lenient = map.next_value()?;
                    match v.into_text($numbers) {
                        Ok(t) => r.$slot = t,
                        Err(e) => r.field_errors.push(($name, e)),
                    }
                }};
            }
            match &*key {
                "id" => text!(id, "id", true),
                "task" => text!(task, "task", false),
                "source_id" => text!(source_id, "source_id", true),
                "question" => text!(question, "question", false),
                "answer" => text!(answer, "answer", true),
                "test_input" => text!(test_input, "test_input", true),
                "test_output" => text!(test_output, "test_output", true),
                "format" => text!(format, "format", false),
                "language" => text!(language, "language", false),
                "instruction_id" => text!(instruction_id, "instruction_id", false),
                "dimension" => text!(dimension, "dimension", false),
                "category" | "subcategory" => text!(category, "category", false),
                "evaluator" => text!(evaluator, "evaluator", false),
                "prompt" => text!(prompt, "prompt", false),
                "options" => {
                    let v: Value = map.next_value()?;
                    match options(v) {
                        Ok(o) => r.options = o,
                        Err(e) => r.field_errors.push(("options", e)),
                    }
                }
                "procedure" => match map.next_value::<Value>()? {
                    Value::Null => {}
                    Value::Array(a) => r.procedure = Some(a.into_boxed_slice()),
                    other => r.field_errors.push((
                        "procedure",
                        format!("expected a list, found {}", kind(&other)),
                    )),
                },
                "word_range" => {
                    let v: Value = map.next_value()?;
                    match word_range(&v) {
                        Ok(w) => r.word_range = w,
                        Err(e) => r.field_errors.push(("word_range", e)),
                    }
                }
                "kwargs" => match map.next_value::<Value>()? {
                    Value::Null => {}
                    Value::Array(a) => {
                        if let Some(bad) = a.iter().find(|v| !v.is_object()) {
                            r.field_errors.push((
                                "kwargs",
                                format!("expected a list of objects, found {} in it", kind(bad)),
                            ));
                        } else {
                            r.kwargs = Some(a.into_boxed_slice())
                        }
                    }
                    // A single object is a common hand-written shorthand for a one-element list.
                    obj @ Value::Object(_) => r.kwargs = Some(vec![obj].into_boxed_slice()),
                    other => r.field_errors.push((
                        "kwargs",
                        format!("expected a list of objects, found {}", kind(&other)),
                    )),
                },
                _ => {
                    let v: Value = map.next_value()?;
                    r.extra.push((key.into_owned().into_boxed_str(), v));
                }
            }
        }
        Ok(Ok(r))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Err("an array"))
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
        Ok(Err("a string"))
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
        Ok(Err("a boolean"))
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
        Ok(Err("a number"))
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
        Ok(Err("a number"))
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
        Ok(Err("a number"))
    }
    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(Err("null"))
    }
}

/// A scalar field read without failing on the wrong type.
enum Lenient {
    Str(String),
    Num(String),
    Null,
    Other(&'static str),
}

impl Lenient {
    fn into_text(self, numbers_ok: bool) -> Result<Option<Box<str>>, String> {
        match self {
            Lenient::Str(s) => Ok(Some(s.into_boxed_str())),
            Lenient::Num(n) if numbers_ok => Ok(Some(n.into_boxed_str())),
            Lenient::Num(_) => Err("expected a string, found a number".into()),
            Lenient::Null => Ok(None),
            Lenient::Other(k) => Err(format!("expected a string, found {k}")),
        }
    }
}

impl<'de> de::Deserialize<'de> for Lenient {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Lenient;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any value")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Lenient, E> {
                Ok(Lenient::Str(v.to_owned()))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Lenient, E> {
                Ok(Lenient::Str(v))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Lenient, E> {
                Ok(Lenient::Num(v.to_string()))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Lenient, E> {
                Ok(Lenient::Num(v.to_string()))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Lenient, E> {
                Ok(Lenient::Num(v.to_string()))
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<Lenient, E> {
                Ok(Lenient::Other("a boolean"))
            }
            fn visit_unit<E: de::Error>(self) -> Result<Lenient, E> {
                Ok(Lenient::Null)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut s: A) -> Result<Lenient, A::Error> {
                while s.next_element::<IgnoredAny>()?.is_some() {}
                Ok(Lenient::Other("a list"))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Lenient, A::Error> {
                while m.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(Lenient::Other("an object"))
            }
        }
        d.deserialize_any(V)
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

fn options(v: Value) -> Result<Option<Box<[Box<str>]>>, String> {
    match v {
        Value::Null => Ok(None),
        Value::Array(a) => a
            .into_iter()
            .enumerate()
            .map(|(i, o)| match o {
                Value::String(s) => Ok(s.into_boxed_str()),
                Value::Number(n) => Ok(n.to_string().into_boxed_str()),
                other => Err(format!(
                    "option {} should be a string, found {}",
                    i + 1,
                    kind(&other)
                )),
            })
            .collect::<Result<Vec<_>, _>>()
            .map(|v| Some(v.into_boxed_slice())),
        other => Err(format!(
            "expected a list of strings, found {}",
            kind(&other)
        )),
    }
}

fn word_range(v: &Value) -> Result<Option<[i64; 2]>, String> {
    match v {
        Value::Null => Ok(None),
        Value::Array(a) if a.len() == 2 => {
            let n = |x: &Value| {
                x.as_i64()
                    .or_else(|| x.as_f64().filter(|f| f.fract() == 0.0).map(|f| f as i64))
            };
            match (n(&a[0]), n(&a[1])) {
                (Some(lo), Some(hi)) if lo <= hi && lo >= 0 => Ok(Some([lo, hi])),
                (Some(lo), Some(hi)) => {
                    Err(format!("[{lo}, {hi}] is not a range with 0 <= min <= max"))
                }
                _ => Err("expected two whole numbers [min, max]".into()),
            }
        }
        _ => Err("expected [min, max]".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_known_fields_and_keeps_unknown_ones() {
        let r = Record::parse(
            r#"{"id":"T-0001","task":"T","source_id":7,"question":"Q?","answer":"A",
                "options":["x","y"],"word_range":[10,20],"kwargs":[{}],"note":{"k":1}}"#,
        )
        .unwrap();
        assert_eq!(r.id.as_deref(), Some("T-0001"));
        assert_eq!(r.source_id.as_deref(), Some("7"));
        assert_eq!(r.options.as_ref().unwrap().len(), 2);
        assert_eq!(r.word_range, Some([10, 20]));
        assert_eq!(r.kwargs.as_ref().unwrap().len(), 1);
        assert_eq!(&*r.extra[0].0, "note");
        assert!(r.field_errors.is_empty());
    }

    #[test]
    fn wrong_types_become_field_errors_not_failures() {
        let r = Record::parse(
            r#"{"id":"x","question":5,"options":"abc","word_range":[9,3],"kwargs":[1]}"#,
        )
        .unwrap();
        let fields: Vec<_> = r.field_errors.iter().map(|(f, _)| *f).collect();
        assert_eq!(fields, vec!["question", "options", "word_range", "kwargs"]);
    }

    #[test]
    fn non_objects_and_bad_json_are_errors() {
        assert!(matches!(
            Record::parse("[1,2]"),
            Err(LineError::NotObject("an array"))
        ));
        assert!(matches!(Record::parse("{\"id\":"), Err(LineError::Json(_))));
        assert!(matches!(
            Record::parse("{} trailing"),
            Err(LineError::Json(_))
        ));
    }
}
