#!/usr/bin/env python3
"""Seconds per move and search depth by move number, per engine, from match.py PGNs
(comments of the form {+0.40/12 0.184s}).

usage: tools/pgn_time_usage.py GAMES.pgn [MORE.pgn ...]
"""
import re
import statistics
import sys
from collections import defaultdict

import chess.pgn

COMMENT = re.compile(r"([+-]?(?:\d+\.\d+|M\d+))/(\d+) (\d+\.\d+)s")
# move-number buckets of ten; the last holds every move from 61 on
LAST_BUCKET = 6
LABELS = [f"{10 * i + 1}-{10 * i + 10}" for i in range(LAST_BUCKET)] + ["61+"]


def main():
    seconds = defaultdict(lambda: defaultdict(list))  # engine -> bucket -> [s]
    depths = defaultdict(list)
    for path in sys.argv[1:]:
        with open(path) as f:
            while (game := chess.pgn.read_game(f)) is not None:
                names = {chess.WHITE: game.headers["White"], chess.BLACK: game.headers["Black"]}
                board = game.board()
                for node in game.mainline():
                    mover = board.turn
                    move_number = board.fullmove_number
                    board.push(node.move)
                    m = COMMENT.search(node.comment or "")
                    if not m:
                        continue
                    bucket = min((move_number - 1) // 10, LAST_BUCKET)
                    seconds[names[mover]][bucket].append(float(m.group(3)))
                    depths[names[mover]].append(int(m.group(2)))
    print("| engine | " + " | ".join(LABELS) + " | mean | median depth |")
    print("| --- " * (len(LABELS) + 3) + "|")
    for name, by_bucket in seconds.items():
        cells = [f"{statistics.mean(by_bucket[i]):.3f}" if by_bucket[i] else "-" for i in range(len(LABELS))]
        every = [s for i in range(len(LABELS)) for s in by_bucket[i]]
        print(f"| {name} | " + " | ".join(cells)
              + f" | {statistics.mean(every):.3f} | {statistics.median(depths[name]):.0f} |")


if __name__ == "__main__":
    main()
