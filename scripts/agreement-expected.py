#!/usr/bin/env python3
"""Writes tests/fixtures/agreement/reference.json: rating cases and the reference
implementations' statistics for each, which prism's own must equal (src/review/agreement.rs
tests): scikit-learn's cohen_kappa_score, statsmodels' fleiss_kappa and the `krippendorff`
package's alpha (nominal and interval). Cases have ties, missing ratings (Krippendorff) and a
single class (where kappa is undefined: NaN there, null here). Run once when the cases change:

    python3 -m venv /tmp/agr && /tmp/agr/bin/pip install scikit-learn statsmodels krippendorff
    /tmp/agr/bin/python scripts/agreement-expected.py
"""
import importlib.metadata
import json
import math
import random
import warnings
from pathlib import Path

import krippendorff
import numpy as np
import sklearn
import statsmodels
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import fleiss_kappa

warnings.simplefilter("ignore")
rng = random.Random(20261204)


def num(v):
    v = float(v)
    return None if math.isnan(v) or math.isinf(v) else v


# Cohen: two raters' labels on the same answers (1 hallucinated, 0 correct; 2 a third class).
cohen = [
    ([1, 1, 0, 0, 1, 0, 0, 0, 1, 0], [1, 0, 0, 0, 1, 1, 0, 0, 1, 0]),
    ([1, 1, 1, 1], [1, 1, 1, 1]),  # one class on both sides: undefined
    ([1, 1, 1, 1], [1, 0, 1, 0]),  # one class on one side: 0
    ([0, 1, 2, 2, 1, 0, 2], [0, 2, 2, 2, 1, 0, 1]),
    ([1, 0], [0, 1]),
]
for n in [12, 30, 61, 150]:
    a = [int(rng.random() < 0.4) for _ in range(n)]
    b = [x if rng.random() < 0.8 else 1 - x for x in a]
    cohen.append((a, b))

# Fleiss: per answer, how many judges said hallucinated / correct (the same number of raters
# per answer, as statsmodels requires).
fleiss = [
    [[3, 0], [0, 3], [2, 1], [1, 2], [3, 0]],
    [[2, 0], [2, 0], [2, 0]],  # every rating alike, one class: undefined
    [[1, 1], [1, 1], [1, 1]],  # always split: below 0
    [[4, 0, 0], [2, 2, 0], [0, 1, 3], [1, 1, 2], [0, 0, 4], [3, 0, 1]],
]
for n, raters in [(20, 3), (50, 5)]:
    rows = []
    for _ in range(n):
        p = rng.random()
        h = sum(1 for _ in range(raters) if rng.random() < p)
        rows.append([h, raters - h])
    fleiss.append(rows)

# Krippendorff: raters x answers, None for a missing rating; nominal and interval.
kripp = [
    [[1, 0, 1, None, 0], [1, 0, 0, 1, None], [None, 0, 1, 1, 0]],
    [[1, 1, 1], [1, 1, 1]],  # one value only: undefined
    [[1, None, 0, 1], [None, 1, None, 1]],  # a unit with one rating is not pairable
    [[3, 7, 7, 9, None, 2], [4, 7, 8, 9, 5, None], [3, None, 7, 8, 5, 1]],
]
for n, raters in [(30, 3), (80, 4)]:
    truth = [int(rng.random() < 0.5) for _ in range(n)]
    data = []
    for _ in range(raters):
        data.append([None if rng.random() < 0.2 else (t if rng.random() < 0.85 else 1 - t) for t in truth])
    kripp.append(data)


def alpha(data, level):
    arr = np.array([[np.nan if v is None else v for v in row] for row in data], dtype=float)
    try:
        return num(krippendorff.alpha(reliability_data=arr, level_of_measurement=level))
    except (ValueError, ZeroDivisionError):
        return None


out = {
    "generator": (
        f"scripts/agreement-expected.py, scikit-learn {sklearn.__version__}, "
        f"statsmodels {statsmodels.__version__}, krippendorff {importlib.metadata.version('krippendorff')}"
    ),
    "cohen": [{"a": a, "b": b, "kappa": num(cohen_kappa_score(a, b))} for a, b in cohen],
    "fleiss": [{"counts": c, "kappa": num(fleiss_kappa(np.array(c), method="fleiss"))} for c in fleiss],
    "krippendorff": [
        {"raters": d, "nominal": alpha(d, "nominal"), "interval": alpha(d, "interval")} for d in kripp
    ],
}
path = Path(__file__).resolve().parent.parent / "tests/fixtures/agreement/reference.json"
path.write_text(json.dumps(out, indent=1) + "\n")
print(f"wrote {path}")
