#!/usr/bin/env python3
"""How long a UCI engine takes to make a hash table ready, and whether a game's first move pays.

usage: tools/hash_timing.py start ENGINE CLOCK_MS INC_MS THREADS MB [MB ...]
       tools/hash_timing.py clear ENGINE THREADS MB [MB ...]

`start`: the start of a game as cutechess-cli and most GUIs send it, one fresh engine per
size: `setoption name Threads`, `setoption name Hash value MB`, `isready` (time to
`readyok`), `ucinewgame`, `isready` (time to `readyok`), `position startpos`, `go wtime
CLOCK_MS btime CLOCK_MS winc INC_MS binc INC_MS` (time to `bestmove`), a second move the
same way, then `ucinewgame` + `isready` after those searches (a used table is cleared) and
`quit` (time to exit). `info string` lines are shown on stderr.

`clear` (Basalt): a `go depth 1` waits for the table work before it searches, so the time
from `setoption name Hash` to its `bestmove` is the allocation (every page made resident),
and from `ucinewgame` to the `bestmove` of the next `go depth 1` the clearing of the used
table (three times); the depth-1 search adds about a millisecond.
"""
import subprocess
import sys
import time


class Engine:
    def __init__(self, path, threads):
        self.proc = subprocess.Popen(
            [path], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1
        )
        self.send("uci")
        self.wait("uciok")
        self.send(f"setoption name Threads value {threads}")
        self.timed("isready", until="readyok")

    def send(self, line):
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()

    def wait(self, prefix):
        while True:
            line = self.proc.stdout.readline()
            if not line:
                sys.exit("the engine ended")
            if line.startswith("info string"):
                print("   ", line.strip(), file=sys.stderr)
            if line.startswith(prefix):
                return line.strip()

    def timed(self, *lines, until):
        """Sends `lines`, reads up to the line starting with `until`: (ms, that line)."""
        start = time.perf_counter()
        for line in lines:
            self.send(line)
        reply = self.wait(until)
        return (time.perf_counter() - start) * 1000, reply

    def quit(self):
        start = time.perf_counter()
        self.send("quit")
        self.proc.wait()
        return (time.perf_counter() - start) * 1000


def game_start(path, clock, inc, threads, mb):
    e = Engine(path, threads)
    allocated, _ = e.timed(f"setoption name Hash value {mb}", "isready", until="readyok")
    new_game, _ = e.timed("ucinewgame", "isready", until="readyok")
    go = f"go wtime {clock} btime {clock} winc {inc} binc {inc}"
    first, best = e.timed("position startpos", go, until="bestmove")
    second, _ = e.timed(f"position startpos moves {best.split()[1]} e7e5", go, until="bestmove")
    cleared, _ = e.timed("ucinewgame", "isready", until="readyok")
    quit = e.quit()
    print(
        f"Hash {mb:5}: readyok {allocated:6.0f} ms after setoption, {new_game:5.0f} ms after "
        f"ucinewgame; move 1 {first:4.0f} ms, move 2 {second:4.0f} ms; readyok {cleared:5.0f} ms "
        f"after the next ucinewgame; quit {quit:3.0f} ms",
        flush=True,
    )


def clear_times(path, threads, mb):
    e = Engine(path, threads)
    e.send("position startpos")
    allocated, _ = e.timed(f"setoption name Hash value {mb}", "go depth 1", until="bestmove")
    clears = [e.timed("ucinewgame", "go depth 1", until="bestmove")[0] for _ in range(3)]
    e.quit()
    print(
        f"Hash {mb:5} MB, Threads {threads}: allocate {allocated:6.0f} ms; clear "
        + ", ".join(f"{c:.0f}" for c in clears)
        + " ms",
        flush=True,
    )


def main(args):
    if len(args) >= 6 and args[0] == "start":
        for mb in args[5:]:
            game_start(args[1], int(args[2]), int(args[3]), int(args[4]), int(mb))
    elif len(args) >= 4 and args[0] == "clear":
        for mb in args[3:]:
            clear_times(args[1], int(args[2]), int(mb))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
