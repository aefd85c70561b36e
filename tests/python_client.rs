//! Basalt driven by python-chess, the UCI client lichess-bot is built on: a pondering game of
//! the engine against itself at 2 s + 0.02 s, a short Chess960 game and one `analyse`
//! (`tests/python/selfplay.py` does the work and explains the checks); MultiPV, WDL,
//! lichess-bot's options, tablebases and pondering games (`tests/python/features.py`); and
//! the last `info` line of node-, time- and stop-ended searches and `currmove` in a long
//! analysis (`tests/python/search_end.py`). The engines write nothing to stderr: the
//! scripts keep each one's stderr in a file and fail if it is not empty.
//!
//! Without python-chess the test is skipped with a message, except under CI (the `CI`
//! environment variable is set), where the CI script installs it and a skip would hide a
//! broken setup.

mod common;

use std::io::Read;
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::thread;
use std::time::{Duration, Instant};

const SCRIPT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/python/selfplay.py");
const FEATURES_SCRIPT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/python/features.py");
const SEARCH_END_SCRIPT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/python/search_end.py");

/// The script ends in well under a minute; this only catches a hang the script's own
/// watchdog missed.
const DEADLINE: Duration = Duration::from_secs(150);

fn python_chess_available() -> bool {
    Command::new("python3")
        .args(["-c", "import chess, chess.engine"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|status| status.success())
}

/// Reads a child's pipe to the end on its own thread, so a full pipe never blocks the child.
fn drain(mut pipe: impl Read + Send + 'static) -> thread::JoinHandle<String> {
    thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = pipe.read_to_end(&mut bytes);
        String::from_utf8_lossy(&bytes).into_owned()
    })
}

/// Runs `script` with python3 (binary path and `args` as arguments) and fails the test if it
/// fails or hangs; prints its output either way.
fn run_script(script: &str, args: &[&str]) {
    // One script at a time: each runs two engines playing on the clock, and two scripts
    // side by side on a two-core machine would be testing the scheduler.
    static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());
    let _turn = ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    if !python_chess_available() {
        if std::env::var_os("CI").is_some() {
            panic!("python-chess not installed (pip install chess); CI is set, so it is required");
        }
        let message = "SKIPPED: python-chess not installed (pip install chess)";
        println!("{message}");
        eprintln!("{message}");
        return;
    }

    let start = Instant::now();
    let mut child = Command::new("python3")
        .arg(script)
        .arg(common::binary())
        .args(args)
        .env("BASALT_SEED", common::STRENGTH_SEED)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("cannot start python3");
    let stdout = drain(child.stdout.take().expect("stdout is piped"));
    let stderr = drain(child.stderr.take().expect("stderr is piped"));
    let status = loop {
        if let Some(status) = child.try_wait().expect("cannot wait for python3") {
            break Some(status);
        }
        if start.elapsed() > DEADLINE {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        thread::sleep(Duration::from_millis(20));
    };
    let (stdout, stderr) = (
        stdout.join().unwrap_or_default(),
        stderr.join().unwrap_or_default(),
    );
    print!("{stdout}");
    eprint!("{stderr}");
    println!("{script} took {:.1?}", start.elapsed());
    match status {
        None => panic!("{script} did not finish within {DEADLINE:?}"),
        Some(status) => assert!(status.success(), "{script} failed ({status})"),
    }
}

#[test]
fn python_chess_selfplay() {
    run_script(SCRIPT, &[]);
}

/// MultiPV 3 with UCI_ShowWDL through python-chess's info parser, lichess-bot's options set
/// with `configure`, a tablebase analysis, and a standard and a Chess960 game with pondering
/// (`tests/python/features.py`).
#[test]
fn python_chess_multipv_wdl_options_and_ponder() {
    run_script(FEATURES_SCRIPT, &[common::syzygy_dir()]);
}

/// `analyse` with `Limit(nodes=20000)` reports 20,000 nodes (up to one polling interval
/// more), `Limit(time=0.5)` a time within 10% of 500 ms, and four seconds of infinite
/// analysis show `currmove` lines from the third second on (`tests/python/search_end.py`).
#[test]
fn python_chess_reads_the_totals_at_the_end_and_currmove_in_a_long_analysis() {
    run_script(SEARCH_END_SCRIPT, &[]);
}
