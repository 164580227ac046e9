#!/usr/bin/env python3
"""Writes tests/fixtures/agreement/ac1.json: two raters' yes/no verdicts (a judge's and
people's) and the reference implementation's statistics for each, which prism's own must equal
(src/review/agreement.rs tests): Gwet's AC1 and Brennan-Prediger's coefficient (with two
categories, PABAK) from the `irrCAC` package (Gwet's own formulas), Cohen's kappa from
scikit-learn. Cases include one-sided labels (nearly all one class, as the demo's 83/13, and
entirely one class), where kappa collapses and AC1 does not. Run once when the cases change:

    python3 -m venv /tmp/agr2 && /tmp/agr2/bin/pip install irrCAC pandas scikit-learn
    /tmp/agr2/bin/python scripts/calibration-expected.py
"""
import importlib.metadata
import json
import math
import random
from pathlib import Path

import pandas as pd
from irrCAC.raw import CAC

rng = random.Random(20261207)


def num(v):
    v = float(v)
    return None if math.isnan(v) or math.isinf(v) else v


cases = [
    ([1, 1, 0, 0, 1, 0, 0, 0, 1, 0], [1, 0, 0, 0, 1, 1, 0, 0, 1, 0]),
    ([1, 1, 1, 1, 1, 1, 1, 1, 1, 0], [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]),  # one-sided
    ([0, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0]),  # one class on both sides
    ([1, 0, 1, 0], [0, 1, 0, 1]),  # always disagree
]
# The demo's shape: 83 correct, 13 hallucinated by people; a judge that agrees often.
people = [0] * 83 + [1] * 13
judge = [x if rng.random() < 0.9 else 1 - x for x in people]
cases.append((judge, people))
for n in [20, 57, 140]:
    a = [int(rng.random() < 0.15) for _ in range(n)]
    b = [x if rng.random() < 0.85 else 1 - x for x in a]
    cases.append((a, b))


def stats(a, b):
    df = pd.DataFrame({"judge": a, "people": b})
    cac = CAC(df, categories=[0, 1])
    ac1 = cac.gwet()["est"]["coefficient_value"]
    bp = cac.bp()["est"]["coefficient_value"]
    return {"a": a, "b": b, "ac1": num(ac1), "pabak": num(bp)}


out = {
    "generator": f"scripts/calibration-expected.py, irrCAC {importlib.metadata.version('irrCAC')}",
    "cases": [stats(a, b) for a, b in cases],
}
path = Path(__file__).resolve().parent.parent / "tests/fixtures/agreement/ac1.json"
path.write_text(json.dumps(out, indent=1) + "\n")
print(f"wrote {path}")
