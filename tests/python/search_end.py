#!/usr/bin/env python3
"""What python-chess reads from Basalt at the end of a search, and during a long one.

Usage: search_end.py <path to the basalt binary>

python-chess's `analyse` (like GUIs and cutechess-cli's PGN comments) keeps the last value
the engine sent for each field, so the last `info` line before `bestmove` must carry the
search's totals:

1. `Limit(nodes=20000)` reports between 20,000 nodes and 20,000 plus one polling interval
   (the engine checks its limits every 1,024 nodes), and the last info line before
   `bestmove` is a complete, exact line with a legal PV whose first move is the one played.
   With MultiPV 3 and UCI_ShowWDL the last three lines are lines 1, 2 and 3 with the totals
   and a wdl each.
2. `Limit(time=0.5)` reports a time within 10% of 500 ms. The engine's `time` counts from
   when it starts the search, after reading `go`, to its end, before it writes `bestmove`,
   so it can be no more than the wall time of the `analyse` call, which python-chess's
   own round trips and a busy machine lengthen: the engine's figure is the one checked.
3. Infinite analysis for four seconds shows `currmove` (legal, numbered from 1) from three
   seconds into the search on, and none before; the last line after `stop` is a complete
   line again.

Exit status 0 when everything held; otherwise 1 with the reason and the recent UCI traffic.
"""

import os
import sys
import threading
import time

import chess
import chess.engine

# Shared helpers: UCI traffic capture, watchdog and legal-line checks.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from selfplay import (  # noqa: E402
    WATCHDOG,
    check_legal_line,
    fail,
    finish,
    install_traffic_logger,
    popen_engine,
)

FEN = "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1"
NODES = 20000
# The engine reads its node and time limits at every node and every 1,024 nodes; the other
# threads' counts (not used here: one thread) are published as often.
POLLING_INTERVAL = 1024
FULL_LINE = ["depth", "seldepth", "multipv", "score", "nodes", "nps", "hashfull", "tbhits", "time", "pv"]


def check_full_line(board, info, what, merged=False):
    """`merged`: `analyse`'s dictionary, every line's fields merged, where a `lowerbound`
    seen earlier stays set."""
    for key in FULL_LINE:
        if key not in info:
            fail(f"{what}: no {key!r} in {info}")
    if not merged and (info.get("lowerbound") or info.get("upperbound") or "currmove" in info):
        fail(f"{what}: not an exact line: {info}")
    check_legal_line(board, info["pv"], f"{what} pv")
    millis = info["time"] * 1000
    if millis >= 1 and abs(info["nps"] - info["nodes"] * 1000 / round(millis)) > info["nps"] / 10 + 1:
        fail(f"{what}: nps {info['nps']} does not match {info['nodes']} nodes in {millis:.0f} ms")


def search_lines(engine, board, limit, what, multipv=None):
    """Runs one search; returns every info line read (no `info string`) and the move played."""
    with engine.analysis(board, limit, multipv=multipv) as analysis:
        lines = [info for info in analysis if "string" not in info]
        played = analysis.wait().move
    if not lines:
        fail(f"{what}: no info lines")
    return lines, played


def check_node_limit(engine):
    board = chess.Board(FEN)
    WATCHDOG.arm(20, "analyse nodes")
    info = engine.analyse(board, chess.engine.Limit(nodes=NODES))
    WATCHDOG.disarm()
    if not NODES <= info.get("nodes", 0) <= NODES + POLLING_INTERVAL:
        fail(f"analyse Limit(nodes={NODES}) reports {info.get('nodes')} nodes: {info}")
    check_full_line(board, info, "analyse nodes", merged=True)

    WATCHDOG.arm(20, "analysis nodes")
    lines, played = search_lines(engine, board, chess.engine.Limit(nodes=NODES), "nodes")
    WATCHDOG.disarm()
    last = lines[-1]
    check_full_line(board, last, "last line of go nodes")
    if last["pv"][0] != played or not NODES <= last["nodes"] <= NODES + POLLING_INTERVAL:
        fail(f"go nodes {NODES}: last line {last}, bestmove {played}")

    WATCHDOG.arm(20, "analysis nodes multipv 3")
    engine.configure({"UCI_ShowWDL": True})
    lines, played = search_lines(engine, board, chess.engine.Limit(nodes=NODES), "multipv", 3)
    engine.configure({"UCI_ShowWDL": False})
    WATCHDOG.disarm()
    final = lines[-3:]
    if [i.get("multipv") for i in final] != [1, 2, 3] or final[0]["pv"][0] != played:
        fail(f"go nodes {NODES} multipv 3: last lines {final}, bestmove {played}")
    for line in final:
        check_full_line(board, line, "multipv 3 last lines")
        if "wdl" not in line or line["nodes"] != final[0]["nodes"]:
            fail(f"go nodes {NODES} multipv 3: {line}")
    if len({i["pv"][0] for i in final}) != 3:
        fail(f"go nodes {NODES} multipv 3: the last lines do not start with distinct moves: {final}")
    return (
        f"Limit(nodes={NODES}): {info['nodes']} nodes, depth {info['depth']}, time {info['time']:.3f} s; "
        f"multipv 3 last lines at {final[0]['nodes']} nodes"
    )


def check_movetime(engine):
    board = chess.Board()
    WATCHDOG.arm(10, "analyse time")
    started = time.monotonic()
    info = engine.analyse(board, chess.engine.Limit(time=0.5))
    wall = time.monotonic() - started
    WATCHDOG.disarm()
    check_full_line(board, info, "analyse time", merged=True)
    reported = info["time"]
    if not 0.45 <= reported <= 0.55:
        fail(f"analyse Limit(time=0.5) reports time {reported:.3f} s: {info}")
    # Whole milliseconds, rounded down: never more than the time python-chess waited.
    if reported > wall:
        fail(f"analyse Limit(time=0.5) reports {reported:.3f} s after {wall:.3f} s")
    return f"Limit(time=0.5): reports {reported:.3f} s, depth {info['depth']}, wall time {wall:.3f} s"


def check_currmove(engine):
    board = chess.Board()
    legal = list(board.legal_moves)
    WATCHDOG.arm(15, "infinite analysis")
    started = time.monotonic()
    seen = []
    with engine.analysis(board) as analysis:
        threading.Timer(4.0, analysis.stop).start()
        lines = []
        for info in analysis:
            if "string" in info:
                continue
            lines.append(info)
            if "currmove" in info:
                seen.append((time.monotonic() - started, info))
        analysis.wait()
    WATCHDOG.disarm()
    if not seen:
        fail("infinite analysis for 4 s: no currmove")
    first_at = seen[0][0]
    if first_at < 3.0:
        fail(f"currmove {first_at:.3f} s into the analysis: {seen[0][1]}")
    for _, info in seen:
        number = info.get("currmovenumber", 0)
        if info["currmove"] not in legal or not 1 <= number <= len(legal) or "depth" not in info:
            fail(f"currmove line {info}")
    last = lines[-1]
    check_full_line(board, last, "last line after stop")
    if last["time"] < 3.0:
        fail(f"last line after 4 s of analysis reports time {last['time']:.3f} s: {last}")
    return (
        f"infinite analysis, 4 s: {len(seen)} currmove lines, the first {first_at:.3f} s in; "
        f"last line depth {last['depth']} time {last['time']:.3f} s"
    )


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    install_traffic_logger()
    started = time.perf_counter()
    WATCHDOG.arm(15, "start-up and `uci`")
    engine = popen_engine(sys.argv[1])
    WATCHDOG.disarm()

    summaries = [check_node_limit(engine), check_movetime(engine), check_currmove(engine)]

    return finish([engine], summaries, "search_end", started)


if __name__ == "__main__":
    sys.exit(main())
