//! One job answered: sent with its limits and retries, streamed, cached, and its answer committed (and scored by rule) before it is announced.

use super::*;

pub(super) enum Outcome {
    Ok {
        text: String,
        finish: Option<String>,
        usage: crate::provider::Usage,
        first_token: Option<Duration>,
        /// Cut at the answer cap: kept, but never cached (a larger cap must ask again).
        cut: bool,
        /// Token log-probabilities, when asked for and given (what read, bounded by the
        /// answer: [`tokens::TokenSink`]), and what was left out of them.
        tokens: Vec<crate::provider::TokenLogprob>,
        tokens_note: Option<String>,
    },
    Err(ProviderError),
    Cancelled,
}

/// A job's result, to be committed and then announced.
pub(super) struct Finished {
    pub(super) job: u32,
    pub(super) record: ResponseRecord,
    pub(super) ok: bool,
}

/// How many answers may wait for their commit per request slot.
pub(super) const PENDING_COMMITS_PER_SLOT: usize = 2;

/// A job's answer before its call: what was asked, of which model, under which cache key.
fn blank_record(
    sh: &Shared,
    job: &Job,
    req: &crate::provider::ChatRequest,
    request_hash: String,
    key: String,
) -> ResponseRecord {
    let item = &sh.spec.dataset.items[job.item];
    ResponseRecord {
        run_id: sh.run_id.clone(),
        job_idx: job.idx,
        item_id: item.id.to_string(),
        task_id: sh.spec.dataset.task_of(item).id.clone(),
        model: sh.models[job.model].cfg.name.clone(),
        sample: job.sample,
        text: None,
        error: None,
        finish_reason: None,
        prompt_tokens: None,
        completion_tokens: None,
        latency_ms: None,
        first_token_ms: None,
        attempts: 0,
        params: serde_json::to_string(&req.params).unwrap_or_default(),
        request_hash,
        cached: false,
        created_at: 0,
        cache_key: Some(key),
        logprobs: None,
    }
}

/// Runs one job to its answer (or failure); `None` when cancelled. Committing is the caller's.
pub(super) async fn run_job(sh: &Shared, job: Job) -> Option<Finished> {
    let spec = &sh.spec;
    let m = &sh.models[job.model];
    let item = &spec.dataset.items[job.item];
    let task = spec.dataset.task_of(item);
    let mut params = prompt::default_params(task)
        .overlay(&m.cfg.params)
        .overlay(&spec.params);
    // The embedded model samples with a fixed seed unless told otherwise, so the samples of an
    // item would all be one text: each sample after the first gets its own seed.
    if params.seed.is_none()
        && job.sample > 0
        && m.cfg.provider == crate::provider::ProviderKind::Local
    {
        params.seed = Some(0x5eed + u64::from(job.sample));
    }
    let req = prompt::build_request(&spec.dataset, job.item, spec.shots as usize, params);
    let identity = m.backend.cache_identity();
    let (req_hash, key) = request_hashes(&identity, &req, job.sample);
    let mut record = blank_record(sh, &job, &req, req_hash, key.clone());
    if spec.use_cache
        && let Some(hit) = sh.store.cache_get(key).await
    {
        return Some(cached_answer(sh, job.idx, record, hit));
    }

    let max_attempts = m.cfg.max_retries + 1;
    let started = Instant::now();
    for attempt in 1..=max_attempts {
        record.attempts = attempt;
        let _permit = tokio::select! {
            p = m.limiter.acquire() => p,
            _ = sh.life.cancel.cancelled() => return None,
        };
        if let Some(rate) = &m.rate {
            tokio::select! {
                _ = rate.wait() => {},
                _ = sh.life.cancel.cancelled() => return None,
            }
        }
        let _ = sh.events.send(Event::Sending {
            job: job.idx,
            attempt,
        });
        let t0 = Instant::now();
        let outcome = attempt_once(sh, m, &req, job.idx, t0, spec.stream_deltas).await;
        drop(_permit);
        match outcome {
            Outcome::Cancelled => return None,
            Outcome::Ok {
                text,
                finish: reason,
                usage,
                first_token,
                cut,
                tokens,
                tokens_note,
            } => {
                m.limiter.on_success();
                if cut {
                    record.cache_key = None;
                }
                let redacted = m.redact(&text);
                // Tokens hold the answer's text in pieces no redaction can see across: an
                // answer that held a secret keeps none.
                // Kept only when asked for: a server that sends them unasked costs no bytes.
                if (!tokens.is_empty() || tokens_note.is_some())
                    && req.params.logprobs.is_some()
                    && matches!(redacted, std::borrow::Cow::Borrowed(_))
                {
                    record.logprobs = Some(crate::store::logprobs::encode_noted(
                        &tokens,
                        tokens_note.as_deref(),
                    ));
                }
                record.text = Some(redacted.into_owned());
                record.finish_reason = reason;
                record.prompt_tokens = usage.prompt_tokens;
                record.completion_tokens = usage.completion_tokens;
                record.latency_ms = Some(t0.elapsed().as_millis() as u64);
                record.first_token_ms = first_token.map(|d| d.as_millis() as u64);
                record.created_at = now_secs();
                return Some(Finished {
                    job: job.idx,
                    record,
                    ok: true,
                });
            }
            Outcome::Err(e) => {
                if e.is_rate_limit() {
                    m.limiter.on_rate_limited();
                }
                if e.retryable() && attempt < max_attempts {
                    let delay = spec.retry.delay(attempt, e.retry_after());
                    let _ = sh.events.send(Event::Retrying {
                        job: job.idx,
                        attempt: attempt + 1,
                        max_attempts,
                        reason: m.redact(&e.to_string()).into_owned(),
                        delay,
                    });
                    tokio::select! {
                        _ = tokio::time::sleep(delay) => {},
                        _ = sh.life.cancel.cancelled() => return None,
                    }
                    continue;
                }
                record.error = Some(m.redact(&e.to_string()).into_owned());
                record.latency_ms = Some(started.elapsed().as_millis() as u64);
                record.created_at = now_secs();
                return Some(Finished {
                    job: job.idx,
                    record,
                    ok: false,
                });
            }
        }
    }
    None
}

/// A job answered from the cache: the cached reply as its answer (shown as one delta).
pub(super) fn cached_answer(
    sh: &Shared,
    job: u32,
    mut record: ResponseRecord,
    hit: Cached,
) -> Finished {
    record.text = Some(hit.text.clone());
    record.finish_reason = hit.finish_reason;
    record.prompt_tokens = hit.prompt_tokens;
    record.completion_tokens = hit.completion_tokens;
    record.latency_ms = hit.latency_ms;
    record.logprobs = hit.logprobs;
    record.cached = true;
    record.cache_key = None;
    record.created_at = now_secs();
    if sh.spec.stream_deltas {
        let _ = sh.events.send(Event::Delta {
            job,
            text: hit.text,
        });
    }
    Finished {
        job,
        record,
        ok: true,
    }
}

/// One attempt: send, then read the stream to its end.
pub(super) async fn attempt_once(
    sh: &Shared,
    m: &ModelRuntime,
    req: &ChatRequest,
    job: u32,
    t0: Instant,
    deltas: bool,
) -> Outcome {
    let limits = Limits::of(&m.cfg);
    let live_tokens = deltas && req.params.logprobs.is_some();
    read_stream(
        &*m.backend,
        req,
        &sh.life.cancel,
        t0,
        limits,
        |d| {
            if deltas {
                let _ = sh.events.send(Event::Delta {
                    job,
                    text: m.redact(d).into_owned(),
                });
            }
        },
        |toks| {
            if live_tokens {
                let tokens = toks
                    .iter()
                    .map(|t| crate::provider::TokenLogprob {
                        token: m.redact(&t.token).into_owned(),
                        ..t.clone()
                    })
                    .collect();
                let _ = sh.events.send(Event::Tokens { job, tokens });
            }
        },
    )
    .await
}

/// What one request may take: its whole time, and the longest answer kept.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    pub total: Duration,
    pub max_bytes: usize,
}

impl Limits {
    pub(crate) fn of(cfg: &ModelConfig) -> Limits {
        Limits {
            total: cfg.timeouts().total,
            max_bytes: cfg.max_answer_bytes(),
        }
    }
}

/// Sends a request and reads its stream to the end, handing each piece of text to `on_delta`
/// and each batch of token log-probabilities to `on_tokens`.
/// The whole request is bounded in time (a server that keeps sending bytes never holds a job
/// forever), and an answer longer than the cap is cut there, the request dropped, and the
/// finish reason says so. Cancellation reaches it in every state.
pub(super) async fn read_stream(
    backend: &dyn Backend,
    req: &ChatRequest,
    cancel: &CancellationToken,
    t0: Instant,
    limits: Limits,
    mut on_delta: impl FnMut(&str),
    mut on_tokens: impl FnMut(&[crate::provider::TokenLogprob]),
) -> Outcome {
    let deadline = tokio::time::Instant::from_std(t0) + limits.total;
    let too_slow = || {
        Outcome::Err(ProviderError::Timeout {
            kind: crate::provider::TimeoutKind::Total,
            after: limits.total,
        })
    };
    let stream = tokio::select! {
        s = backend.stream(req) => s,
        _ = cancel.cancelled() => return Outcome::Cancelled,
        _ = tokio::time::sleep_until(deadline) => return too_slow(),
    };
    let mut stream = match stream {
        Ok(s) => s,
        Err(e) => return Outcome::Err(e),
    };
    let mut text = String::new();
    let mut usage = crate::provider::Usage::default();
    let mut first_token = None;
    let mut tokens = tokens::TokenSink::default();
    loop {
        let ev = tokio::select! {
            ev = stream.next() => ev,
            _ = cancel.cancelled() => return Outcome::Cancelled,
            _ = tokio::time::sleep_until(deadline) => return too_slow(),
        };
        match ev {
            Some(Ok(StreamEvent::Delta(d))) => {
                if first_token.is_none() {
                    first_token = Some(t0.elapsed());
                }
                if text.len() + d.len() > limits.max_bytes {
                    let mut cut = limits.max_bytes - text.len();
                    while !d.is_char_boundary(cut) {
                        cut -= 1;
                    }
                    text.push_str(&d[..cut]);
                    on_delta(&d[..cut]);
                    let (tokens, tokens_note) = tokens.finish();
                    return Outcome::Ok {
                        text,
                        finish: Some(format!(
                            "cut: the answer went past {} bytes (max_answer_bytes)",
                            limits.max_bytes
                        )),
                        usage,
                        first_token,
                        cut: true,
                        tokens,
                        tokens_note,
                    };
                }
                text.push_str(&d);
                on_delta(&d);
            }
            Some(Ok(StreamEvent::Usage(u))) => usage = u,
            Some(Ok(StreamEvent::Tokens(t))) => on_tokens(tokens.push(t, text.len())),
            Some(Ok(StreamEvent::Finish { reason })) => {
                stream.close_after_finish().await;
                let (tokens, tokens_note) = tokens.finish();
                return Outcome::Ok {
                    text,
                    finish: reason,
                    usage,
                    first_token,
                    cut: false,
                    tokens,
                    tokens_note,
                };
            }
            Some(Err(e)) => return Outcome::Err(e),
            None => {
                return Outcome::Err(ProviderError::Stream(
                    "stream ended before the answer finished".into(),
                ));
            }
        }
    }
}

/// The message a panic carried.
pub fn panic_message(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".into())
}

/// A job whose worker panicked, as failed with the panic's message.
pub(super) fn panic_record(
    sh: &Shared,
    job: &Job,
    panic: Box<dyn std::any::Any + Send>,
) -> Finished {
    let item = &sh.spec.dataset.items[job.item];
    let record = ResponseRecord {
        run_id: sh.run_id.clone(),
        job_idx: job.idx,
        item_id: item.id.to_string(),
        task_id: sh.spec.dataset.task_of(item).id.clone(),
        model: sh.models[job.model].cfg.name.clone(),
        sample: job.sample,
        text: None,
        error: Some(format!(
            "internal error (a bug in prism, please report it): {}",
            crate::text::clean_line(&panic_message(&*panic))
        )),
        finish_reason: None,
        prompt_tokens: None,
        completion_tokens: None,
        latency_ms: None,
        first_token_ms: None,
        attempts: 1,
        params: String::new(),
        request_hash: String::new(),
        cached: false,
        created_at: now_secs(),
        cache_key: None,
        logprobs: None,
    };
    Finished {
        job: job.idx,
        record,
        ok: false,
    }
}

/// Commits the record, then tells the front-end. An answer that cannot be saved (a full disk)
/// is held here and saving is retried, with backoff, until it works: the answer is never thrown
/// away and the model is never asked again for it; the user is told once, and no new job starts
/// meanwhile. Cancelling gives up on the held answer (its job stays pending for `--resume`).
///
/// An answer the rules settle is scored here, from the record itself, and its score commits
/// with it: sent through a scoring task, each answer was copied once more, woke two more tasks
/// and took a second acknowledgement from the writer (scoring as answers arrive was a sixth of
/// `prism run`'s CPU per job, process_run bench). What needs a judge goes to that task. On a
/// shared store too: PostgreSQL's writer commits the answers and scores queued together.
pub(super) async fn finish(sh: &Shared, job: u32, record: ResponseRecord, ok: bool) {
    let cached = record.cached;
    let item = sh.spec.dataset.index_of(&record.item_id);
    let later = |i: usize| score::ToScore::from_record(i, &record);
    let (rule_score, to_judge) = match (&sh.scorer, item) {
        (Some(scorer), Some(i)) => match score::rule(
            &sh.spec.dataset,
            &score::Input::of_record(i, &record),
            scorer.judged(),
        ) {
            score::Ruled::Settled(rec) => (Some(rec), None),
            score::Ruled::Ask(..) => (None, Some(later(i))),
        },
        _ => (None, None),
    };
    let record = Arc::new(record);
    // What saving the score came to, from the last attempt (the answer's is retried).
    let scored = std::sync::Mutex::new(None);
    let saved = sh
        .life
        .save(|| async {
            match &rule_score {
                Some(s) => {
                    let (answered, score) =
                        sh.store.save_scored((*record).clone(), s.clone()).await;
                    *scored.lock().unwrap_or_else(|e| e.into_inner()) = Some(score);
                    answered
                }
                None => sh.store.save((*record).clone()).await,
            }
        })
        .await;
    if !saved {
        return;
    }
    sh.life.count(ok, cached);
    let _ = sh.events.send(if ok {
        Event::Done {
            job,
            response: record,
        }
    } else {
        Event::Failed {
            job,
            response: record,
        }
    });
    // Scored after it is shown: the answer's event goes first, its score follows.
    let scored = scored.into_inner().unwrap_or_else(|e| e.into_inner());
    match (rule_score, scored) {
        (Some(s), Some(Ok(()))) => {
            let _ = sh.events.send(Event::Scored(s));
        }
        (Some(_), Some(Err(e))) => {
            let _ = sh.events.send(Event::ScoringFailed {
                reason: format!("saving scores: {e}"),
            });
        }
        _ => {}
    }
    if let (Some(scorer), Some(t)) = (&sh.scorer, to_judge) {
        scorer.push(t);
    }
}
