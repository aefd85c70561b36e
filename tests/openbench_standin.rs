//! `tools/openbench/github_standin.py`, the stand-in for GitHub a private OpenBench instance
//! uses here (docs/openbench.md), serving this repository: a commit's JSON carries the SHA
//! and message OpenBench reads (`sha`, `commit.message`), an unknown branch is a 404, a
//! compare gives `ahead_by`, and the zip of a commit holds the tree without `data/`
//! (`export-ignore`), under one top folder, as the client unpacks it.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

struct StandIn {
    child: Child,
    port: u16,
}

impl Drop for StandIn {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts the stand-in on a free port, serving this repository as basalt/basalt.
fn start() -> StandIn {
    let mut child = Command::new("python3")
        .arg(format!("{ROOT}/tools/openbench/github_standin.py"))
        .args(["--port", "0", "--repo"])
        .arg(format!("basalt/basalt={ROOT}"))
        .stdout(Stdio::piped())
        .spawn()
        .expect("python3 runs the stand-in");
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    // standin: http://127.0.0.1:PORT/basalt/basalt -> PATH
    let port = line
        .split("127.0.0.1:")
        .nth(1)
        .and_then(|rest| rest.split('/').next())
        .and_then(|port| port.parse().ok())
        .unwrap_or_else(|| panic!("no port in {line:?}"));
    StandIn { child, port }
}

/// GET `path`: the status code and the body.
fn get(standin: &StandIn, path: &str) -> (u16, Vec<u8>) {
    let mut stream = TcpStream::connect(("127.0.0.1", standin.port)).unwrap();
    write!(
        stream,
        "GET {path} HTTP/1.0\r\nHost: 127.0.0.1:{}\r\n\r\n",
        standin.port
    )
    .unwrap();
    let mut response = Vec::new();
    stream.read_to_end(&mut response).unwrap();
    let end = response
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("headers");
    let head = String::from_utf8_lossy(&response[..end]).into_owned();
    let status = head.split(' ').nth(1).unwrap().parse().unwrap();
    (status, response[end + 4..].to_vec())
}

fn git(args: &[&str]) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(ROOT)
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}");
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn the_stand_in_answers_openbench_from_git() {
    let standin = start();
    let head = git(&["rev-parse", "HEAD"]).trim().to_string();
    let message = git(&["log", "-1", "--format=%B", "HEAD"]);

    let (status, body) = get(&standin, "/basalt/basalt/commits/HEAD");
    assert_eq!(status, 200);
    let json = String::from_utf8(body).unwrap();
    assert!(json.contains(&format!("\"sha\": \"{head}\"")), "{json}");
    let first_line = message.lines().next().unwrap();
    let escaped = first_line.replace('\\', "\\\\").replace('"', "\\\"");
    assert!(json.contains(&escaped), "{json}");
    // GitHub's API shape under /repos/ answers the same.
    let (status, same) = get(&standin, "/repos/basalt/basalt/commits/HEAD");
    assert_eq!((status, String::from_utf8(same).unwrap()), (200, json));

    let (status, _) = get(&standin, "/basalt/basalt/branches/no-such-branch-here");
    assert_eq!(status, 404);
    let (status, _) = get(&standin, "/other/repo/commits/HEAD");
    assert_eq!(status, 404);
    let (status, _) = get(&standin, "/basalt/basalt/commits/--output=x");
    assert_eq!(status, 404);

    let (status, body) = get(&standin, &format!("/basalt/basalt/compare/{head}...{head}"));
    assert_eq!(status, 200);
    let json = String::from_utf8(body).unwrap();
    assert!(
        json.contains("\"ahead_by\": 0") && json.contains("\"identical\""),
        "{json}"
    );

    let (status, zip) = get(&standin, &format!("/basalt/basalt/zipball/{head}"));
    assert_eq!(status, 200);
    assert!(zip.starts_with(b"PK\x03\x04"), "not a zip");
    let top = format!("basalt-basalt-{}/", &head[..7]);
    let names = String::from_utf8_lossy(&zip);
    assert!(
        names.contains(&format!("{top}Makefile")),
        "no Makefile under {top}"
    );
    assert!(names.contains(&format!("{top}src/main.rs")));
    assert!(
        !names.contains(&format!("{top}data/")),
        "data/ is export-ignore"
    );
    let (status, archive) = get(&standin, &format!("/basalt/basalt/archive/{head}.zip"));
    assert_eq!(status, 200);
    assert!(String::from_utf8_lossy(&archive).contains(&format!("basalt-{head}/Makefile")));
}
