//! Inference on a GGUF file through llama.cpp, in this process: what the worker process runs
//! (see `super::worker`); prism itself never calls llama.cpp in its own process, so a crash in
//! llama.cpp cannot take the TUI or a run down.
//!
//! Generation runs on a decode thread of its own, fed by a queue; it decodes several jobs
//! together in one llama context (see `super::decoder`). Each job's events go to its [`Sink`]; a
//! sink that reports the job cancelled stops it at the next token.
//! llama.cpp's own logging is switched off: it would otherwise write into the worker's pipes.

use std::num::NonZeroU32;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, OnceLock, mpsc};

use llama_cpp_2::context::params::LlamaContextParams;
use llama_cpp_2::llama_backend::LlamaBackend;
use llama_cpp_2::model::params::LlamaModelParams;
use llama_cpp_2::model::{LlamaChatMessage, LlamaChatTemplate, LlamaModel};

use super::decoder::{Counters, Decoder, Job, MAX_SEQUENCES, Msg, N_BATCH};
use super::protocol::LoadSpec;
use super::{COMPLETION_STOPS, PromptStyle, check_file, completion_prompt};
use crate::provider::{Message, Params, ProviderError};

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

/// A loaded GGUF model with its generation threads.
pub struct Engine {
    model: Arc<LlamaModel>,
    style: PromptStyle,
    jobs: Mutex<mpsc::Sender<Msg>>,
    identity: String,
    /// Tokens generated and prompt tokens read by this engine so far (all jobs, cancelled ones
    /// included).
    counters: Arc<Counters>,
}

impl Engine {
    pub fn load(spec: &LoadSpec) -> Result<Engine, ProviderError> {
        let (path, threads, context) = (spec.path.as_path(), spec.threads, spec.context);
        check_file(path)?;
        let backend = backend()?;
        let model = LlamaModel::load_from_file(backend, path, &LlamaModelParams::default()).map_err(|e| {
            ProviderError::Config(format!(
                "llama.cpp could not load {} ({e}): unsupported architecture, damaged file or not enough memory",
                path.display()
            ))
        })?;
        let model = Arc::new(model);
        let style = if spec.completion {
            PromptStyle::Completion
        } else if let Some(t) = &spec.template {
            PromptStyle::Chat(t.to_string())
        } else {
            match model.chat_template(None) {
                Ok(t) => PromptStyle::Chat(t.to_string().unwrap_or_else(|_| "gemma".into())),
                // No template in the file (the bundled Gemma base model): llama.cpp's own.
                Err(_) => PromptStyle::Chat("gemma".into()),
            }
        };
        // The decode thread owns the context (it borrows the model, so it is made there); a
        // context that cannot be made fails the load, with the file named.
        let seqs = spec.workers.clamp(1, MAX_SEQUENCES);
        let (tx, rx) = mpsc::channel::<Msg>();
        let (ready_tx, ready) = mpsc::sync_channel::<Result<(), String>>(1);
        let counters = Arc::new(Counters::default());
        {
            let (model, counter) = (model.clone(), counters.clone());
            std::thread::Builder::new()
                .name("prism-local-decode".into())
                .spawn(move || {
                    let ctx =
                        match model.new_context(backend, context_params(context, threads, seqs)) {
                            Ok(c) => c,
                            Err(e) => {
                                let _ = ready_tx.send(Err(e.to_string()));
                                return;
                            }
                        };
                    let _ = ready_tx.send(Ok(()));
                    Decoder::new(&model, ctx, context, seqs, counter).run(&rx);
                })
                .map_err(|e| ProviderError::Config(format!("starting the decode thread: {e}")))?;
        }
        match ready.recv() {
            Ok(Ok(())) => {}
            Ok(Err(e)) => {
                return Err(ProviderError::Config(format!(
                    "{}: cannot create a {context}-token context ({e}); lower `context` or free memory",
                    path.display()
                )));
            }
            Err(_) => {
                return Err(ProviderError::Config(format!(
                    "{}: the decode thread stopped while making its context",
                    path.display()
                )));
            }
        }
        // The file, and how it is prompted: one file as a completion and as a chat (or under
        // two templates) answers one request two ways.
        let prompted = match &style {
            PromptStyle::Completion => "completion".to_string(),
            PromptStyle::Chat(t) => {
                use sha2::Digest;
                format!(
                    "chat-{}",
                    hex::encode(&sha2::Sha256::digest(t.as_bytes())[..8])
                )
            }
        };
        let identity = format!(
            "local:{}:{}:{prompted}",
            path.file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
            model.size()
        );
        Ok(Engine {
            model,
            style,
            jobs: Mutex::new(tx),
            identity,
            counters,
        })
    }

    /// Tokens generated so far by this engine (a cancelled job stops adding to it).
    pub fn generated_tokens(&self) -> u64 {
        self.counters.generated.load(Ordering::Relaxed)
    }

    /// The counters behind [`Engine::generated_tokens`].
    pub fn counters(&self) -> Arc<Counters> {
        self.counters.clone()
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

    /// The prompt and parameters for a chat request, in this model's style (a base model in
    /// completion style also stops where it would start inventing the next question).
    pub fn prepare(
        &self,
        messages: &[Message],
        params: &Params,
    ) -> Result<(String, Params), ProviderError> {
        let prompt = self.render(messages)?;
        let mut params = params.clone();
        if self.style == PromptStyle::Completion {
            for s in COMPLETION_STOPS {
                if !params.stop.iter().any(|x| x == s) {
                    params.stop.push(s.to_string());
                }
            }
        }
        Ok((prompt, params))
    }

    /// Queues a generation; its events go to the job's sink.
    pub fn submit(&self, job: Job) -> Result<(), ProviderError> {
        self.send(Msg::Job(job))
    }

    /// Decodes with `n` threads from the next decode on; `applied` hears the count once it is
    /// in force.
    pub fn set_threads(
        &self,
        n: usize,
        applied: impl FnOnce(usize) + Send + 'static,
    ) -> Result<(), ProviderError> {
        self.send(Msg::Threads(n, Box::new(applied)))
    }

    fn send(&self, msg: Msg) -> Result<(), ProviderError> {
        self.jobs
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .send(msg)
            .map_err(|_| ProviderError::Config("the local model's threads have stopped".into()))
    }

    pub fn identity(&self) -> &str {
        &self.identity
    }
}

fn context_params(context: u32, threads: i32, seqs: usize) -> LlamaContextParams {
    LlamaContextParams::default()
        // Flash attention off (0 = LLAMA_FLASH_ATTN_TYPE_DISABLED), as llama.cpp's servers run
        // on CPU by default: with it on ("auto"), prompt processing measured slower here.
        .with_flash_attention_policy(0)
        .with_n_ctx(NonZeroU32::new(context))
        .with_n_batch(N_BATCH as u32)
        .with_n_threads(threads)
        .with_n_threads_batch(threads)
        // Several sequences share one KV cache of `context` cells (llama-server's parallel
        // slots): a sequence may use all of it, and the decoder admits a job only when its
        // prompt and max_tokens fit beside the others.
        .with_n_seq_max(seqs as u32)
        .with_kv_unified(true)
}
