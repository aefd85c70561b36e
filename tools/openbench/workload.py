#!/usr/bin/env python3
"""Creates an OpenBench workload for Basalt (an SPRT, an SPSA tune or a datagen) through the
server's own form, as a logged-in user would submit it. Python standard library only.

  tools/openbench/workload.py test    --dev BRANCH [--base main] [--tc 4.0+0.04]
                                      [--bounds "[0.00, 10.00]"] [--confidence "[0.05, 0.05]"]
  tools/openbench/workload.py tune    --dev BRANCH --spsa-inputs FILE [--tc 1.0+0.01]
                                      [--pairs-per 8] [--iterations 25]
  tools/openbench/workload.py datagen --dev BRANCH [--base BRANCH] [--tc N=5000] [--games 1000]
                                      [--genfens-args "..."] [--upload-pgns VERBOSE]
                                      [--reverses NO] (YES replays each opening with the
                                      colours swapped: between two copies of one build at
                                      a node limit, the same game twice)
  tools/openbench/workload.py modify  --id N --action STOP|RESTART|DELETE|MODIFY
                                      [--priority P] [--throughput T] (MODIFY)
  common: [--server http://127.0.0.1:8000] [--user basalt] [--password basalt]
          [--source http://127.0.0.1:8800/basalt/basalt] [--book 8moves_v3.epd]
          [--options "Threads=1 Hash=8"] [--priority 0] [--workload-size 16] [--scale-nps 790000]

A branch's bench is the last `Bench: N` line in the history of that branch in this
repository (every functional commit carries one), given to the server explicitly: a data
commit's message may name another build's bench in passing, which OpenBench's own search of
the message would take. An SPSA tune plays iterations x pairs-per game pairs.
Prints the new workload's address, or the server's error and exits with status 1.
"""

import argparse
import http.cookiejar
import json
import os
import re
import subprocess
import sys
import urllib.parse
import urllib.request

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def bench_of(ref):
    log = subprocess.run(
        ["git", "-C", REPO, "log", "-1", "-E", "--grep=^Bench: [0-9]+", "--format=%B", ref, "--"],
        check=True, stdout=subprocess.PIPE, text=True,
    ).stdout
    benches = re.findall(r"^Bench: ([0-9]+)", log, re.MULTILINE)
    if not benches:
        sys.exit(f"workload: no `Bench: N` line in the history of {ref}")
    return benches[-1]


class Server:
    def __init__(self, url):
        self.url = url.rstrip("/")
        self.jar = http.cookiejar.CookieJar()
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.jar))

    def csrf(self):
        return next(c.value for c in self.jar if c.name == "csrftoken")

    def get(self, path):
        with self.opener.open(self.url + path) as response:
            return response.geturl(), response.read().decode("utf-8", "replace")

    def post(self, path, fields):
        fields = dict(fields, csrfmiddlewaretoken=self.csrf())
        request = urllib.request.Request(
            self.url + path, data=urllib.parse.urlencode(fields).encode(),
            headers={"Referer": self.url + path},
        )
        with self.opener.open(request) as response:
            return response.geturl(), response.read().decode("utf-8", "replace")

    def login(self, user, password):
        self.get("/login/")
        url, _ = self.post("/login/", {"username": user, "password": password})
        if url.rstrip("/").endswith("/login"):
            sys.exit("workload: the server refused the login")

    def workload_ids(self):
        _, page = self.get("/index/")
        return {int(n) for n in re.findall(r"/(?:test|tune|datagen)/([0-9]+)/", page)}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("kind", choices=["test", "tune", "datagen", "modify"])
    parser.add_argument("--server", default="http://127.0.0.1:8000")
    parser.add_argument("--user", default=os.environ.get("OB_USER", "basalt"))
    parser.add_argument("--password", default=os.environ.get("OB_PASSWORD", "basalt"))
    parser.add_argument("--source", default="http://127.0.0.1:8800/basalt/basalt")
    parser.add_argument("--dev")
    parser.add_argument("--id", type=int)
    parser.add_argument("--action", choices=["STOP", "RESTART", "DELETE", "RESTORE", "MODIFY"])
    parser.add_argument("--base", default="main")
    parser.add_argument("--tc")
    parser.add_argument("--options", default="Threads=1 Hash=8")
    parser.add_argument("--book", default="8moves_v3.epd")
    parser.add_argument("--bounds", default="[0.00, 10.00]")
    parser.add_argument("--confidence", default="[0.05, 0.05]")
    parser.add_argument("--priority", type=int, default=0)
    parser.add_argument("--throughput", type=int, default=1000)
    parser.add_argument("--workload-size", type=int, default=16)
    parser.add_argument("--scale-nps", type=int, default=790000)
    parser.add_argument("--win-adj", default="movecount=3 score=400")
    parser.add_argument("--draw-adj", default="movenumber=40 movecount=8 score=10")
    parser.add_argument("--info", default="")
    parser.add_argument("--spsa-inputs")
    parser.add_argument("--pairs-per", type=int, default=8)
    parser.add_argument("--iterations", type=int, default=25)
    parser.add_argument("--games", type=int, default=1000)
    parser.add_argument("--genfens-args", default="")
    parser.add_argument("--reverses", choices=["YES", "NO"], default="NO")
    parser.add_argument("--upload-pgns", default=None)
    args = parser.parse_args()
    if args.kind == "modify":
        if args.id is None or args.action is None:
            parser.error("modify needs --id and --action")
        server = Server(args.server)
        server.login(args.user, args.password)
        server.get(f"/test/{args.id}/")
        fields = {"priority": args.priority, "throughput": args.throughput}
        url, page = server.post(f"/test/{args.id}/{args.action}/", {k: str(v) for k, v in fields.items()})
        error = re.search(r'class="error-message">\s*<pre>(.*?)</pre>', page, re.S)
        if error:
            sys.exit("workload: the server refused it: " + error.group(1))
        print(json.dumps({"id": args.id, "action": args.action, "url": url}))
        return
    if not args.dev:
        parser.error("--dev BRANCH is needed")

    tc = args.tc or {"test": "4.0+0.04", "tune": "1.0+0.01", "datagen": "N=5000"}[args.kind]
    base = args.dev if args.kind == "tune" else args.base
    fields = {
        "dev_engine": "Basalt", "dev_repo": args.source, "dev_branch": args.dev,
        "dev_bench": bench_of(args.dev), "dev_network": "", "dev_options": args.options,
        "dev_time_control": tc,
        "base_engine": "Basalt", "base_repo": args.source, "base_branch": base,
        "base_bench": bench_of(base), "base_network": "", "base_options": args.options,
        "base_time_control": tc,
        "book_name": args.book, "upload_pgns": args.upload_pgns or "FALSE",
        "priority": args.priority, "throughput": args.throughput,
        "workload_size": args.workload_size,
        "syzygy_wdl": "DISABLED", "syzygy_adj": "DISABLED",
        "win_adj": args.win_adj, "draw_adj": args.draw_adj,
        "scale_method": "BASE", "scale_nps": args.scale_nps, "info": args.info,
    }
    if args.kind == "test":
        fields.update(test_mode="SPRT", test_bounds=args.bounds,
                      test_confidence=args.confidence, test_max_games=0)
    if args.kind == "tune":
        if not args.spsa_inputs:
            parser.error("tune needs --spsa-inputs FILE (`basalt spsa-inputs` prints one)")
        with open(args.spsa_inputs) as f:
            inputs = "\n".join(line.strip() for line in f if line.strip())
        fields.update(
            spsa_inputs=inputs, spsa_reporting_type="BATCHED", spsa_distribution_type="SINGLE",
            spsa_alpha=0.602, spsa_gamma=0.101, spsa_A_ratio=0.1,
            spsa_iterations=args.iterations, spsa_pairs_per=args.pairs_per,
        )
    if args.kind == "datagen":
        fields.update(
            datagen_max_games=args.games, datagen_custom_genfens=args.genfens_args,
            datagen_play_reverses=args.reverses, upload_pgns=args.upload_pgns or "VERBOSE",
            win_adj="None", draw_adj="None",
        )

    server = Server(args.server)
    server.login(args.user, args.password)
    before = server.workload_ids()
    server.get(f"/{args.kind}/new/")
    url, page = server.post(f"/{args.kind}/new/", {k: str(v) for k, v in fields.items()})
    if url.rstrip("/").endswith("/new"):
        error = re.search(r'class="error-message">\s*<pre>(.*?)</pre>', page, re.S)
        sys.exit("workload: the server refused it: %s" % (error.group(1) if error else url))
    created = sorted(server.workload_ids() - before)
    print(json.dumps({"kind": args.kind, "ids": created,
                      "urls": [f"{server.url}/{args.kind}/{i}/" for i in created]}))


if __name__ == "__main__":
    main()
