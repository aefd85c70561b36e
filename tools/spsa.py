#!/usr/bin/env python3
"""SPSA tuning of Basalt's search parameters over game pairs played by match.py.

usage: tools/spsa.py --engine BIN --state FILE [--iterations N] [--tc 4+0.04]
                     [--concurrency K] [--openings EPD] [--match PATH]
                     [--only NAME ...] [--c-share 0.05] [--r-end 0.005] [--seed S]
       tools/spsa.py --state FILE --write-defaults src/search/params.rs

BIN must be a `spsa` build (`cargo build --release --features spsa`): it declares every
parameter of `tunable!` in src/search/params.rs and src/time.rs (the time plan) as a spin
option (upper-case name, range). Tune the time plan apart from the search, with
--only SUDDEN_DEATH_MOVES INCREMENT_PERCENT HARD_LIMIT_PERCENT NEXT_ITERATION_PERCENT, and
write its values with --write-defaults src/time.rs.
Each iteration perturbs all tuned parameters at once by +-c_k (a random sign each), plays
one opening twice (colours swapped) between the plus and the minus engine, and moves every
parameter by a_k * (plus's points - minus's points) * sign / c_k. The gains follow the usual
SPSA schedule (alpha 0.602, gamma 0.101, A = N / 10), set so that the last iteration
perturbs a parameter by c_end = c-share x its range and steps r_end x c_end per point
(OpenBench's convention; its usual r_end of 0.002 needs tens of thousands of games, so the
default here is 0.005 for runs of a few thousand).

The state (iteration count, current values, every result) is rewritten after each pair, so
a run stopped at any time resumes where it left off with the same command. With
--concurrency K, K pairs run at once, each with the values of its start (asynchronous
SPSA, as in OpenBench). Prints one line per pair; the current values round to the
parameters to try in an SPRT.

--write-defaults writes the state's current values, rounded, as the defaults in
`tunable!` (the candidate to build and SPRT) and plays nothing.
"""
import argparse
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import threading
from concurrent.futures import ThreadPoolExecutor

ALPHA, GAMMA = 0.602, 0.101
HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_MATCH = os.path.join(HERE, "..", "..", "shared", "tools", "match.py")
DEFAULT_BOOK = os.path.join(HERE, "..", "..", "shared", "data", "books", "8moves_v3.epd")


def tunables(binary):
    """name -> (default, min, max) of the engine's upper-case spin options."""
    out = subprocess.run([binary], input="uci\nquit\n", capture_output=True, text=True).stdout
    found = {}
    pattern = r"option name ([A-Z][A-Z0-9_]+) type spin default (-?\d+) min (-?\d+) max (-?\d+)"
    for line in out.splitlines():
        m = re.fullmatch(pattern, line.strip())
        if m and not m.group(1).startswith("UCI_"):
            found[m.group(1)] = tuple(int(g) for g in m.groups()[1:])
    return found


class Spsa:
    def __init__(self, args, params):
        self.args, self.params = args, params
        self.lock = threading.Lock()
        if os.path.exists(args.state):
            with open(args.state) as f:
                self.state = json.load(f)
            unknown = set(self.state["theta"]) - set(params)
            if unknown:
                sys.exit(f"state {args.state} tunes {sorted(unknown)}, which the engine lacks")
        else:
            self.state = {
                "iterations": args.iterations,
                "done": 0,
                "theta": {name: float(params[name][0]) for name in params},
                "results": [],
            }
        self.n = self.state["iterations"]
        # Iterations still to play, in order. Two workers can finish out of order, so a stopped
        # run may leave a gap below its last finished pair: it is played first on resume.
        finished = {r["k"] for r in self.state["results"]}
        self.pending = [k for k in range(self.n) if k not in finished]

    def gains(self, k, name):
        """(c_k, a_k) of parameter `name` at iteration k (0-based)."""
        _, lo, hi = self.params[name]
        c_end = max(self.args.c_share * (hi - lo), 0.5)
        a_end = self.args.r_end * c_end**2
        big_a = self.n / 10
        c = c_end * self.n**GAMMA
        a = a_end * (big_a + self.n) ** ALPHA
        return c / (k + 1) ** GAMMA, a / (big_a + k + 1) ** ALPHA

    def start_pair(self):
        """Takes the next iteration: its number, signs and the two engines' values."""
        with self.lock:
            if not self.pending:
                return None
            k = self.pending.pop(0)
            rng = random.Random(self.args.seed * 1_000_003 + k)
            signs, plus, minus = {}, {}, {}
            for name, theta in self.state["theta"].items():
                _, lo, hi = self.params[name]
                c_k, _ = self.gains(k, name)
                signs[name] = rng.choice((-1, 1))
                plus[name] = min(max(round(theta + c_k * signs[name]), lo), hi)
                minus[name] = min(max(round(theta - c_k * signs[name]), lo), hi)
            return k, signs, plus, minus

    def finish_pair(self, k, signs, plus, minus, points):
        with self.lock:
            for name, sign in signs.items():
                _, lo, hi = self.params[name]
                c_k, a_k = self.gains(k, name)
                theta = self.state["theta"][name] + a_k * points * sign / c_k
                self.state["theta"][name] = min(max(theta, lo), hi)
            self.state["done"] += 1
            self.state["results"].append({"k": k, "points": points, "plus": plus, "minus": minus})
            tmp = self.args.state + ".tmp"
            with open(tmp, "w") as f:
                json.dump(self.state, f, indent=1)
            os.replace(tmp, self.args.state)
            values = " ".join(f"{n}={v:.1f}" for n, v in self.state["theta"].items())
            print(f"pair {k + 1}/{self.n} plus-minus {points:+g}: {values}", flush=True)


def play_pair(args, k, plus, minus):
    """Plays one opening twice; returns the plus engine's points minus the minus engine's."""
    def engine(name, values):
        return ["--engine", f"cmd={args.engine}", f"name={name}"] + [
            f"option.{n}={v}" for n, v in values.items()
        ]

    with tempfile.TemporaryDirectory() as tmp:
        summary = os.path.join(tmp, "pair.json")
        command = [sys.executable, args.match] + engine("plus", plus) + engine("minus", minus)
        command += ["--each", f"tc={args.tc}", "option.Hash=16", "option.Threads=1"]
        command += ["--games", "2", "--concurrency", "1", "--openings", args.openings]
        command += ["--seed", str(args.seed * 1_000_003 + k), "--quiet", "--json", summary]
        command += ["--draw", "movenumber=40", "movecount=8", "score=10"]
        command += ["--resign", "movecount=4", "score=1000"]
        done = subprocess.run(command, capture_output=True, text=True)
        if not os.path.exists(summary):
            raise RuntimeError(f"match.py failed ({done.returncode}): {done.stderr[-500:]}")
        with open(summary) as f:
            result = json.load(f)["opponents"]["minus"]
    if result["games"] != 2:
        raise RuntimeError(f"pair {k + 1} played {result['games']} games")
    return result["wins"] - result["losses"]


def write_defaults(state_path, params_rs):
    """Rewrites each tuned parameter's default in params_rs to its rounded value.

    Every name and value is checked before anything is printed or written, so a
    failure leaves params_rs as it was."""
    for path in (state_path, params_rs):
        if not os.path.exists(path):
            sys.exit(f"no such file: {path}")
    with open(state_path) as f:
        theta = json.load(f)["theta"]
    with open(params_rs) as f:
        src = f.read()
    report = []
    for name, value in theta.items():
        m = re.search(rf"\n\s*{name} = (-?\d+), (-?\d+), (-?\d+);", src)  # default, min, max
        if m is None:
            sys.exit(f"{name} is not declared in {params_rs}")
        old, lo, hi = (int(g) for g in m.groups())
        new = round(value)
        if not lo <= new <= hi:
            sys.exit(f"{name}: {new} is outside its range {lo}..={hi} in {params_rs}")
        src = src[: m.start(1)] + str(new) + src[m.end(1) :]
        change = f"{(new - old) / abs(old):+.1%}" if old else "from 0"
        report.append(f"{name}: {old} -> {new} ({value:.1f}, {change})")
    print("\n".join(report))
    with open(params_rs, "w") as f:
        f.write(src)


def worker(spsa):
    while (pair := spsa.start_pair()) is not None:
        k, signs, plus, minus = pair
        points = play_pair(spsa.args, k, plus, minus)
        spsa.finish_pair(k, signs, plus, minus, points)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--engine")
    parser.add_argument("--state", required=True)
    parser.add_argument("--iterations", type=int, default=2000)
    parser.add_argument("--tc", default="4+0.04")
    parser.add_argument("--concurrency", type=int, default=1)
    parser.add_argument("--openings", default=DEFAULT_BOOK)
    parser.add_argument("--match", default=DEFAULT_MATCH)
    parser.add_argument("--only", nargs="*", help="tune only these parameters")
    parser.add_argument("--c-share", type=float, default=0.05)
    parser.add_argument("--r-end", type=float, default=0.005)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--write-defaults", metavar="PARAMS_RS")
    args = parser.parse_args()
    if args.write_defaults:
        write_defaults(args.state, args.write_defaults)
        return
    if not args.engine:
        parser.error("--engine is required to tune")

    params = tunables(args.engine)
    if not params:
        sys.exit(f"{args.engine} declares no tunable options: build it with --features spsa")
    if args.only:
        missing = set(args.only) - set(params)
        if missing:
            sys.exit(f"no such parameters: {sorted(missing)}")
        params = {n: params[n] for n in args.only}
    spsa = Spsa(args, params)
    done = spsa.state["done"]
    print(f"tuning {len(params)} parameters, {spsa.n} pairs, {done} done", flush=True)
    with ThreadPoolExecutor(args.concurrency) as pool:
        for future in [pool.submit(worker, spsa) for _ in range(args.concurrency)]:
            future.result()
    print("final: " + " ".join(f"{n}={round(v)}" for n, v in spsa.state["theta"].items()))


if __name__ == "__main__":
    main()
