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
BUCKETS = [(1, 10), (11, 20), (21, 30), (31, 40), (41, 50), (51, 60), (61, 10_000)]


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
                    for i, (lo, hi) in enumerate(BUCKETS):
                        if lo <= move_number <= hi:
                            seconds[names[mover]][i].append(float(m.group(3)))
                    depths[names[mover]].append(int(m.group(2)))
    head = ["1-10", "11-20", "21-30", "31-40", "41-50", "51-60", "61+"]
    print("| engine | " + " | ".join(head) + " | mean | median depth |")
    print("| --- " * (len(head) + 3) + "|")
    for name, by_bucket in seconds.items():
        cells = [f"{statistics.mean(by_bucket[i]):.3f}" if by_bucket[i] else "-" for i in range(len(head))]
        every = [s for i in range(len(head)) for s in by_bucket[i]]
        print(f"| {name} | " + " | ".join(cells)
              + f" | {statistics.mean(every):.3f} | {statistics.median(depths[name]):.0f} |")


if __name__ == "__main__":
    main()
