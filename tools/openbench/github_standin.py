#!/usr/bin/env python3
"""A local stand-in for the parts of GitHub that OpenBench asks for, served from git repositories.

OpenBench's server looks an engine's branch or commit up through GitHub's REST API and its
clients download the source as a zip; neither works on a machine that cannot reach GitHub.
This service answers the same requests from local repositories, so an OpenBench instance
patched to accept its address (tools/openbench/openbench-standin.patch) runs unchanged
otherwise. Python standard library only.

A repository registered as OWNER/NAME=PATH is served at http://HOST:PORT/OWNER/NAME, the
address given to OpenBench as the engine's source. OpenBench builds its API address by
replacing `github.com` with `api.github.com/repos`, which leaves this address as it is, so
the API paths are answered under the repository address itself (and under /repos/ as well,
GitHub's own shape):

  GET  /OWNER/NAME/branches/BRANCH     {"name", "commit": {"sha", "commit": {"message", ...}}}
  GET  /OWNER/NAME/commits/REF         {"sha", "commit": {"message", "author", "committer"},
                                        "parents": [{"sha"}]}
  GET  /OWNER/NAME/compare/BASE...HEAD {"ahead_by", "behind_by", "total_commits", "status"}
                                       (JSON; BASE..HEAD gives the same as text for a browser)
  GET  /OWNER/NAME/zipball/REF         `git archive --format=zip` of REF, one top folder
  GET  /OWNER/NAME/archive/REF.zip     the same, as the client and match-runner downloads
  GET  /OWNER/NAME/commit/REF          `git show --stat REF` as text (OpenBench's links)
  GET  /OWNER/NAME                     the branches, as text

`git archive` honours the archived tree's .gitattributes, so `export-ignore` paths (Basalt's
data/) stay out of the zips, as they do in GitHub's. A BRANCH may contain slashes; a REF is
anything `git rev-parse` resolves to a commit (a branch, a tag, a full or short SHA).

  tools/openbench/github_standin.py [--host 127.0.0.1] [--port 8800]
      [--repo OWNER/NAME=PATH ...]    default: basalt/basalt = the repository holding this file
"""

import argparse
import http.server
import json
import os
import subprocess
import sys
import urllib.parse

HERE_REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class GitError(Exception):
    pass


def git(path, *args):
    result = subprocess.run(
        ["git", "-C", path, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    if result.returncode != 0:
        raise GitError(result.stderr.decode("utf-8", "replace").strip())
    return result.stdout


def safe_ref(ref):
    # A ref that starts with '-' would reach git as an option.
    return bool(ref) and not ref.startswith("-") and "\0" not in ref


def resolve(path, ref):
    """The full SHA of the commit REF names, or None."""
    if not safe_ref(ref):
        return None
    try:
        return git(path, "rev-parse", "--verify", "--quiet", ref + "^{commit}").decode().strip()
    except GitError:
        return None


def commit_json(path, sha, api_base):
    fields = git(
        path, "show", "-s", "--format=%an%x00%ae%x00%aI%x00%cn%x00%ce%x00%cI%x00%P%x00%B", sha
    ).decode("utf-8", "replace")
    an, ae, ad, cn, ce, cd, parents, message = fields.split("\0", 7)
    return {
        "sha": sha,
        "commit": {
            "message": message.rstrip("\n"),
            "author": {"name": an, "email": ae, "date": ad},
            "committer": {"name": cn, "email": ce, "date": cd},
        },
        "parents": [{"sha": p} for p in parents.split()],
        "url": f"{api_base}/commits/{sha}",
        "html_url": f"{api_base}/commit/{sha}",
    }


def zip_of(path, sha, prefix):
    return git(path, "archive", "--format=zip", f"--prefix={prefix}/", sha)


class Handler(http.server.BaseHTTPRequestHandler):
    repos = {}  # "owner/name" -> path

    def log_message(self, fmt, *args):
        sys.stderr.write("standin: %s %s\n" % (self.address_string(), fmt % args))

    def send(self, status, body, content_type):
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def send_json(self, data, status=200):
        body = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
        self.send(status, body.encode(), "application/json; charset=utf-8")

    def not_found(self, what="Not Found"):
        self.send_json({"message": what, "status": "404"}, 404)

    def do_HEAD(self):
        self.do_GET()

    def do_GET(self):
        parts = [urllib.parse.unquote(p) for p in urllib.parse.urlsplit(self.path).path.split("/") if p]
        if parts[:1] == ["repos"]:
            parts = parts[1:]
        if len(parts) < 2 or "/".join(parts[:2]) not in self.repos:
            return self.not_found()
        owner, name = parts[:2]
        path = self.repos[f"{owner}/{name}"]
        host = self.headers.get("Host") or "%s:%d" % self.server.server_address[:2]
        base = f"http://{host}/{owner}/{name}"
        action, rest = (parts[2], "/".join(parts[3:])) if len(parts) > 2 else ("", "")
        try:
            handler = {
                "": self.overview,
                "branches": self.branch,
                "commits": self.commit,
                "compare": self.compare,
                "zipball": self.zipball,
                "archive": self.archive,
                "commit": self.show,
            }.get(action)
            if handler is None:
                return self.not_found()
            handler(path, owner, name, rest, base)
        except GitError as e:
            self.send_json({"message": str(e)}, 500)

    def overview(self, path, owner, name, rest, base):
        text = git(path, "for-each-ref", "--format=%(objectname) %(refname:short)", "refs/heads")
        self.send(200, text, "text/plain; charset=utf-8")

    def branch(self, path, owner, name, branch, base):
        sha = resolve(path, "refs/heads/" + branch) if safe_ref(branch) else None
        if sha is None:
            return self.not_found("Branch not found")
        self.send_json({"name": branch, "commit": commit_json(path, sha, base), "protected": False})

    def commit(self, path, owner, name, ref, base):
        sha = resolve(path, ref)
        if sha is None:
            return self.not_found("No commit found for SHA: " + ref)
        self.send_json(commit_json(path, sha, base))

    def compare(self, path, owner, name, spec, base):
        as_json = "..." in spec
        left, _, right = spec.partition("..." if as_json else "..")
        left_sha, right_sha = resolve(path, left), resolve(path, right)
        if left_sha is None or right_sha is None:
            return self.not_found()
        if not as_json:
            text = git(path, "log", "--stat", f"{left_sha}..{right_sha}")
            return self.send(200, text, "text/plain; charset=utf-8")
        ahead = int(git(path, "rev-list", "--count", f"{left_sha}..{right_sha}"))
        behind = int(git(path, "rev-list", "--count", f"{right_sha}..{left_sha}"))
        status = ("identical" if not ahead and not behind else
                  "ahead" if not behind else "behind" if not ahead else "diverged")
        self.send_json({
            "status": status, "ahead_by": ahead, "behind_by": behind, "total_commits": ahead,
            "merge_base_commit": commit_json(
                path, git(path, "merge-base", left_sha, right_sha).decode().strip(), base),
            "html_url": f"{base}/compare/{left}...{right}",
        })

    def zipball(self, path, owner, name, ref, base):
        sha = resolve(path, ref)
        if sha is None:
            return self.not_found()
        self.send(200, zip_of(path, sha, f"{owner}-{name}-{sha[:7]}"), "application/zip")

    def archive(self, path, owner, name, rest, base):
        if not rest.endswith(".zip"):
            return self.not_found()
        ref = rest[: -len(".zip")]
        sha = resolve(path, ref)
        if sha is None:
            return self.not_found()
        self.send(200, zip_of(path, sha, f"{name}-{ref.replace('/', '-')}"), "application/zip")

    def show(self, path, owner, name, ref, base):
        sha = resolve(path, ref)
        if sha is None:
            return self.not_found()
        self.send(200, git(path, "show", "--stat", sha), "text/plain; charset=utf-8")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8800)
    parser.add_argument("--repo", action="append", default=[], metavar="OWNER/NAME=PATH")
    args = parser.parse_args()

    repos = {}
    for spec in args.repo or [f"basalt/basalt={HERE_REPO}"]:
        key, sep, path = spec.partition("=")
        if not sep or key.count("/") != 1 or not all(key.split("/")):
            parser.error(f"--repo {spec}: give OWNER/NAME=PATH")
        try:
            git(path, "rev-parse", "--git-dir")
        except GitError as e:
            parser.error(f"--repo {spec}: not a git repository ({e})")
        repos[key] = os.path.abspath(path)

    Handler.repos = repos
    server = http.server.ThreadingHTTPServer((args.host, args.port), Handler)
    port = server.server_address[1]  # --port 0 takes a free one
    for key, path in repos.items():
        print(f"standin: http://{args.host}:{port}/{key} -> {path}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
