#!/usr/bin/env python3
"""The heatmap of every stored run, timed for two prism binaries interleaved (issue 47).

On a shared, noisy machine only ratios measured in one session mean much: this runs A, B, A, B...
against the same store and prints each one's times and median. The store is one the history
bench kept:

    cargo bench --bench history -- --runs 100 --items 650 --repeat 3 --keep /tmp/hk
    scripts/heatmap-ab.py /tmp/prism-old /tmp/prism-new --keep /tmp/hk --rounds 2 --reps 3

Each measure starts the TUI in tmux at 120x40 on the kept store, waits for the tree's rates,
opens the runs screen (`R`), marks every run (`space`), and times `H` until the heatmap says
"N models of the chosen runs" is drawn (captured every 5 ms).
"""
import argparse
import subprocess
import time


def measure(binary, keep, runs, models):
    sock = f"prism-heat-ab-{time.time()}"

    def tm(*a):
        return subprocess.run(["tmux", "-L", sock, *a], capture_output=True, text=True).stdout

    def wait(pred, what, limit=60):
        start = time.time()
        s = ""
        while time.time() - start < limit:
            s = tm("capture-pane", "-p", "-t", "b")
            if pred(s):
                return
            time.sleep(0.005)
        raise SystemExit(f"timed out waiting for {what}:\n{s}")

    cfg = f"{keep}/ab-config"
    subprocess.run(["mkdir", "-p", cfg])
    tm("new-session", "-d", "-s", "b", "-x", "120", "-y", "40",
       f"PRISM_CONFIG_DIR={cfg} PRISM_DATA_DIR={cfg} {binary} {keep}/release --db {keep}/h{runs}.db; sleep 30")
    try:
        wait(lambda s: "H%" in s, "the tree's rates")
        tm("send-keys", "-t", "b", "R")
        wait(lambda s: "r2026" in s, "the runs listed")
        for _ in range(runs):  # marking leaves the cursor on the run: mark, then go down
            tm("send-keys", "-t", "b", "Space", "Down")
        time.sleep(0.5)
        k = time.time()
        tm("send-keys", "-t", "b", "H")
        wait(lambda s: f"{runs * models} models of the chosen runs" in s, "the heatmap")
        return (time.time() - k) * 1000
    finally:
        tm("send-keys", "-t", "b", "q")
        time.sleep(0.3)
        tm("kill-server")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("a")
    p.add_argument("b")
    p.add_argument("--keep", default="/tmp/hk")
    p.add_argument("--runs", type=int, default=100)
    p.add_argument("--models", type=int, default=8)
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--reps", type=int, default=3)
    args = p.parse_args()
    got = {args.a: [], args.b: []}
    for _ in range(args.rounds):
        for b in (args.a, args.b):
            got[b] += [measure(b, args.keep, args.runs, args.models) for _ in range(args.reps)]
    for b, v in got.items():
        v.sort()
        print(f"{b}: {' '.join(f'{x:.0f}' for x in v)} ms, median {v[len(v) // 2]:.0f} ms")
    ma, mb = (sorted(got[x])[len(got[x]) // 2] for x in (args.a, args.b))
    print(f"B / A: {mb / ma:.2f}")


if __name__ == "__main__":
    main()
