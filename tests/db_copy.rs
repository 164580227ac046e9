//! `prism db copy` (issue 25): a store with every table a run has filled (answers with token
//! log-probabilities and cache keys, failures, scores, the cache, review decisions, quality
//! scores) copied to a real PostgreSQL server and back into a new SQLite file comes back the
//! same; a second copy adds nothing; a copy into a store that has part of it adds the rest.

mod common;

use std::path::Path;

use assert_cmd::Command;
use common::pg::Pg;
use prism::dataset::claims::Truth;
use prism::review::quality::QualityRecord;
use prism::review::{Decision, ReviewRecord};
use prism::store::lane_tables;
use prism::store::{
    Answer, AnswerCheck, AnswerLabel, Cached, Class, DetectConfig, DetectKind, DetectRun,
    DetectWrite, EntailRecord, JobRecord, JobState, JudgeVerdict, Label, Mode, ModelSnapshot,
    PairRecord, Relation, ResponseRecord, RunConfig, RunRecord, RunStatus, SampleRecord,
    ScoreRecord, SelfcheckConfig, SelfcheckItem, SelfcheckRun, SelfcheckWrite, Sentence, Store,
    Target, TopicRecord, Verdict, VerdictRecord,
};

fn response(run: &str, idx: u32, ok: bool) -> ResponseRecord {
    ResponseRecord {
        run_id: run.into(),
        job_idx: idx,
        item_id: format!("item-{idx}"),
        task_id: "KE-FD-Myths".into(),
        model: "m".into(),
        sample: idx % 2,
        text: ok.then(|| format!("answer {idx} ünïcode 'quoted' \"x\"")),
        error: (!ok).then(|| "HTTP 500: broken".to_string()),
        finish_reason: ok.then(|| "stop".to_string()),
        prompt_tokens: Some(10 + idx),
        completion_tokens: ok.then_some(5),
        latency_ms: Some(120),
        first_token_ms: Some(30),
        attempts: 1 + idx % 3,
        params: "{\"temperature\":0.0}".into(),
        request_hash: format!("hash-{idx}"),
        cached: idx == 1,
        created_at: 1_700_000_000 + i64::from(idx),
        cache_key: ok.then(|| format!("key-{run}-{idx}")),
        logprobs: ok.then(|| vec![1, 2, 3, idx as u8, 0, 255]),
    }
}

/// A store with two runs and every table filled.
fn fill(path: &Path) {
    let mut s = Store::open(path).unwrap();
    for (run, n) in [("r-one", 6u32), ("r-two", 3)] {
        let rec = RunRecord {
            id: run.into(),
            created_at: 1_700_000_000,
            dataset: "<sample-data>".into(),
            config: RunConfig {
                models: vec![ModelSnapshot::imported("m")],
                samples: 2,
                ..RunConfig::default()
            },
            status: RunStatus::Finished,
        };
        let jobs: Vec<JobRecord> = (0..n)
            .map(|i| JobRecord {
                idx: i,
                item_id: format!("item-{i}"),
                task_id: "KE-FD-Myths".into(),
                model: "m".into(),
                sample: i % 2,
            })
            .collect();
        s.create_run(&rec, &jobs).unwrap();
        // The last job failed; the one before it is never answered (pending).
        let rs: Vec<ResponseRecord> = (0..n - 1).map(|i| response(run, i, i != n - 2)).collect();
        s.save_responses(&rs).unwrap();
        let scores: Vec<ScoreRecord> = rs
            .iter()
            .filter(|r| r.is_ok())
            .map(|r| ScoreRecord {
                run_id: run.into(),
                job_idx: r.job_idx,
                item_id: r.item_id.clone(),
                task_id: r.task_id.clone(),
                model: "m".into(),
                sample: r.sample,
                evaluator: "fact_judge".into(),
                score: (r.job_idx != 0).then_some(f64::from(r.job_idx) / 10.0),
                detail: "detail".into(),
                judge: Some("j".into()),
                judge_reply: Some("{\"correct\": 1}".into()),
                judge_attempts: 1,
                created_at: 1_700_000_100,
                rule_score: (r.job_idx == 2).then_some(0.0),
            })
            .collect();
        s.save_scores(&scores).unwrap();
    }
    s.set_run_name("r-one", Some("baseline")).unwrap();
    s.tag_run("r-one", "nightly", false).unwrap();
    s.cache_put(
        "judge-key",
        &Cached {
            text: "YES".into(),
            finish_reason: Some("stop".into()),
            prompt_tokens: Some(3),
            completion_tokens: Some(1),
            latency_ms: Some(9),
            logprobs: None,
        },
    )
    .unwrap();
    fill_lanes(&mut s);
    drop(s);
    let r = prism::store::Db::open(Some(path), std::path::Path::new("unused.db")).unwrap();
    r.save_decisions(&[ReviewRecord {
        uid: "ann-1".into(),
        item_id: "item-1".into(),
        task_id: "KE-FD-Myths".into(),
        reviewer: "ann".into(),
        round: 1,
        clarity: Some(8),
        relevance: Some(7),
        coherence: None,
        decision: Decision::Retain,
        rationale: "fine".into(),
        edited_question: None,
        edited_answer: None,
        created_at: 5,
    }])
    .unwrap();
    r.save_quality(&QualityRecord {
        item_id: "item-1".into(),
        task_id: "KE-FD-Myths".into(),
        model: "q".into(),
        scores: Some([9, 8, 7]),
        reply: "9 8 7".into(),
        error: None,
        attempts: 1,
        created_at: 6,
    })
    .unwrap();
}

fn sample(k: u32, ok: bool) -> SampleRecord {
    SampleRecord {
        run_id: "d-one".into(),
        target: 0,
        round: 0,
        k,
        variant: k % 2,
        text: ok.then(|| format!("sample {k}")),
        error: (!ok).then(|| "timeout".into()),
        attempts: 2,
        cached: k == 0,
        created_at: 1_700_000_201,
    }
}
fn pair(k: u32, wording: u32, verdict: Verdict) -> PairRecord {
    PairRecord {
        run_id: "d-one".into(),
        target: 0,
        round: 0,
        k,
        wording,
        judge: "j".into(),
        verdict,
        explanation: Some("they differ".into()),
        quote_a: Some("a".into()),
        quote_b: None,
        reply: Some("{\"conflict\": true}".into()),
        error: None,
        attempts: 1,
        created_at: 1_700_000_202,
    }
}

/// A detection run (targets answered and not, a failed and an answered sample, pair verdicts
/// in two wordings, a failed one), a self-detection run, answer checks, entailments, topics.
fn fill_lanes(s: &mut Store) {
    let target = |idx: u32, answered: bool| Target {
        run_id: "d-one".into(),
        idx,
        item_id: format!("claim-{idx}"),
        task_id: "science".into(),
        model: "m".into(),
        temperature: Some(0.5),
        source_run: (idx == 0).then(|| "r-one".into()),
        source_job: (idx == 0).then_some(2),
        prompt: String::new(),
        question: format!("Is claim {idx} true? ünï"),
        params: "{}".into(),
        answer: answered.then(|| "It is.".into()),
        answer_error: (!answered).then(|| "HTTP 500".into()),
        refused: idx == 1,
        label: Some(Truth::False),
        class: answered.then_some(Class::True),
        class_reply: answered.then(|| "True.".into()),
        class_error: None,
        rounds: 1 + idx,
    };
    let run = DetectRun {
        id: "d-one".into(),
        created_at: 1_700_000_200,
        kind: DetectKind::Claims,
        dataset: "<sample-claims>".into(),
        config: DetectConfig {
            k: 2,
            temperatures: vec![0.5],
            ..DetectConfig::default()
        },
        status: RunStatus::Cancelled,
    };
    s.apply_detect(&[
        DetectWrite::CreateRun(Box::new(run), vec![target(0, true), target(1, false)]),
        DetectWrite::Sample(sample(0, true)),
        DetectWrite::Sample(sample(1, false)),
        DetectWrite::Pair(pair(0, 0, Verdict::Conflict)),
        DetectWrite::Pair(pair(0, 1, Verdict::Consistent)),
        DetectWrite::Pair(pair(1, 0, Verdict::Failed)),
    ])
    .unwrap();
    let item = |idx: u32| SelfcheckItem {
        run_id: "s-one".into(),
        idx,
        triple_id: format!("t{idx}"),
        subject: "Paris".into(),
        relation: "capital of".into(),
        object: "France".into(),
        source: None,
        popularity: Some(0.25 * f64::from(idx)),
        generator: "m".into(),
        params: "{}".into(),
        shots: "[]".into(),
        true_sentence: Some("Paris is the capital of France.".into()),
        true_attempts: 1,
        false_sentence: (idx == 0).then(|| "Paris is the capital of Spain.".into()),
        false_attempts: 2,
        set_aside: (idx == 1).then(|| "no false sentence passed".into()),
        error: None,
        decoy: None,
    };
    s.apply_selfcheck(&[
        SelfcheckWrite::CreateRun(
            Box::new(SelfcheckRun {
                id: "s-one".into(),
                created_at: 1_700_000_300,
                dataset: "<sample-triples>".into(),
                config: SelfcheckConfig {
                    shots: 3,
                    ..SelfcheckConfig::default()
                },
                status: RunStatus::Finished,
            }),
            vec![item(0), item(1)],
        ),
        SelfcheckWrite::Verdict(VerdictRecord {
            run_id: "s-one".into(),
            item: 0,
            sentence: Sentence::False,
            detector: "m".into(),
            mode: Mode::Cot,
            answer: Answer::Yes,
            reply: Some("Yes, Spain is wrong.".into()),
            error: None,
            attempts: 1,
            created_at: 1_700_000_301,
        }),
    ])
    .unwrap();
    s.save_answer_check(&AnswerCheck {
        run_id: "r-one".into(),
        job_idx: 2,
        detector: "m".into(),
        mode: Mode::Direct,
        answer: Answer::No,
        reply: Some("No.".into()),
        error: None,
        attempts: 1,
        created_at: 7,
    })
    .unwrap();
    s.save_entailment(&EntailRecord {
        judge: "j".into(),
        question: "q".into(),
        premise: "a".into(),
        hypothesis: "b".into(),
        relation: Some(Relation::Entailment),
        reply: Some("entailment".into()),
        error: None,
        attempts: 1,
        created_at: 8,
    })
    .unwrap();
    s.save_topic(&TopicRecord {
        claim: "Water boils at 50 C.".into(),
        model: "m".into(),
        vocabulary: "science|history".into(),
        topic: None,
        reply: None,
        error: Some("HTTP 503".into()),
        attempts: 3,
        created_at: 9,
    })
    .unwrap();
    // The judge on trial: two judges' verdicts (one unreachable), a person's labels.
    let verdict = |judge: &str, repeat: u32, score: Option<f64>| JudgeVerdict {
        run_id: "r-one".into(),
        job_idx: 2,
        judge: judge.into(),
        repeat,
        item_id: "item-2".into(),
        task_id: "KE-FD-Myths".into(),
        model: "m".into(),
        evaluator: "fact_judge".into(),
        score,
        detail: "d".into(),
        reply: score.map(|_| "{\"correct\": 1}".into()),
        attempts: 1 + repeat,
        fallback: score.is_none(),
        created_at: 10,
    };
    s.save_judge_verdicts(&[verdict("j", 0, Some(1.0)), verdict("k", 1, None)])
        .unwrap();
    let label = |uid: &str, l: Label, note: &str| AnswerLabel {
        uid: uid.into(),
        run_id: "r-one".into(),
        job_idx: 2,
        item_id: "item-2".into(),
        model: "m".into(),
        reviewer: "ann".into(),
        label: l,
        note: note.into(),
        created_at: 11,
    };
    s.add_labels(&[
        label("l1", Label::Hallucinated, "ünï"),
        label("l2", Label::CantTell, ""),
    ])
    .unwrap();
    s.save_records(&[prism::sentences::SupportRecord {
        judge: "j".into(),
        sentence: "Paris is the capital.".into(),
        context: "The capital is Paris, ünï.".into(),
        verdict: Some(prism::sentences::Verdict::Yes),
        reply: Some("Yes".into()),
        error: None,
        attempts: 1,
        created_at: 12,
    }])
    .unwrap();
    s.add_labels(&[prism::sentences::labels::SentenceLabel {
        uid: "g1".into(),
        run_id: "r-one".into(),
        job_idx: 2,
        item_id: "item-2".into(),
        model: "m".into(),
        sentence: 1,
        start: 10,
        end: 31,
        text: "It was built in 1066.".into(),
        reviewer: "ann".into(),
        label: prism::sentences::labels::Grade::Major,
        note: "ünï".into(),
        created_at: 13,
    }])
    .unwrap();
    s.save_records(&[prism::sentences::draw::Drawn {
        run_id: "r-one".into(),
        job_idx: 2,
        k: 1,
        text: Some("Paris, ünï.".into()),
        error: None,
        attempts: 1,
        created_at: 14,
    }])
    .unwrap();
    s.save_records(&[prism::foreign::record::SourceRecord {
        run_id: "r-one".into(),
        job_idx: 0,
        tool: "inspect".into(),
        task: "ünï_task".into(),
        sample_id: "s1".into(),
        epoch: 1,
        category: Some("facts".into()),
        input: "Where is the Eiffel Tower?".into(),
        target: Some("Paris".into()),
        choices: "[]".into(),
        metadata: "{\"category\": \"facts\"}".into(),
        score_name: Some("includes".into()),
        score_shown: Some("C".into()),
        score: Some(1.0),
        explanation: None,
    }])
    .unwrap();
    let est = |v: f64| prism::review::judges::Est {
        value: Some(v),
        low: Some(v - 0.1),
        high: None,
    };
    s.save_records(&[prism::review::calibration::Calibration {
        uid: "c1".into(),
        identity: prism::review::calibration::Identity {
            judge: "j".into(),
            endpoint: "openai http://127.0.0.1:1/v1".into(),
            model_id: "m".into(),
            template_hash: "abc".into(),
            temperature: Some(0.5),
            repeats: 3,
        },
        row: "all".into(),
        n: 60,
        base_rate: Some(0.13),
        accuracy: est(0.9),
        constant_accuracy: Some(0.87),
        kappa: est(0.7),
        ac1: est(0.8),
        pabak: est(0.8),
        tpr: Some(0.75),
        tnr: None,
        flip_share: Some(0.05),
        reviewers: vec!["ann".into(), "bo".into()],
        saved_at: 15,
    }])
    .unwrap();
    s.save_records(&[prism::review::judge_templates::JudgeTemplate {
        label: "terse".into(),
        judge: "semantic_equivalence",
        text: "{model_answer} vs {reference}: ünï".into(),
        sha256: "def".into(),
        path: String::new(),
        saved_at: 16,
    }])
    .unwrap();
}

fn copy(from: &str, to: &str) -> (String, String) {
    let out = Command::cargo_bin("prism")
        .unwrap()
        .args(["db", "copy", from, to])
        .assert()
        .success();
    let o = out.get_output();
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

fn same_stores(a: &Path, b: &Path) {
    let (a, b) = (Store::open(a).unwrap(), Store::open(b).unwrap());
    for run in ["r-one", "r-two"] {
        let (x, y) = (
            a.run_bundle(run).unwrap().unwrap(),
            b.run_bundle(run).unwrap().unwrap(),
        );
        assert_eq!(x, y, "{run} came back the same");
    }
    assert_eq!(a.cache_entries().unwrap(), b.cache_entries().unwrap());
    assert_eq!(a.decisions().unwrap(), b.decisions().unwrap());
    assert_eq!(a.quality(None).unwrap(), b.quality(None).unwrap());
    // The other lanes: read back as the lanes read them, and every row of every table.
    assert_eq!(
        a.detect_run("d-one").unwrap(),
        b.detect_run("d-one").unwrap()
    );
    assert_eq!(
        a.detect_targets("d-one").unwrap(),
        b.detect_targets("d-one").unwrap()
    );
    assert_eq!(
        a.detect_samples("d-one").unwrap(),
        b.detect_samples("d-one").unwrap()
    );
    assert_eq!(
        a.detect_pairs("d-one").unwrap(),
        b.detect_pairs("d-one").unwrap()
    );
    assert_eq!(
        a.selfcheck_run("s-one").unwrap(),
        b.selfcheck_run("s-one").unwrap()
    );
    assert_eq!(
        a.selfcheck_items("s-one").unwrap(),
        b.selfcheck_items("s-one").unwrap()
    );
    assert_eq!(
        a.selfcheck_verdicts("s-one").unwrap(),
        b.selfcheck_verdicts("s-one").unwrap()
    );
    assert_eq!(a.answer_checks("r-one").unwrap().len(), 1);
    for t in lane_tables::all() {
        let rows = a.lane_rows(t, None).unwrap();
        assert!(!rows.is_empty(), "{} was filled", t.name);
        assert_eq!(
            rows,
            b.lane_rows(t, None).unwrap(),
            "{} came back the same",
            t.name
        );
    }
}

#[test]
fn a_store_goes_to_postgres_and_back_the_same() {
    let pg = Pg::start();
    let dir = tempfile::tempdir().unwrap();
    let (src, back) = (dir.path().join("src.db"), dir.path().join("back.db"));
    fill(&src);
    let url = pg.url();
    let (out, err) = copy(src.to_str().unwrap(), &url);
    assert!(out.contains("r-one: 5 answers, 4 scores"), "{out}");
    assert!(err.contains("2 run(s) read, 2 new"), "{err}");
    assert!(
        err.contains("1 cache entries, 1 review decisions;"),
        "{err}"
    );
    // d-one: the run, 2 targets, 2 samples, 3 pairs; s-one: the run, 2 items, 1 verdict.
    assert!(
        out.contains("d-one: detection run, 8 of its 8 rows"),
        "{out}"
    );
    assert!(
        out.contains("s-one: self-detection run, 4 of its 4 rows"),
        "{out}"
    );
    assert!(
        err.contains(
            "2 detection/self-detection run(s) read, 12 of their rows, and 14 rows of answer checks, entailments, claim topics, quality scores, judge verdicts, answer labels, sentence support, sentence labels, sentence samples, source samples, judge calibrations, judge templates"
        ),
        "{err}"
    );
    // Again: nothing new.
    let (out, err) = copy(src.to_str().unwrap(), &url);
    assert!(
        out.contains("r-one: 0 answers, 0 scores (the run was there"),
        "{out}"
    );
    assert!(!err.contains("2 new") && err.contains("0 new"), "{err}");
    assert!(
        out.contains("d-one: detection run, 0 of its 8 rows"),
        "{out}"
    );
    assert!(
        err.contains("0 of their rows, and 0 rows of answer checks"),
        "{err}"
    );
    assert!(
        err.contains("added 0 answers, 0 scores, 0 cache entries, 0 review decisions;"),
        "{err}"
    );
    // Back into a new SQLite file.
    copy(&url, back.to_str().unwrap());
    same_stores(&src, &back);
    let b = Store::open(&back).unwrap();
    assert_eq!(
        b.run_labels("r-one").unwrap(),
        (Some("baseline".into()), vec!["nightly".into()])
    );
    let states: Vec<JobState> = b
        .jobs("r-two")
        .unwrap()
        .into_iter()
        .map(|(_, s)| s)
        .collect();
    assert_eq!(
        states,
        [JobState::Done, JobState::Failed, JobState::Pending]
    );
}

#[test]
fn a_copy_that_stopped_is_finished_and_a_failure_gives_way_to_an_answer() {
    let dir = tempfile::tempdir().unwrap();
    let (src, part) = (dir.path().join("src.db"), dir.path().join("part.db"));
    fill(&src);
    // The target has one run already, with an answer the source lacks as a failure there.
    copy(src.to_str().unwrap(), part.to_str().unwrap());
    {
        let mut s = Store::open(&src).unwrap();
        // In the source, the failed job of r-two was answered later.
        s.save_responses(&[response("r-two", 1, true)]).unwrap();
        // ... and the failed sample and pair check of d-one were asked again.
        s.apply_detect(&[
            DetectWrite::Sample(sample(1, true)),
            DetectWrite::Pair(pair(1, 0, Verdict::Consistent)),
        ])
        .unwrap();
        let mut p = Store::open(&part).unwrap();
        p.remove_run("r-one").unwrap();
    }
    let (out, _) = copy(src.to_str().unwrap(), part.to_str().unwrap());
    assert!(out.contains("r-one: 5 answers"), "{out}");
    assert!(
        out.contains("r-two: 1 answers, 0 scores (the run was there"),
        "{out}"
    );
    let p = Store::open(&part).unwrap();
    let r = p.responses("r-two").unwrap();
    assert!(r.iter().all(|r| r.is_ok()), "the failure gave way: {r:?}");
    assert!(
        out.contains("d-one: detection run, 2 of its 8 rows"),
        "{out}"
    );
    assert!(
        p.detect_samples("d-one")
            .unwrap()
            .iter()
            .all(|s| s.text.is_some())
    );
    assert!(
        p.detect_pairs("d-one")
            .unwrap()
            .iter()
            .all(|p| p.verdict != Verdict::Failed)
    );
    // The other way, a failure never replaces an answer: copying the target back changes
    // nothing of d-one.
    drop(p);
    {
        let mut s = Store::open(&src).unwrap();
        s.apply_detect(&[DetectWrite::Sample(sample(1, false))])
            .unwrap();
    }
    let (out, _) = copy(src.to_str().unwrap(), part.to_str().unwrap());
    assert!(
        out.contains("d-one: detection run, 0 of its 8 rows"),
        "{out}"
    );
    let p = Store::open(&part).unwrap();
    assert_eq!(
        p.detect_samples("d-one").unwrap()[1].text.as_deref(),
        Some("sample 1")
    );
    // Same store named twice: refused.
    Command::cargo_bin("prism")
        .unwrap()
        .args(["db", "copy", src.to_str().unwrap(), src.to_str().unwrap()])
        .assert()
        .code(1);
}

#[test]
fn a_shared_store_over_tls_checks_the_servers_certificate() {
    let pg = Pg::start_tls();
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src.db");
    fill(&src);
    let url = format!(
        "postgres://prism@127.0.0.1:{}/postgres?sslmode=require",
        pg.port
    );
    let ca = pg.dir().join("ca.crt");
    // The team's CA trusted: the copy goes over TLS (the server takes nothing else).
    let out = Command::cargo_bin("prism")
        .unwrap()
        .args(["db", "copy", src.to_str().unwrap(), &url])
        .env("PGSSLROOTCERT", &ca)
        .assert()
        .success();
    let err = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(err.contains("2 new"), "{err}");
    // libpq's words for the same: `sslmode=verify-full`, and a service file naming the server
    // (with `verify-ca`: checked the same way, host name included).
    let full = url.replace("sslmode=require", "sslmode=verify-full");
    let services = dir.path().join("pg_service.conf");
    std::fs::write(
        &services,
        format!(
            "[team]\nhost=127.0.0.1\nport={}\nuser=prism\ndbname=postgres\nsslmode=verify-ca\n",
            pg.port
        ),
    )
    .unwrap();
    for db in [full.as_str(), "service=team", "postgres:///?service=team"] {
        let out = Command::cargo_bin("prism")
            .unwrap()
            .args(["db", "copy", src.to_str().unwrap(), db])
            .env("PGSSLROOTCERT", &ca)
            .env("PGSERVICEFILE", &services)
            .assert()
            .success();
        let err = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
        assert!(err.contains("0 new"), "{db}: {err}");
    }
    // A service nobody defined, and a keyword the driver does not read: named.
    let out = Command::cargo_bin("prism")
        .unwrap()
        .args(["db", "copy", src.to_str().unwrap(), "service=nope"])
        .env("PGSERVICEFILE", &services)
        .assert()
        .code(1);
    let err = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(err.contains("service \"nope\" is in none of"), "{err}");
    let out = Command::cargo_bin("prism")
        .unwrap()
        .args(["db", "copy", src.to_str().unwrap()])
        .arg(format!("{url}&sslcert=/x.pem"))
        .assert()
        .code(1);
    let err = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(err.contains("\"sslcert\" is not supported"), "{err}");
    // Not trusted: refused, and the message says why.
    let out = Command::cargo_bin("prism")
        .unwrap()
        .args(["db", "copy", src.to_str().unwrap(), &url])
        .env_remove("PGSSLROOTCERT")
        .assert()
        .code(1);
    let err = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(err.to_lowercase().contains("certificate"), "{err}");
    assert!(
        err.contains("set PGSSLROOTCERT to that CA's PEM file"),
        "{err}"
    );
    // Without TLS the server refuses.
    let plain = format!(
        "postgres://prism@127.0.0.1:{}/postgres?sslmode=disable",
        pg.port
    );
    let out = Command::cargo_bin("prism")
        .unwrap()
        .args(["db", "copy", src.to_str().unwrap(), &plain])
        .assert()
        .code(1);
    let err = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(
        err.contains("no encryption") || err.contains("pg_hba"),
        "{err}"
    );
}

/// PostgreSQL's migrations made every table as `store::tables` and `lane_tables` describe it
/// (the SQLite side is checked by the module's own test), key and all: a column added to one
/// backend and not the other, or to neither description, fails here.
#[test]
fn every_shared_table_is_as_described() {
    use prism::store::tables;
    let pg = Pg::start();
    // Connecting migrates.
    prism::store::Db::open(
        Some(std::path::Path::new(&pg.url())),
        std::path::Path::new("unused.db"),
    )
    .unwrap();
    let mut c = postgres::Client::connect(&pg.url(), postgres::NoTls).unwrap();
    for t in tables::every() {
        let cols: Vec<(String, String)> = c
            .query(
                "SELECT column_name::text, data_type::text FROM information_schema.columns
                 WHERE table_name = $1",
                &[&t.name],
            )
            .unwrap()
            .iter()
            .map(|r| (r.get(0), r.get(1)))
            .collect();
        // Beside the described columns only PostgreSQL's own: the change number the mirrors
        // pull by, and a pending job's lease.
        let own = |n: &str| match t.name {
            "jobs" => n == "worker" || n == "leased_until",
            "review_decisions" => n == "seq",
            _ => t.changes && n == "seq",
        };
        for (n, _) in &cols {
            assert!(
                own(n) || t.cols.iter().any(|c| c.0 == n),
                "{}.{n} is not described",
                t.name
            );
        }
        for (name, ty) in t.cols {
            let want: &[&str] = match ty {
                lane_tables::Col::Int => &["bigint", "integer", "smallint"],
                lane_tables::Col::Real => &["double precision"],
                lane_tables::Col::Text => &["text"],
                lane_tables::Col::Bool => &["boolean"],
                lane_tables::Col::Blob => &["bytea"],
            };
            assert!(
                cols.iter()
                    .any(|(n, d)| n == name && want.contains(&d.as_str())),
                "{}.{name} is one of {want:?}: {cols:?}",
                t.name
            );
        }
        let mut key: Vec<String> = c
            .query(
                "SELECT a.attname::text FROM pg_index i
                 JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey)
                 WHERE i.indrelid = $1::text::regclass AND i.indisprimary",
                &[&t.name],
            )
            .unwrap()
            .iter()
            .map(|r| r.get(0))
            .collect();
        key.sort();
        let mut want: Vec<String> = t.cols[..t.key].iter().map(|c| c.0.to_string()).collect();
        want.sort();
        assert_eq!(key, want, "{}: primary key", t.name);
    }
}

/// A shared store written by the schema before this one (PostgreSQL migration 3: the quality
/// agent's scores in SMALLINT and INTEGER, no change number) is migrated when a prism of today
/// connects, and everything in it reads: the scores, a run with its answer and score.
#[test]
fn a_shared_store_of_the_previous_schema_migrates_and_reads() {
    let pg = Pg::start();
    let open = || {
        prism::store::Db::open(
            Some(std::path::Path::new(&pg.url())),
            std::path::Path::new("unused.db"),
        )
        .unwrap()
    };
    open();
    let mut c = postgres::Client::connect(&pg.url(), postgres::NoTls).unwrap();
    // Back to migration 3, as the previous prism left it, with rows in it.
    c.batch_execute(
        r#"
        DROP INDEX quality_scores_seq;
        ALTER TABLE quality_scores
            DROP COLUMN seq,
            ALTER COLUMN factuality TYPE SMALLINT,
            ALTER COLUMN discriminability TYPE SMALLINT,
            ALTER COLUMN clarity TYPE SMALLINT,
            ALTER COLUMN attempts TYPE INTEGER;
        DELETE FROM prism_schema WHERE version = 4;
        DROP TABLE run_summaries;
        DROP TABLE latest_scores;
        DROP INDEX scores_group;
        DROP INDEX scores_key;
        DROP INDEX runs_created;
        DROP INDEX jobs_open;
        DELETE FROM prism_schema WHERE version = 5;
        DROP TABLE judge_verdicts;
        DROP TABLE answer_labels;
        DELETE FROM prism_schema WHERE version = 6;
        CREATE INDEX scores_item ON scores(item_id, model);
        DELETE FROM prism_schema WHERE version = 7;
        INSERT INTO quality_scores (item_id, model, task_id, factuality, discriminability,
            clarity, reply, attempts, created_at)
            VALUES ('KE-1', 'q', 'KE-FD-Myths', 9, 8, 7, 'F 9', 2, 10);
        INSERT INTO runs (id, created_at, dataset, config, status)
            VALUES ('r-old', 5, 'd.jsonl', '{"models":[],"samples":1}', 'finished');
        INSERT INTO jobs (run_id, idx, item_id, task_id, model, sample, state)
            VALUES ('r-old', 0, 'KE-1', 'KE-FD-Myths', 'm', 0, 'done');
        INSERT INTO responses (run_id, job_idx, item_id, task_id, model, sample, text,
            attempts, params, request_hash, created_at)
            VALUES ('r-old', 0, 'KE-1', 'KE-FD-Myths', 'm', 0, 'an answer', 1, '{}', 'h', 6);
        INSERT INTO scores (run_id, job_idx, item_id, task_id, model, sample, evaluator, score,
            detail, created_at)
            VALUES ('r-old', 0, 'KE-1', 'KE-FD-Myths', 'm', 0, 'rule', 1.0, 'ok', 7);
        "#,
    )
    .unwrap();
    open();
    let version: i32 = c
        .query_one("SELECT MAX(version) FROM prism_schema", &[])
        .unwrap()
        .get(0);
    assert_eq!(version, 7, "migrated again");
    let redundant: i64 = c
        .query_one(
            "SELECT count(*) FROM pg_indexes WHERE indexname = 'scores_item'",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(redundant, 0, "scores_item (a prefix of scores_key) dropped");
    // The summaries are made from the scores the store already held.
    let (scored, sum): (i64, f64) = {
        let r = c
            .query_one(
                "SELECT scored, sum FROM run_summaries WHERE run_id = 'r-old'",
                &[],
            )
            .unwrap();
        (r.get(0), r.get(1))
    };
    assert_eq!((scored, sum), (1, 1.0));
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("copy.db");
    copy(&pg.url(), file.to_str().unwrap());
    let s = Store::open(&file).unwrap();
    let q = &s.quality(None).unwrap()[0];
    assert_eq!((q.scores, q.attempts), (Some([9, 8, 7]), 2));
    let b = s.run_bundle("r-old").unwrap().unwrap();
    assert_eq!(b.responses[0].text.as_deref(), Some("an answer"));
    assert_eq!(b.scores[0].score, Some(1.0));
}

/// A server that wants a password and gets none: the message says where one goes (PGPASSWORD
/// or a pgpass file, never the URL); given PGPASSWORD, the copy goes.
#[test]
fn a_missing_password_names_where_one_goes() {
    let pg = Pg::start();
    let mut c = postgres::Client::connect(&pg.url(), postgres::NoTls).unwrap();
    c.batch_execute("ALTER USER prism PASSWORD 'open-sesame'")
        .unwrap();
    std::fs::write(
        pg.data_dir().join("pg_hba.conf"),
        "local all all trust\nhost all all 127.0.0.1/32 scram-sha-256\n",
    )
    .unwrap();
    c.batch_execute("SELECT pg_reload_conf()").unwrap();
    drop(c);
    std::thread::sleep(std::time::Duration::from_millis(300));
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src.db");
    fill(&src);
    let out = Command::cargo_bin("prism")
        .unwrap()
        .args(["db", "copy", src.to_str().unwrap(), &pg.url()])
        .env_remove("PGPASSWORD")
        .env("PGPASSFILE", dir.path().join("none"))
        .env("HOME", dir.path())
        .assert()
        .code(1);
    let err = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(err.contains("password missing"), "{err}");
    assert!(err.contains("set PGPASSWORD"), "{err}");
    assert!(!err.contains("open-sesame"));
    Command::cargo_bin("prism")
        .unwrap()
        .args(["db", "copy", src.to_str().unwrap(), &pg.url()])
        .env("PGPASSWORD", "open-sesame")
        .assert()
        .success();
}
