//! The engine driver of tests/common listens to stderr: a line there fails the test that
//! drives the engine, whether the test reads it while waiting for a reply or it is left
//! unread when the engine is dropped, unless the test declared it with `expect_stderr`
//! (and then it must come); `run_engine` fails a command's run on a stderr line it was not
//! told to allow. Checked with a shell script standing in for the engine, so the checks
//! do not depend on a fault in the engine.

mod common;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::process::Command;

use common::{run_engine, Engine, PATIENCE};

/// A stand-in engine: answers `isready` with `readyok`, writes `say TEXT`'s text to stderr
/// and `ready` to stdout after it, and exits at the end of its input.
fn stand_in() -> Engine {
    let script = r#"
        while read -r line; do
            case "$line" in
                isready) echo readyok ;;
                say\ *) echo "${line#say }" >&2; echo ready ;;
            esac
        done
    "#;
    let mut command = Command::new("sh");
    command.args(["-c", script]);
    Engine::spawn(command)
}

/// Runs `test` and returns its panic message, or `None` if it passed.
fn failure(test: impl FnOnce()) -> Option<String> {
    let payload = catch_unwind(AssertUnwindSafe(test)).err()?;
    Some(match payload.downcast::<String>() {
        Ok(message) => *message,
        Err(payload) => payload
            .downcast::<&str>()
            .map_or_else(|_| "a panic".to_string(), |m| m.to_string()),
    })
}

#[test]
fn a_stderr_line_fails_the_test_read_or_unread() {
    // Read while the test waits for replies...
    let read = failure(|| {
        let mut e = stand_in();
        e.sync();
        e.send("say thread 'helper' panicked at src/search/node.rs");
        e.expect_line("ready", PATIENCE, |l| l == "ready");
        e.sync();
    });
    // ...or left for the drop: the script writes it before `ready`, so it is there when
    // the engine is dropped, whichever pipe the reader threads read first.
    let unread = failure(|| {
        let mut e = stand_in();
        e.send("say a late line");
        e.expect_line("ready", PATIENCE, |l| l == "ready");
    });
    for message in [read, unread] {
        let message = message.expect("a stderr line went unnoticed");
        assert!(message.contains("the engine wrote to stderr"), "{message}");
    }
}

#[test]
fn expected_stderr_passes_and_must_come() {
    let expected = failure(|| {
        let mut e = stand_in();
        e.expect_stderr("provoked on purpose");
        e.send("say a line provoked on purpose");
        e.expect_line("ready", PATIENCE, |l| l == "ready");
        e.sync();
    });
    assert_eq!(expected, None);
    let missing = failure(|| {
        let mut e = stand_in();
        e.expect_stderr("provoked on purpose");
        e.sync();
    });
    let message = missing.expect("an expected line that never came went unnoticed");
    assert!(message.contains("which the test expected"), "{message}");
}

#[test]
fn run_engine_allows_only_the_lines_it_is_told() {
    let script = "echo 'datagen: 1 game' >&2; echo 'oops' >&2";
    let allowed = failure(|| {
        run_engine(
            Command::new("sh").args(["-c", script]),
            PATIENCE,
            &["datagen: ", "oops"],
        );
    });
    assert_eq!(allowed, None);
    let refused = failure(|| {
        run_engine(
            Command::new("sh").args(["-c", script]),
            PATIENCE,
            &["datagen: "],
        );
    });
    let message = refused.expect("an unexpected stderr line went unnoticed");
    assert!(message.contains("[\"oops\"]"), "{message}");
}
