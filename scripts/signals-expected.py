#!/usr/bin/env python3
"""Writes tests/fixtures/signals/sklearn.json: scored cases and scikit-learn's AUROC
(roc_auc_score) and AUPRC (average_precision_score) for each, which prism's own must equal
(src/eval/signals.rs tests). Run once when the cases change:

    python3 -m venv /tmp/skl && /tmp/skl/bin/pip install scikit-learn
    /tmp/skl/bin/python scripts/signals-expected.py
"""
import json
import random
from pathlib import Path

import sklearn
from sklearn.metrics import average_precision_score, roc_auc_score

rng = random.Random(20261202)
cases = []
# Hand-made edges: ties across classes, a perfect ranking, an inverted one.
cases.append(([0.9, 0.8, 0.7, 0.6, 0.2], [1, 0, 1, 1, 0]))
cases.append(([1.0, 1.0, 0.5, 0.5, 0.5, 0.1], [1, 0, 1, 0, 0, 1]))
cases.append(([3.0, 2.0, 1.0, 0.0], [1, 1, 0, 0]))
cases.append(([0.0, 1.0, 2.0, 3.0], [1, 1, 0, 0]))
# Random ones: continuous scores, and coarse ones (many ties, as conflict counts of K are).
for n, coarse in [(10, False), (25, True), (50, False), (80, True), (200, False), (333, True)]:
    while True:
        y = [int(rng.random() < 0.35) for _ in range(n)]
        if 0 < sum(y) < n:
            break
    if coarse:
        x = [float(rng.randint(0, 6) + (2 if yi and rng.random() < 0.4 else 0)) for yi in y]
    else:
        x = [round(rng.gauss(0.6 if yi else 0.0, 1.0), 6) for yi in y]
    cases.append((x, y))

out = {
    "generator": f"scripts/signals-expected.py, scikit-learn {sklearn.__version__}",
    "cases": [
        {
            "scores": x,
            "hallucinated": [bool(v) for v in y],
            "auroc": roc_auc_score(y, x),
            "auprc": average_precision_score(y, x),
        }
        for x, y in cases
    ],
}
path = Path(__file__).resolve().parent.parent / "tests/fixtures/signals/sklearn.json"
path.write_text(json.dumps(out, indent=1) + "\n")
print(f"{len(cases)} cases -> {path}")
