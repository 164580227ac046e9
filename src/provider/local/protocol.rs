//! What prism and its local-model worker say to each other: one JSON object a line, requests on
//! the worker's stdin, replies on its stdout. Both ends are the same binary, so there is no
//! version to negotiate; a program that answers with anything else is not prism's worker.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::provider::{Message, Params, ProviderError, StreamEvent, Usage};

/// How to load a model: the first line the worker reads.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LoadSpec {
    pub path: PathBuf,
    pub threads: i32,
    pub context: u32,
    /// Sequences decoded together in the one llama context (the model's `max_concurrency`).
    pub workers: usize,
    pub completion: bool,
    pub template: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Request {
    Load(LoadSpec),
    Generate {
        id: u64,
        messages: Vec<Message>,
        params: Params,
    },
    /// The prompt text a request would be given (for tools and benches).
    Render {
        id: u64,
        messages: Vec<Message>,
    },
    /// Stop a generation at its next token; an id that is done already is ignored.
    Cancel {
        id: u64,
    },
    /// Use this many threads from the next decode on (the model's share of the cores: see
    /// `budget`).
    Threads {
        n: usize,
    },
}

/// Which [`ProviderError`] a failure inside the worker was.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FailKind {
    Config,
    Protocol,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "ev", rename_all = "snake_case")]
pub enum Reply {
    Loaded {
        completion: bool,
        /// The chat template's name or text, for chat style.
        template: Option<String>,
        identity: String,
    },
    LoadFailed {
        kind: FailKind,
        message: String,
    },
    /// Token log-probabilities of the text sent so far.
    Tokens {
        id: u64,
        tokens: Vec<crate::provider::TokenLogprob>,
        generated: u64,
    },
    Delta {
        id: u64,
        text: String,
        /// Tokens the worker has generated so far, over all jobs.
        generated: u64,
    },
    Usage {
        id: u64,
        prompt_tokens: Option<u32>,
        completion_tokens: Option<u32>,
        generated: u64,
        /// Prompt tokens the worker has read so far, over all jobs.
        #[serde(default)]
        prompt_read: u64,
        /// Prompt tokens it took from cells it already had instead, over all jobs.
        #[serde(default)]
        prompt_reused: u64,
    },
    Finish {
        id: u64,
        reason: Option<String>,
        generated: u64,
    },
    Failed {
        id: u64,
        kind: FailKind,
        message: String,
        generated: u64,
    },
    Rendered {
        id: u64,
        text: Option<String>,
        error: Option<String>,
    },
    /// The threads the worker decodes with now (after a `Threads` request took effect).
    Threads {
        n: usize,
    },
}

impl Reply {
    /// The reply for one event of job `id`.
    pub fn event(id: u64, ev: Result<StreamEvent, ProviderError>, generated: u64) -> Reply {
        match ev {
            Ok(StreamEvent::Delta(text)) => Reply::Delta {
                id,
                text,
                generated,
            },
            Ok(StreamEvent::Tokens(tokens)) => Reply::Tokens {
                id,
                tokens,
                generated,
            },
            Ok(StreamEvent::Usage(u)) => Reply::Usage {
                id,
                prompt_tokens: u.prompt_tokens,
                completion_tokens: u.completion_tokens,
                generated,
                prompt_read: 0,
                prompt_reused: 0,
            },
            Ok(StreamEvent::Finish { reason }) => Reply::Finish {
                id,
                reason,
                generated,
            },
            Err(e) => {
                let (kind, message) = FailKind::of(&e);
                Reply::Failed {
                    id,
                    kind,
                    message,
                    generated,
                }
            }
        }
    }

    /// The job this reply belongs to, the event it carries and whether it ends the job.
    pub fn into_event(self) -> Option<(u64, Result<StreamEvent, ProviderError>, bool)> {
        Some(match self {
            Reply::Delta { id, text, .. } => (id, Ok(StreamEvent::Delta(text)), false),
            Reply::Tokens { id, tokens, .. } => (id, Ok(StreamEvent::Tokens(tokens)), false),
            Reply::Usage {
                id,
                prompt_tokens,
                completion_tokens,
                ..
            } => (
                id,
                Ok(StreamEvent::Usage(Usage {
                    prompt_tokens,
                    completion_tokens,
                })),
                false,
            ),
            Reply::Finish { id, reason, .. } => (id, Ok(StreamEvent::Finish { reason }), true),
            Reply::Failed {
                id, kind, message, ..
            } => (id, Err(kind.error(message)), true),
            Reply::Loaded { .. }
            | Reply::LoadFailed { .. }
            | Reply::Rendered { .. }
            | Reply::Threads { .. } => {
                return None;
            }
        })
    }

    pub fn generated(&self) -> Option<u64> {
        match self {
            Reply::Delta { generated, .. }
            | Reply::Tokens { generated, .. }
            | Reply::Usage { generated, .. }
            | Reply::Finish { generated, .. }
            | Reply::Failed { generated, .. } => Some(*generated),
            _ => None,
        }
    }
}

impl FailKind {
    /// How an error inside the worker is sent. Only config and protocol errors arise there.
    pub fn of(e: &ProviderError) -> (FailKind, String) {
        match e {
            ProviderError::Config(m) => (FailKind::Config, m.clone()),
            ProviderError::Protocol(m) => (FailKind::Protocol, m.clone()),
            other => (FailKind::Protocol, other.to_string()),
        }
    }

    pub fn error(self, message: String) -> ProviderError {
        match self {
            FailKind::Config => ProviderError::Config(message),
            FailKind::Protocol => ProviderError::Protocol(message),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_and_replies_survive_the_pipe() {
        let reqs = [
            Request::Load(LoadSpec {
                path: "/m/smol.gguf".into(),
                threads: 2,
                context: 2048,
                workers: 1,
                completion: false,
                template: Some("chatml".into()),
            }),
            Request::Generate {
                id: 7,
                messages: vec![Message::user("line one\nline \"two\"\u{1b}[31m")],
                params: Params {
                    temperature: Some(0.0),
                    stop: vec!["\n\n".into()],
                    ..Params::default()
                },
            },
            Request::Cancel { id: 7 },
            Request::Threads { n: 1 },
        ];
        for r in reqs {
            let line = serde_json::to_string(&r).unwrap();
            assert!(!line.contains('\n'), "one request, one line: {line}");
            assert_eq!(serde_json::from_str::<Request>(&line).unwrap(), r);
        }
        let events = [
            Ok(StreamEvent::Delta("a\nb".into())),
            Ok(StreamEvent::Usage(Usage {
                prompt_tokens: Some(3),
                completion_tokens: Some(2),
            })),
            Ok(StreamEvent::Finish {
                reason: Some("stop".into()),
            }),
            Err(ProviderError::Config("context too small".into())),
        ];
        for (i, ev) in events.into_iter().enumerate() {
            let line = serde_json::to_string(&Reply::event(9, ev.clone(), 40)).unwrap();
            let back: Reply = serde_json::from_str(&line).unwrap();
            assert_eq!(back.generated(), Some(40));
            let (id, got, last) = back.into_event().unwrap();
            assert_eq!(id, 9);
            assert_eq!(last, i >= 2, "finish and failure end the job");
            match (got, ev) {
                (Ok(a), Ok(b)) => assert_eq!(a, b),
                (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string()),
                (a, b) => panic!("{a:?} != {b:?}"),
            }
        }
    }
}
