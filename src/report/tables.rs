//! Plain tables of strings in every report format: the detection and self-detection sections
//! build [`Table`]s; these render them for the terminal, CSV, Markdown and HTML.

use std::fmt::Write as _;

/// A table: its CSV name, title, header and rows (cells as printed).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Table {
    pub id: &'static str,
    pub title: String,
    pub header: Vec<&'static str>,
    pub rows: Vec<Vec<String>>,
}

/// For the terminal: aligned columns, the first left, the rest right.
pub(crate) fn text(tables: &[Table]) -> String {
    let mut s = String::new();
    for t in tables {
        let widths: Vec<usize> = (0..t.header.len())
            .map(|i| {
                t.rows
                    .iter()
                    .map(|r| r.get(i).map_or(0, |c| c.chars().count()))
                    .chain([t.header[i].chars().count()])
                    .max()
                    .unwrap_or(1)
            })
            .collect();
        let _ = writeln!(s, "\n{}", t.title);
        let line = |cells: Vec<String>| {
            cells
                .iter()
                .zip(&widths)
                .enumerate()
                .map(|(i, (c, w))| {
                    if i == 0 {
                        format!("{c:<w$}")
                    } else {
                        format!("{c:>w$}")
                    }
                })
                .collect::<Vec<_>>()
                .join("  ")
        };
        let _ = writeln!(
            s,
            "{}",
            line(t.header.iter().map(|h| h.to_string()).collect())
        );
        for r in &t.rows {
            let _ = writeln!(s, "{}", line(r.clone()));
        }
    }
    s
}

/// CSV: each table after a blank line, its first column naming it (`table`), so one file holds
/// them all and a reader can split on that column. Cells are neutralised against formulas.
pub(crate) fn csv(tables: &[Table]) -> String {
    let mut out = String::new();
    for t in tables {
        let mut w = csv::Writer::from_writer(Vec::new());
        let mut h = vec!["table"];
        h.extend(t.header.iter().copied());
        let _ = w.write_record(&h);
        for r in &t.rows {
            let mut rec = vec![t.id.to_string()];
            rec.extend(r.iter().map(|c| super::render::csv_cell(c)));
            let _ = w.write_record(&rec);
        }
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str(&String::from_utf8(w.into_inner().unwrap_or_default()).unwrap_or_default());
    }
    out
}

/// Text for a Markdown cell that renders as the text it is: HTML's three characters as
/// entities, and the characters that make emphasis, links, images, code and strikethrough
/// backslash-escaped (a model named `**[PASSED](http://...)**` stays those characters).
fn md_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in crate::text::clean_line(s).chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '|' | '\\' | '`' | '*' | '_' | '[' | ']' | '~' => {
                out.push('\\');
                out.push(c);
            }
            c => out.push(c),
        }
    }
    out
}

pub(crate) fn markdown(tables: &[Table]) -> String {
    let mut s = String::new();
    for t in tables {
        let _ = writeln!(s, "\n### {}\n", md_escape(&t.title));
        let _ = writeln!(s, "| {} |", t.header.join(" | "));
        let _ = writeln!(
            s,
            "|{}",
            (0..t.header.len())
                .map(|i| if i == 0 { "---|" } else { "---:|" })
                .collect::<String>()
        );
        for r in &t.rows {
            let _ = writeln!(
                s,
                "| {} |",
                r.iter()
                    .map(|c| md_escape(c))
                    .collect::<Vec<_>>()
                    .join(" | ")
            );
        }
    }
    s
}

pub(crate) fn html(tables: &[Table]) -> String {
    let esc = super::html::esc;
    let mut s = String::new();
    for t in tables {
        let _ = write!(
            s,
            "<h3>{}</h3><div class=\"scroll\"><table class=\"{}\"><tr>",
            esc(&t.title),
            t.id
        );
        for h in &t.header {
            let _ = write!(s, "<th>{}</th>", esc(h));
        }
        s.push_str("</tr>");
        for r in &t.rows {
            s.push_str("<tr>");
            for (i, c) in r.iter().enumerate() {
                if i == 0 {
                    let _ = write!(s, "<td class=\"name\">{}</td>", esc(c));
                } else {
                    let _ = write!(s, "<td>{}</td>", esc(c));
                }
            }
            s.push_str("</tr>");
        }
        s.push_str("</table></div>\n");
    }
    s
}

/// As JSON: each table an object with its id, title and rows keyed by the header's names.
pub(crate) fn json(tables: &[Table]) -> serde_json::Value {
    serde_json::Value::Array(
        tables
            .iter()
            .map(|t| {
                let rows: Vec<serde_json::Value> = t
                    .rows
                    .iter()
                    .map(|r| {
                        serde_json::Value::Object(
                            t.header
                                .iter()
                                .zip(r)
                                .map(|(h, c)| (h.to_string(), serde_json::Value::from(c.clone())))
                                .collect(),
                        )
                    })
                    .collect();
                serde_json::json!({"id": t.id, "title": t.title, "rows": rows})
            })
            .collect(),
    )
}
