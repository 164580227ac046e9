//! A real PostgreSQL server for one test: its own data directory and port, started from the
//! distribution's binaries (`/usr/lib/postgresql/<v>/bin`, or `PRISM_PG_BIN`) and stopped when
//! dropped. As root, the server runs as the `postgres` user (it refuses to run as root).
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

pub struct Pg {
    bin: PathBuf,
    data: PathBuf,
    _dir: tempfile::TempDir,
    pub port: u16,
    as_postgres: bool,
}

fn bin_dir() -> PathBuf {
    if let Some(p) = std::env::var_os("PRISM_PG_BIN") {
        return PathBuf::from(p);
    }
    let mut found: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .expect("PostgreSQL is not installed (.ci/run installs it from apt)")
        .filter_map(|e| e.ok().map(|e| e.path().join("bin")))
        .filter(|p| p.join("postgres").exists())
        .collect();
    found.sort();
    found
        .pop()
        .expect("no /usr/lib/postgresql/<v>/bin/postgres")
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

impl Pg {
    /// A server for tests: `fsync=off` (a test's data need not survive a power cut).
    pub fn start() -> Pg {
        Pg::start_with(false)
    }

    /// With `fsync` on, commits cost what they cost on a real server (benchmarks).
    pub fn start_with(fsync: bool) -> Pg {
        Pg::start_full(fsync, false)
    }

    /// A server that takes only TLS connections, its certificate (for 127.0.0.1) signed by a
    /// CA of the test's own: `ca.crt` in [`Pg::dir`].
    pub fn start_tls() -> Pg {
        Pg::start_full(false, true)
    }

    /// The directory beside the data directory (the TLS test's CA is there).
    pub fn dir(&self) -> &Path {
        self._dir.path()
    }

    fn start_full(fsync: bool, tls: bool) -> Pg {
        let bin = bin_dir();
        let dir = tempfile::tempdir().unwrap();
        let as_postgres = unsafe { libc::geteuid() } == 0;
        let data = dir.path().join("data");
        std::fs::create_dir(&data).unwrap();
        if as_postgres {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
            let out = Command::new("chown")
                .args(["-R", "postgres:postgres"])
                .arg(&data)
                .output()
                .unwrap();
            assert!(out.status.success(), "chown: {out:?}");
        }
        let port = free_port();
        let pg = Pg {
            bin,
            data,
            _dir: dir,
            port,
            as_postgres,
        };
        pg.run(
            "initdb",
            &[
                "-D",
                &pg.data_s(),
                "-A",
                "trust",
                "-U",
                "prism",
                "--no-sync",
                "-E",
                "UTF8",
            ],
        );
        let mut opts = format!(
            "-p {port} -k {} -c listen_addresses=127.0.0.1 -c fsync={} -c max_connections=50",
            pg.data_s(),
            if fsync { "on" } else { "off" }
        );
        if tls {
            pg.make_certs();
            opts.push_str(" -c ssl=on -c ssl_cert_file=server.crt -c ssl_key_file=server.key");
        }
        let log = format!("{}/server.log", pg.data_s());
        pg.run(
            "pg_ctl",
            &[
                "-D",
                &pg.data_s(),
                "-o",
                &opts,
                "-l",
                &log,
                "-w",
                "-t",
                "60",
                "start",
            ],
        );
        let t = Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                t.elapsed() < Duration::from_secs(30),
                "PostgreSQL did not start"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        pg
    }

    /// A CA, and a server certificate for 127.0.0.1 signed by it, in the data directory; TCP
    /// connections without TLS refused (pg_hba.conf).
    fn make_certs(&self) {
        let d = &self.data;
        let dir = self._dir.path();
        let sh = |cmd: String| {
            let out = Command::new("sh").arg("-c").arg(&cmd).output().unwrap();
            assert!(out.status.success(), "{cmd}: {out:?}");
        };
        sh(format!(
            "cd {dir} && openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt \
             -subj /CN=prism-test-ca -days 2 2>/dev/null && \
             openssl req -newkey rsa:2048 -nodes -keyout server.key -out server.csr \
             -subj /CN=127.0.0.1 2>/dev/null && \
             printf 'subjectAltName=IP:127.0.0.1' > san.ext && \
             openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial \
             -out server.crt -days 2 -extfile san.ext 2>/dev/null && \
             cp server.crt server.key {d} && chmod 600 {d}/server.key",
            dir = dir.display(),
            d = d.display()
        ));
        std::fs::write(
            d.join("pg_hba.conf"),
            "local all all trust\nhostssl all all 127.0.0.1/32 trust\nhostnossl all all 127.0.0.1/32 reject\n",
        )
        .unwrap();
        if self.as_postgres {
            sh(format!(
                "chown postgres:postgres {0}/server.crt {0}/server.key {0}/pg_hba.conf",
                d.display()
            ));
        }
    }

    fn data_s(&self) -> String {
        self.data.display().to_string()
    }

    fn run(&self, tool: &str, args: &[&str]) {
        let exe = self.bin.join(tool);
        let out = if self.as_postgres {
            Command::new("runuser")
                .args(["-u", "postgres", "--"])
                .arg(&exe)
                .args(args)
                .current_dir("/")
                .output()
        } else {
            Command::new(&exe).args(args).current_dir("/").output()
        }
        .unwrap_or_else(|e| panic!("{}: {e}", exe.display()));
        assert!(
            out.status.success(),
            "{tool} failed: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// Stops the server (fast: connections are dropped) and starts it again on the same port.
    pub fn restart(&self) {
        // With its log file, as at start: the server must not hold this process's pipes.
        let log = format!("{}/server.log", self.data_s());
        self.run(
            "pg_ctl",
            &[
                "-D",
                &self.data_s(),
                "-l",
                &log,
                "-m",
                "fast",
                "-w",
                "-t",
                "60",
                "restart",
            ],
        );
        let t = Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", self.port)).is_err() {
            assert!(
                t.elapsed() < Duration::from_secs(30),
                "PostgreSQL did not restart"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Stops the server (fast: connections are dropped), as a network cut would look to
    /// clients; [`Pg::start_again`] brings it back on the same port.
    pub fn stop(&self) {
        self.run(
            "pg_ctl",
            &["-D", &self.data_s(), "-m", "fast", "-w", "-t", "60", "stop"],
        );
    }

    pub fn start_again(&self) {
        let log = format!("{}/server.log", self.data_s());
        let opts = format!(
            "-p {} -k {} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=50",
            self.port,
            self.data_s()
        );
        self.run(
            "pg_ctl",
            &[
                "-D",
                &self.data_s(),
                "-o",
                &opts,
                "-l",
                &log,
                "-w",
                "-t",
                "60",
                "start",
            ],
        );
    }

    /// A URL for the `postgres` database as the `prism` superuser.
    pub fn url(&self) -> String {
        format!("postgres://prism@127.0.0.1:{}/postgres", self.port)
    }

    pub fn data_dir(&self) -> &Path {
        &self.data
    }
}

impl Drop for Pg {
    fn drop(&mut self) {
        let exe = self.bin.join("pg_ctl");
        let args = ["-D", &self.data_s(), "-m", "immediate", "-w", "stop"].map(str::to_string);
        let _ = if self.as_postgres {
            Command::new("runuser")
                .args(["-u", "postgres", "--"])
                .arg(&exe)
                .args(&args)
                .current_dir("/")
                .output()
        } else {
            Command::new(&exe).args(&args).current_dir("/").output()
        };
    }
}
