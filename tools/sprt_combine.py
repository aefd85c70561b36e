#!/usr/bin/env python3
"""Combine segments of one SPRT (same engines, options and control, stopped and resumed)
by summing their pentanomials, and print match.py's own LLR and nElo.

    python3 tools/sprt_combine.py --elo0 0 --elo1 10 15,43,89,59,35 7,26,27,22,17 run.json

A segment is five comma-separated pair counts (LL, LD+DL, DD+WL, WD, WW) or a match.py
`--json` file.
"""
import argparse
import json
import os
import sys

SHARED_TOOLS = os.path.join(os.path.dirname(__file__), "..", "..", "shared", "tools")
sys.path.insert(0, os.environ.get("MATCH_PY_DIR", SHARED_TOOLS))
import match  # noqa: E402


def pentanomial_of(segment: str) -> list[int]:
    if os.path.exists(segment):
        with open(segment) as f:
            opponents = json.load(f)["opponents"].values()
        return [sum(o["pentanomial"][k] for o in opponents) for k in range(5)]
    counts = [int(x) for x in segment.split(",")]
    if len(counts) != 5:
        sys.exit(f"a segment needs five counts: {segment}")
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--elo0", type=float, default=0.0)
    parser.add_argument("--elo1", type=float, default=10.0)
    parser.add_argument("--alpha", type=float, default=0.05)
    parser.add_argument("--beta", type=float, default=0.05)
    parser.add_argument("segments", nargs="+")
    args = parser.parse_args()
    spec = match.SprtSpec(args.elo0, args.elo1, args.alpha, args.beta)
    total = [0] * 5
    for segment in args.segments:
        counts = pentanomial_of(segment)
        games = 2 * sum(counts)
        print(f"{segment}: pentanomial {counts}, {games} games, LLR {spec.llr(counts):.2f}")
        total = [a + b for a, b in zip(total, counts)]
    nelo, err = match.pentanomial_nelo(total)
    print(f"combined: pentanomial {total}, {2 * sum(total)} games, "
          f"nElo {nelo:+.1f} +/- {err:.1f}, LLR {spec.llr(total):.2f} "
          f"(bounds {spec.lower:.2f}, {spec.upper:.2f})")


if __name__ == "__main__":
    main()
