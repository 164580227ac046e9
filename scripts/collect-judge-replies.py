#!/usr/bin/env python3
"""Collects the real judge replies of stored AutoHall runs for the hand-labelled parser fixture
(tests/fixtures/judge-replies/). Run once over the stores of `prism autohall` runs on the embedded
models, then label each line by hand (`"label"`: conflict / consistent / unreadable for pair
checks, true / false / unreadable for classifications) and commit the file.

    python3 scripts/collect-judge-replies.py STORE.db... > replies.jsonl

Each line holds what the parser sees: the request's parts (the prompt is rebuilt from them with
prism's own prompt builder in tests/judge_replies.rs) and the reply as the model gave it.
"""
import json
import sqlite3
import sys


def main(paths):
    for path in paths:
        db = sqlite3.connect(path)
        runs = dict(db.execute("SELECT id, config FROM detect_runs WHERE kind = 'claims'"))
        models = {}
        for run_id, config in runs.items():
            for m in json.loads(config).get("models", []):
                models[(run_id, m["name"])] = m.get("model") or m["name"]
        targets = {}
        for run_id, idx, model, question, answer, reply in db.execute(
            "SELECT run_id, idx, model, question, answer, class_reply FROM detect_targets"
        ):
            if run_id not in runs:
                continue
            targets[(run_id, idx)] = (model, question, answer)
            if reply is not None and answer is not None:
                print(json.dumps({"kind": "classification", "model": model, "claim": question,
                                  "reference": answer, "reply": reply, "label": None}))
        samples = {
            (r, t, k): text
            for r, t, k, text in db.execute(
                "SELECT run_id, target, k, text FROM detect_samples WHERE round = 0"
            )
        }
        for run_id, t, k, reply in db.execute(
            "SELECT run_id, target, k, reply FROM detect_pairs WHERE round = 0 AND reply IS NOT NULL"
        ):
            if (run_id, t) not in targets or samples.get((run_id, t, k)) is None:
                continue
            model, claim, answer = targets[(run_id, t)]
            print(json.dumps({"kind": "pair", "model": model, "claim": claim, "answer_a": answer,
                              "answer_b": samples[(run_id, t, k)], "reply": reply, "label": None}))


if __name__ == "__main__":
    main(sys.argv[1:])
