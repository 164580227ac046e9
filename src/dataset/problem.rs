//! Problems found while loading a dataset, each pinned to a file, a line and a field.

use std::fmt;

use serde::Serialize;

/// How bad a problem is. Errors make `prism validate` exit 1 and drop the line they are on;
/// warnings are worth reading but change nothing that loads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Error,
    Warning,
}

/// One problem: `file:line: field: reason`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Problem {
    /// Path as shown to the user (relative to the dataset root where possible).
    pub file: String,
    /// 1-based line; 0 when the problem concerns the whole file.
    pub line: usize,
    /// The field at fault, or "-" when the problem is not about one field (bad JSON, empty file).
    pub field: String,
    pub reason: String,
    pub severity: Severity,
}

impl Problem {
    pub fn error(
        file: impl Into<String>,
        line: usize,
        field: impl Into<String>,
        reason: impl Into<String>,
    ) -> Self {
        Problem {
            file: file.into(),
            line,
            field: field.into(),
            reason: reason.into(),
            severity: Severity::Error,
        }
    }

    pub fn warning(
        file: impl Into<String>,
        line: usize,
        field: impl Into<String>,
        reason: impl Into<String>,
    ) -> Self {
        Problem {
            severity: Severity::Warning,
            ..Problem::error(file, line, field, reason)
        }
    }

    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let tag = match self.severity {
            Severity::Error => "",
            Severity::Warning => "warning: ",
        };
        write!(
            f,
            "{}:{}: {}: {}{}",
            self.file, self.line, self.field, tag, self.reason
        )
    }
}
