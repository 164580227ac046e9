//! Tests of `runs`.

use super::*;

/// A run's config exactly as prism 0.1 (before snapshots) wrote it for a configured model.
const STORED_BY_0_1: &str = r#"{"models":[{"name":"gpt","provider":"openai","base_url":"http://127.0.0.1:9/v1","model":"gpt-4o-mini","api_key_env":"OPENAI_API_KEY","max_concurrency":8,"params":{"temperature":0.2,"max_tokens":64},"max_retries":4,"idle_timeout_secs":30.0}],"samples":1,"shots":0,"params":{},"filter":null,"limit":null}"#;

fn store_with_config(config: &str) -> Store {
    let s = Store::open_in_memory().unwrap();
    s.conn
        .execute(
            "INSERT INTO runs (id, created_at, dataset, config, status) VALUES ('r1', 1, 'd', ?1, 'finished')",
            [config],
        )
        .unwrap();
    s
}

#[test]
fn a_run_stored_by_todays_code_reads_back_and_resumes_with_its_settings() {
    // The literal is what a ModelConfig serializes to (how runs stored it before snapshots).
    let cfg: crate::provider::config::ModelsFile = toml::from_str(
        "[[models]]\nname = \"gpt\"\nprovider = \"openai\"\nbase_url = \"http://127.0.0.1:9/v1\"\nmodel = \"gpt-4o-mini\"\napi_key_env = \"OPENAI_API_KEY\"\nparams = { temperature = 0.2, max_tokens = 64 }\nidle_timeout_secs = 30.0\n",
    )
    .unwrap();
    let stored: Value = serde_json::from_str(STORED_BY_0_1).unwrap();
    assert_eq!(
        serde_json::to_value(&cfg.models[0]).unwrap(),
        stored["models"][0]
    );
    let s = store_with_config(STORED_BY_0_1);
    let run = s.run("r1").unwrap().unwrap();
    assert_eq!(run.status, RunStatus::Finished);
    let snap = &run.config.models[0];
    assert_eq!(snap.api_key_env.as_deref(), Some("OPENAI_API_KEY"));
    // Called again only without the key variable the store names.
    let m = snap.keyless_endpoint().unwrap();
    assert_eq!(m.model_id(), "gpt-4o-mini");
    assert_eq!(m.params.max_tokens, Some(64));
    assert_eq!(m.idle_timeout_secs, Some(30.0));
    assert_eq!(m.api_key_env, None);
}

#[test]
fn renaming_a_config_key_later_leaves_old_runs_readable() {
    // Suppose `idle_timeout_secs` is renamed `stream_idle_secs` in models.toml: the stored
    // run still has the old key, which the user-facing config now rejects.
    let renamed = STORED_BY_0_1.replace("idle_timeout_secs", "stream_idle_secs");
    let as_config: std::result::Result<ModelConfig, _> = serde_json::from_str(
        &serde_json::to_string(&serde_json::from_str::<Value>(&renamed).unwrap()["models"][0])
            .unwrap(),
    );
    assert!(as_config.is_err(), "ModelConfig rejects unknown keys");
    let s = store_with_config(&renamed);
    let run = s.run("r1").unwrap().unwrap();
    let snap = &run.config.models[0];
    assert_eq!(snap.name, "gpt");
    assert_eq!(snap.other["stream_idle_secs"], 30.0);
    assert_eq!(s.runs().unwrap().len(), 1);
    // A key dropped altogether is defaulted.
    let dropped = STORED_BY_0_1.replace(r#""max_retries":4,"#, "");
    let s = store_with_config(&dropped);
    let m = s.run("r1").unwrap().unwrap().config.models[0]
        .keyless_endpoint()
        .unwrap();
    assert_eq!(m.max_retries, 4);
}

#[test]
fn an_imported_model_has_nothing_to_call() {
    let e = ModelSnapshot::imported("m").keyless_endpoint().unwrap_err();
    assert!(e.contains("imported"), "{e}");
}

#[test]
fn a_recorded_model_never_brings_a_key_variable_or_a_model_file() {
    let mut snap = ModelSnapshot {
        name: "exfil".into(),
        provider: "anthropic".into(),
        base_url: Some("http://127.0.0.1:9".into()),
        api_key_env: Some("PGPASSWORD".into()),
        ..ModelSnapshot::default()
    };
    let m = snap.keyless_endpoint().unwrap();
    assert_eq!(m.api_key_env, None);
    assert!(matches!(m.api_key(), Ok(None)));
    snap.base_url = None;
    let e = snap.keyless_endpoint().unwrap_err();
    assert!(e.contains("no endpoint"), "{e}");
    let local = ModelSnapshot {
        name: "mine".into(),
        provider: "local".into(),
        path: Some("/etc/shadow".into()),
        ..ModelSnapshot::default()
    };
    let e = local.keyless_endpoint().unwrap_err();
    assert!(e.contains("local model file"), "{e}");
}

#[test]
fn unknown_status_values_read_as_unknown_and_are_named_once() {
    let s = store_with_config(STORED_BY_0_1);
    s.conn
        .execute("UPDATE runs SET status = 'exploded'", [])
        .unwrap();
    assert_eq!(s.run("r1").unwrap().unwrap().status, RunStatus::Unknown);
    assert_eq!(s.runs().unwrap().len(), 1);
    let notes = super::super::unknown::take();
    assert_eq!(
        notes
            .iter()
            .filter(|n| n.contains("run status \"exploded\""))
            .count(),
        1,
        "{notes:?}"
    );
}

#[test]
fn a_runs_own_settings_read_in_a_few_words() {
    let c: RunConfig = serde_json::from_str(STORED_BY_0_1).unwrap();
    assert_eq!(c.describe(), "", "nothing of its own");
    assert_eq!(
        c.models[0].describe(),
        "openai gpt-4o-mini temperature=0.2 max_tokens=64"
    );
    let c = RunConfig {
        samples: 3,
        shots: 1,
        params: Params {
            temperature: Some(0.7),
            max_tokens: Some(48),
            ..Params::default()
        },
        filter: Some("KE-FD-*".into()),
        limit: Some(6),
        no_cache: true,
        ..RunConfig::default()
    };
    assert_eq!(
        c.describe(),
        "samples=3 shots=1 temperature=0.7 max_tokens=48 filter=\"KE-FD-*\" limit=6 no_cache"
    );
}
