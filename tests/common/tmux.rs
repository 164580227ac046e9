//! A real terminal for tests: the built binary in a tmux session of a socket of its own, driven
//! with send-keys and read with capture-pane, as a user at a terminal would use it.
#![allow(dead_code)] // each test file uses some of it

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

pub struct Tmux {
    pub socket: String,
}

/// Waits (bounded) until `path` exists.
pub fn wait_file(path: &Path, what: &str) {
    let start = Instant::now();
    while !path.exists() {
        assert!(start.elapsed() < Duration::from_secs(20), "{what}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

impl Tmux {
    /// The session "smoke" of `w` x `h` running `cmd` (a shell line), on this Tmux's socket.
    pub fn start(&self, (w, h): (u16, u16), cmd: &str) {
        self.run(&[
            "new-session",
            "-d",
            "-s",
            "smoke",
            "-x",
            &w.to_string(),
            "-y",
            &h.to_string(),
            cmd,
        ]);
    }

    pub fn run(&self, args: &[&str]) -> String {
        let out = Command::new("tmux")
            .arg("-L")
            .arg(&self.socket)
            .args(args)
            .output()
            .expect("tmux must be installed for the smoke test (apt-get install tmux)");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    pub fn screen(&self) -> String {
        self.run(&["capture-pane", "-p", "-t", "smoke"])
    }

    /// The pid of the pane's first child: prism, under the pane's shell.
    pub fn prism_pid(&self) -> i32 {
        let shell = self.run(&["list-panes", "-t", "smoke", "-F", "#{pane_pid}"]);
        let shell = shell.trim();
        let children =
            std::fs::read_to_string(format!("/proc/{shell}/task/{shell}/children")).unwrap();
        children.split_whitespace().next().unwrap().parse().unwrap()
    }

    pub fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", "smoke"];
        args.extend_from_slice(keys);
        self.run(&args);
    }

    /// Waits (bounded) until the screen satisfies `ok`; returns the last screen either way.
    pub fn wait_for(&self, what: &str, ok: impl Fn(&str) -> bool) -> String {
        let start = Instant::now();
        loop {
            let s = self.screen();
            if ok(&s) {
                return s;
            }
            // Generous: CI machines are shared and run several of these at once.
            if start.elapsed() > Duration::from_secs(30) {
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
