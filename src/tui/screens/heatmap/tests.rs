//! Tests of `heatmap`.

#[test]
fn answers_with_no_readable_verdict_are_left_out_of_the_flag_share() {
    use crate::detect::results::{AnswerFlag, Outcome};
    let flag = |model: &str, conflicts, consistent, unparsed| AnswerFlag {
        source_run: "r".into(),
        source_job: 0,
        item_id: "i".into(),
        task_id: "KE-FD-Myths".into(),
        model: model.into(),
        outcome: Outcome {
            k: 6,
            conflicts,
            consistent,
            unparsed,
            missing: 0,
        },
        score: None,
    };
    // One flagged, one cleared, two undecided (every verdict unreadable).
    let rows = flag_rows(&[
        flag("m", 1, 5, 0),
        flag("m", 0, 6, 0),
        flag("m", 0, 0, 6),
        flag("m", 0, 0, 6),
    ]);
    let ke = rows[0].dims[0].unwrap();
    assert_eq!(ke.rate, 50.0, "1 of the 2 decided answers, not 1 of 4");
    assert!(flag("m", 0, 0, 6).outcome.undecided());
    assert!(!flag("m", 0, 1, 5).outcome.undecided());
    assert!(!flag("m", 1, 0, 5).outcome.undecided());
}
use super::*;
use crate::detect::signals::SignalRow;
use crate::eval::signals::SignalScore;

fn row(signal: &str, cell: &str, auroc: Option<f64>) -> SignalRow {
    SignalRow {
        signal: signal.into(),
        model: "m".into(),
        cell: cell.into(),
        score: SignalScore {
            auroc,
            ..SignalScore::default()
        },
    }
}

/// A row per model and signal; dimensions, categories and sub-tasks each in their view; a
/// cell with too few answers stays empty, and the sub-task view reads AUROC back.
#[test]
fn signal_rows_put_each_cell_in_its_view() {
    let rows = signal_rows(&[
        row("semantic entropy", "KE", Some(80.0)),
        row("semantic entropy", "RE", None),
        row("semantic entropy", "all", Some(60.0)),
        row("semantic entropy", "KE-FD", Some(75.0)),
        row("semantic entropy", "KE-FD-DefAn", Some(70.0)),
        row("self-contradiction", "RE", None),
    ]);
    assert_eq!(rows.len(), 2);
    let se = rows
        .iter()
        .find(|r| r.name == "m · semantic entropy")
        .unwrap();
    assert_eq!(se.dims[0].map(|d| d.rate), Some(80.0));
    assert!(se.dims[2].is_none());
    let ke_fd = CATEGORIES
        .iter()
        .position(|c| c.dimension == Dimension::KE && c.code == "FD")
        .unwrap();
    assert_eq!(se.categories[ke_fd].map(|d| d.rate), Some(75.0));
    let tasks = vec!["KE-FD-DefAn".to_string()];
    assert_eq!(se.cell(View::Tasks, 0, &tasks).map(|c| c.value), Some(70.0));
    // The signal with no number anywhere still has its row, every cell empty.
    let sc = rows
        .iter()
        .find(|r| r.name.ends_with("self-contradiction"))
        .unwrap();
    assert!(sc.dims.iter().all(Option::is_none));
}
