//! `prism labels`: people's verdicts on answers (add, list, export, import), and `prism judges`:
//! how far each LLM judge agrees with those labels, with the other judges and with itself, and
//! how much of each model's rates the choice of judge moves (`review::judges`).

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use clap::{Args, Subcommand};

use crate::config::{Config, Dirs};
use crate::review::calibration::Floor;
use crate::review::judges::{self, By, Options, Trial};
use crate::sentences::labels::{Grade, SentenceLabel};
use crate::store::{AnswerLabel, Label, now_millis};
use crate::taxonomy::Dimension;

#[derive(Debug, Args)]
pub struct LabelsArgs {
    #[command(subcommand)]
    pub what: LabelsCommand,
    /// The store (default: prism.db in the data dir), or a shared store (postgres://...):
    /// labels go there at once, for every reviewer's screen.
    #[arg(long, global = true)]
    pub db: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
pub enum LabelsCommand {
    /// Label one answer (RUN and its job number, as `prism export` and the TUI show them):
    /// hallucinated, correct or cant_tell. A new label never replaces an old one; your
    /// newest counts.
    Add {
        run: String,
        job: u32,
        /// hallucinated (h), correct (c) or cant_tell (?); withdrawn takes your label back
        /// (you have no label on the answer then; the earlier ones are kept).
        label: String,
        #[arg(long, default_value = "")]
        note: String,
        /// Your name (default: `reviewer` in config.toml, else your login name).
        #[arg(long)]
        reviewer: Option<String>,
    },
    /// Every label, oldest first (of one run with --run).
    List {
        #[arg(long)]
        run: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// Labels as JSON lines (`{"uid", "run", "job", "item_id", "model", "reviewer", "label",
    /// "note", "created_at"}`) on stdout or into --out; a label on a sentence also has
    /// `"sentence"` (its index in the answer), `"start"`, `"end"` (its bytes) and `"text"`, and
    /// its label is accurate, minor_inaccurate or major_inaccurate.
    Export {
        #[arg(long)]
        run: Option<String>,
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Labels from JSON lines (as `export` writes them; a line without a uid gets one made
    /// from what it says, a line without a time gets now). A label already here (its uid) is not added twice; a
    /// bad line is named `file:line: field: reason` and the rest still load.
    Import { file: PathBuf },
}

pub(crate) fn labels(args: LabelsArgs, dirs: &Dirs) -> anyhow::Result<i32> {
    let db = super::lane_flags::synced(args.db.as_ref(), dirs)?;
    match args.what {
        LabelsCommand::Add {
            run,
            job,
            label,
            note,
            reviewer,
        } => {
            let Some(l) = Label::parse(&label) else {
                bail!(
                    "label {label:?}: write hallucinated (h), correct (c), cant_tell (?) or withdrawn"
                );
            };
            let chars = note.chars().count();
            if chars > MAX_NOTE_CHARS {
                bail!("--note: {chars} characters (a note is at most {MAX_NOTE_CHARS})");
            }
            let store = db.read_existing("run prism run first")?;
            let Some(answer) = store.response(&run, job)? else {
                bail!(
                    "no answer {job} in run {} of {}",
                    crate::text::one_line(&run),
                    db.shown()
                );
            };
            let (config, _) = Config::load(&dirs.config_file());
            let reviewer = reviewer
                .or(config.reviewer)
                .unwrap_or_else(crate::review::load::default_reviewer);
            let at = now_millis();
            let rec = AnswerLabel {
                uid: AnswerLabel::new_uid(&reviewer, at),
                run_id: run,
                job_idx: job,
                item_id: answer.item_id,
                model: answer.model,
                reviewer,
                label: l,
                note,
                created_at: at,
            };
            db.add_labels(std::slice::from_ref(&rec))?;
            crate::say!(
                "{} labelled answer {} of run {} ({} on {}) {}",
                crate::text::one_line(&rec.reviewer),
                rec.job_idx,
                crate::text::one_line(&rec.run_id),
                crate::text::one_line(&rec.model),
                crate::text::one_line(&rec.item_id),
                rec.label.as_str()
            );
            Ok(0)
        }
        LabelsCommand::List { run, json } => list_labels(&db, run.as_deref(), json),
        LabelsCommand::Export { run, out } => {
            let store = db.read()?;
            let labels = store.answer_labels(run.as_deref())?;
            let sentences: Vec<SentenceLabel> =
                store.records_where(run.as_deref().map(|r| ("run_id", r)))?;
            let mut body = String::new();
            for l in &labels {
                body.push_str(&serde_json::to_string(l)?);
                body.push('\n');
            }
            for l in &sentences {
                body.push_str(&serde_json::to_string(l)?);
                body.push('\n');
            }
            match out {
                Some(p) => {
                    std::fs::write(&p, body).with_context(|| format!("writing {}", p.display()))?;
                    crate::warn!(
                        "{} label(s) on answers and {} on sentences written to {}",
                        labels.len(),
                        sentences.len(),
                        p.display()
                    );
                }
                None => std::io::stdout().lock().write_all(body.as_bytes())?,
            }
            Ok(0)
        }
        LabelsCommand::Import { file } => import_labels(&db, &file),
    }
}

/// `prism labels list`: people's labels on answers, then on sentences, oldest first.
fn list_labels(db: &crate::store::Db, run: Option<&str>, json: bool) -> anyhow::Result<i32> {
    let labels = db.read()?.answer_labels(run)?;
    for l in &labels {
        if json {
            crate::outln!(
                "{}",
                crate::text::json_for_terminal(&serde_json::to_string(l)?)
            );
        } else {
            crate::outln!(
                "{}",
                crate::text::sanitize(&format!(
                    "{} {:>5} {:<14} {:<12} {:<12} {}{}",
                    crate::store::format_time(l.created_at.div_euclid(1000)),
                    l.job_idx,
                    crate::text::one_line(&l.item_id),
                    crate::text::one_line(&l.model),
                    crate::text::one_line(&l.reviewer),
                    l.label.as_str(),
                    if l.note.is_empty() {
                        String::new()
                    } else {
                        format!("  {}", crate::text::one_line(&l.note))
                    }
                ))
            );
        }
    }
    let mut sentences: Vec<SentenceLabel> = db.read()?.records_where(run.map(|r| ("run_id", r)))?;
    sentences.sort_by(|a, b| (a.created_at, &a.uid).cmp(&(b.created_at, &b.uid)));
    for l in &sentences {
        let line = if json {
            crate::text::json_for_terminal(&serde_json::to_string(l)?).into_owned()
        } else {
            crate::text::sanitize(&format!(
                "{} {:>5} {:<14} {:<12} {:<12} sentence {} {}: {}",
                crate::store::format_time(l.created_at.div_euclid(1000)),
                l.job_idx,
                crate::text::one_line(&l.item_id),
                crate::text::one_line(&l.model),
                crate::text::one_line(&l.reviewer),
                l.sentence + 1,
                l.label.as_str(),
                crate::text::one_line(&l.text),
            ))
            .into_owned()
        };
        crate::outln!("{line}");
    }
    if labels.is_empty() && sentences.is_empty() {
        crate::warn!("no labels yet: prism labels add RUN JOB LABEL, or `L` in the TUI");
    }
    Ok(0)
}

/// Labels saved per batch while a file is read: memory stays bounded whatever the file's size.
const LABEL_BATCH: usize = 5_000;
/// The longest line of a labels file read (a label is a few hundred bytes).
const MAX_LABEL_LINE: usize = 1 << 20;
/// The longest note kept with a label, in characters.
pub(crate) const MAX_NOTE_CHARS: usize = 10_000;
/// Problems named one by one; past this many they are counted.
const PROBLEMS_NAMED: usize = 200;

/// `prism labels import FILE`: read a line at a time (at most [`MAX_LABEL_LINE`] bytes each,
/// [`MAX_NOTE_CHARS`] of note), matched to the answers and saved [`LABEL_BATCH`] at a time.
fn import_labels(db: &crate::store::Db, file: &Path) -> anyhow::Result<i32> {
    let meta = std::fs::metadata(file).with_context(|| format!("opening {}", file.display()))?;
    if !meta.is_file() {
        bail!(
            "{}: not a regular file (a FIFO, a device or a directory): labels are read from a file",
            file.display()
        );
    }
    let f = std::fs::File::open(file).with_context(|| format!("opening {}", file.display()))?;
    let mut problems = Problems::default();
    let (mut read, mut kept, mut added, mut elsewhere) = (0usize, 0usize, 0usize, 0usize);
    let mut batch: Vec<LabelAt> = Vec::new();
    let mut save = |batch: &mut Vec<LabelAt>, problems: &mut Problems| -> anyhow::Result<()> {
        let labels = match_answers(db, std::mem::take(batch), problems, &mut elsewhere)?;
        kept += labels.len();
        let (answers, sentences): (Vec<_>, Vec<_>) =
            labels.into_iter().partition(|l| l.1.is_none());
        let answers: Vec<AnswerLabel> = answers.into_iter().map(|l| l.0).collect();
        let sentences: Vec<SentenceLabel> = sentences
            .into_iter()
            .filter_map(|(l, p)| Some(p?.label(l)))
            .collect();
        added += db.add_labels(&answers)? + db.add_labels(&sentences)?;
        Ok(())
    };
    let mut lines =
        crate::dataset::lines::LineReader::new(std::io::BufReader::new(f), MAX_LABEL_LINE);
    loop {
        let (n, line) = match lines.next_line() {
            Ok(Some(x)) => x,
            Ok(None) => break,
            Err(e) => {
                problems.push(format!("{}: read error: {e}", file.display()));
                break;
            }
        };
        let at = format!("{}:{n}", file.display());
        let text = match line {
            crate::dataset::lines::Line::Text(t) => match std::str::from_utf8(t) {
                Ok(t) => t,
                Err(_) => {
                    read += 1;
                    problems.push(format!("{at}: not UTF-8"));
                    continue;
                }
            },
            crate::dataset::lines::Line::TooLong(len) => {
                read += 1;
                problems.push(format!(
                    "{at}: a line of {len} bytes (a label's is at most {MAX_LABEL_LINE})"
                ));
                continue;
            }
        };
        if text.trim().is_empty() {
            continue;
        }
        read += 1;
        match label_of_line(text) {
            Ok((l, sentence)) => batch.push((at, l, sentence)),
            Err(why) => problems.push(format!("{at}: {why}")),
        }
        if batch.len() >= LABEL_BATCH {
            save(&mut batch, &mut problems)?;
        }
    }
    save(&mut batch, &mut problems)?;
    problems.say();
    if elsewhere > 0 {
        crate::warn!(
            "{}: {elsewhere} label(s) name a run this store does not hold: kept as written (the run may arrive from a shared store)",
            file.display()
        );
    }
    crate::warn!(
        "{}: {read} label(s) read, {added} new, {} already here{}",
        file.display(),
        kept - added,
        if problems.count == 0 {
            String::new()
        } else {
            format!(", {} line(s) left out", problems.count)
        }
    );
    Ok(i32::from(problems.count > 0))
}

/// What went wrong with a file's lines: the first [`PROBLEMS_NAMED`] named, all counted.
#[derive(Default)]
struct Problems {
    named: Vec<String>,
    count: usize,
}

impl Problems {
    fn push(&mut self, p: String) {
        self.count += 1;
        if self.named.len() < PROBLEMS_NAMED {
            self.named.push(p);
        }
    }

    fn say(&self) {
        for p in &self.named {
            crate::warn!("{p}");
        }
        if self.count > self.named.len() {
            crate::warn!("... and {} more", self.count - self.named.len());
        }
    }
}

/// Labels set beside the answers they name: a label on an answer this store holds takes its
/// item and model from the answer (a file's lines may leave them out), and one that names
/// another item or model than the answer is left out, named: it was made on another store's
/// run of the same id, and counting it would put a verdict on the wrong answer. A label on a
/// job its run does not have is left out, named. Labels on runs this store does not hold are
/// kept as written (a run can arrive after its labels) and counted in `elsewhere`.
fn match_answers(
    db: &crate::store::Db,
    labels: Vec<LabelAt>,
    problems: &mut Problems,
    elsewhere: &mut usize,
) -> anyhow::Result<Vec<(AnswerLabel, Option<SentencePart>)>> {
    let store = db.read()?;
    let mut out = Vec::with_capacity(labels.len());
    let mut runs: HashMap<String, bool> = HashMap::new();
    for (at, mut l, mut part) in labels {
        let Some(answer) = store.response(&l.run_id, l.job_idx)? else {
            let held = match runs.get(&l.run_id) {
                Some(h) => *h,
                None => {
                    let h = store.run(&l.run_id)?.is_some();
                    runs.insert(l.run_id.clone(), h);
                    h
                }
            };
            if held {
                problems.push(format!(
                    "{at}: job: run {} has no answer {}",
                    crate::text::one_line(&l.run_id),
                    l.job_idx
                ));
            } else {
                *elsewhere += 1;
                out.push((l, part));
            }
            continue;
        };
        // A sentence's span must lie in the answer; its text, when left out, is taken from it.
        if let Some(p) = &mut part {
            let text = answer.text.as_deref().unwrap_or_default();
            match text.get(p.start as usize..p.end as usize) {
                Some(t) if p.text.is_empty() => p.text = t.to_string(),
                Some(_) => {}
                None => {
                    problems.push(format!(
                        "{at}: end: bytes {}..{} are not a span of answer {} of run {} ({} bytes)",
                        p.start,
                        p.end,
                        l.job_idx,
                        crate::text::one_line(&l.run_id),
                        text.len()
                    ));
                    continue;
                }
            }
        }
        let mut clash = None;
        for (field, said, held) in [
            ("item_id", &mut l.item_id, answer.item_id),
            ("model", &mut l.model, answer.model),
        ] {
            if said.is_empty() {
                *said = held;
            } else if *said != held && clash.is_none() {
                clash = Some(format!(
                    "{at}: {field}: says {:?}, but answer {} of run {} is {:?}",
                    crate::text::one_line(said),
                    l.job_idx,
                    crate::text::one_line(&l.run_id),
                    crate::text::one_line(&held)
                ));
            }
        }
        match clash {
            Some(why) => problems.push(why),
            None => out.push((l, part)),
        }
    }
    Ok(out)
}

/// A label read from a file, with the `file:line` it was read from. A label on a sentence is
/// read as one on its answer (checked against the answer the same way) with its sentence part.
type LabelAt = (String, AnswerLabel, Option<SentencePart>);

/// What a label on a sentence says beyond its answer.
#[derive(Debug, Clone)]
struct SentencePart {
    sentence: u32,
    start: u32,
    end: u32,
    text: String,
    grade: Grade,
}

impl SentencePart {
    fn of(o: &serde_json::Map<String, serde_json::Value>) -> Result<Option<SentencePart>, String> {
        let Some(v) = o.get("sentence") else {
            return Ok(None);
        };
        let num = |k: &str, v: Option<&serde_json::Value>| {
            v.and_then(serde_json::Value::as_u64)
                .and_then(|j| u32::try_from(j).ok())
                .ok_or(format!("{k}: missing or not a whole number"))
        };
        let sentence = num("sentence", Some(v))?;
        let (start, end) = (num("start", o.get("start"))?, num("end", o.get("end"))?);
        if end < start {
            return Err(format!("end: {end} is before start {start}"));
        }
        let label = o.get("label").and_then(|v| v.as_str()).unwrap_or_default();
        let grade = Grade::parse(label).ok_or_else(|| {
            format!(
                "label: {:?} is not accurate, minor_inaccurate, major_inaccurate or withdrawn (a sentence's grade)",
                crate::text::one_line(label)
            )
        })?;
        let text = o.get("text").and_then(|v| v.as_str()).unwrap_or_default();
        Ok(Some(SentencePart {
            sentence,
            start,
            end,
            text: text.to_string(),
            grade,
        }))
    }

    /// The sentence label, on the answer `l` was matched to.
    fn label(self, l: AnswerLabel) -> SentenceLabel {
        SentenceLabel {
            uid: l.uid,
            run_id: l.run_id,
            job_idx: l.job_idx,
            item_id: l.item_id,
            model: l.model,
            sentence: self.sentence,
            start: self.start,
            end: self.end,
            text: self.text,
            reviewer: l.reviewer,
            label: self.grade,
            note: l.note,
            created_at: l.created_at,
        }
    }
}

fn label_of_line(line: &str) -> Result<(AnswerLabel, Option<SentencePart>), String> {
    let v: serde_json::Value = serde_json::from_str(line).map_err(|e| format!("not JSON: {e}"))?;
    let Some(o) = v.as_object() else {
        return Err("not a JSON object".into());
    };
    let sentence = SentencePart::of(o)?;
    let text = |k: &str| -> Result<String, String> {
        match o.get(k) {
            Some(serde_json::Value::String(s)) if !s.trim().is_empty() => Ok(s.clone()),
            Some(serde_json::Value::String(_)) => Err(format!("{k}: empty")),
            Some(_) => Err(format!("{k}: not a string")),
            None => Err(format!("{k}: missing")),
        }
    };
    let opt = |k: &str| o.get(k).and_then(|v| v.as_str()).map(str::to_string);
    let label = text("label")?;
    // A sentence's grade was read with its part; the answer's label is not used for it.
    let label = if sentence.is_some() {
        Ok(Label::CantTell)
    } else {
        Label::parse(&label).ok_or(())
    }
    .map_err(|()| {
        format!(
            "label: {:?} is not hallucinated, correct, cant_tell or withdrawn",
            crate::text::one_line(&label)
        )
    })?;
    let job = o
        .get("job")
        .and_then(serde_json::Value::as_u64)
        .and_then(|j| u32::try_from(j).ok())
        .ok_or("job: missing or not a job number")?;
    let created_at = match o.get("created_at") {
        None | Some(serde_json::Value::Null) => now_millis(),
        Some(v) => v
            .as_i64()
            .ok_or("created_at: not milliseconds since 1970")?,
    };
    let reviewer = text("reviewer")?;
    let run = text("run")?;
    let note = opt("note").unwrap_or_default();
    let chars = note.chars().count();
    if chars > MAX_NOTE_CHARS {
        return Err(format!(
            "note: {chars} characters (a note is at most {MAX_NOTE_CHARS})"
        ));
    }
    // A line without a uid gets one made from what it says, so importing the same file twice
    // adds nothing twice.
    let uid = opt("uid")
        .filter(|u| !u.trim().is_empty())
        .unwrap_or_else(|| {
            use sha2::{Digest, Sha256};
            let mut h = Sha256::new();
            let sentence_at = sentence
                .as_ref()
                .map(|p| format!("{} {} {} {}", p.sentence, p.start, p.end, p.grade.as_str()))
                .unwrap_or_default();
            for part in [
                run.as_str(),
                &job.to_string(),
                &sentence_at,
                &reviewer,
                label.as_str(),
                &note,
                &o.get("created_at")
                    .map(|v| v.to_string())
                    .unwrap_or_default(),
            ] {
                h.update(part.as_bytes());
                h.update([0]);
            }
            let hex: String = h.finalize()[..8]
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect();
            format!("{}-imported-{hex}", crate::text::one_line(&reviewer))
        });
    Ok((
        AnswerLabel {
            uid,
            run_id: run,
            job_idx: job,
            item_id: opt("item_id").unwrap_or_default(),
            model: opt("model").unwrap_or_default(),
            reviewer,
            label,
            note,
            created_at,
        },
        sentence,
    ))
}

#[derive(Debug, Args)]
pub struct JudgesArgs {
    /// The run whose judges to try (default: every run's judged answers).
    pub run: Option<String>,
    /// Rows per evaluator (the default), dimension or sub-task, after the row of all answers.
    #[arg(long, value_enum, default_value_t = By::Evaluator)]
    pub by: By,
    /// Below this many answers both a judge and people decided, a cell says "too few".
    #[arg(long, default_value_t = 10)]
    pub min_labels: usize,
    /// Bootstrap resamples for the 95% intervals.
    #[arg(long, default_value_t = 1000)]
    pub resamples: usize,
    /// The bootstrap's seed (the same seed, the same intervals).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// The store (default: prism.db in the data dir), or a shared store (postgres://...), read
    /// through this machine's copy.
    #[arg(long)]
    pub db: Option<PathBuf>,
    /// The whole trial as one JSON object on stdout.
    #[arg(long)]
    pub json: bool,
    /// Read the semantic-equivalence judge's stored replies as PRISM does (`YES` anywhere:
    /// the scores as they stand) or strictly (exactly one of yes / no; a reply holding both,
    /// neither, or a YES only inside a word decides nothing). No judge is asked again: run it
    /// both ways to see which reading agrees with people.
    #[arg(long, value_enum, default_value_t = crate::eval::judge::Reading::Prism)]
    pub reading: crate::eval::judge::Reading,
    /// Save each judge's numbers against people (per row, with intervals) as its calibration,
    /// bound to what the judge is: its endpoint, model id, the judge templates' text, its
    /// temperature and repeats. `prism gate` trusts a judge's rows only while it is current.
    #[arg(long)]
    pub save_calibration: bool,
    /// The floor a calibration must clear to be trusted: kappa and Gwet's AC1 at least this...
    #[arg(long, default_value_t = 0.6, value_name = "AGREEMENT")]
    pub judge_floor: f64,
    /// ... on at least this many labelled answers.
    #[arg(long, default_value_t = 50, value_name = "N")]
    pub judge_floor_labels: usize,
    /// First ask --judge with this wording of a PRISM judge (`[JUDGE=]FILE`, as `prism score
    /// --judge-template`), and with the dataset's own, on every labelled answer a judge
    /// decides; then compare the wordings on the same answers. Give it twice for two
    /// wordings. Scores stay as they are; verdicts are kept as `<model>~<file stem>`.
    #[arg(long, value_name = "[JUDGE=]FILE", requires = "judge")]
    pub try_template: Vec<String>,
    /// The judge model --try-template asks (a name from the models file).
    #[arg(long, value_name = "MODEL")]
    pub judge: Option<String>,
    /// With --try-template: ask each wording this many times per answer.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=20))]
    pub judge_repeats: u32,
}

pub(crate) fn judges_cmd(
    args: JudgesArgs,
    dirs: &Dirs,
    factory: crate::engine::BackendFactory,
) -> anyhow::Result<i32> {
    let db = super::lane_flags::synced(args.db.as_ref(), dirs)?;
    if let Some(judge) = args
        .judge
        .as_deref()
        .filter(|_| !args.try_template.is_empty())
    {
        let run = args.run.as_deref();
        let (files, n) = (&args.try_template, args.judge_repeats);
        super::judge_templates::try_templates(&db, run, judge, files, n, dirs, &factory)?;
    }
    db.read_existing("run prism run and prism score --judge first")?;
    let trial = try_judges(&db, args.run.as_deref(), &args)?;
    if trial.judges.is_empty() {
        crate::warn!(
            "no judge's verdict is stored{}: score with one or more judges first (prism score --judge a,b --judge-repeats 3)",
            args.run
                .as_deref()
                .map(|r| format!(" for run {}", crate::text::one_line(r)))
                .unwrap_or_default()
        );
        return Ok(0);
    }
    let (standings, floor) = calibrate(&db, &trial, &args, dirs)?;
    if args.json {
        let mut v = serde_json::to_value(&trial)?;
        v["calibration"] = serde_json::to_value(
            standings
                .iter()
                .map(|(j, s)| serde_json::json!({"judge": j, "standing": s, "says": s.say()}))
                .collect::<Vec<_>>(),
        )?;
        crate::outln!(
            "{}",
            crate::text::json_for_terminal(&serde_json::to_string_pretty(&v)?)
        );
    } else {
        let mut s = text(&trial, &args);
        s.push_str(&super::judge_templates::text(&trial.templates));
        s.push_str(&super::calibration::text(&standings, &floor));
        crate::outp!("{}", crate::text::sanitize(&s));
    }
    Ok(0)
}

/// Saves the calibrations when asked, and says how each judge stands.
fn calibrate(
    db: &crate::store::Db,
    trial: &Trial,
    args: &JudgesArgs,
    dirs: &Dirs,
) -> anyhow::Result<(Vec<(String, crate::review::calibration::Standing)>, Floor)> {
    let store = db.read()?;
    let verdicts = store.judge_verdicts(args.run.as_deref())?;
    let models = super::run::load_models(dirs, None)
        .map(|f| f.models)
        .unwrap_or_default();
    let first = match args.run.as_deref() {
        Some(r) => store.run(r)?,
        None => store.runs()?.into_iter().next(),
    };
    let ds =
        first.and_then(|r| super::run::open_dataset(super::run::dataset_path(&r.dataset)).ok());
    let now = super::calibration::identities(
        trial,
        &verdicts,
        &models,
        ds.as_ref().map(|(d, _)| d.as_ref()),
        &store.records_where(None)?,
    );
    let floor = Floor {
        kappa: args.judge_floor,
        ac1: args.judge_floor,
        labels: args.judge_floor_labels,
    };
    if args.save_calibration {
        let mut reviewers: Vec<String> = store
            .answer_labels(args.run.as_deref())?
            .into_iter()
            .map(|l| l.reviewer)
            .collect();
        reviewers.sort();
        reviewers.dedup();
        let n = super::calibration::save(db, trial, &now, &reviewers)?;
        crate::warn!("saved {n} calibration(s) (a judge and row each)");
    }
    Ok((
        super::calibration::standings(db, trial, &now, &floor)?,
        floor,
    ))
}

/// The trial of a store's judges (of one run's, when given).
pub(crate) fn try_judges(
    db: &crate::store::Db,
    run: Option<&str>,
    args: &JudgesArgs,
) -> anyhow::Result<Trial> {
    let store = db.read()?;
    if let Some(r) = run
        && store.run(r)?.is_none()
    {
        bail!("no run {} in the store", crate::text::one_line(r));
    }
    // The catalogue of the first run's dataset (its tasks per dimension), as `prism score`
    // reads rates; without it the tasks present count as all.
    let first = match run {
        Some(r) => store.run(r)?,
        None => store.runs()?.into_iter().next(),
    };
    let cat = first
        .and_then(|r| super::run::open_dataset(super::run::dataset_path(&r.dataset)).ok())
        .map(|(d, _)| crate::eval::summary::Catalogue::of(&d))
        .unwrap_or_default();
    Ok(judges::of_store(
        db,
        run,
        &cat,
        &Options {
            by: args.by,
            min_labels: args.min_labels,
            resamples: args.resamples,
            seed: args.seed,
            reading: args.reading,
        },
    )?)
}

fn num(v: Option<f64>, places: usize) -> String {
    v.map_or("-".into(), |v| crate::text::fixed(v, places))
}

fn interval(e: &judges::Est) -> String {
    match (e.low, e.high) {
        (Some(a), Some(b)) => format!(
            "[{}, {}]",
            crate::text::fixed(a, 2),
            crate::text::fixed(b, 2)
        ),
        _ => String::new(),
    }
}

/// The terminal report: against people, among judges, within each judge, and what the choice
/// of judge moves.
pub(crate) fn text(t: &Trial, args: &JudgesArgs) -> String {
    let mut s = format!(
        "judges: {} · people decided {} answer(s) ({} can't tell, {} split evenly) · 95% bootstrap intervals ({} resamples, seed {})\n",
        t.judges.join(", "),
        t.people.decided,
        t.people.cant_tell,
        t.people.split,
        args.resamples,
        args.seed
    );
    s.push_str(&format!(
        "\nagainst people (hallucinated: a score below 0.5; n = answers both decided; J:C P:H = the judge \
         says correct where people say hallucinated, a hallucination it let pass; J:H P:C the reverse; \
         base = the share people call hallucinated, const = what always saying the commoner verdict scores; \
         kappa: 0 chance, 1 perfect, and it collapses on one-sided labels, where Gwet's AC1 and PABAK hold up)\n{:<28} {:<14} {:>4}  {:>5} {:<14} {:>5} {:>5} {:>6} {:<16} {:>5} {:>6} {:>6} {:>6}\n",
        "rows", "judge", "n", "acc", "", "base", "const", "kappa", "", "AC1", "PABAK", "J:C P:H", "J:H P:C"
    ));
    for g in &t.groups {
        for v in &g.vs_people {
            let head = format!(
                "{:<28} {:<14} {:>4}  ",
                cut(&g.name, 28),
                cut(&v.judge, 14),
                v.n
            );
            if v.too_few {
                s.push_str(&format!(
                    "{head}too few labels (fewer than {}; label more: L in the TUI)\n",
                    t.min_labels
                ));
                continue;
            }
            s.push_str(&format!(
                "{head}{:>5} {:<14} {:>5} {:>5} {:>6} {:<16} {:>5} {:>6} {:>6} {:>6}\n",
                num(v.accuracy.value, 2),
                interval(&v.accuracy),
                num(v.base_rate, 2),
                num(v.constant_accuracy, 2),
                num(v.kappa.value, 2),
                interval(&v.kappa),
                num(v.ac1.value, 2),
                num(v.pabak.value, 2),
                v.judge_correct_people_hallucinated,
                v.judge_hallucinated_people_correct
            ));
        }
    }
    if t.judges.len() > 1 {
        s.push_str(&format!(
            "\namong judges (answers at least two decided)\n{:<28} {:>5} {:>8} {:>8}\n",
            "rows", "n", "Fleiss", "alpha"
        ));
        for g in &t.groups {
            s.push_str(&format!(
                "{:<28} {:>5} {:>8} {:>8}\n",
                cut(&g.name, 28),
                g.among.n,
                num(g.among.fleiss_kappa, 2),
                num(g.among.krippendorff_alpha, 2)
            ));
        }
    }
    if t.groups[0].flips.iter().any(|f| f.n > 0) {
        s.push_str(&format!(
            "\nwithin a judge, asked again (answers with two or more readable verdicts)\n{:<28} {:<14} {:>5} {:>8} {:>7}\n",
            "rows", "judge", "n", "flipped", "share"
        ));
        for g in &t.groups {
            for f in g.flips.iter().filter(|f| f.n > 0) {
                s.push_str(&format!(
                    "{:<28} {:<14} {:>5} {:>8} {:>7}\n",
                    cut(&g.name, 28),
                    cut(&f.judge, 14),
                    f.n,
                    f.flipped,
                    f.share.map_or("-".into(), |x| format!(
                        "{}%",
                        crate::text::fixed(100.0 * x, 0)
                    ))
                ));
            }
        }
    }
    s.push_str(&replies_text(t));
    s.push_str(&readings_text(t));
    s
}

/// The equivalence judge's replies that say two things or none, per judge, and what reading
/// them strictly changes.
fn replies_text(t: &Trial) -> String {
    let odd: Vec<&judges::Replies> = t
        .replies
        .iter()
        .filter(|r| r.both + r.neither + r.yes_inside_word > 0)
        .collect();
    let mut s = format!(
        "
equivalence replies (read {}: {})
",
        t.reading.as_str(),
        match t.reading {
            crate::eval::judge::Reading::Prism =>
                "YES anywhere means the same meaning, as PRISM scores; --reading strict for the other",
            crate::eval::judge::Reading::Strict =>
                "exactly one of yes / no, else no verdict; the stored scores read them as PRISM does",
        }
    );
    if odd.is_empty() {
        s.push_str(
            "every reply says one of yes / no
",
        );
        return s;
    }
    s.push_str(&format!(
        "{:<14} {:>6} {:>6} {:>8} {:>12} {:>15}
",
        "judge", "read", "both", "neither", "YES in word", "strict differs"
    ));
    for r in odd {
        s.push_str(&format!(
            "{:<14} {:>6} {:>6} {:>8} {:>12} {:>15}
",
            cut(&r.judge, 14),
            r.read,
            r.both,
            r.neither,
            r.yes_inside_word,
            r.strict_differs
        ));
    }
    s
}

/// Each model's rates as stored and under each judge alone.
fn readings_text(t: &Trial) -> String {
    let mut s = format!(
        "\nrates under each judge (stored: the scores as they stand; * partial: a judge left some answers unscored)\n{:<16} {:<16} {:>7} {:>7} {:>7} {:>7} {:>8}\n",
        "model", "under", "KE", "KM", "RE", "IFE", "H-Score"
    );
    for m in &t.models {
        for r in &m.readings {
            let rates: Vec<String> = Dimension::ALL
                .iter()
                .map(|d| match r.rates[d.index()] {
                    Some((v, full)) => {
                        format!(
                            "{}{}",
                            crate::text::fixed(v, 1),
                            if full { "" } else { "*" }
                        )
                    }
                    None => "-".into(),
                })
                .collect();
            s.push_str(&format!(
                "{:<16} {:<16} {:>7} {:>7} {:>7} {:>7} {:>8}{}\n",
                cut(&m.model, 16),
                cut(&r.under, 16),
                rates[0],
                rates[1],
                rates[2],
                rates[3],
                num(r.h_score, 1),
                if r.unscored > 0 {
                    format!("  ({} unscored)", r.unscored)
                } else {
                    String::new()
                }
            ));
        }
        if let Some((what, d)) = m.spread() {
            s.push_str(&format!(
                "{:<16} the choice of judge moves its {what} by {} points\n",
                "",
                crate::text::fixed(d, 1)
            ));
        }
    }
    s
}

/// `s` in at most `w` characters (cut with `…`).
fn cut(s: &str, w: usize) -> String {
    crate::text::truncate(&crate::text::one_line(s), w)
}
