//! The decode thread: several generations in one llama context, continuously batched, as
//! llama-server's parallel slots run them.
//!
//! Each step is one `llama_decode` of one batch holding the next token of every answer being
//! generated and, in what room is left, the next piece of every prompt being read. So answers
//! keep streaming while new prompts are read, and every pass over the weights serves every
//! sequence. A prompt is read in pieces of at most [`PROMPT_PIECE`] tokens while answers are
//! streaming (a long prompt would otherwise stall them), whole when nothing else runs.
//!
//! **Prompt reuse.** Every sequence keeps the KV cells of what it read and wrote after it ends,
//! until its room is needed. A new prompt starts from the longest run of tokens it shares with
//! any sequence's cells, from the first token: its own slot's (truncated to that run) or
//! another's (copied; in llama.cpp's unified cache a copy shares the cells, it does not
//! duplicate them). The K samples of one prompt read it once; the K pair checks of one answer
//! read the question and that answer once; a chat template's system prompt is read once per
//! slot. A prompt that is about to be read in full by a sequence started just before waits for
//! it rather than read the same tokens twice. Reuse is on only when a model decodes several
//! sequences (`max_concurrency` above 1): llama.cpp's sums differ in the last bits with the
//! batch they are computed in, so a reused prefix can steer a later token elsewhere, as a
//! batched answer can; one sequence at a time keeps every answer what it would be alone.
//!
//! **Room.** The sequences share one KV cache of `context` cells. A job starts when its prompt
//! (less what it reuses) and its `max_tokens` fit beside what the running ones may still need;
//! cells kept by ended sequences are given up, least recently used first, to make room.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;

use llama_cpp_2::context::LlamaContext;
use llama_cpp_2::llama_batch::LlamaBatch;
use llama_cpp_2::model::LlamaModel;
use llama_cpp_2::sampling::LlamaSampler;
use llama_cpp_2::token::LlamaToken;

use super::DEFAULT_MAX_TOKENS;
use super::stop::StopMatcher;
use crate::provider::{Params, ProviderError, StreamEvent, Usage};

/// Where one job's events go.
pub trait Sink: Send {
    /// Delivers an event; `false` when nobody wants the job any more (it stops).
    fn send(&self, ev: Result<StreamEvent, ProviderError>) -> bool;
    /// The job was cancelled before it produced anything.
    fn cancelled(&self) -> bool;
}

pub struct Job {
    pub prompt: String,
    pub params: Params,
    pub sink: Box<dyn Sink>,
}

/// What the decode thread is given: a job, or a new thread count (told back through the
/// callback once it applies, from the next decode on).
pub(super) enum Msg {
    Job(Job),
    Threads(usize, Box<dyn FnOnce(usize) + Send>),
}

/// The most sequences one context decodes together.
pub(super) const MAX_SEQUENCES: usize = 16;
/// The most tokens in one decode.
pub(super) const N_BATCH: usize = 512;
/// The most prompt tokens read in one step while answers are streaming.
const PROMPT_PIECE: usize = 128;
/// A prompt waits for a sequence that is reading the same tokens when it would save at least
/// this many.
const WORTH_WAITING: usize = 16;

/// What a worker's decoder has done, over all its jobs (cancelled ones included).
#[derive(Debug, Default)]
pub struct Counters {
    /// Tokens generated.
    pub generated: AtomicU64,
    /// Prompt tokens read (decoded).
    pub prompt_read: AtomicU64,
    /// Prompt tokens taken from cells already there instead of being read.
    pub prompt_reused: AtomicU64,
}

/// One generation in progress.
struct Seq {
    job: Job,
    prompt: Vec<LlamaToken>,
    /// Prompt tokens in the cache (reused or read); the prompt is read when this reaches its
    /// length.
    read: usize,
    sampler: LlamaSampler,
    stopper: StopMatcher,
    /// Bytes of a UTF-8 character split across tokens.
    bytes: Vec<u8>,
    generated: usize,
    max_new: usize,
    /// The sampled token to feed at the next step (None while the prompt is being read).
    next: Option<LlamaToken>,
    /// Where its logits are in the current batch, when it has any there.
    logits_at: Option<i32>,
    /// Whether text was sent yet: until then leading whitespace is dropped (a SentencePiece
    /// model's first token is often " The", which showed as a stray space before every answer).
    spoke: bool,
}

/// The text of `emit` to send: all of it once the answer has begun, else what follows its
/// leading whitespace (nothing when it is all whitespace).
fn without_leading_space(spoke: &mut bool, emit: String) -> String {
    if *spoke {
        return emit;
    }
    let rest = emit.trim_start();
    if rest.is_empty() {
        return String::new();
    }
    *spoke = true;
    rest.to_string()
}

/// A sequence of the context: the tokens its cells hold, and the generation using it.
struct Slot {
    id: i32,
    /// Tokens whose KV cells this sequence holds, from position 0.
    cells: Vec<LlamaToken>,
    /// When it was last used (a step count), to give up the least recently used cells first.
    used_at: u64,
    seq: Option<Box<Seq>>,
}

/// A job read from the queue, its prompt tokenized, waiting for a slot or for room.
struct Waiting {
    job: Job,
    prompt: Vec<LlamaToken>,
    max_new: usize,
}

/// What one sampled token did to its sequence.
enum Step {
    Going,
    Done(&'static str),
    /// Nobody wants it any more: end it silently.
    Dropped,
}

pub(super) struct Decoder<'m> {
    model: &'m LlamaModel,
    ctx: LlamaContext<'m>,
    context: usize,
    slots: Vec<Slot>,
    waiting: std::collections::VecDeque<Waiting>,
    reuse: bool,
    steps: u64,
    counter: Arc<Counters>,
}

/// The tokens two runs share from their start.
fn common_prefix(a: &[LlamaToken], b: &[LlamaToken]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

impl<'m> Decoder<'m> {
    pub(super) fn new(
        model: &'m LlamaModel,
        ctx: LlamaContext<'m>,
        context: u32,
        seqs: usize,
        counter: Arc<Counters>,
    ) -> Decoder<'m> {
        Decoder {
            model,
            ctx,
            context: context as usize,
            slots: (0..seqs as i32)
                .map(|id| Slot {
                    id,
                    cells: Vec::new(),
                    used_at: 0,
                    seq: None,
                })
                .collect(),
            waiting: Default::default(),
            reuse: seqs > 1,
            steps: 0,
            counter,
        }
    }

    fn busy(&self) -> bool {
        self.slots.iter().any(|s| s.seq.is_some())
    }

    pub(super) fn run(&mut self, rx: &mpsc::Receiver<Msg>) {
        loop {
            // Wait for work when there is none; otherwise take what has arrived.
            if !self.busy() && self.waiting.is_empty() {
                match rx.recv() {
                    Ok(m) => self.take(m),
                    Err(_) => return,
                }
            }
            loop {
                match rx.try_recv() {
                    Ok(m) => self.take(m),
                    Err(mpsc::TryRecvError::Empty) => break,
                    Err(mpsc::TryRecvError::Disconnected) => {
                        if !self.busy() && self.waiting.is_empty() {
                            return;
                        }
                        break;
                    }
                }
            }
            self.admit();
            if self.busy() {
                self.step();
            }
        }
    }

    fn take(&mut self, m: Msg) {
        match m {
            Msg::Job(job) => self.enqueue(job),
            Msg::Threads(n, applied) => {
                let n = n.clamp(1, i32::MAX as usize) as i32;
                self.ctx.set_n_threads(n, n);
                applied(self.ctx.n_threads() as usize);
            }
        }
    }

    /// Tokenizes a job and checks it can ever run; it then waits for a slot.
    fn enqueue(&mut self, job: Job) {
        if job.sink.cancelled() {
            return;
        }
        let prompt = self
            .model
            .vocab()
            .tokenize(job.prompt.as_bytes(), true, true);
        let max_new = job.params.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS) as usize;
        if prompt.is_empty() {
            job.sink
                .send(Err(ProviderError::Protocol("empty prompt".into())));
            return;
        }
        if prompt.len() + max_new > self.context {
            job.sink.send(Err(ProviderError::Protocol(format!(
                "the prompt is {} tokens; with max_tokens {max_new} it exceeds the local context of {} (raise `context`)",
                prompt.len(),
                self.context
            ))));
            return;
        }
        self.waiting.push_back(Waiting {
            job,
            prompt,
            max_new,
        });
    }

    /// Cells in use or promised: every slot's cells (shared ones counted in each, which errs on
    /// the safe side) and what the running sequences may still add.
    fn promised(&self) -> usize {
        self.slots
            .iter()
            .map(|s| {
                s.cells.len()
                    + s.seq.as_ref().map_or(0, |q| {
                        (q.prompt.len() - q.read) + (q.max_new - q.generated.min(q.max_new))
                    })
            })
            .sum()
    }

    /// Starts waiting jobs in order while slots and room allow.
    fn admit(&mut self) {
        let mut deferred = std::collections::VecDeque::new();
        while let Some(w) = self.waiting.pop_front() {
            if w.job.sink.cancelled() {
                continue;
            }
            let Some(slot) = self.choose_slot(&w.prompt) else {
                self.waiting.push_front(w);
                break; // every slot is busy
            };
            let (source, shared) = self.best_source(&w.prompt);
            // A sequence is reading these very tokens now: wait for it rather than read them
            // twice.
            if self.reuse
                && self.slots.iter().any(|s| {
                    s.seq.as_ref().is_some_and(|q| {
                        q.read < q.prompt.len()
                            && common_prefix(&q.prompt, &w.prompt).min(w.prompt.len() - 1)
                                >= shared + WORTH_WAITING
                    })
                })
            {
                deferred.push_back(w);
                continue;
            }
            let reuse = if self.reuse {
                shared.min(w.prompt.len() - 1)
            } else {
                0
            };
            if !self.make_room(slot, source, reuse, &w) {
                self.waiting.push_front(w);
                break; // no room until a running one ends
            }
            self.start(slot, source, reuse, w);
        }
        // Deferred jobs keep their place ahead of the ones behind them.
        while let Some(w) = deferred.pop_back() {
            self.waiting.push_front(w);
        }
    }

    /// The free slot for a prompt: the one whose cells share most with it, else the least
    /// recently used. `None` when all are busy.
    fn choose_slot(&self, prompt: &[LlamaToken]) -> Option<usize> {
        self.slots
            .iter()
            .enumerate()
            .filter(|(_, s)| s.seq.is_none())
            .max_by_key(|(_, s)| {
                let shared = if self.reuse {
                    common_prefix(&s.cells, prompt)
                } else {
                    0
                };
                (shared, std::cmp::Reverse(s.used_at))
            })
            .map(|(i, _)| i)
    }

    /// The slot whose cells share most with a prompt, and how many tokens.
    fn best_source(&self, prompt: &[LlamaToken]) -> (usize, usize) {
        self.slots
            .iter()
            .enumerate()
            .map(|(i, s)| (i, common_prefix(&s.cells, prompt)))
            .max_by_key(|&(i, n)| (n, std::cmp::Reverse(i)))
            .unwrap_or((0, 0))
    }

    /// Gives up ended sequences' cells, least recently used first, until the job fits; `false`
    /// if it cannot fit while others run.
    fn make_room(&mut self, slot: usize, source: usize, reuse: usize, w: &Waiting) -> bool {
        let need = |d: &Decoder| {
            // The chosen slot's own cells go (but what it reuses), then the new ones come.
            d.promised() - d.slots[slot].cells.len() + reuse + (w.prompt.len() - reuse) + w.max_new
        };
        while need(self) > self.context {
            let victim = self
                .slots
                .iter()
                .enumerate()
                .filter(|(i, s)| {
                    s.seq.is_none() && *i != slot && *i != source && !s.cells.is_empty()
                })
                .min_by_key(|(_, s)| s.used_at)
                .map(|(i, _)| i);
            match victim {
                Some(v) => self.forget(v),
                None => return false,
            }
        }
        true
    }

    fn forget(&mut self, slot: usize) {
        let s = &mut self.slots[slot];
        let _ = self.ctx.clear_kv_cache_seq(Some(s.id as u32), None, None);
        s.cells.clear();
    }

    /// Puts a job in a slot, its first `reuse` prompt tokens taken from `source`'s cells.
    fn start(&mut self, slot: usize, source: usize, reuse: usize, w: Waiting) {
        let id = self.slots[slot].id;
        if source == slot || reuse == 0 {
            // Keep this slot's own cells up to the reused run, drop the rest.
            let keep = if source == slot { reuse } else { 0 };
            let _ = self
                .ctx
                .clear_kv_cache_seq(Some(id as u32), Some(keep as u32), None);
            self.slots[slot].cells.truncate(keep);
        } else {
            let src = self.slots[source].id;
            let _ = self.ctx.clear_kv_cache_seq(Some(id as u32), None, None);
            let copied = self
                .ctx
                .copy_kv_cache_seq(src, id, Some(0), Some(reuse as u32))
                .is_ok();
            let cells = if copied {
                self.slots[source].cells[..reuse].to_vec()
            } else {
                Vec::new()
            };
            self.slots[slot].cells = cells;
        }
        let reused = self.slots[slot].cells.len();
        self.counter
            .prompt_reused
            .fetch_add(reused as u64, Ordering::Relaxed);
        let params = &w.job.params;
        let temperature = params.temperature.unwrap_or(0.8) as f32;
        let sampler = if temperature <= 0.0 {
            LlamaSampler::greedy()
        } else {
            LlamaSampler::chain_simple([
                LlamaSampler::top_p(params.top_p.unwrap_or(1.0) as f32, 1),
                LlamaSampler::temp(temperature),
                LlamaSampler::dist(params.seed.unwrap_or(0x5eed) as u32),
            ])
        };
        let stopper = StopMatcher::new(&params.stop);
        self.slots[slot].used_at = self.steps;
        self.slots[slot].seq = Some(Box::new(Seq {
            job: w.job,
            prompt: w.prompt,
            read: reused,
            sampler,
            stopper,
            bytes: Vec::new(),
            generated: 0,
            max_new: w.max_new,
            next: None,
            logits_at: None,
            spoke: false,
        }));
    }

    /// One decode: the next token of every answer, then prompt pieces in the room left.
    fn step(&mut self) {
        self.steps += 1;
        let generating = self
            .slots
            .iter()
            .filter(|s| s.seq.as_ref().is_some_and(|q| q.next.is_some()))
            .count();
        let mut room = N_BATCH - generating;
        if generating > 0 {
            room = room.min(PROMPT_PIECE);
        }
        let mut batch = LlamaBatch::new(N_BATCH, 1);
        // What each slot put in the batch, to add to its cells once decoded.
        let mut fed: Vec<(usize, Vec<LlamaToken>)> = Vec::new();
        let mut failed: Option<String> = None;
        for (i, slot) in self.slots.iter_mut().enumerate() {
            let Some(q) = slot.seq.as_mut() else { continue };
            q.logits_at = None;
            if let Some(t) = q.next {
                let pos = slot.cells.len() as i32;
                if let Err(e) = batch.add(t, pos, &[slot.id], true) {
                    failed = Some(format!("batch: {e}"));
                    break;
                }
                q.logits_at = Some(batch.n_tokens() - 1);
                fed.push((i, vec![t]));
            }
        }
        for (i, slot) in self.slots.iter_mut().enumerate() {
            if failed.is_some() || room == 0 {
                break;
            }
            let Some(q) = slot.seq.as_mut() else { continue };
            if q.next.is_some() || q.read >= q.prompt.len() {
                continue;
            }
            let n = (q.prompt.len() - q.read).min(room);
            let piece = q.prompt[q.read..q.read + n].to_vec();
            let end = q.read + n == q.prompt.len();
            for (j, &t) in piece.iter().enumerate() {
                let pos = (slot.cells.len() + j) as i32;
                let last = end && j == n - 1;
                if let Err(e) = batch.add(t, pos, &[slot.id], last) {
                    failed = Some(format!("batch: {e}"));
                    break;
                }
            }
            if end {
                q.logits_at = Some(batch.n_tokens() - 1);
            }
            q.read += n;
            room -= n;
            self.counter
                .prompt_read
                .fetch_add(n as u64, Ordering::Relaxed);
            slot.used_at = self.steps;
            fed.push((i, piece));
        }
        if failed.is_none()
            && batch.n_tokens() > 0
            && let Err(e) = self.ctx.decode(&mut batch)
        {
            failed = Some(format!("llama.cpp decode failed: {e}"));
        }
        if let Some(e) = failed {
            // Every sequence in this batch ends with the error; their cells are unknown now.
            for (i, _) in fed {
                if let Some(q) = self.slots[i].seq.take() {
                    q.job.sink.send(Err(ProviderError::Protocol(e.clone())));
                }
                self.forget(i);
            }
            return;
        }
        for (i, tokens) in fed {
            self.slots[i].cells.extend(tokens);
        }
        for i in 0..self.slots.len() {
            let Some(mut q) = self.slots[i].seq.take() else {
                continue;
            };
            let outcome = if q.job.sink.cancelled() {
                Step::Dropped
            } else if q.logits_at.is_some() {
                self.sample(&mut q)
            } else {
                Step::Going // still reading its prompt
            };
            match outcome {
                Step::Going => self.slots[i].seq = Some(q),
                Step::Done(reason) => finish(&mut q, reason),
                Step::Dropped => {}
            }
        }
    }

    /// Samples the sequence's next token from the last decode and hands its text on.
    fn sample(&self, seq: &mut Seq) -> Step {
        if seq.generated >= seq.max_new {
            return Step::Done("length");
        }
        let Some(at) = seq.logits_at else {
            return Step::Going;
        };
        let vocab = self.model.vocab();
        let token = seq.sampler.sample(&self.ctx, at);
        seq.sampler.accept(token);
        if vocab.is_eog(token) {
            return Step::Done("stop");
        }
        // Asked for: the token's log-probability and the most likely alternatives, from the
        // model's own distribution (the logits before any sampling temperature), as
        // llama.cpp's server reports them.
        if let Some(n) = seq.job.params.logprobs {
            let logits = self.ctx.get_logits_ith(at);
            let piece = |t: i32| {
                String::from_utf8_lossy(&vocab.token_to_piece(LlamaToken(t), false, None))
                    .into_owned()
            };
            let (logprob, top) = log_softmax_top(logits, token.0 as usize, usize::from(n));
            let tl = crate::provider::TokenLogprob {
                token: piece(token.0),
                logprob,
                top: top
                    .into_iter()
                    .map(|(i, lp)| (piece(i as i32), lp))
                    .collect(),
            };
            if !seq.job.sink.send(Ok(StreamEvent::Tokens(vec![tl]))) {
                return Step::Dropped;
            }
        }
        seq.generated += 1;
        self.counter.generated.fetch_add(1, Ordering::Relaxed);
        seq.bytes
            .extend_from_slice(&vocab.token_to_piece(token, false, None));
        // Emit only complete UTF-8; a multi-byte character may span tokens.
        let valid = match std::str::from_utf8(&seq.bytes) {
            Ok(_) => seq.bytes.len(),
            Err(e) => e.valid_up_to(),
        };
        let piece = String::from_utf8_lossy(&seq.bytes[..valid]).into_owned();
        seq.bytes.drain(..valid);
        let (emit, stopped) = seq.stopper.push(&piece);
        let emit = without_leading_space(&mut seq.spoke, emit);
        if !emit.is_empty() && !seq.job.sink.send(Ok(StreamEvent::Delta(emit))) {
            return Step::Dropped; // cancelled: the stream was dropped
        }
        if stopped {
            return Step::Done("stop");
        }
        if seq.job.sink.cancelled() {
            return Step::Dropped;
        }
        if seq.generated >= seq.max_new {
            return Step::Done("length");
        }
        seq.next = Some(token);
        Step::Going
    }
}

/// The log-probability of `chosen` under the softmax of `logits`, and the `n` most likely
/// tokens with theirs (best first; ties by index).
pub(crate) fn log_softmax_top(logits: &[f32], chosen: usize, n: usize) -> (f32, Vec<(usize, f32)>) {
    let max = logits.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let sum: f64 = logits.iter().map(|l| f64::from(l - max).exp()).sum();
    let lse = f64::from(max) + sum.ln();
    let lp = |i: usize| (f64::from(logits[i]) - lse) as f32;
    let n = n.min(logits.len());
    let mut idx: Vec<usize> = (0..logits.len()).collect();
    let by_logit = |a: &usize, b: &usize| logits[*b].total_cmp(&logits[*a]).then(a.cmp(b));
    if n > 0 && n < idx.len() {
        idx.select_nth_unstable_by(n - 1, by_logit);
    }
    idx.truncate(n);
    idx.sort_by(by_logit);
    (
        logits.get(chosen).map_or(f32::NEG_INFINITY, |_| lp(chosen)),
        idx.into_iter().map(|i| (i, lp(i))).collect(),
    )
}

/// The end of a generation: held-back text, the token counts, the finish reason.
fn finish(seq: &mut Seq, reason: &str) {
    let rest = without_leading_space(&mut seq.spoke, seq.stopper.flush());
    if !rest.is_empty() {
        seq.job.sink.send(Ok(StreamEvent::Delta(rest)));
    }
    seq.job.sink.send(Ok(StreamEvent::Usage(Usage {
        prompt_tokens: Some(seq.prompt.len() as u32),
        completion_tokens: Some(seq.generated as u32),
    })));
    seq.job.sink.send(Ok(StreamEvent::Finish {
        reason: Some(reason.into()),
    }));
}

#[cfg(test)]
mod leading_space_tests {
    use super::without_leading_space;

    #[test]
    fn an_answer_starts_at_its_first_non_blank_text_and_keeps_the_rest() {
        let mut spoke = false;
        let sent: Vec<String> = [" ", "\n", " The", " sky", "  is", "\n"]
            .iter()
            .map(|p| without_leading_space(&mut spoke, (*p).to_string()))
            .collect();
        assert_eq!(sent, ["", "", "The", " sky", "  is", "\n"]);
    }
}

#[cfg(test)]
mod logprob_tests {
    use super::log_softmax_top;

    #[test]
    fn log_softmax_of_the_logits_by_hand() {
        let logits = [1.0f32, 3.0, 2.0, 3.0, -1.0];
        let z: f64 = logits.iter().map(|l| f64::from(*l).exp()).sum();
        let want = |i: usize| (f64::from(logits[i]) - z.ln()) as f32;
        let (lp, top) = log_softmax_top(&logits, 2, 3);
        assert!((lp - want(2)).abs() < 1e-6);
        // Best first, the tie (1 and 3) by index.
        assert_eq!(top.iter().map(|t| t.0).collect::<Vec<_>>(), vec![1, 3, 2]);
        assert!((top[0].1 - want(1)).abs() < 1e-6);
        let total: f32 = (0..5).map(|i| want(i).exp()).sum();
        assert!((total - 1.0).abs() < 1e-5);
        assert_eq!(log_softmax_top(&logits, 0, 0).1, vec![]);
        assert_eq!(log_softmax_top(&logits, 0, 9).1.len(), 5);
    }
}
