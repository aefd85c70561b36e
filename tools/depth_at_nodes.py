#!/usr/bin/env python3
"""Depth reached at a fixed node budget on the bench positions, for several builds.

usage: tools/depth_at_nodes.py NODES BINARY [BINARY ...]

The positions come from the first binary's `bench --depth 1` output. Every binary gets
`ucinewgame`, `position fen`, `go nodes NODES` per position (Threads=1, Hash=16) and the
depth of the last `info depth` line before `bestmove` is recorded. Prints the average
depth per binary and the difference from the first binary, and the median (a few bench
positions are mates or tablebase-like endgames where a search runs to its maximum depth).
"""
import statistics
import subprocess
import sys


def bench_fens(binary):
    out = subprocess.run([binary, "bench", "--depth", "1"], capture_output=True, text=True).stdout
    return [line.split(" fen ", 1)[1] for line in out.splitlines() if " fen " in line]


def depths(binary, fens, nodes):
    engine = subprocess.Popen(
        [binary], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1
    )

    def send(line):
        engine.stdin.write(line + "\n")
        engine.stdin.flush()

    send("uci")
    send("setoption name Threads value 1")
    send("setoption name Hash value 16")
    reached = []
    for fen in fens:
        send("ucinewgame")
        send(f"position fen {fen}")
        send(f"go nodes {nodes}")
        depth = 0
        while True:
            line = engine.stdout.readline()
            if not line:
                raise RuntimeError(f"{binary} exited")
            words = line.split()
            if words[:1] == ["bestmove"]:
                break
            if words[:2] == ["info", "depth"]:
                depth = int(words[2])
        reached.append(depth)
    send("quit")
    engine.wait()
    return reached


def main():
    nodes = int(sys.argv[1])
    binaries = sys.argv[2:]
    fens = bench_fens(binaries[0])
    first = None
    for binary in binaries:
        reached = depths(binary, fens, nodes)
        average = sum(reached) / len(reached)
        first = average if first is None else first
        print(
            f"{binary}: {len(fens)} positions at {nodes} nodes, average depth {average:.2f} "
            f"(median {statistics.median(reached)}, min {min(reached)}, max {max(reached)}), "
            f"{average - first:+.2f} against the first"
        )


if __name__ == "__main__":
    main()
