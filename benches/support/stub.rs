//! The external stub server the process benches measure against: nginx answering every POST
//! with one OpenAI-shaped SSE reply, wrk's raw capacity on it, and a dataset of N items.
#![allow(dead_code)] // each bench uses some of it

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The SSE reply: 33 deltas of about 215 bytes each, the finish chunk, `[DONE]`. With
/// `logprobs` (the number of alternatives), each delta also carries its token's log-probability
/// and alternatives, as an OpenAI-compatible server sends them when asked (one token a delta).
pub fn sse_body(logprobs: Option<usize>) -> String {
    let mut out = String::new();
    let word = "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor ";
    for i in 0..33 {
        let content = format!("{}{} ", &word[..64], i);
        let lp = match logprobs {
            None => String::new(),
            Some(n) => {
                let alts: Vec<String> = (0..n)
                    .map(|a| format!("{{\"token\":\"alt{a}\",\"logprob\":-{a}.25,\"bytes\":null}}"))
                    .collect();
                format!(
                    ",\"logprobs\":{{\"content\":[{{\"token\":\"{content}\",\"logprob\":-0.125,\"bytes\":null,\"top_logprobs\":[{}]}}]}}",
                    alts.join(",")
                )
            }
        };
        out.push_str(&format!(
            "data: {{\"id\":\"chatcmpl-bench\",\"object\":\"chat.completion.chunk\",\"created\":1700000000,\"model\":\"stub\",\"choices\":[{{\"index\":0,\"delta\":{{\"content\":\"{content}\"}}{lp},\"finish_reason\":null}}]}}\n\n"
        ));
    }
    out.push_str("data: {\"id\":\"chatcmpl-bench\",\"object\":\"chat.completion.chunk\",\"created\":1700000000,\"model\":\"stub\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":40,\"completion_tokens\":330,\"total_tokens\":370}}\n\n");
    out.push_str("data: [DONE]\n\n");
    out
}

pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

pub struct Nginx {
    child: Child,
    pub port: u16,
}

impl Drop for Nginx {
    fn drop(&mut self) {
        // SIGTERM: the master stops its workers (SIGKILL would leave them running).
        unsafe {
            libc::kill(self.child.id() as libc::pid_t, libc::SIGTERM);
        }
        let _ = self.child.wait();
    }
}

pub fn start_nginx(dir: &Path, body: &str) -> Nginx {
    let port = free_port();
    // The reply is a static file; a POST to the static handler is a 405, which error_page turns
    // into the same file with status 200 (an internal GET).
    std::fs::write(dir.join("body.sse"), body).unwrap();
    let conf = format!(
        "daemon off;\nworker_processes 1;\npid {d}/nginx.pid;\nerror_log {d}/error.log;\n\
         events {{ worker_connections 4096; }}\n\
         http {{\n access_log off;\n keepalive_requests 10000000;\n keepalive_timeout 120s;\n\
          client_body_temp_path {d}/body;\n proxy_temp_path {d}/proxy;\n fastcgi_temp_path {d}/fastcgi;\n\
          uwsgi_temp_path {d}/uwsgi;\n scgi_temp_path {d}/scgi;\n\
          server {{\n  listen 127.0.0.1:{port} reuseport backlog=4096;\n\
           location = /status {{ stub_status; }}\n\
           location / {{ root {d}; types {{ }} default_type text/event-stream;\n\
             rewrite ^ /body.sse break; error_page 405 =200 /body.sse; }}\n }}\n}}\n",
        d = dir.display()
    );
    let path = dir.join("nginx.conf");
    std::fs::write(&path, conf).unwrap();
    let child = Command::new("nginx")
        .args([
            "-c",
            &path.display().to_string(),
            "-p",
            &dir.display().to_string(),
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("nginx is not installed: scripts/bench-tools installs it");
    let t = Instant::now();
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(t.elapsed() < Duration::from_secs(10), "nginx did not start");
        std::thread::sleep(Duration::from_millis(20));
    }
    Nginx { child, port }
}

/// Connections nginx has accepted so far (stub_status).
pub fn accepts(port: u16) -> u64 {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.write_all(b"GET /status HTTP/1.0\r\nHost: x\r\n\r\n")
        .unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    let line = out
        .lines()
        .skip_while(|l| !l.starts_with("server accepts"))
        .nth(1)
        .unwrap_or("");
    line.split_whitespace()
        .next()
        .and_then(|x| x.parse().ok())
        .unwrap_or(0)
}

pub fn wrk(dir: &Path, port: u16, conc: usize, secs: u32) -> f64 {
    let lua = dir.join("post.lua");
    std::fs::write(
        &lua,
        "wrk.method = \"POST\"\nwrk.headers[\"Content-Type\"] = \"application/json\"\n\
         wrk.body = '{\"model\":\"stub\",\"stream\":true,\"messages\":[{\"role\":\"user\",\"content\":\"What is the capital of France?\"}]}'\n",
    )
    .unwrap();
    let out = Command::new("wrk")
        .args([
            "-t2",
            &format!("-c{conc}"),
            &format!("-d{secs}s"),
            "-s",
            &lua.display().to_string(),
            &format!("http://127.0.0.1:{port}/v1/chat/completions"),
        ])
        .output()
        .expect("wrk is not installed: scripts/bench-tools installs it");
    let text = String::from_utf8_lossy(&out.stdout);
    text.lines()
        .find_map(|l| l.strip_prefix("Requests/sec:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("wrk said: {text}"))
}

pub fn write_items(dir: &Path, n: usize) -> PathBuf {
    let p = dir.join("items.jsonl");
    let mut f = std::io::BufWriter::new(std::fs::File::create(&p).unwrap());
    for i in 0..n {
        writeln!(
            f,
            "{}",
            serde_json::json!({"id": format!("KE-FD-Bench-{i:06}"), "task": "KE-FD-Bench",
                "source_id": i.to_string(), "dimension": "KE", "category": "FD",
                "question": format!("Bench question number {i}: what is the capital of France?"),
                "answer": "Paris"})
        )
        .unwrap();
    }
    p
}
