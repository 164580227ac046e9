//! Run locks: the process running a run holds a row with its pid and a heartbeat, so a second
//! `prism run --resume` of the same run refuses instead of sending every pending job again. The
//! holder is gone, and its lock taken over, when it ran on this machine and its pid is no longer
//! alive (a `kill -9` then an immediate `--resume` just works), or when its heartbeat is older
//! than [`STALE_AFTER_SECS`] (another machine sharing the store, a pid reused).

use rusqlite::{OptionalExtension, TransactionBehavior, params};

use super::Store;
use super::error::Result;

/// A lock not refreshed for this long is stale.
pub const STALE_AFTER_SECS: i64 = 60;
/// How often the holder refreshes it.
pub const HEARTBEAT_SECS: u64 = 15;

/// This machine's name, to tell a holder here (whose pid can be checked) from one elsewhere.
pub fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .or_else(|_| std::fs::read_to_string("/etc/hostname"))
        .map(|s| s.trim().to_string())
        .ok()
        .filter(|s| !s.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_else(|| "unknown".into())
}

/// Whether a process of this machine is alive (where the system can tell; else assume it is).
pub fn pid_alive(pid: i64) -> bool {
    let proc = std::path::Path::new("/proc");
    !proc.is_dir() || proc.join(pid.to_string()).exists()
}

/// Someone else holds the run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Held {
    pub pid: i64,
    /// Seconds since its last heartbeat.
    pub age: i64,
}

/// Who takes a lock: a token unique to the process, its machine and pid.
#[derive(Debug, Clone)]
pub struct Holder {
    pub owner: String,
    pub host: String,
    pub pid: i64,
}

impl Store {
    /// Takes the run's lock for `owner`, unless another owner refreshed it less than
    /// [`STALE_AFTER_SECS`] ago.
    pub fn lock_run(
        &mut self,
        run_id: &str,
        who: &Holder,
        now: i64,
        alive: impl Fn(i64) -> bool,
    ) -> Result<std::result::Result<(), Held>> {
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        let current: Option<(String, String, i64, i64)> = tx
            .query_row(
                "SELECT owner, host, pid, heartbeat FROM run_locks WHERE run_id = ?1",
                [run_id],
                |r| {
                    Ok((
                        r.get("owner")?,
                        r.get("host")?,
                        r.get("pid")?,
                        r.get("heartbeat")?,
                    ))
                },
            )
            .optional()?;
        if let Some((o, host, p, beat)) = current {
            let gone = (host == who.host && !alive(p)) || now - beat >= STALE_AFTER_SECS;
            if o != who.owner && !gone {
                return Ok(Err(Held {
                    pid: p,
                    age: now - beat,
                }));
            }
        }
        tx.execute(
            "INSERT OR REPLACE INTO run_locks (run_id, owner, host, pid, heartbeat) VALUES (?1, ?2, ?3, ?4, ?5)",
            params![run_id, who.owner, who.host, who.pid, now],
        )?;
        tx.commit()?;
        Ok(Ok(()))
    }

    /// Refreshes the lock (only the owner's); `false` when `owner` no longer holds it (it was
    /// taken over while this process stalled).
    pub fn heartbeat_run(&self, run_id: &str, owner: &str, now: i64) -> Result<bool> {
        let n = self.conn.execute(
            "UPDATE run_locks SET heartbeat = ?3 WHERE run_id = ?1 AND owner = ?2",
            params![run_id, owner, now],
        )?;
        Ok(n > 0)
    }

    /// Who holds the run's lock now, if anyone.
    pub fn lock_owner(&self, run_id: &str) -> Result<Option<String>> {
        Ok(self
            .conn
            .query_row(
                "SELECT owner FROM run_locks WHERE run_id = ?1",
                [run_id],
                |r| r.get("owner"),
            )
            .optional()?)
    }

    /// Lets go of the lock (only the owner's).
    pub fn unlock_run(&self, run_id: &str, owner: &str) -> Result<()> {
        self.conn.execute(
            "DELETE FROM run_locks WHERE run_id = ?1 AND owner = ?2",
            params![run_id, owner],
        )?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn who(owner: &str, host: &str, pid: i64) -> Holder {
        Holder {
            owner: owner.into(),
            host: host.into(),
            pid,
        }
    }

    #[test]
    fn a_held_lock_refuses_others_until_it_is_released_or_stale() {
        let mut s = Store::open_in_memory().unwrap();
        let alive = |_| true;
        let (a, b, c) = (who("a", "h", 1), who("b", "h", 2), who("c", "h", 3));
        assert_eq!(s.lock_run("r", &a, 100, alive).unwrap(), Ok(()));
        // The owner may take it again (a resume in the same process).
        assert_eq!(s.lock_run("r", &a, 101, alive).unwrap(), Ok(()));
        assert_eq!(
            s.lock_run("r", &b, 130, alive).unwrap(),
            Err(Held { pid: 1, age: 29 })
        );
        s.heartbeat_run("r", "a", 150).unwrap();
        assert!(s.lock_run("r", &b, 200, alive).unwrap().is_err());
        // Not refreshed for a minute: the holder is gone, the lock is taken over.
        assert_eq!(
            s.lock_run("r", &b, 150 + STALE_AFTER_SECS, alive).unwrap(),
            Ok(())
        );
        // The old owner's unlock does not free the new owner's lock.
        s.unlock_run("r", "a").unwrap();
        assert!(s.lock_run("r", &c, 211, alive).unwrap().is_err());
        s.unlock_run("r", "b").unwrap();
        assert_eq!(s.lock_run("r", &c, 212, alive).unwrap(), Ok(()));
        // Other runs are independent.
        assert_eq!(s.lock_run("other", &b, 212, alive).unwrap(), Ok(()));
    }

    #[test]
    fn a_holder_on_this_machine_whose_process_died_is_gone_at_once() {
        let mut s = Store::open_in_memory().unwrap();
        s.lock_run("r", &who("a", "here", 41), 100, |_| true)
            .unwrap()
            .unwrap();
        // Same machine, pid 41 dead (kill -9): taken over at once.
        assert_eq!(
            s.lock_run("r", &who("b", "here", 42), 101, |p| p != 41)
                .unwrap(),
            Ok(())
        );
        // Another machine's holder cannot be checked: only its heartbeat counts.
        let mut s = Store::open_in_memory().unwrap();
        s.lock_run("r", &who("a", "there", 41), 100, |_| true)
            .unwrap()
            .unwrap();
        assert!(
            s.lock_run("r", &who("b", "here", 42), 101, |p| p != 41)
                .unwrap()
                .is_err()
        );
        assert!(pid_alive(i64::from(std::process::id())));
    }
}
