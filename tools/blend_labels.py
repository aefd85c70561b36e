#!/usr/bin/env python3
"""Turns `FEN | result | cp` lines (tools/label_stockfish.py) into `FEN | target` lines
for `basalt tune`.

Usage: tools/blend_labels.py IN OUT LAMBDA

target = LAMBDA * p(cp) + (1 - LAMBDA) * result, with p(cp) = 1 / (1 + 10^(-cp / scale)).
`scale` is fitted (golden-section search on the squared error) so that p(cp) predicts the
game results as well as it can; the target is then an expected score on the results' own
scale, mostly Stockfish's judgement of the position and partly how the game ended.
Scores are clamped to +-2000 cp first, so mate scores count as certain wins.
"""
import math
import sys

CLAMP_CP = 2000


def win_probability(cp, scale):
    return 1.0 / (1.0 + 10 ** (-cp / scale))


def main():
    src, dst, lam = sys.argv[1], sys.argv[2], float(sys.argv[3])
    rows = []
    with open(src) as f:
        for line in f:
            fields = [field.strip() for field in line.split("|")]
            if len(fields) != 3:
                continue
            cp = max(-CLAMP_CP, min(CLAMP_CP, int(fields[2])))
            rows.append((fields[0], float(fields[1]), cp))

    def error(scale):
        return sum((r - win_probability(cp, scale)) ** 2 for _, r, cp in rows) / len(rows)

    lo, hi = 50.0, 2000.0
    ratio = (math.sqrt(5) - 1) / 2
    for _ in range(40):
        a, b = hi - ratio * (hi - lo), lo + ratio * (hi - lo)
        if error(a) < error(b):
            hi = b
        else:
            lo = a
    scale = (lo + hi) / 2
    print(f"{len(rows)} positions; fitted scale {scale:.1f} cp; "
          f"squared error of p(cp) against the results {error(scale):.6f}")
    with open(dst, "w") as out:
        for fen, result, cp in rows:
            target = lam * win_probability(cp, scale) + (1 - lam) * result
            out.write(f"{fen} | {target:.4f}\n")


if __name__ == "__main__":
    main()
