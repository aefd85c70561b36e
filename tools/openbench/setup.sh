#!/bin/sh
# Sets up and starts a private OpenBench instance for Basalt on this machine, with a local
# stand-in for GitHub (github_standin.py), one server and one client (docs/openbench.md).
#
#   tools/openbench/setup.sh OPENBENCH_DIR FASTCHESS_DIR
#
# OPENBENCH_DIR  a checkout of https://github.com/AndyGrant/OpenBench (work tree, not bare)
# FASTCHESS_DIR  a checkout of https://github.com/Disservin/fastchess
#
# Environment (defaults in brackets):
#   OB_STATE     logs and pid files [OPENBENCH_DIR/../state]; the server's database is
#                OpenBench's own, OPENBENCH_DIR/db.sqlite3, its PGNs OPENBENCH_DIR/Media
#   OB_USER, OB_PASSWORD      the admin account the client and scripts use [basalt, basalt]
#   OB_PORT      the server's port [8000];  STANDIN_PORT  the stand-in's port [8800]
#   OB_BOOKS     a folder holding 8moves_v3.epd, put in the client's Books/ so it is not
#                fetched from GitHub [none: the client downloads it]
#   OB_CPUS      the cores everything is pinned to (taskset -c) [0]
#   OB_THREADS   the client's -T [1]
#   OB_CARGO_TARGET_DIR   CARGO_TARGET_DIR for the client's builds, so the dependencies are
#                compiled once [OB_STATE/cargo-target]
#
# Run again, it leaves what is done (patch, config, user) and starts what is not running.
set -eu

[ $# -eq 2 ] || { sed -n '2,23p' "$0"; exit 2; }
OB=$(cd "$1" && pwd)
FC=$(cd "$2" && pwd)
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
STATE=${OB_STATE:-$(dirname "$OB")/state}
USER_NAME=${OB_USER:-basalt}
PASSWORD=${OB_PASSWORD:-basalt}
PORT=${OB_PORT:-8000}
SPORT=${STANDIN_PORT:-8800}
CPUS=${OB_CPUS:-0}
THREADS=${OB_THREADS:-1}
STANDIN=http://127.0.0.1:$SPORT/
PIN="taskset -c $CPUS"
mkdir -p "$STATE"

[ -f "$OB/manage.py" ] && [ -f "$OB/Client/client.py" ] || { echo "$OB: not an OpenBench checkout"; exit 1; }
[ -f "$FC/Makefile" ] || { echo "$FC: not a fastchess checkout"; exit 1; }

echo "== requirements (PyPI)"
$PIN python3 -m pip install -q -r "$OB/requirements.txt" -r "$OB/Client/requirements.txt"

echo "== patch: accept the stand-in's address as a source ($HERE/openbench-standin.patch)"
if git -C "$OB" apply --check "$HERE/openbench-standin.patch" 2>/dev/null; then
    git -C "$OB" apply "$HERE/openbench-standin.patch"
elif git -C "$OB" apply -R --check "$HERE/openbench-standin.patch" 2>/dev/null; then
    echo "already applied"
else
    echo "the patch applies neither way: compare $OB/OpenBench/workloads/verify_workload.py"; exit 1
fi

echo "== Engines/Basalt.json and Config/config.json"
sed "s|http://127.0.0.1:8800/|$STANDIN|" "$HERE/Basalt.json" > "$OB/Engines/Basalt.json"
python3 - "$OB/Config/config.json" "$STANDIN" <<'EOF'
import json, sys
path, standin = sys.argv[1], sys.argv[2]
config = json.load(open(path))
if "Basalt" not in config["engines"]:
    config["engines"].append("Basalt")
# The client and the match runner are fetched through the stand-in too.
config["client_repo_url"] = standin + "AndyGrant/OpenBench"
config["fastchess_repo_url"] = standin + "Disservin/fastchess"
assert "8moves_v3.epd" in config["books"]
json.dump(config, open(path, "w"), indent=4)
EOF
# Config/ and Engines/ are the instance's own settings: keep them out of `git apply --check`.

echo "== fastchess, built from $FC as the client's fastchess-ob"
if [ ! -x "$OB/Client/fastchess-ob" ]; then
    (cd "$FC" && $PIN make -j)
    cp "$FC/fastchess" "$OB/Client/fastchess-ob"
fi
"$OB/Client/fastchess-ob" --version | head -1

if [ -n "${OB_BOOKS:-}" ]; then
    mkdir -p "$OB/Client/Books"
    [ -f "$OB/Client/Books/8moves_v3.epd" ] || cp "$OB_BOOKS/8moves_v3.epd" "$OB/Client/Books/"
fi

echo "== database (migrate) and the admin account $USER_NAME"
(cd "$OB" && $PIN python3 manage.py migrate -v 0)
(cd "$OB" && OB_USER="$USER_NAME" OB_PASSWORD="$PASSWORD" STANDIN_REPO="${STANDIN}basalt/basalt" $PIN python3 manage.py shell -c '
import os
from django.contrib.auth.models import User
from OpenBench.models import Profile
name, password = os.environ["OB_USER"], os.environ["OB_PASSWORD"]
user = User.objects.filter(username=name).first() or User.objects.create_superuser(name, "", password)
profile = Profile.objects.filter(user=user).first() or Profile(user=user)
profile.enabled = profile.approver = True
profile.engine = "Basalt"
profile.repos = {"Basalt": os.environ.get("STANDIN_REPO", "")}
profile.save()
')

running() { [ -f "$STATE/$1.pid" ] && kill -0 "$(cat "$STATE/$1.pid")" 2>/dev/null; }

echo "== stand-in on port $SPORT"
if ! running standin; then
    $PIN python3 "$HERE/github_standin.py" --port "$SPORT" \
        --repo "basalt/basalt=$REPO" --repo "Disservin/fastchess=$FC" --repo "AndyGrant/OpenBench=$OB" \
        >> "$STATE/standin.log" 2>&1 &
    echo $! > "$STATE/standin.pid"
fi

echo "== server on port $PORT"
if ! running server; then
    (cd "$OB" && OPENBENCH_GITHUB_STANDIN="$STANDIN" exec $PIN python3 manage.py runserver --noreload \
        "127.0.0.1:$PORT" >> "$STATE/server.log" 2>&1) &
    echo $! > "$STATE/server.pid"
fi
for _ in $(seq 60); do
    curl -sf "http://127.0.0.1:$PORT/index/" > /dev/null && break
    sleep 1
done

echo "== client: -T $THREADS on core(s) $CPUS"
if ! running client; then
    (cd "$OB/Client" && CARGO_TARGET_DIR="${OB_CARGO_TARGET_DIR:-$STATE/cargo-target}" exec $PIN \
        python3 -u client.py -U "$USER_NAME" -P "$PASSWORD" -S "http://127.0.0.1:$PORT" \
        -T "$THREADS" -N 1 --no-client-downloads >> "$STATE/client.log" 2>&1) &
    echo $! > "$STATE/client.pid"
fi

cat <<EOF
server    http://127.0.0.1:$PORT/ (user $USER_NAME), log $STATE/server.log
stand-in  ${STANDIN}basalt/basalt, log $STATE/standin.log
client    log $STATE/client.log
pids      $STATE/*.pid
EOF
