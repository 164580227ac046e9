#!/usr/bin/env python3
"""Writes tests/fixtures/choice/cases.jsonl: generated responses and the letter PRISM's choice
extraction gives each, for tests/choice_reference.rs.

The extraction below is written from PRISM-FORMAT.md ("choice") with Python's own `re` and `str`,
apart from prism's Rust: what decides the official scores is Python's whitespace (`str.strip`,
`\\s`), its Unicode word characters (`\\b`: the B of `答案是B。` is not standalone), the case of
"The answer is" / "Answer" (only the first letter may vary) and `re.search`'s topmost match.
    python3 scripts/choice-fixture.py [COUNT]     (default 12000; seeded, so the file is stable)
"""
import json
import os
import random
import re
import sys


def extract_choice(response, n_options):
    letters = "ABCDEFGH"[: min(max(4, n_options), 8)]
    L = "([%s])" % letters
    response = response.strip()
    lines = response.split("\n")
    tail = "\n".join(lines[-5:])
    patterns = [
        r"^\s*" + L + r"\s*$",
        r"^\s*\*\*" + L + r"\*\*\s*$",
        r"\*\*" + L + r"\*\*",
        r"[Tt]he answer is[:\s]*\**" + L,
        r"[Aa]nswer[:\s]*\**" + L,
    ]
    for p in patterns:
        m = re.search(p, tail, re.MULTILINE)
        if m:
            return m.group(1)
    for line in reversed(lines):
        m = re.match(r"^\**" + L + r"\**[.):]?$", line.strip())
        if m:
            return m.group(1)
    for line in reversed(lines[-10:]):
        m = re.search(r"\b" + L + r"[.。]?\s*$", line.strip())
        if m:
            return m.group(1)
    found = re.findall(r"\b" + L + r"\b", response)
    return found[-1] if found else None


# Pieces a model's answer is made of, and the ones that decide close cases: letters in both
# cases, the two phrases in three casings, asterisks, the punctuation after a letter, line
# breaks (and \r\n), Python's extra whitespace (U+001C-U+001F, U+0085, U+3000), letters and
# numbers of other scripts that glue to a letter (是, Ж, é, _, ², a Devanagari vowel sign).
PIECES = (
    list("ABCDEFGHabcd") + list("ABCDABCD")
    + ["The answer is", "the answer is", "THE ANSWER IS", "Answer", "answer", "ANSWER",
       "My answer", "Answer:", "answer is", "Definitely", "Option", "is", "and", "or"]
    + ["**", "*", ".", ")", ":", "。", "(", ",", "!"]
    + [" ", " ", " ", "  ", "\n", "\n", "\n", "\r\n", "\t", "\x1f", "\x1c", "\x85", "\u3000"]
    + ["答案是", "选", "所以", "Ответ", "é", "_", "²", "\u093f", "x", "1", "9"]
)


def generate(rng):
    k = rng.randint(1, 14)
    return "".join(rng.choice(PIECES) for _ in range(k))


def main():
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 12000
    rng = random.Random(20261206)
    here = os.path.dirname(os.path.abspath(__file__))
    out = os.path.join(here, "..", "tests", "fixtures", "choice", "cases.jsonl")
    # The cases of issue 61 first, then generated ones.
    named = [
        "答案是B。", "选B", "ОтветB", "éB", "_B", "I choose B\n所以答案是C",
        "The answer is Definitely C", "THE ANSWER IS B but maybe C is also fine",
        "Answer C\nbut I also like D", "My answer\nB is the one, and D is wrong",
        "A\nx\nx\nx\nx\nx\nB .", "Answer: A\nAnswer: C", "A\nB\nC\nD", "a\x1fB\x1f",
    ]
    seen = set()
    with open(out, "w", encoding="utf-8") as f:
        rows = [(r, n) for r in named for n in (4, 2)]
        while len(rows) < count:
            r = generate(rng)
            n = rng.choice([2, 4, 4, 5, 8])
            if (r, n) not in seen:
                seen.add((r, n))
                rows.append((r, n))
        for r, n in rows:
            f.write(json.dumps({"response": r, "n": n, "letter": extract_choice(r, n)},
                               ensure_ascii=False) + "\n")
    print(f"wrote {len(rows)} cases to {os.path.normpath(out)}")


if __name__ == "__main__":
    main()
