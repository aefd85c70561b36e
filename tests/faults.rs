//! A fault stays contained: whatever panics inside a search, the engine says so in one
//! `info string`, answers the `go` with a legal `bestmove` and serves on (`isready`, the
//! next `go`, `quit`). The panics are made on purpose through `BASALT_FAULT`, which only a
//! build with the `fault-injection` feature reads (src/search/fault.rs); this file is
//! built only with it: `cargo test --release --features fault-injection --test faults`
//! (`.ci/run` runs it).

mod common;

use std::time::Duration;

use common::*;

/// An engine that panics where `fault` says (`main:N` or `helper:N`), once.
fn engine_with_fault(fault: &str) -> Engine {
    let mut command = basalt();
    command.env("BASALT_FAULT", fault);
    // Rust's default hook without a backtrace: the panic's place, its message and (for a
    // process's first panic) a note on RUST_BACKTRACE; nothing else may reach stderr.
    command.env("RUST_BACKTRACE", "0");
    let mut engine = Engine::spawn(command);
    engine.expect_stderr(" panicked at ");
    engine.expect_stderr("fault injected at node");
    engine.expect_stderr("RUST_BACKTRACE");
    engine.allow_blank_stderr();
    assert!(engine.sync().is_empty(), "output before any command");
    engine
}

/// The `info string`s of a search that say a thread panicked.
fn panic_notes(search: &Search) -> Vec<&str> {
    search
        .infos
        .iter()
        .filter(|l| l.starts_with("info string") && l.contains("panicked"))
        .map(String::as_str)
        .collect()
}

/// The one `info string` of a search saying a thread panicked.
fn one_panic_note(search: &Search) -> &str {
    match panic_notes(search)[..] {
        [note] => note,
        _ => panic!("not one panic note: {:?}", search.infos),
    }
}

/// After the fault: `isready` is answered, the next `go` searches as usual, `quit` ends the
/// engine; and the panic was written to stderr, by Rust's default hook, naming `thread`.
fn serves_on(mut e: Engine, thread: &str) {
    e.sync();
    e.send(&format!("position fen {KIWIPETE}"));
    let search = e.go("go depth 7");
    check_search(KIWIPETE, false, &search);
    assert_eq!(search.last_exact().depth, 7);
    assert!(panic_notes(&search).is_empty(), "{:?}", search.infos);
    e.send("quit");
    let (status, _) = e.wait_exit(PATIENCE);
    assert!(status.success(), "{status}");
    e.rest_of_output(PATIENCE);
    // "thread 'search' (1234) panicked at src/...", the thread id since Rust 1.89.
    let named = format!("thread '{thread}'");
    assert!(
        e.stderr()
            .iter()
            .any(|l| l.starts_with(&named) && l.contains(" panicked at ")),
        "no panic of {named} on stderr: {:?}",
        e.stderr()
    );
}

#[test]
fn a_panic_in_the_main_search_plays_the_best_move_found_and_serves_on() {
    let _cpu = shared_cpu();
    let mut e = engine_with_fault("main:3000");
    e.send(&format!("position fen {KIWIPETE}"));
    let search = e.go("go depth 30");
    let note = one_panic_note(&search);
    assert!(
        note.starts_with("info string search thread panicked: fault injected at node")
            && note.ends_with("; playing the best move found before it"),
        "{note}"
    );
    assert_eq!(search.infos.last().map(String::as_str), Some(note));
    // The move of the last iteration shown.
    assert_legal_bestmove(KIWIPETE, &search);
    assert_eq!(
        search.best(),
        search.last_exact().pv[0],
        "{:?}",
        search.infos
    );
    serves_on(e, "search");
}

#[test]
fn a_panic_before_any_iteration_plays_a_legal_move() {
    let _cpu = shared_cpu();
    let mut e = engine_with_fault("main:1");
    e.send("position startpos");
    let search = e.go("go depth 10 searchmoves g1f3 b1c3");
    let note = one_panic_note(&search);
    assert!(note.ends_with("; playing the first legal move"), "{note}");
    assert!(search.iterations().is_empty(), "{:?}", search.infos);
    // The first of `searchmoves` that is legal, in the order given.
    assert_eq!(search.best(), "g1f3", "{}", search.bestmove);
    serves_on(e, "search");
}

#[test]
fn a_panic_in_a_helper_is_reported_and_the_search_goes_on() {
    let _cpu = shared_cpu();
    let mut e = engine_with_fault("helper:1");
    e.sync_after("setoption name Threads value 2");
    e.send(&format!("position fen {KIWIPETE}"));
    // The helper runs at the lowest priority: on a busy core it may get no time slice
    // while the main thread searches, and then searches (and panics) only once the main
    // thread has finished. Its panic is reported before the `bestmove` of the search it
    // panicked in, or if the main thread had finished first, of the next one; the
    // searches go on until it is.
    let mut reported = Vec::new();
    for _ in 0..100 {
        let search = e.go("go movetime 200");
        check_search(KIWIPETE, false, &search);
        reported.extend(panic_notes(&search).into_iter().map(String::from));
        if !reported.is_empty() {
            break;
        }
    }
    assert_eq!(reported.len(), 1, "{reported:?}");
    assert_eq!(
        reported[0],
        "info string helper thread 1 panicked: fault injected at node 1 (BASALT_FAULT); \
         the search went on without it"
    );
    serves_on(e, "helper-1");
}

#[test]
fn a_panic_in_bench_ends_the_bench_only() {
    let _cpu = shared_cpu();
    // The first bench position takes more than 5000 nodes at depth 10.
    let mut e = engine_with_fault("main:5000");
    e.send("bench 10");
    let reply = e.expect_line("bench's last line", Duration::from_secs(60), |l| {
        l.starts_with("info string bench panicked")
    });
    assert!(
        reply.line.contains("fault injected at node"),
        "{}",
        reply.line
    );
    serves_on(e, "search");
}
