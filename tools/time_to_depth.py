#!/usr/bin/env python3
"""Time-to-depth of Basalt with different Threads values on the bench positions.

usage: tools/time_to_depth.py BINARY DEPTH THREADS [THREADS ...]

For every bench position (read from `BINARY bench --depth 1` output), sends `ucinewgame`,
`position fen`, `go depth DEPTH` and measures the wall time until `bestmove`. Prints the
total per Threads value and the speedup of each against the first.
"""
import subprocess
import sys
import time


def bench_fens(binary):
    out = subprocess.run([binary, "bench", "--depth", "1"], capture_output=True, text=True).stdout
    return [line.split(" fen ", 1)[1] for line in out.splitlines() if " fen " in line]


def run(binary, fens, depth, threads):
    engine = subprocess.Popen(
        [binary], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1
    )

    def send(line):
        engine.stdin.write(line + "\n")
        engine.stdin.flush()

    def wait_for(prefix):
        while True:
            line = engine.stdout.readline()
            if not line:
                raise RuntimeError("engine exited")
            if line.startswith(prefix):
                return line

    send(f"setoption name Threads value {threads}")
    send("setoption name Hash value 64")
    total = 0.0
    for fen in fens:
        send("ucinewgame")
        send(f"position fen {fen}")
        send("isready")
        wait_for("readyok")
        start = time.monotonic()
        send(f"go depth {depth}")
        wait_for("bestmove")
        total += time.monotonic() - start
    send("quit")
    engine.wait()
    return total


def main():
    binary, depth = sys.argv[1], int(sys.argv[2])
    threads = [int(t) for t in sys.argv[3:]]
    fens = bench_fens(binary)
    results = {t: run(binary, fens, depth, t) for t in threads}
    base = results[threads[0]]
    for t, total in results.items():
        print(
            f"Threads={t}: {len(fens)} positions to depth {depth} in {total:.2f} s, "
            f"speedup {base / total:.2f}"
        )


if __name__ == "__main__":
    main()
