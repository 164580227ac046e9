//! The hub on its own: job types it has never heard of run, answer who asked, hold their slot
//! and end.

use super::*;

#[derive(Debug, PartialEq)]
struct Echo(u32);
impl Outcome for Echo {}

/// A job the hub has never heard of: it answers on the store worker and from a spawned task.
struct Twice(u32);
impl Job for Twice {
    fn start(self: Box<Self>, cx: &mut JobCx<'_>) {
        let n = self.0;
        cx.on_store(move |_| vec![Msg::new(Echo(n))]);
        let reply = cx.reply();
        cx.spawn(Slot::Other, CancellationToken::new(), async move {
            reply.outcome(Echo(n + 1));
        });
    }
}

/// A job that runs until cancelled, in the run slot.
struct Forever;
impl Job for Forever {
    fn start(self: Box<Self>, cx: &mut JobCx<'_>) {
        let cancel = CancellationToken::new();
        let c2 = cancel.clone();
        let reply = cx.reply();
        cx.spawn(Slot::Run, cancel, async move {
            c2.cancelled().await;
            reply.outcome(Echo(0));
        });
    }
}

fn ds() -> Arc<Dataset> {
    Arc::new(crate::dataset::load_sample().dataset)
}

async fn next(jobs: &mut Jobs) -> Delivery {
    tokio::time::timeout(Duration::from_secs(10), jobs.rx.recv())
        .await
        .expect("a delivery in time")
        .expect("the channel is open")
}

#[tokio::test]
async fn a_new_job_type_runs_and_its_results_reach_who_asked() {
    let mut jobs = Jobs::new(Services::offline());
    jobs.start(ScreenId::Runs, Box::new(Twice(7)), &ds());
    let mut got = Vec::new();
    for _ in 0..2 {
        let d = next(&mut jobs).await;
        assert_eq!(d.to, ScreenId::Runs);
        got.push(d.msg.get::<Echo>().expect("an Echo").0);
        assert!(d.msg.get::<Failed>().is_none());
    }
    got.sort();
    assert_eq!(got, [7, 8]);
    // Done: nothing left in flight, so a scripted session can end.
    for _ in 0..100 {
        if !jobs.busy() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(!jobs.busy());
}

#[tokio::test]
async fn a_slot_holds_its_work_until_cancelled_and_shutdown_ends_it() {
    let mut jobs = Jobs::new(Services::offline());
    jobs.start(ScreenId::Browse, Box::new(Forever), &ds());
    assert!(jobs.run_in_progress() && jobs.busy());
    assert!(!jobs.detect_in_progress());
    jobs.cancel(Slot::Detect);
    assert!(jobs.run_in_progress(), "cancelling another slot leaves it");
    jobs.cancel(Slot::Run);
    assert_eq!(next(&mut jobs).await.msg.get::<Echo>(), Some(&Echo(0)));
    jobs.shutdown().await;
    assert!(!jobs.run_in_progress());
}

#[tokio::test]
async fn without_a_store_a_read_says_what_is_missing_or_nothing() {
    struct Read(Option<&'static str>);
    impl Job for Read {
        fn start(self: Box<Self>, cx: &mut JobCx<'_>) {
            cx.on_reader(self.0, |_| Msg::new(Echo(1)));
        }
    }
    let mut jobs = Jobs::new(Services::offline());
    jobs.start(ScreenId::Runs, Box::new(Read(None)), &ds());
    jobs.start(
        ScreenId::Runs,
        Box::new(Read(Some("runs need a store"))),
        &ds(),
    );
    let d = next(&mut jobs).await;
    assert_eq!(d.msg.get::<Failed>().unwrap().0, "runs need a store");
    assert!(jobs.rx.try_recv().is_err(), "the first read said nothing");
}

#[tokio::test]
async fn a_watch_starts_once_and_a_failed_one_says_why() {
    struct Watching(&'static str, bool);
    impl Job for Watching {
        fn start(self: Box<Self>, cx: &mut JobCx<'_>) {
            let ok = self.1;
            cx.watch(self.0, move |reply| {
                reply.outcome(Echo(9));
                if ok { Ok(()) } else { Err("no watch".into()) }
            });
        }
    }
    let mut jobs = Jobs::new(Services::offline());
    jobs.start(ScreenId::Review, Box::new(Watching("a", true)), &ds());
    jobs.start(ScreenId::Review, Box::new(Watching("a", true)), &ds());
    assert_eq!(next(&mut jobs).await.msg.get::<Echo>(), Some(&Echo(9)));
    assert!(jobs.rx.try_recv().is_err(), "started once");
    jobs.start(ScreenId::Review, Box::new(Watching("b", false)), &ds());
    next(&mut jobs).await;
    assert_eq!(
        next(&mut jobs).await.msg.get::<Failed>().unwrap().0,
        "no watch"
    );
}
