//! A lane added in one file (issue 42): a test-only records lane that counts the words of each
//! reply, with a table of its own. Its table is described here (columns, key, forward rule) and
//! made on both stores from the description; its record is converted once, by column name; its
//! unit of work is the only code of its own (the lock, call slots, counts, saving held while
//! the store cannot save, cancel and pushing to a shared store come with `engine::records`).
//! Run on a SQLite store, then through a shared store: every record is on PostgreSQL as it is
//! saved, row for row the same as this machine's.

mod common;

use std::path::Path;
use std::sync::Arc;

use common::{mock, pg::Pg};
use prism::engine::records::{Cx, RecordEvent, Unit};
use prism::engine::{Caller, Lane};
use prism::provider::{ChatRequest, Message, ModelConfig};
use prism::store::Db;
use prism::store::lane_tables::{Col, Row, Table, Val};
use prism::store::record::{Fields, Record, int, text};

static WORDS: Table = Table {
    name: "test_word_counts",
    cols: &[
        ("prompt", Col::Text),
        ("model", Col::Text),
        ("words", Col::Int),
        ("reply", Col::Text),
        ("error", Col::Text),
        ("created_at", Col::Int),
    ],
    key: 2,
    behind: "test_word_counts.words IS NULL AND excluded.words IS NOT NULL",
    run_col: None,
    changes: true,
};

#[derive(Debug, Clone, PartialEq)]
struct WordCount {
    prompt: String,
    model: String,
    words: Option<i64>,
    reply: Option<String>,
    error: Option<String>,
    created_at: i64,
}

impl Record for WordCount {
    fn table() -> &'static Table {
        &WORDS
    }

    fn fields(&self) -> Vec<(&'static str, Val)> {
        vec![
            ("prompt", text(Some(&self.prompt))),
            ("model", text(Some(&self.model))),
            ("words", self.words.map_or(Val::Null, int)),
            ("reply", text(self.reply.as_deref())),
            ("error", text(self.error.as_deref())),
            ("created_at", int(self.created_at)),
        ]
    }

    fn from_fields(f: &Fields<'_>) -> prism::store::Result<Self> {
        Ok(WordCount {
            prompt: f.text("prompt")?,
            model: f.text("model")?,
            words: f.opt_int("words"),
            reply: f.opt_text("reply"),
            error: f.opt_text("error"),
            created_at: f.int("created_at")?,
        })
    }
}

/// The lane's unit: one prompt asked of one model, its reply's words counted.
struct Count {
    caller: Arc<Caller>,
}

impl Unit for Count {
    type Todo = String;
    type Record = WordCount;
    type Outcome = ();
    const WHAT: &'static str = "word count";

    async fn work(self: Arc<Self>, prompt: String, cx: Cx<Self>) -> Option<()> {
        let slot = cx.slot().await?;
        let req = ChatRequest {
            messages: vec![Message::user(&prompt)],
            params: Default::default(),
        };
        let got = self.caller.complete(&req, 0).await;
        drop(slot);
        let (words, reply, error) = match got {
            Ok(r) => (
                Some(r.text.split_whitespace().count() as i64),
                Some(r.text),
                None,
            ),
            Err(e) => (None, None, Some(e)),
        };
        let rec = cx
            .save(WordCount {
                prompt,
                model: self.caller.cfg.name.clone(),
                words,
                reply,
                error,
                created_at: 0,
            })
            .await?;
        cx.count(rec.error.is_none(), false);
        Some(())
    }
}

fn model(m: &mock::Mock) -> ModelConfig {
    toml::from_str(&format!(
        "name = \"echo\"\nprovider = \"openai\"\nbase_url = \"{}/v1\"\nmodel = \"echo\"",
        m.url()
    ))
    .unwrap()
}

/// Runs the lane on `db` over `prompts`; the records it saved, as this machine's store has
/// them.
fn run_lane(db: &Db, m: &mock::Mock, prompts: &[&str]) -> Vec<Row> {
    db.ensure_table(&WORDS).unwrap();
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let handle = db.records_handle("test-words", "word count(s)").unwrap();
        let factory = prism::engine::http_backends();
        let cancel = tokio_util::sync::CancellationToken::new();
        let caller =
            Arc::new(Caller::new(&model(m), &factory, None, false, cancel.clone()).unwrap());
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let lane = Lane {
            store: handle,
            factory,
            events: tx,
            cancel,
        };
        let todo = prompts.iter().map(|p| p.to_string()).collect();
        let ran =
            prism::engine::records::run(lane, 4, "test-words", Arc::new(Count { caller }), todo);
        let heard = async move {
            let mut n = 0;
            while let Some(ev) = rx.recv().await {
                if matches!(ev, RecordEvent::Saved(_)) {
                    n += 1;
                }
            }
            n
        };
        let (counts, heard) = tokio::join!(ran, heard);
        let counts = counts.unwrap();
        assert_eq!(counts.done, prompts.len());
        assert_eq!(heard, prompts.len(), "every record heard as it was saved");
    });
    db.finish().unwrap();
    db.read().unwrap().lane_rows(&WORDS, None).unwrap()
}

#[test]
fn a_lane_of_its_own_on_both_backends() {
    let m = mock::start_background();
    let prompts = ["one two three", "four five", "six"];
    // On a SQLite store.
    let dir = tempfile::tempdir().unwrap();
    let local = Db::open(None, &dir.path().join("a.db")).unwrap();
    let rows = run_lane(&local, &m, &prompts);
    assert_eq!(rows.len(), 3);
    let recs: Vec<WordCount> = rows
        .iter()
        .map(|r| WordCount::from_row(r).unwrap())
        .collect();
    for r in &recs {
        // The mock echoes `ANSWER(<prompt>)`: one word more than the prompt's... or the same.
        assert!(r.words.is_some_and(|w| w >= 1), "{r:?}");
        assert_eq!(
            r.to_row(),
            WordCount::from_row(&r.to_row()).unwrap().to_row()
        );
    }
    // Through a shared store: the same rows there, pushed as they were saved.
    let pg = Pg::start();
    let url = pg.url();
    let shared = Db::open(Some(Path::new(&url)), &dir.path().join("b.db")).unwrap();
    let here = run_lane(&shared, &m, &prompts);
    assert_eq!(here, rows, "the same lane, the same rows");
    let mut c = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    let there: Vec<(String, String, Option<i64>)> = c
        .query(
            "SELECT prompt, model, words FROM test_word_counts ORDER BY prompt, model",
            &[],
        )
        .unwrap()
        .iter()
        .map(|r| (r.get(0), r.get(1), r.get(2)))
        .collect();
    let mine: Vec<(String, String, Option<i64>)> = recs
        .iter()
        .map(|r| (r.prompt.clone(), r.model.clone(), r.words))
        .collect();
    assert_eq!(there, mine, "row for row on PostgreSQL");
    // The table was made from its description, key and change number included.
    let cols: i64 = c
        .query_one(
            "SELECT count(*) FROM information_schema.columns WHERE table_name = 'test_word_counts'",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(cols, WORDS.cols.len() as i64 + 1);
}
