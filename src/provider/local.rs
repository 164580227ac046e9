//! The embedded local model: in-process inference on a GGUF file through llama.cpp.
//!
//! Generation runs on dedicated worker threads (one llama context each) fed by a bounded queue,
//! so the async runtime and the TUI never wait on it. Tokens stream back through the same
//! [`ChatStream`] as the HTTP providers. Dropping the stream cancels the generation at the next
//! token. llama.cpp's own logging is switched off: it would otherwise write over the TUI.

use std::collections::HashMap;
use std::num::NonZeroU32;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use llama_cpp_2::context::params::LlamaContextParams;
use llama_cpp_2::llama_backend::LlamaBackend;
use llama_cpp_2::llama_batch::LlamaBatch;
use llama_cpp_2::model::params::LlamaModelParams;
use llama_cpp_2::model::{LlamaChatMessage, LlamaChatTemplate, LlamaModel};
use llama_cpp_2::sampling::LlamaSampler;
use tokio::sync::mpsc;

use super::types::{ChatRequest, Message, ProviderError, Role, StreamEvent, Usage};
use super::{ChatStream, ModelConfig};

/// Tokens generated when a request sets no `max_tokens`.
pub const DEFAULT_MAX_TOKENS: u32 = 256;
/// Context size when the config sets none.
pub const DEFAULT_CONTEXT: u32 = 4096;
/// Stop sequences added in completion mode (a base model otherwise goes on to invent the next
/// question).
pub const COMPLETION_STOPS: [&str; 2] = ["\n\n\n", "\nQuestion:"];

fn backend() -> Result<&'static LlamaBackend, ProviderError> {
    static BACKEND: OnceLock<Result<LlamaBackend, String>> = OnceLock::new();
    BACKEND
        .get_or_init(|| {
            let mut b = LlamaBackend::init().map_err(|e| e.to_string())?;
            b.void_logs();
            Ok(b)
        })
        .as_ref()
        .map_err(|e| ProviderError::Config(format!("llama.cpp backend: {e}")))
}

/// How the prompt is rendered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PromptStyle {
    /// The model's chat template, or a llama.cpp built-in one by name.
    Chat(String),
    /// Plain text with `Answer:` cues, for base models.
    Completion,
}

struct Job {
    prompt: String,
    params: super::Params,
    events: mpsc::Sender<Result<StreamEvent, ProviderError>>,
}

/// A loaded GGUF model with its worker threads.
pub struct LocalModel {
    pub path: PathBuf,
    model: Arc<LlamaModel>,
    style: PromptStyle,
    jobs: mpsc::Sender<Job>,
    pub context: u32,
    pub threads: i32,
    identity: String,
}

impl std::fmt::Debug for LocalModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalModel")
            .field("path", &self.path)
            .field("style", &self.style)
            .finish()
    }
}

/// Checks that a file is there and starts with the GGUF magic, before llama.cpp sees it.
fn check_file(path: &Path) -> Result<(), ProviderError> {
    use std::io::Read;
    let shown = path.display();
    let mut f = std::fs::File::open(path).map_err(|e| {
        ProviderError::Config(if e.kind() == std::io::ErrorKind::NotFound {
            format!(
                "model file {shown} does not exist (install the default with `prism model install`)"
            )
        } else {
            format!("model file {shown}: {e}")
        })
    })?;
    let mut magic = [0u8; 4];
    if f.read_exact(&mut magic).is_err() || &magic != b"GGUF" {
        return Err(ProviderError::Config(format!(
            "model file {shown} is not a GGUF file"
        )));
    }
    Ok(())
}

impl LocalModel {
    /// Loads (or reuses) a model for this config. Loading the same file with the same settings
    /// twice in one process shares one copy.
    pub fn for_config(
        cfg: &ModelConfig,
        default_path: &Path,
    ) -> Result<Arc<LocalModel>, ProviderError> {
        static LOADED: OnceLock<Mutex<HashMap<String, Arc<LocalModel>>>> = OnceLock::new();
        let path = cfg
            .path
            .clone()
            .unwrap_or_else(|| default_path.to_path_buf());
        let threads = cfg.threads.map(|t| t as i32).unwrap_or_else(|| {
            std::thread::available_parallelism()
                .map(|n| n.get() as i32)
                .unwrap_or(2)
        });
        let context = cfg.context.unwrap_or(DEFAULT_CONTEXT);
        let workers = cfg.max_concurrency.clamp(1, 8);
        let completion = cfg.completion.unwrap_or(false);
        let key = format!(
            "{}|{threads}|{context}|{workers}|{completion}|{:?}",
            path.display(),
            cfg.chat_template
        );
        let cache = LOADED.get_or_init(Default::default);
        if let Some(m) = cache.lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
            return Ok(m.clone());
        }
        let m = Arc::new(Self::load(
            &path,
            threads,
            context,
            workers,
            completion,
            cfg.chat_template.as_deref(),
        )?);
        cache
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(key, m.clone());
        Ok(m)
    }

    pub fn load(
        path: &Path,
        threads: i32,
        context: u32,
        workers: usize,
        completion: bool,
        template: Option<&str>,
    ) -> Result<LocalModel, ProviderError> {
        check_file(path)?;
        let backend = backend()?;
        let model = LlamaModel::load_from_file(backend, path, &LlamaModelParams::default()).map_err(|e| {
            ProviderError::Config(format!(
                "llama.cpp could not load {} ({e}): unsupported architecture, damaged file or not enough memory",
                path.display()
            ))
        })?;
        let model = Arc::new(model);
        let style = if completion {
            PromptStyle::Completion
        } else if let Some(t) = template {
            PromptStyle::Chat(t.to_string())
        } else {
            match model.chat_template(None) {
                Ok(t) => PromptStyle::Chat(t.to_string().unwrap_or_else(|_| "gemma".into())),
                // No template in the file (the bundled Gemma base model): llama.cpp's own.
                Err(_) => PromptStyle::Chat("gemma".into()),
            }
        };
        // Create one context up front so a bad context size fails here, with the file named.
        {
            let ctx_params = context_params(context, threads);
            model.new_context(backend, ctx_params).map_err(|e| {
                ProviderError::Config(format!(
                    "{}: cannot create a {context}-token context ({e}); lower `context` or free memory",
                    path.display()
                ))
            })?;
        }
        let (tx, rx) = mpsc::channel::<Job>(64);
        let rx = Arc::new(Mutex::new(rx));
        for w in 0..workers.max(1) {
            let (model, rx) = (model.clone(), rx.clone());
            std::thread::Builder::new()
                .name(format!("prism-local-{w}"))
                .spawn(move || worker(model, rx, context, threads))
                .map_err(|e| ProviderError::Config(format!("starting a local worker: {e}")))?;
        }
        let identity = format!(
            "local:{}:{}",
            path.file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
            model.size()
        );
        Ok(LocalModel {
            path: path.to_path_buf(),
            model,
            style,
            jobs: tx,
            context,
            threads,
            identity,
        })
    }

    pub fn style(&self) -> &PromptStyle {
        &self.style
    }

    /// The prompt text for a request, in this model's style.
    pub fn render(&self, messages: &[Message]) -> Result<String, ProviderError> {
        match &self.style {
            PromptStyle::Completion => Ok(completion_prompt(messages)),
            PromptStyle::Chat(name) => {
                let tmpl = LlamaChatTemplate::new(name)
                    .map_err(|e| ProviderError::Config(format!("chat template {name:?}: {e}")))?;
                let chat: Vec<LlamaChatMessage> = messages
                    .iter()
                    .map(|m| LlamaChatMessage::new(m.role.as_str().to_string(), m.content.clone()))
                    .collect::<Result<_, _>>()
                    .map_err(|e| {
                        ProviderError::Protocol(format!("message not usable by llama.cpp: {e}"))
                    })?;
                self.model
                    .apply_chat_template(&tmpl, &chat, true)
                    .map_err(|e| ProviderError::Config(format!("chat template {name:?}: {e}")))
            }
        }
    }

    /// Queues a generation and returns its stream.
    pub async fn stream(
        &self,
        req: &ChatRequest,
        idle: Duration,
    ) -> Result<ChatStream, ProviderError> {
        let prompt = self.render(&req.messages)?;
        let mut params = req.params.clone();
        if self.style == PromptStyle::Completion {
            for s in COMPLETION_STOPS {
                if !params.stop.iter().any(|x| x == s) {
                    params.stop.push(s.to_string());
                }
            }
        }
        let (tx, rx) = mpsc::channel(256);
        self.jobs
            .send(Job {
                prompt,
                params,
                events: tx,
            })
            .await
            .map_err(|_| ProviderError::Config("the local model's workers have stopped".into()))?;
        let stream =
            futures::stream::unfold(
                rx,
                |mut rx| async move { rx.recv().await.map(|ev| (ev, rx)) },
            );
        Ok(ChatStream::new(Box::pin(stream), idle))
    }

    pub fn identity(&self) -> &str {
        &self.identity
    }
}

fn context_params(context: u32, threads: i32) -> LlamaContextParams {
    LlamaContextParams::default()
        .with_n_ctx(NonZeroU32::new(context))
        .with_n_batch(512)
        .with_n_threads(threads)
        .with_n_threads_batch(threads)
}

/// Completion style: each user turn followed by `Answer:`, examples answered inline.
pub fn completion_prompt(messages: &[Message]) -> String {
    let mut out = String::new();
    for m in messages {
        match m.role {
            Role::System => {
                out.push_str(m.content.trim_end());
                out.push_str("\n\n");
            }
            Role::User => {
                out.push_str(m.content.trim_end());
                out.push_str("\n\nAnswer:");
            }
            Role::Assistant => {
                out.push(' ');
                out.push_str(m.content.trim());
                out.push_str("\n\n\n");
            }
        }
    }
    out
}

fn worker(model: Arc<LlamaModel>, rx: Arc<Mutex<mpsc::Receiver<Job>>>, context: u32, threads: i32) {
    let Ok(backend) = backend() else { return };
    let mut ctx = match model.new_context(backend, context_params(context, threads)) {
        Ok(c) => c,
        Err(_) => return,
    };
    loop {
        let job = {
            let mut rx = rx.lock().unwrap_or_else(|e| e.into_inner());
            rx.blocking_recv()
        };
        let Some(job) = job else { return };
        ctx.clear_kv_cache();
        let result = generate(&model, &mut ctx, &job, context);
        if let Err(e) = result {
            let _ = job.events.blocking_send(Err(e));
        }
    }
}

/// Runs one generation, sending deltas as they come. Returns an error to report, if any.
fn generate(
    model: &LlamaModel,
    ctx: &mut llama_cpp_2::context::LlamaContext<'_>,
    job: &Job,
    context: u32,
) -> Result<(), ProviderError> {
    let vocab = model.vocab();
    let tokens = vocab.tokenize(job.prompt.as_bytes(), true, true);
    let max_new = job.params.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS) as usize;
    if tokens.is_empty() {
        return Err(ProviderError::Protocol("empty prompt".into()));
    }
    if tokens.len() + max_new > context as usize {
        return Err(ProviderError::Protocol(format!(
            "the prompt is {} tokens; with max_tokens {max_new} it exceeds the local context of {context} (raise `context`)",
            tokens.len()
        )));
    }
    // Prompt processing in batches.
    let n_batch = 512usize;
    let mut batch = LlamaBatch::new(n_batch, 1);
    let last = tokens.len() - 1;
    for (chunk_i, chunk) in tokens.chunks(n_batch).enumerate() {
        batch.clear();
        for (j, &t) in chunk.iter().enumerate() {
            let pos = chunk_i * n_batch + j;
            batch
                .add(t, pos as i32, &[0], pos == last)
                .map_err(|e| ProviderError::Protocol(format!("batch: {e}")))?;
        }
        ctx.decode(&mut batch)
            .map_err(|e| ProviderError::Protocol(format!("llama.cpp decode failed: {e}")))?;
        if job.events.is_closed() {
            return Ok(());
        }
    }
    let temperature = job.params.temperature.unwrap_or(0.8) as f32;
    let mut sampler = if temperature <= 0.0 {
        LlamaSampler::greedy()
    } else {
        LlamaSampler::chain_simple([
            LlamaSampler::top_p(job.params.top_p.unwrap_or(1.0) as f32, 1),
            LlamaSampler::temp(temperature),
            LlamaSampler::dist(job.params.seed.unwrap_or(0x5eed) as u32),
        ])
    };
    let mut stopper = StopMatcher::new(&job.params.stop);
    let mut bytes: Vec<u8> = Vec::new();
    let mut n_pos = tokens.len();
    let mut generated = 0usize;
    let mut reason = "length";
    while generated < max_new {
        let token = sampler.sample(ctx, batch.n_tokens() - 1);
        sampler.accept(token);
        if vocab.is_eog(token) {
            reason = "stop";
            break;
        }
        generated += 1;
        bytes.extend_from_slice(&vocab.token_to_piece(token, false, None));
        // Emit only complete UTF-8; a multi-byte character may span tokens.
        let valid = match std::str::from_utf8(&bytes) {
            Ok(_) => bytes.len(),
            Err(e) => e.valid_up_to(),
        };
        let piece = String::from_utf8_lossy(&bytes[..valid]).into_owned();
        bytes.drain(..valid);
        let (emit, stopped) = stopper.push(&piece);
        if !emit.is_empty()
            && job
                .events
                .blocking_send(Ok(StreamEvent::Delta(emit)))
                .is_err()
        {
            return Ok(()); // cancelled: the stream was dropped
        }
        if stopped {
            reason = "stop";
            break;
        }
        batch.clear();
        batch
            .add(token, n_pos as i32, &[0], true)
            .map_err(|e| ProviderError::Protocol(format!("batch: {e}")))?;
        n_pos += 1;
        ctx.decode(&mut batch)
            .map_err(|e| ProviderError::Protocol(format!("llama.cpp decode failed: {e}")))?;
    }
    let rest = stopper.flush();
    if !rest.is_empty() {
        let _ = job.events.blocking_send(Ok(StreamEvent::Delta(rest)));
    }
    let _ = job.events.blocking_send(Ok(StreamEvent::Usage(Usage {
        prompt_tokens: Some(tokens.len() as u32),
        completion_tokens: Some(generated as u32),
    })));
    let _ = job.events.blocking_send(Ok(StreamEvent::Finish {
        reason: Some(reason.into()),
    }));
    Ok(())
}

/// Finds stop strings in a stream of text pieces without ever emitting part of one: text that
/// could still become a stop string is held back until it cannot.
pub struct StopMatcher {
    stops: Vec<String>,
    held: String,
    done: bool,
}

impl StopMatcher {
    pub fn new(stops: &[String]) -> StopMatcher {
        StopMatcher {
            stops: stops.iter().filter(|s| !s.is_empty()).cloned().collect(),
            held: String::new(),
            done: false,
        }
    }

    /// Adds text; returns what may be emitted now and whether a stop string was reached.
    pub fn push(&mut self, piece: &str) -> (String, bool) {
        if self.done {
            return (String::new(), true);
        }
        self.held.push_str(piece);
        if let Some(pos) = self
            .stops
            .iter()
            .filter_map(|s| self.held.find(s.as_str()))
            .min()
        {
            let out = self.held[..pos].to_string();
            self.held.clear();
            self.done = true;
            return (out, true);
        }
        // Keep the longest suffix that is a prefix of some stop string.
        let keep = self
            .stops
            .iter()
            .map(|s| {
                (1..s.len().min(self.held.len() + 1))
                    .rev()
                    .find(|&k| {
                        self.held.is_char_boundary(self.held.len() - k)
                            && s.starts_with(&self.held[self.held.len() - k..])
                    })
                    .unwrap_or(0)
            })
            .max()
            .unwrap_or(0);
        let cut = self.held.len() - keep;
        let out = self.held[..cut].to_string();
        self.held.drain(..cut);
        (out, false)
    }

    /// The held-back text at the end of generation.
    pub fn flush(&mut self) -> String {
        std::mem::take(&mut self.held)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stop_strings_are_never_emitted_even_across_pieces() {
        let mut m = StopMatcher::new(&["\n\nQ".to_string(), "END".to_string()]);
        let mut out = String::new();
        let mut stopped = false;
        for p in ["Hel", "lo\n", "\n", "Qnext"] {
            let (e, s) = m.push(p);
            out.push_str(&e);
            if s {
                stopped = true;
                break;
            }
        }
        assert!(stopped);
        assert_eq!(out, "Hello");
        let mut m = StopMatcher::new(&["END".to_string()]);
        let (a, _) = m.push("abcE");
        assert_eq!(a, "abc");
        let (b, s) = m.push("Nx");
        assert_eq!((b.as_str(), s), ("ENx", false));
        assert_eq!(m.flush(), "");
        let (c, _) = m.push("ab EN");
        assert_eq!(c, "ab ");
        assert_eq!(m.flush(), "EN", "held text comes out at the end");
    }

    #[test]
    fn completion_prompts_cue_answers() {
        let p = completion_prompt(&[
            Message::user("Q1?"),
            Message::assistant("A1"),
            Message::user("Q2?\n"),
        ]);
        assert_eq!(p, "Q1?\n\nAnswer: A1\n\n\nQ2?\n\nAnswer:");
    }

    #[test]
    fn missing_and_non_gguf_files_are_clear_errors() {
        let e = check_file(Path::new("/no/such/model.gguf"))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("/no/such/model.gguf") && e.contains("does not exist"),
            "{e}"
        );
        let f = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(f.path(), b"not a model").unwrap();
        let e = check_file(f.path()).unwrap_err().to_string();
        assert!(e.contains("not a GGUF file"), "{e}");
    }
}
