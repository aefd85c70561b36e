#!/usr/bin/env python3
"""Fits Basalt's win/draw/loss model (UCI_ShowWDL) on its own games.

Usage: tools/fit_wdl.py GAMES.pgn [MORE.pgn ...]

Reads every game in which both players are Basalt builds (White and Black names start with
"basalt"), takes each move comment that carries a score in cutechess form (`{+0.35/12 0.10s}`,
pawns from the mover's view; mate scores `+M5/..` are skipped), and pairs the score with the
game's result from the mover's view. Then it fits

    P(win)  = 1 / (1 + exp(-(cp - a) / b))
    P(loss) = 1 / (1 + exp(-(-cp - a) / b))
    P(draw) = 1 - P(win) - P(loss)

by maximum likelihood (Nelder-Mead on the mean log-likelihood) and prints a and b with the
data counts. Only python-chess is needed (for the PGN parsing).
"""

import math
import re
import sys

import chess.pgn

SCORE = re.compile(r"^\s*([+-]?\d+(?:\.\d+)?)/\d+")


def samples(paths):
    """(cp, outcome) pairs, outcome 1 = the mover won, 0 = draw, -1 = the mover lost."""
    games = 0
    skipped_games = 0
    data = []
    for path in paths:
        with open(path, encoding="utf-8", errors="replace") as f:
            while True:
                game = chess.pgn.read_game(f)
                if game is None:
                    break
                white = game.headers.get("White", "").lower()
                black = game.headers.get("Black", "").lower()
                result = game.headers.get("Result", "*")
                white_score = {"1-0": 1, "0-1": -1, "1/2-1/2": 0}.get(result)
                both_basalt = white.startswith("basalt") and black.startswith("basalt")
                if not both_basalt or white_score is None:
                    skipped_games += 1
                    continue
                games += 1
                node = game
                while node.variations:
                    mover = node.board().turn
                    node = node.variation(0)
                    match = SCORE.match(node.comment or "")
                    if not match:
                        continue
                    cp = round(float(match.group(1)) * 100)
                    outcome = white_score if mover == chess.WHITE else -white_score
                    data.append((cp, outcome))
    return data, games, skipped_games


def log_likelihood(data, a, b):
    if b <= 1:
        return -1e9
    total = 0.0
    for cp, outcome in data:
        win = 1.0 / (1.0 + math.exp(max(-700.0, min(700.0, -(cp - a) / b))))
        loss = 1.0 / (1.0 + math.exp(max(-700.0, min(700.0, -(-cp - a) / b))))
        p = win if outcome == 1 else loss if outcome == -1 else 1.0 - win - loss
        total += math.log(max(p, 1e-12))
    return total / len(data)


def nelder_mead(f, start, step, iterations=300):
    """Maximises f over two parameters."""
    points = [list(start), [start[0] + step[0], start[1]], [start[0], start[1] + step[1]]]
    values = [f(*p) for p in points]
    for _ in range(iterations):
        order = sorted(range(3), key=lambda i: -values[i])
        points = [points[i] for i in order]
        values = [values[i] for i in order]
        centre = [(points[0][k] + points[1][k]) / 2 for k in range(2)]
        worst = points[2]
        reflected = [centre[k] + (centre[k] - worst[k]) for k in range(2)]
        r = f(*reflected)
        if r > values[0]:
            expanded = [centre[k] + 2 * (centre[k] - worst[k]) for k in range(2)]
            e = f(*expanded)
            points[2], values[2] = (expanded, e) if e > r else (reflected, r)
        elif r > values[1]:
            points[2], values[2] = reflected, r
        else:
            contracted = [centre[k] + 0.5 * (worst[k] - centre[k]) for k in range(2)]
            c = f(*contracted)
            if c > values[2]:
                points[2], values[2] = contracted, c
            else:
                for i in (1, 2):
                    points[i] = [
                        points[0][k] + 0.5 * (points[i][k] - points[0][k]) for k in range(2)
                    ]
                    values[i] = f(*points[i])
        if abs(values[0] - values[2]) < 1e-10:
            break
    best = max(range(3), key=lambda i: values[i])
    return points[best], values[best]


def main():
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    data, games, skipped = samples(sys.argv[1:])
    if not data:
        print("no scored positions found", file=sys.stderr)
        return 1
    wins = sum(1 for _, o in data if o == 1)
    draws = sum(1 for _, o in data if o == 0)
    losses = len(data) - wins - draws
    print(f"games used: {games} (skipped {skipped} not Basalt vs Basalt or without a result)")
    print(f"positions: {len(data)} (mover won {wins}, drew {draws}, lost {losses})")
    (a, b), ll = nelder_mead(lambda a, b: log_likelihood(data, a, b), (150.0, 100.0), (50.0, 30.0))
    print(f"fitted a = {a:.1f} cp, b = {b:.1f} cp (mean log-likelihood {ll:.4f})")
    # How the model reads a few scores.
    for cp in (0, 50, 100, 200, 400):
        win = 1000 / (1 + math.exp(-(cp - a) / b))
        loss = 1000 / (1 + math.exp(-(-cp - a) / b))
        print(f"  {cp:>4} cp: wdl {win:.0f} {1000 - win - loss:.0f} {loss:.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
