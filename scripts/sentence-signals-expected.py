#!/usr/bin/env python3
"""Writes tests/fixtures/sentences/sklearn.json: graded sentences (a score, people's verdict)
and answers (a score, people's share of non-factual sentences), with scikit-learn's AUC-PR
(average_precision_score) with non-factual and with factual as the positive class, its AUROC
(roc_auc_score), and SciPy's Pearson and Spearman, which prism's own (src/sentences/eval.rs
tests) must equal. Run once when the cases change:

    python3 -m venv /tmp/skl && /tmp/skl/bin/pip install scikit-learn scipy
    /tmp/skl/bin/python scripts/sentence-signals-expected.py
"""
import json
import random
from pathlib import Path

import scipy
import sklearn
from scipy.stats import pearsonr, spearmanr
from sklearn.metrics import average_precision_score, roc_auc_score

rng = random.Random(20261206)
cases = []
# One-sided labels (the case the paper's WikiBio set is: three in four non-factual), ties as
# a unigram score of a few samples gives, and a prompt score over 3 samples (0, 1/3, 2/3, 1).
for n, share, kind in [(12, 0.5, "normal"), (40, 0.75, "prompt3"), (60, 0.2, "coarse"),
                       (200, 0.7, "normal"), (97, 0.9, "prompt3")]:
    while True:
        y = [int(rng.random() < share) for _ in range(n)]
        if 5 <= sum(y) <= n - 5:
            break
    if kind == "prompt3":
        x = [min(3, max(0, rng.randint(0, 2) + (1 if yi else 0))) / 3 for yi in y]
    elif kind == "coarse":
        x = [float(rng.randint(0, 4) + (1 if yi and rng.random() < 0.5 else 0)) for yi in y]
    else:
        x = [round(rng.gauss(0.7 if yi else 0.0, 1.0), 6) for yi in y]
    # Answers: groups of 1 to 5 sentences; the answer's score the mean of its sentences', the
    # share people's non-factual sentences among them.
    answers, i = [], 0
    while i < n:
        k = min(rng.randint(1, 5), n - i)
        answers.append((sum(x[i:i + k]) / k, sum(y[i:i + k]) / k))
        i += k
    ax, ay = [a for a, _ in answers], [b for _, b in answers]
    cases.append({
        "scores": x,
        "non_factual": [bool(v) for v in y],
        "auprc_non_factual": average_precision_score(y, x),
        "auprc_factual": average_precision_score([1 - v for v in y], [-v for v in x]),
        "auroc": roc_auc_score(y, x),
        "answer_scores": ax,
        "answer_shares": ay,
        "pearson": float(pearsonr(ax, ay)[0]),
        "spearman": float(spearmanr(ax, ay)[0]),
    })

out = {
    "generator": f"scripts/sentence-signals-expected.py, scikit-learn {sklearn.__version__}, SciPy {scipy.__version__}",
    "cases": cases,
}
path = Path(__file__).resolve().parent.parent / "tests/fixtures/sentences/sklearn.json"
path.write_text(json.dumps(out, indent=1) + "\n")
print(f"{len(cases)} cases -> {path}")
