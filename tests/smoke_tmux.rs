//! One real-terminal smoke test: the built binary in tmux, driven with send-keys and read with
//! capture-pane, as a user at a terminal would use it. Requires tmux (installed by `.ci/run`).

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

struct Tmux {
    socket: String,
}

impl Tmux {
    fn run(&self, args: &[&str]) -> String {
        let out = Command::new("tmux")
            .arg("-L")
            .arg(&self.socket)
            .args(args)
            .output()
            .expect("tmux must be installed for the smoke test (apt-get install tmux)");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn screen(&self) -> String {
        self.run(&["capture-pane", "-p", "-t", "smoke"])
    }

    fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", "smoke"];
        args.extend_from_slice(keys);
        self.run(&args);
    }

    /// Waits (bounded) until the screen satisfies `ok`; returns the last screen either way.
    fn wait_for(&self, what: &str, ok: impl Fn(&str) -> bool) -> String {
        let start = Instant::now();
        loop {
            let s = self.screen();
            if ok(&s) {
                return s;
            }
            if start.elapsed() > Duration::from_secs(15) {
                panic!("timed out waiting for {what}; screen was:\n{s}");
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .args(["-L", &self.socket, "kill-server"])
            .output();
    }
}

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
    tmux.run(&[
        "new-session",
        "-d",
        "-s",
        "smoke",
        "-x",
        "100",
        "-y",
        "30",
        &cmd,
    ]);

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
