//! One thread budget for every embedded model in this prism: the cores are shared out among the
//! models that are working, instead of each model's worker taking every core.
//!
//! Why: two workers of two threads each on a two-core machine (the demo runs `local` and `smol`
//! side by side) put four compute threads on two cores. llama.cpp's threads meet at a barrier
//! after every operation, hundreds of times a token, so a thread that is descheduled holds its
//! partner up; the two models together made about what one makes alone. With one thread each,
//! each model runs at its one-thread speed, which on a small model is well over half its
//! two-thread speed (BENCHMARKS.md, issue 29).
//!
//! The rule: the cores ([`Budget::total`]) are divided evenly among the models with requests in
//! flight, a model never getting more than its own `threads` setting nor fewer than one; what a
//! model cannot use goes to the others. A model working alone gets its `threads` setting (every
//! core by default). A share is sent to a worker before the request that changed it, so it
//! applies from that request's first decode; a model going idle gives its cores back after a
//! short grace, so the gap between two jobs of a run does not flap the others' shares.

use std::sync::{Arc, Mutex, OnceLock, mpsc};
use std::time::Duration;

/// How long a model that went idle keeps its share: a run sends its next request to a model
/// within this of the last one ending.
const IDLE_GRACE: Duration = Duration::from_millis(50);

/// Threads for each model, in order: `members` are `(cap, busy)`; idle models get their cap
/// (what they would get on their own), busy ones share `total` (water-filling: the smallest
/// caps are served first, what they leave goes to the rest, remainders to the earliest).
pub fn shares(total: usize, members: &[(usize, bool)]) -> Vec<usize> {
    let total = total.max(1);
    let mut out: Vec<usize> = members.iter().map(|&(cap, _)| cap.max(1)).collect();
    let mut busy: Vec<usize> = (0..members.len()).filter(|&i| members[i].1).collect();
    if busy.len() <= 1 {
        return out;
    }
    let cap = |i: usize| members[i].0.max(1);
    let mut left = total;
    loop {
        let even = left / busy.len();
        if even == 0 {
            // More busy models than cores left: one thread each.
            for &i in &busy {
                out[i] = 1;
            }
            return out;
        }
        // Models that cannot use an even share take their cap; the rest share what is left.
        let (full, rest): (Vec<usize>, Vec<usize>) = busy.iter().partition(|&&i| cap(i) <= even);
        if full.is_empty() {
            // Everyone can use an even share: the remainder to the earliest.
            let mut extra = left - even * busy.len();
            for &i in &busy {
                out[i] = even + usize::from(extra > 0);
                extra = extra.saturating_sub(1);
            }
            return out;
        }
        for &i in &full {
            out[i] = cap(i);
            left -= cap(i);
        }
        if rest.is_empty() {
            return out;
        }
        busy = rest;
    }
}

/// Where a member's share goes: the worker's request line (the share is sent as a request).
pub(super) type Tell = Box<dyn Fn(usize) + Send>;

struct Member {
    id: u64,
    cap: usize,
    busy: bool,
    /// The share this member was last told (None: not yet told).
    told: Option<usize>,
    tell: Tell,
    /// Bumped on every change of `busy`, so a grace that ends after the member got busy again
    /// changes nothing.
    epoch: u64,
}

#[derive(Default)]
struct State {
    members: Vec<Member>,
    next_id: u64,
}

/// The process's thread budget (see the module's docs).
pub struct Budget {
    total: usize,
    state: Mutex<State>,
}

impl Budget {
    /// The budget every local model of this process shares: the cores this process may use.
    pub(super) fn global() -> &'static Arc<Budget> {
        static GLOBAL: OnceLock<Arc<Budget>> = OnceLock::new();
        GLOBAL.get_or_init(|| {
            let total = std::thread::available_parallelism().map_or(2, |n| n.get());
            Arc::new(Budget::new(total))
        })
    }

    pub fn new(total: usize) -> Budget {
        Budget {
            total: total.max(1),
            state: Mutex::default(),
        }
    }

    /// The threads shared out.
    pub fn total(&self) -> usize {
        self.total
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A worker joins, idle, with its model's `threads` setting as its cap; `tell` sends it a
    /// new share. Returns its id.
    pub(super) fn join(&self, cap: usize, tell: Tell) -> u64 {
        let mut st = self.lock();
        st.next_id += 1;
        let id = st.next_id;
        st.members.push(Member {
            id,
            cap: cap.max(1),
            busy: false,
            told: None,
            tell,
            epoch: 0,
        });
        id
    }

    /// A worker is gone (it died or its model was dropped); the others may take its cores.
    pub(super) fn leave(&self, id: u64) {
        let mut st = self.lock();
        st.members.retain(|m| m.id != id);
        self.rebalance(&mut st);
    }

    /// A worker got its first request in flight: its share (and the others') is sent now,
    /// before that request.
    pub(super) fn working(&self, id: u64) {
        let mut st = self.lock();
        if let Some(m) = st.members.iter_mut().find(|m| m.id == id) {
            m.epoch += 1;
            m.busy = true;
        }
        self.rebalance(&mut st);
    }

    /// A worker has nothing in flight: after a short grace, unless it got busy again, its
    /// cores go to the others.
    pub(super) fn idle(self: &Arc<Self>, id: u64) {
        let epoch = {
            let mut st = self.lock();
            let Some(m) = st.members.iter_mut().find(|m| m.id == id) else {
                return;
            };
            m.epoch += 1;
            m.epoch
        };
        let me = self.clone();
        let spawned = std::thread::Builder::new()
            .name("prism-local-budget".into())
            .spawn(move || {
                std::thread::sleep(IDLE_GRACE);
                me.settle_idle(id, epoch);
            });
        if spawned.is_err() {
            self.settle_idle(id, epoch);
        }
    }

    fn settle_idle(&self, id: u64, epoch: u64) {
        let mut st = self.lock();
        if let Some(m) = st.members.iter_mut().find(|m| m.id == id)
            && m.epoch == epoch
        {
            m.busy = false;
            self.rebalance(&mut st);
        }
    }

    /// Shares now (for tests and the bench): `(id, busy, share told)`.
    pub fn snapshot(&self) -> Vec<(u64, bool, Option<usize>)> {
        self.lock()
            .members
            .iter()
            .map(|m| (m.id, m.busy, m.told))
            .collect()
    }

    /// Tells every busy member whose share changed. An idle member is told nothing: its share
    /// is sent when it gets busy.
    fn rebalance(&self, st: &mut State) {
        let caps: Vec<(usize, bool)> = st.members.iter().map(|m| (m.cap, m.busy)).collect();
        let shares = shares(self.total, &caps);
        for (m, share) in st.members.iter_mut().zip(shares) {
            if m.busy && m.told != Some(share) {
                m.told = Some(share);
                (m.tell)(share);
            }
        }
    }
}

/// A `Tell` that sends on a channel (tests).
pub fn channel_tell(tx: mpsc::Sender<usize>) -> Tell {
    Box::new(move |n| {
        let _ = tx.send(n);
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cores_are_shared_among_the_busy_models() {
        // Alone: its own setting (every core by default), whatever the others' caps.
        assert_eq!(shares(2, &[(2, true), (2, false)]), vec![2, 2]);
        assert_eq!(
            shares(2, &[(4, true)]),
            vec![4],
            "a user's own setting holds alone"
        );
        // Two busy on two cores: one each.
        assert_eq!(shares(2, &[(2, true), (2, true)]), vec![1, 1]);
        // Three on two cores: never fewer than one.
        assert_eq!(shares(2, &[(2, true), (2, true), (2, true)]), vec![1, 1, 1]);
        // Eight cores, three busy: 3 + 3 + 2, the remainder to the earliest.
        assert_eq!(shares(8, &[(8, true), (8, true), (8, true)]), vec![3, 3, 2]);
        // A model capped at 1 leaves the rest to the other.
        assert_eq!(shares(8, &[(1, true), (8, true)]), vec![1, 7]);
        assert_eq!(shares(8, &[(8, true), (2, true), (8, true)]), vec![3, 2, 3]);
        // Idle members keep their cap and take nothing from the busy ones.
        assert_eq!(
            shares(4, &[(4, false), (4, true), (4, true)]),
            vec![4, 2, 2]
        );
        // Never more than the cores in all when several are busy.
        for total in 1..=16 {
            for n in 2..=5 {
                let m: Vec<(usize, bool)> = (0..n).map(|i| (1 + i * 3, true)).collect();
                let s = shares(total, &m);
                let sum: usize = s.iter().sum();
                assert!(sum <= total.max(n), "{total} {m:?} {s:?}");
                assert!(s.iter().zip(&m).all(|(x, (cap, _))| *x >= 1 && x <= cap));
            }
        }
    }

    #[test]
    fn a_share_is_told_when_it_changes_and_given_back_after_the_grace() {
        let b = Arc::new(Budget::new(2));
        let (tx_a, rx_a) = mpsc::channel();
        let (tx_b, rx_b) = mpsc::channel();
        let a = b.join(2, channel_tell(tx_a));
        let bb = b.join(2, channel_tell(tx_b));
        b.working(a);
        assert_eq!(rx_a.try_recv(), Ok(2), "alone: both cores");
        b.working(bb);
        assert_eq!(rx_a.try_recv(), Ok(1));
        assert_eq!(rx_b.try_recv(), Ok(1));
        // B goes idle and busy again within the grace: nothing changes.
        b.idle(bb);
        b.working(bb);
        std::thread::sleep(IDLE_GRACE * 3);
        assert!(rx_a.try_recv().is_err() && rx_b.try_recv().is_err());
        // B goes idle for good: A gets both cores back after the grace.
        b.idle(bb);
        assert!(rx_a.try_recv().is_err(), "not before the grace");
        std::thread::sleep(IDLE_GRACE * 3);
        assert_eq!(rx_a.try_recv(), Ok(2));
        // A worker that leaves gives its cores back at once.
        b.working(bb);
        assert_eq!(rx_a.try_recv(), Ok(1));
        assert!(rx_b.try_recv().is_err(), "B still has the 1 it was told");
        b.leave(bb);
        assert_eq!(rx_a.try_recv(), Ok(2));
    }
}
