#!/usr/bin/env python3
"""Adds a Stockfish score to every labelled position, for `basalt tune`.

Usage: tools/label_stockfish.py IN OUT FIRST COUNT "depth 8" [STOCKFISH]

Reads `FEN | result` lines (../shared/data/tuning/texel_positions.txt) from line FIRST on,
COUNT of them, and appends `FEN | result | cp` lines to OUT, where cp is Stockfish's score
from White's view after `go <limit>` (mate scores become +-3000). One Stockfish process,
Threads=1, Hash=16; the table is kept between positions (they are unrelated, so it only
saves a little). Progress goes to stdout every 5,000 positions. Appending lets a cut-off
run be resumed with FIRST set to the number of lines OUT already has.
"""
import subprocess
import sys
import time

MATE_CP = 3000


def main():
    src, dst, first, count, limit = sys.argv[1:6]
    first, count = int(first), int(count)
    binary = sys.argv[6] if len(sys.argv) > 6 else "/usr/games/stockfish"
    engine = subprocess.Popen([binary], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              text=True, bufsize=1)

    def send(command):
        engine.stdin.write(command + "\n")
        engine.stdin.flush()

    send("uci")
    send("setoption name Threads value 1")
    send("setoption name Hash value 16")
    send("isready")
    for line in engine.stdout:
        if line.startswith("readyok"):
            break
    started = time.time()
    with open(src) as positions, open(dst, "a") as out:
        for i, line in enumerate(positions):
            if i < first:
                continue
            if i >= first + count:
                break
            fen, result = (field.strip() for field in line.split("|"))
            send("position fen " + fen)
            send("go " + limit)
            cp = None
            for reply in engine.stdout:
                words = reply.split()
                if words and words[0] == "info" and "score" in words:
                    at = words.index("score")
                    if words[at + 1] == "cp":
                        cp = int(words[at + 2])
                    else:
                        cp = MATE_CP if int(words[at + 2]) > 0 else -MATE_CP
                elif words and words[0] == "bestmove":
                    break
            if cp is None:
                continue
            if fen.split()[1] == "b":
                cp = -cp
            out.write(f"{fen} | {result} | {cp}\n")
            if (i - first) % 5000 == 0:
                out.flush()
                print(i - first, round(time.time() - started, 1), flush=True)
    send("quit")


if __name__ == "__main__":
    main()
