#!/usr/bin/env python3
"""Basalt's newer UCI features through python-chess, configured the way lichess-bot does.

Usage: features.py <path to the basalt binary> <Syzygy table directory>

1. Every option lichess-bot's default config.yml passes (Move Overhead, Threads, Hash), the
   ones its documentation suggests (SyzygyPath, UCI_ShowWDL) and UCI_Opponent are set with
   `engine.configure`; Ponder is managed by python-chess (`play(ponder=True)`), so configuring
   it directly must be refused, as lichess-bot expects.
2. `analysis` with MultiPV 3 and UCI_ShowWDL: every info line python-chess reads must parse
   (no complaint logged) and carry a score and wdl; the final lines are 3 distinct legal PVs.
3. A KRvK analysis with the tables reports tablebase hits and a winning score.
4. A short standard game and a short Chess960 game, both engines pondering.
5. UCI_LimitStrength with UCI_Elo 1320 (a casual bot): ten moves from the start position,
   all legal and not all the same.

Exit status 0 when everything held; otherwise 1 with the reason and the recent UCI traffic.
"""

import os
import sys
import time

import chess
import chess.engine

# Shared helpers: UCI traffic capture, watchdog, legal-line checks and the game loop.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import selfplay  # noqa: E402
from selfplay import WATCHDOG, check_legal_line, fail, finish, play_game  # noqa: E402

NEW_OPTIONS = [
    "MultiPV",
    "UCI_ShowWDL",
    "UCI_LimitStrength",
    "UCI_Elo",
    "UCI_Opponent",
    "SyzygyPath",
    "SyzygyProbeDepth",
    "SyzygyProbeLimit",
    "Syzygy50MoveRule",
]


def start_engine(binary, syzygy):
    WATCHDOG.arm(15, "start-up and `uci`")
    engine = selfplay.popen_engine(binary)
    WATCHDOG.disarm()
    for name in NEW_OPTIONS:
        if name not in engine.options:
            fail(f"python-chess does not see option {name!r}: {sorted(engine.options)}")
    if engine.options["MultiPV"].max != 256:
        fail(f"MultiPV: {engine.options['MultiPV']}")
    # lichess-bot's config.yml `uci_options` (its defaults plus the Syzygy/WDL lines).
    lichess_bot_options = {
        "Move Overhead": 100,
        "Threads": 2,
        "Hash": 256,
        "SyzygyPath": syzygy,
        "UCI_ShowWDL": True,
        "UCI_Opponent": "BOT 2000 computer Some Bot",
    }
    WATCHDOG.arm(15, f"configure {lichess_bot_options}")
    engine.configure(lichess_bot_options)
    engine.ping()
    WATCHDOG.disarm()
    for managed in ["Ponder", "MultiPV", "UCI_Chess960"]:
        try:
            engine.configure({managed: True if managed == "Ponder" else 1})
            fail(f"python-chess let us configure the managed option {managed}")
        except chess.engine.EngineError:
            pass
    return engine


def check_multipv_analysis(engine):
    board = chess.Board("r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1")
    WATCHDOG.arm(30, "analysis multipv 3")
    seen = 0
    latest = {}
    with engine.analysis(board, chess.engine.Limit(depth=7), multipv=3) as analysis:
        for info in analysis:
            if "string" in info or "depth" not in info:
                continue
            seen += 1
            # A fail-low (upperbound) line may come without a move to show.
            keys = ["multipv", "score", "wdl", "nodes", "tbhits"]
            if not info.get("upperbound"):
                keys.append("pv")
            for key in keys:
                if key not in info:
                    fail(f"analysis: no {key!r} in {info}")
            wdl = info["wdl"].relative
            if wdl.wins + wdl.draws + wdl.losses != 1000:
                fail(f"analysis: wdl does not sum to 1000: {info}")
            if "pv" in info:
                check_legal_line(board, info["pv"], "analysis pv")
            if not info.get("upperbound") and not info.get("lowerbound"):
                latest[info["multipv"]] = info
    WATCHDOG.disarm()
    if sorted(latest) != [1, 2, 3]:
        fail(f"analysis: multipv lines {sorted(latest)} instead of 1, 2, 3")
    firsts = {latest[k]["pv"][0] for k in latest}
    if len(firsts) != 3:
        fail(f"analysis: the 3 lines do not start with distinct moves: {latest}")

    # The list form lichess-bot and most clients use.
    WATCHDOG.arm(30, "analyse multipv 3")
    infos = engine.analyse(board, chess.engine.Limit(depth=6), multipv=3)
    WATCHDOG.disarm()
    if len(infos) != 3 or len({i["pv"][0] for i in infos}) != 3:
        fail(f"analyse multipv 3: {infos}")
    for info in infos:
        if "wdl" not in info:
            fail(f"analyse: no wdl in {info}")
    lines = "; ".join(
        f"{i['multipv']}: {i['pv'][0].uci()} {i['score'].relative} wdl {tuple(i['wdl'].relative)}"
        for i in infos
    )
    return f"analysis multipv 3: {seen} info lines parsed; depth 6 lines {lines}"


def check_tablebase_analysis(engine):
    board = chess.Board("8/8/8/4k3/8/8/8/KR6 w - - 0 1")
    WATCHDOG.arm(20, "tablebase analyse")
    info = engine.analyse(board, chess.engine.Limit(depth=6))
    WATCHDOG.disarm()
    score = info["score"].relative
    if info.get("tbhits", 0) <= 0 or not (score.is_mate() or score.score() > 20000):
        fail(f"KRvK with tables: {info}")
    return f"KRvK with tables: score {score}, tbhits {info['tbhits']}, wdl {tuple(info['wdl'].relative)}"


def check_limit_strength(engine):
    """A casual bot's settings: UCI_LimitStrength with UCI_Elo, moves played on a clock.

    On one thread: the engine's picks then follow its seed alone (BASALT_SEED, which the
    Rust test sets), so whether the ten moves vary does not depend on the scheduler.
    """
    WATCHDOG.arm(10, "configure UCI_LimitStrength")
    engine.configure({"UCI_LimitStrength": True, "UCI_Elo": 1320, "Threads": 1})
    WATCHDOG.disarm()
    board = chess.Board()
    chosen = set()
    for _ in range(10):
        WATCHDOG.arm(10, "limited-strength move")
        limit = chess.engine.Limit(white_clock=60, black_clock=60)
        result = engine.play(board, limit, info=chess.engine.INFO_ALL)
        WATCHDOG.disarm()
        if result.move not in board.legal_moves:
            fail(f"UCI_Elo 1320 played an illegal move {result.move}")
        chosen.add(result.move.uci())
    WATCHDOG.arm(10, "configure UCI_LimitStrength off")
    engine.configure({"UCI_LimitStrength": False, "Threads": 2})
    WATCHDOG.disarm()
    if len(chosen) < 2:
        fail(f"UCI_Elo 1320 played the same first move ten times: {chosen}")
    return f"UCI_Elo 1320 from the start position, 10 searches: {sorted(chosen)}"


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    binary, syzygy = sys.argv[1], sys.argv[2]
    selfplay.install_traffic_logger()

    started = time.perf_counter()
    white = start_engine(binary, syzygy)
    black = start_engine(binary, syzygy)
    engines = {chess.WHITE: white, chess.BLACK: black}

    summaries = [
        check_multipv_analysis(white),
        check_limit_strength(black),
        check_tablebase_analysis(black),
    ]
    summaries.append(
        play_game(engines, chess.Board(), 2.0, 0.02, 40, ponder=True, label="standard game, ponder")
    )
    summaries.append(
        play_game(
            engines,
            chess.Board.from_chess960_pos(418),
            2.0,
            0.02,
            40,
            ponder=True,
            label="chess960 game, ponder",
        )
    )

    return finish((white, black), summaries, "features", started)


if __name__ == "__main__":
    sys.exit(main())
