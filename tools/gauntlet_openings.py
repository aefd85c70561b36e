#!/usr/bin/env python3
"""Write the standard Ethereal-gauntlet openings: the first 100 openings that
`match.py --seed 21` draws from 8moves_v3.epd, as two EPD files of 50 (one match
segment per core, played with `order=sequential`).

match.py shuffles range(len(book)) with random.Random(seed) and plays pair p
from opening order[p]; this repeats that draw so the set can be rebuilt on any machine.

usage: tools/gauntlet_openings.py BOOK OUT_A OUT_B [--seed 21] [--pairs 100]
"""
import argparse
import random


def book_lines(path):
    # the same filter as match.py's OpeningBook for EPD files
    with open(path, encoding="utf-8", errors="replace") as f:
        return [s for s in (line.strip() for line in f)
                if s and not s.startswith("#") and len(s.split()) >= 4]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("book")
    ap.add_argument("out_a")
    ap.add_argument("out_b")
    ap.add_argument("--seed", type=int, default=21)
    ap.add_argument("--pairs", type=int, default=100)
    args = ap.parse_args()
    lines = book_lines(args.book)
    order = list(range(len(lines)))
    random.Random(args.seed).shuffle(order)
    chosen = [lines[i] for i in order[:args.pairs]]
    half = len(chosen) // 2
    for path, part in ((args.out_a, chosen[:half]), (args.out_b, chosen[half:])):
        with open(path, "w") as f:
            f.write("\n".join(part) + "\n")


if __name__ == "__main__":
    main()
