//! Who works on a lane's run on a shared store (`store::lane_push`): one process at a time
//! holds its row in `lane_locks`, with a heartbeat by the database's clock.

/// Who holds a lane's run on the shared store, if someone else does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LaneHeld {
    pub host: String,
    pub pid: i64,
    /// Seconds since its last heartbeat.
    pub age: i64,
}

/// The lock statements (on the shared store's connection).
pub(super) mod pg {
    use super::LaneHeld;
    use crate::store::locks::{Holder, STALE_AFTER_SECS};
    use postgres::Client;

    /// Takes `run` for `who` unless another holder was heard from within the staleness and,
    /// when it ran on this machine, its process is still alive (a `kill -9` then an immediate
    /// `--resume` just works, as on SQLite).
    pub(crate) fn take(
        c: &mut Client,
        run: &str,
        who: &Holder,
        alive: impl Fn(i64) -> bool,
    ) -> Result<Result<(), LaneHeld>, postgres::Error> {
        let mut tx = c.transaction()?;
        let took = tx.query_opt(
            "INSERT INTO lane_locks (run_id, owner, host, pid) VALUES ($1, $2, $3, $4)
             ON CONFLICT (run_id) DO UPDATE
               SET owner = excluded.owner, host = excluded.host, pid = excluded.pid,
                   heartbeat = now()
               WHERE lane_locks.owner = excluded.owner
                  OR lane_locks.heartbeat < now() - make_interval(secs => $5)
             RETURNING owner",
            &[
                &run,
                &who.owner,
                &who.host,
                &who.pid,
                &(STALE_AFTER_SECS as f64),
            ],
        )?;
        let r = match took {
            Some(_) => Ok(()),
            None => {
                let row = tx.query_one(
                    "SELECT host, pid, EXTRACT(EPOCH FROM now() - heartbeat)::BIGINT AS age, owner
                     FROM lane_locks WHERE run_id = $1 FOR UPDATE",
                    &[&run],
                )?;
                let held = LaneHeld {
                    host: row.get("host"),
                    pid: row.get("pid"),
                    age: row.get("age"),
                };
                if held.host == who.host && !alive(held.pid) {
                    let owner: String = row.get("owner");
                    tx.execute(
                        "UPDATE lane_locks SET owner = $3, pid = $4, heartbeat = now()
                         WHERE run_id = $1 AND owner = $2",
                        &[&run, &owner, &who.owner, &who.pid],
                    )?;
                    Ok(())
                } else {
                    Err(held)
                }
            }
        };
        tx.commit()?;
        Ok(r)
    }

    /// Keeps `run` held; false when another took it (this holder was not heard from).
    pub(crate) fn beat(c: &mut Client, run: &str, owner: &str) -> Result<bool, postgres::Error> {
        Ok(c.execute(
            "UPDATE lane_locks SET heartbeat = now() WHERE run_id = $1 AND owner = $2",
            &[&run, &owner],
        )? == 1)
    }

    pub(crate) fn release(c: &mut Client, run: &str, owner: &str) -> Result<(), postgres::Error> {
        c.execute(
            "DELETE FROM lane_locks WHERE run_id = $1 AND owner = $2",
            &[&run, &owner],
        )?;
        Ok(())
    }
}
