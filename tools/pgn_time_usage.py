#!/usr/bin/env python3
"""Seconds per move and search depth by move number, per engine, from match.py PGNs
(comments of the form {+0.40/12 0.184s}), and the median clock left after the
engine's 20th move and at the game's end, replayed from the TimeControl header
(base minus each move's time plus the increment).

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
CLOCK_CHECKPOINT = 20  # own moves


def time_control(game):
    base, _, increment = game.headers.get("TimeControl", "").partition("+")
    try:
        return float(base), float(increment or 0)
    except ValueError:
        return None


def main():
    seconds = defaultdict(lambda: defaultdict(list))  # engine -> bucket -> [s]
    depths = defaultdict(list)
    clock_left = defaultdict(lambda: defaultdict(list))  # engine -> "20"/"end" -> [s]
    for path in sys.argv[1:]:
        with open(path) as f:
            while (game := chess.pgn.read_game(f)) is not None:
                names = {chess.WHITE: game.headers["White"], chess.BLACK: game.headers["Black"]}
                board = game.board()
                control = time_control(game)
                clock = {colour: control[0] for colour in names} if control else None
                own_moves = {colour: 0 for colour in names}
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
                    own_moves[mover] += 1
                    if clock:
                        clock[mover] += control[1] - float(m.group(3))
                        if own_moves[mover] == CLOCK_CHECKPOINT:
                            clock_left[names[mover]][str(CLOCK_CHECKPOINT)].append(clock[mover])
                if clock:
                    for colour, name in names.items():
                        clock_left[name]["end"].append(clock[colour])
    print("| engine | " + " | ".join(LABELS) + " | mean | median depth |")
    print("| --- " * (len(LABELS) + 3) + "|")
    for name, by_bucket in seconds.items():
        cells = [
            f"{statistics.mean(by_bucket[i]):.3f}" if by_bucket[i] else "-"
            for i in range(len(LABELS))
        ]
        every = [s for i in range(len(LABELS)) for s in by_bucket[i]]
        print(f"| {name} | " + " | ".join(cells)
              + f" | {statistics.mean(every):.3f} | {statistics.median(depths[name]):.0f} |")
    if clock_left:
        print()
        print(
            f"| engine | median clock left after move {CLOCK_CHECKPOINT} (s) "
            "| median at game end (s) |"
        )
        print("| --- | --- | --- |")
        for name, at in clock_left.items():
            cells = [
                f"{statistics.median(at[k]):.2f}" if at[k] else "-"
                for k in (str(CLOCK_CHECKPOINT), "end")
            ]
            print(f"| {name} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
