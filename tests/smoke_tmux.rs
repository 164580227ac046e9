//! One real-terminal smoke test: the built binary in tmux, driven with send-keys and read with
//! capture-pane, as a user at a terminal would use it. Requires tmux (installed by `.ci/run`).

mod common;

use std::path::Path;
use std::time::{Duration, Instant};

use common::tmux::{Tmux, wait_file};

#[test]
fn tui_opens_moves_searches_and_quits_in_a_real_terminal() {
    let bin = env!("CARGO_BIN_EXE_prism");
    let dir = tempfile::tempdir().unwrap();
    let status = dir.path().join("status");
    let tmux = Tmux {
        socket: format!("prism-smoke-{}", std::process::id()),
    };
    let cmd = format!(
        "PRISM_CONFIG_DIR={cfg} TERM=xterm-256color {bin}; echo $? > {status}; sleep 5",
        cfg = dir.path().display(),
        status = status.display()
    );
    tmux.start((100, 30), &cmd);

    let s = tmux.wait_for("the browse screen", |s| s.contains("Taxonomy"));
    assert!(s.contains("85 items"), "{s}");

    // Move into FD and open it.
    tmux.keys(&["j", "Enter"]);
    tmux.wait_for("FD opened", |s| s.contains("Myths"));

    // Search, with incremental jump and match count.
    tmux.keys(&["/"]);
    tmux.keys(&["-l", "goldfish"]);
    tmux.keys(&["Enter"]);
    let s = tmux.wait_for("a search match", |s| s.contains("match 1/1"));
    assert!(s.contains("KE-FD-Myths-0003"), "{s}");

    // Help opens and closes.
    tmux.keys(&["?"]);
    tmux.wait_for("help", |s| s.contains("Keys: browse (esc to close)"));
    tmux.keys(&["Escape"]);
    tmux.wait_for("help closed", |s| {
        !s.contains("Keys: browse (esc to close)")
    });

    tmux.keys(&["q"]);
    let start = Instant::now();
    while !Path::new(&status).exists() {
        assert!(
            start.elapsed() < Duration::from_secs(15),
            "prism did not exit on q"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let code = std::fs::read_to_string(&status).unwrap();
    assert_eq!(code.trim(), "0");
    // The terminal is restored: the alternate screen is gone.
    let s = tmux.screen();
    assert!(!s.contains("Taxonomy"), "screen not restored:\n{s}");
}

/// The TUI in a real terminal, in the middle of a run, stopped by a signal: SIGTERM (`kill`) and
/// SIGHUP (the terminal closed, here by killing the tmux session). Either way the run is marked
/// interrupted (`cancelled`, resumable), never left `running`; after SIGTERM the terminal is back
/// in cooked mode (stty says icanon and echo) and prism exits 0, as after `q`.
#[test]
fn a_signal_mid_run_restores_the_terminal_and_marks_the_run_interrupted() {
    let bin = env!("CARGO_BIN_EXE_prism");
    let mock = common::mock::start_background();
    for how in ["SIGTERM", "SIGHUP", "C-c"] {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("models.toml"),
            format!(
                "[[models]]\nname = \"slow\"\nprovider = \"openai\"\nbase_url = \"{}/v1\"\nmodel = \"slow\"\nmax_concurrency = 1\n",
                mock.url()
            ),
        )
        .unwrap();
        let (status, stty) = (dir.path().join("status"), dir.path().join("stty"));
        let tmux = Tmux {
            socket: format!("prism-signal-{}-{how}", std::process::id()),
        };
        let cmd = format!(
            "PRISM_CONFIG_DIR={d} PRISM_DATA_DIR={d} TERM=xterm-256color {bin}; echo $? > {status}; stty -a > {stty}; sleep 5",
            d = dir.path().display(),
            status = status.display(),
            stty = stty.display()
        );
        tmux.start((120, 40), &cmd);
        tmux.wait_for("the browse screen", |s| s.contains("Taxonomy"));
        // `r` on KE (its 21 items): with no built-in model installed, the picker starts on
        // the user's own model.
        tmux.keys(&["r"]);
        let s = tmux.wait_for("the run picker", |s| s.contains("slow"));
        assert!(
            s.contains("[x] slow") && s.contains("[ ] local") && s.contains("[ ] smol"),
            "{s}"
        );
        tmux.keys(&["Enter"]);
        // Under way: the first answer stored.
        let db = dir.path().join("prism.db");
        let start = Instant::now();
        let run = loop {
            let found = prism::store::Store::open(&db).ok().and_then(|s| {
                let r = s.latest_run().ok()??;
                (s.job_counts(&r.id).ok()?.done > 0).then_some(r)
            });
            if let Some(r) = found {
                break r;
            }
            assert!(
                start.elapsed() < Duration::from_secs(20),
                "no run started; screen:\n{}",
                tmux.screen()
            );
            std::thread::sleep(Duration::from_millis(50));
        };
        assert_eq!(run.status, prism::store::RunStatus::Running);
        if how == "SIGTERM" || how == "C-c" {
            if how == "C-c" {
                tmux.keys(&["C-c"]);
            } else {
                assert_eq!(unsafe { libc::kill(tmux.prism_pid(), libc::SIGTERM) }, 0);
            }
            wait_file(&status, "prism did not exit");
            wait_file(&stty, "no stty output");
            // Interrupted, as the CLI says it: exit 130 and the command that finishes it.
            assert_eq!(
                std::fs::read_to_string(&status).unwrap().trim(),
                "130",
                "{how}"
            );
            let s = tmux.wait_for("the resume command", |s| s.contains("--resume"));
            let flat = s.replace('\n', "");
            assert!(
                flat.contains(&format!("run {} interrupted:", run.id))
                    && flat.contains(&format!("prism run --resume {}", run.id)),
                "{how}: {s}"
            );
            let modes = std::fs::read_to_string(&stty).unwrap();
            let words: Vec<&str> = modes.split_whitespace().collect();
            assert!(
                words.contains(&"icanon") && words.contains(&"echo"),
                "the terminal was left in raw mode: {modes}"
            );
        } else {
            let pid = tmux.prism_pid();
            tmux.run(&["kill-session", "-t", "smoke"]);
            let start = Instant::now();
            while Path::new(&format!("/proc/{pid}")).exists() {
                assert!(
                    start.elapsed() < Duration::from_secs(20),
                    "prism outlived its terminal"
                );
                std::thread::sleep(Duration::from_millis(50));
            }
        }
        let store = prism::store::Store::open(&db).unwrap();
        let after = store.run(&run.id).unwrap().unwrap();
        assert_eq!(
            after.status,
            prism::store::RunStatus::Cancelled,
            "after {how}"
        );
        let c = store.job_counts(&run.id).unwrap();
        assert!(c.pending > 0, "{how}: the rest stays pending for --resume");
    }
}

/// `prism review DATASET --blind` opens the TUI on the review screen of that dataset, in a real
/// terminal; a score typed lands on the focused criterion; q quits with 0.
#[test]
fn prism_review_opens_the_review_screen() {
    let bin = env!("CARGO_BIN_EXE_prism");
    let dir = tempfile::tempdir().unwrap();
    let status = dir.path().join("status");
    let mini = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/prism-mini");
    let tmux = Tmux {
        socket: format!("prism-review-{}", std::process::id()),
    };
    let cmd = format!(
        "PRISM_CONFIG_DIR={cfg} PRISM_DATA_DIR={cfg} TERM=xterm-256color {bin} review {mini} --blind; echo $? > {status}; sleep 5",
        cfg = dir.path().display(),
        mini = mini.display(),
        status = status.display()
    );
    tmux.start((120, 36), &cmd);
    let s = tmux.wait_for("the review screen", |s| s.contains("322 in queue"));
    assert!(s.contains("Queue (triage order)"), "{s}");
    tmux.keys(&["j", "7"]);
    tmux.wait_for("relevance scored", |s| {
        s.lines()
            .any(|l| l.contains("▸ Domain Relevance") && l.contains(" 7 "))
    });
    tmux.keys(&["q"]);
    wait_file(&status, "prism did not exit on q");
    assert_eq!(std::fs::read_to_string(&status).unwrap().trim(), "0");
}

/// A label is kept the moment its "labelled" message shows (issue 46): `L` and `enter` on the
/// review screen in a real terminal, then `kill -9` at once; the store has the label.
#[test]
fn a_label_survives_kill_9_the_moment_it_is_said() {
    use prism::store::{JobRecord, RunConfig, RunRecord, RunStatus, Store};
    let bin = env!("CARGO_BIN_EXE_prism");
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("prism.db");
    let ds = prism::dataset::load_sample().dataset;
    let first = &ds.items[0];
    {
        let mut store = Store::open(&db).unwrap();
        store
            .create_run(
                &RunRecord {
                    id: "r-kill".into(),
                    created_at: 0,
                    dataset: "<sample-data>".into(),
                    config: RunConfig::default(),
                    status: RunStatus::Finished,
                },
                &[JobRecord {
                    idx: 0,
                    item_id: first.id.to_string(),
                    task_id: ds.task_of(first).id.clone(),
                    model: "alpha".into(),
                    sample: 0,
                }],
            )
            .unwrap();
        store
            .save_responses(&[common::answers::stored_answer(
                ("r-kill", 0),
                (&first.id, &ds.task_of(first).id),
                "alpha",
                "Yes, he failed.",
            )])
            .unwrap();
    }
    let tmux = Tmux {
        socket: format!("prism-kill-{}", std::process::id()),
    };
    let cmd = format!(
        "PRISM_CONFIG_DIR={d} PRISM_DATA_DIR={d} TERM=xterm-256color {bin} review; sleep 5",
        d = dir.path().display(),
    );
    tmux.start((120, 36), &cmd);
    tmux.wait_for("the stored answer", |s| s.contains("Yes, he failed."));
    tmux.keys(&["L"]);
    tmux.wait_for("the label popup", |s| s.contains("Label alpha's answer"));
    tmux.keys(&["Enter"]);
    tmux.wait_for("the label said", |s| s.contains("labelled hallucinated"));
    let pid = tmux.prism_pid();
    assert_eq!(unsafe { libc::kill(pid, libc::SIGKILL) }, 0);
    let start = Instant::now();
    while Path::new(&format!("/proc/{pid}/status")).exists()
        && !std::fs::read_to_string(format!("/proc/{pid}/status"))
            .unwrap_or_default()
            .contains("zombie")
    {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "prism outlived kill -9"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let labels = Store::open(&db).unwrap().answer_labels(None).unwrap();
    assert_eq!(labels.len(), 1, "{labels:?}");
    assert_eq!(labels[0].label, prism::store::Label::Hallucinated);
    assert_eq!(labels[0].item_id, first.id.to_string());
}

/// The mouse (issue 43): the TUI asks the terminal for mouse events by default (tmux's
/// `mouse_any_flag` says so), and `mouse = false` in the config leaves the mouse to the
/// terminal; quitting gives it back either way.
#[test]
fn the_mouse_is_taken_by_default_and_left_alone_with_mouse_false() {
    let bin = env!("CARGO_BIN_EXE_prism");
    for (config, wanted) in [("", "1"), ("mouse = false\n", "0")] {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("config.toml"), config).unwrap();
        let tmux = Tmux {
            socket: format!("prism-mouse-{}-{wanted}", std::process::id()),
        };
        let cmd = format!(
            "PRISM_CONFIG_DIR={cfg} PRISM_DATA_DIR={cfg} TERM=xterm-256color {bin}; sleep 5",
            cfg = dir.path().display(),
        );
        tmux.start((100, 30), &cmd);
        tmux.wait_for("the browse screen", |s| s.contains("Taxonomy"));
        let flag = || {
            tmux.run(&["display-message", "-p", "-t", "smoke", "#{mouse_any_flag}"])
                .trim()
                .to_string()
        };
        assert_eq!(flag(), wanted, "config {config:?}");
        tmux.keys(&["q"]);
        tmux.wait_for("back at the shell", |s| !s.contains("Taxonomy"));
        assert_eq!(flag(), "0", "the mouse given back on quitting");
    }
}
