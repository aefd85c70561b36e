#!/usr/bin/env python3
"""Depth completed in `go movetime MS` on Basalt's bench positions, for several engines.

usage: tools/depth_at_movetime.py BASALT MS ENGINE [ENGINE ...]

BASALT is the Basalt binary (its `bench --depth 1` output gives the 50 positions); each
ENGINE is a UCI binary (Basalt itself, Ethereal, ...). For every position each engine in
turn gets `ucinewgame`, `position fen`, `go movetime MS` (Hash 16, one thread), so the
engines share the machine's conditions position by position. The depth of a search is the
`depth` of its last `info` line that carries a `pv` (engines print such a line when an
iteration completes). Prints one row per position and, per engine, the median, mean and
minimum depth and its nodes per second over all positions.
"""
import statistics
import subprocess
import sys


def bench_fens(binary):
    out = subprocess.run([binary, "bench", "--depth", "1"], capture_output=True, text=True).stdout
    return [line.split(" fen ", 1)[1].strip() for line in out.splitlines() if " fen " in line]


class Engine:
    def __init__(self, path):
        self.path = path
        self.proc = subprocess.Popen(
            [path], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1
        )
        self.send("uci")
        self.wait_for("uciok")
        self.send("setoption name Hash value 16")
        self.send("setoption name Threads value 1")
        self.send("isready")
        self.wait_for("readyok")

    def send(self, line):
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()

    def wait_for(self, prefix):
        lines = []
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError(f"{self.path} exited")
            lines.append(line)
            if line.startswith(prefix):
                return lines

    def search(self, fen, movetime):
        self.send("ucinewgame")
        self.send(f"position fen {fen}")
        self.send("isready")
        self.wait_for("readyok")
        self.send(f"go movetime {movetime}")
        depth, nodes, time_ms = 0, 0, 1
        for line in self.wait_for("bestmove"):
            words = line.split()
            if words[:1] != ["info"] or "pv" not in words or "depth" not in words:
                continue
            depth = int(words[words.index("depth") + 1])
            if "nodes" in words:
                nodes = int(words[words.index("nodes") + 1])
            if "time" in words:
                time_ms = max(1, int(words[words.index("time") + 1]))
        return depth, nodes * 1000 // time_ms

    def quit(self):
        self.send("quit")
        self.proc.wait(timeout=10)


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    basalt, movetime, paths = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
    fens = bench_fens(basalt)
    engines = [Engine(p) for p in paths]
    depths = [[] for _ in engines]
    speeds = [[] for _ in engines]
    for i, fen in enumerate(fens):
        row = []
        for k, engine in enumerate(engines):
            depth, nps = engine.search(fen, movetime)
            depths[k].append(depth)
            speeds[k].append(nps)
            row.append(f"{depth:3d}")
        print(f"{i + 1:2d} {' '.join(row)}  {fen}", flush=True)
    for engine in engines:
        engine.quit()
    print(f"go movetime {movetime} on {len(fens)} positions")
    for k, path in enumerate(paths):
        print(
            f"{path}: depth median {statistics.median(depths[k])}, "
            f"mean {statistics.mean(depths[k]):.2f}, min {min(depths[k])}; "
            f"nps median {statistics.median(speeds[k]):.0f}"
        )


if __name__ == "__main__":
    main()
