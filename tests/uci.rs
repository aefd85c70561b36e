//! Drives the built `basalt` binary over UCI the way a GUI does: one engine process per test,
//! commands on its stdin, replies read from its stdout (the driver is `tests/common`). Every
//! wait has a deadline, so an engine that hangs fails the test instead of stalling CI.

mod common;

use std::thread;
use std::time::{Duration, Instant};

use common::{
    assert_legal_bestmove, board, check_search, exclusive_cpu, percentiles, play_line, shared_cpu,
    syzygy_dir, Engine, Info, Reply, Score, Search, KIWIPETE, PATIENCE, PROMPT, STARTPOS,
};
use shakmaty::uci::UciMove;
use shakmaty::{CastlingMode, Chess, Color, Position, Role, Square};

const ITALIAN: &str = "r1bqk2r/pppp1ppp/2n2n2/2b1p3/2B1P3/3P1N2/PPP2PPP/RNBQK2R w KQkq - 1 5";

#[test]
fn handshake_lists_id_and_options() {
    let _cpu = shared_cpu();
    let mut e = Engine::start();
    e.send("uci");
    let reply = e.expect_line("uciok", PATIENCE, |l| l == "uciok");
    let lines = reply.before;
    assert!(
        lines
            .first()
            .is_some_and(|l| l.starts_with("id name Basalt")),
        "first line should be `id name Basalt ...`: {lines:?}"
    );
    assert!(
        lines.iter().any(|l| l.starts_with("id author ")),
        "{lines:?}"
    );
    for option in [
        "option name Hash type spin default 16 min 1 max ",
        "option name Clear Hash type button",
        "option name Threads type spin default 1 min 1 max ",
        "option name Move Overhead type spin default ",
        "option name Ponder type check default false",
        "option name UCI_Chess960 type check default false",
        "option name MultiPV type spin default 1 min 1 max 256",
        "option name UCI_ShowWDL type check default false",
        "option name UCI_Opponent type string default <empty>",
        "option name UCI_LimitStrength type check default false",
        "option name UCI_Elo type spin default 1500 min 1320 max 3000",
        "option name SyzygyPath type string default <empty>",
        "option name SyzygyProbeDepth type spin default 1 min 1 max 100",
        "option name SyzygyProbeLimit type spin default 7 min 0 max 7",
        "option name Syzygy50MoveRule type check default true",
        "option name UseNNUE type check default true",
        "option name EvalFile type string default <embedded>",
    ] {
        assert!(
            lines.iter().any(|l| l.starts_with(option)),
            "no line starting {option:?} in {lines:?}"
        );
    }
    for line in &lines {
        assert!(
            line.starts_with("id ") || line.starts_with("option name "),
            "unexpected line in the handshake: {line:?}"
        );
    }
    assert!(e.sync().is_empty());
    // A second `uci` (some GUIs probe twice) gives the same answer.
    e.send("uci");
    let again = e.expect_line("uciok", PATIENCE, |l| l == "uciok");
    assert_eq!(again.before, lines);
}

/// Trials per thread count in the CI run of the latency test; the ignored full run does 200.
const CI_LATENCY_TRIALS: usize = 40;

/// The percentile of their samples the CI latency tests hold to their bound. The engine's
/// own part of a latency is well under a millisecond (docs/reliability.md); a sample near
/// the 200 ms bound is the machine not running the engine (another program's time slice,
/// a burst of page faults), which a busy CI machine does now and then. The 95th percentile
/// of 40 samples lets two such samples through (`common::percentile`); a real regression,
/// such as the command thread waiting for a search or a stop flag not polled, slows every
/// sample and still fails. The ignored runs hold the 99th percentile of 200 samples, which
/// also lets two through.
const CI_PERCENTILE: usize = 95;

#[test]
fn commands_are_prompt_during_a_search() {
    latency_during_search(1, CI_LATENCY_TRIALS, CI_PERCENTILE);
}

/// Lazy SMP: with helper threads (more than this machine's cores) the main thread still
/// answers at once, stops every helper and prints one legal bestmove.
#[test]
fn commands_are_prompt_with_four_threads() {
    latency_during_search(4, CI_LATENCY_TRIALS, CI_PERCENTILE);
}

/// The issue's figure: 99th percentile over 200 trials per command, 1 and 4 threads.
/// `cargo test --release --test uci -- --ignored --nocapture latency_percentiles`
#[test]
#[ignore = "about a minute; run by hand for the 200-trial percentiles"]
fn latency_percentiles_over_200_trials() {
    latency_during_search(1, 200, 99);
    latency_during_search(4, 200, 99);
}

/// `isready` during a search is answered at once, without a `bestmove`; `isready` after
/// `stop` is answered after the stopped search's `bestmove`, so a client that waits for
/// `readyok` before its next `go` never takes that `bestmove` for the new search's. Both
/// orders, also right after a thread count whose pool is still being built.
#[test]
fn isready_after_stop_comes_after_the_bestmove() {
    let _cpu = exclusive_cpu();
    let mut e = Engine::ready();
    for (trial, threads) in [1, 4, 1, 256, 1, 64].into_iter().enumerate() {
        e.send(&format!("setoption name Threads value {threads}"));
        e.send(&format!("position fen {KIWIPETE}"));
        e.start_go("go infinite");
        if trial % 2 == 0 {
            e.wait_for_info();
        }
        // isready, then stop.
        let sent = e.send("isready");
        let reply = e.expect_line("readyok during the search", PATIENCE, |l| {
            l == "readyok" || l.starts_with("bestmove")
        });
        assert_eq!(reply.line, "readyok", "Threads={threads}");
        assert!(
            reply.at - sent < PROMPT,
            "Threads={threads}: {:?}",
            reply.at - sent
        );
        // stop, then isready at once: bestmove first.
        e.send("stop");
        e.send("isready");
        let reply = e.expect_line("bestmove", PATIENCE, |l| {
            l == "readyok" || l.starts_with("bestmove")
        });
        assert!(
            reply.line.starts_with("bestmove"),
            "Threads={threads}: readyok before the stopped search's bestmove"
        );
        assert_legal_bestmove(
            KIWIPETE,
            &Search {
                infos: reply.before,
                bestmove: reply.line,
                elapsed: Duration::ZERO,
            },
        );
        e.expect_line("readyok after the bestmove", PATIENCE, |l| l == "readyok");
        assert_no_second_bestmove(&mut e);
    }
}

/// The issue's figures for option changes: `isready` and `stop` latencies while `Threads`
/// jumps to 32..1024 and back, `Hash` to 128..1024 MB and back and `SyzygyPath` changes,
/// each change sent during a search or between two. Prints the 95th and 99th percentiles.
/// An `isready` right after a change between searches waits for the change (issue 71):
/// its time is printed apart and not held to the latency limit.
#[test]
fn commands_are_prompt_while_options_change() {
    option_churn_latency(CI_LATENCY_TRIALS, CI_PERCENTILE, PROMPT, PROMPT);
}

/// `cargo test --release --test uci -- --ignored --nocapture option_churn_percentiles`;
/// holds the 10 ms / 50 ms targets with `BASALT_QUIET_MACHINE` set (`common::quiet_machine`).
#[test]
#[ignore = "about a minute; run by hand for the 200-trial percentiles"]
fn option_churn_percentiles_over_200_trials() {
    let (ready, stop) = (Duration::from_millis(10), Duration::from_millis(50));
    if common::quiet_machine() {
        option_churn_latency(200, 99, ready, stop);
    } else {
        println!(
            "targets of a quiet machine (BASALT_QUIET_MACHINE unset, not asserted): isready \
             p99 {ready:?}, stop p99 {stop:?}; holding {PROMPT:?}"
        );
        option_churn_latency(200, 99, PROMPT, PROMPT);
    }
}

/// The option changes of the churn, in turn: big values, then back to small ones.
fn churn_option(trial: usize) -> String {
    let tables = syzygy_dir();
    let changes = [
        "Threads value 32".to_string(),
        "Hash value 256".to_string(),
        "Threads value 1024".to_string(),
        "Threads value 2".to_string(),
        format!("SyzygyPath value {tables}"),
        "Hash value 1024".to_string(),
        "Threads value 64".to_string(),
        "Hash value 16".to_string(),
        "Threads value 256".to_string(),
        "SyzygyPath value /nonexistent/syzygy".to_string(),
        "Hash value 128".to_string(),
        "Threads value 1".to_string(),
    ];
    format!("setoption name {}", changes[trial % changes.len()])
}

/// Asserts the `percentile`th percentile of each command's latencies against its limit.
fn option_churn_latency(
    trials: usize,
    percentile: usize,
    ready_limit: Duration,
    stop_limit: Duration,
) {
    let _cpu = exclusive_cpu();
    let mut e = Engine::ready();
    let (mut ready, mut stop, mut applied) = (vec![], vec![], vec![]);
    for trial in 0..trials {
        let fen = if trial % 2 == 0 { STARTPOS } else { KIWIPETE };
        let change = churn_option(trial);
        e.send(&format!("position fen {fen}"));
        let during = trial % 4 < 2;
        if !during {
            // Between searches: the change is applied while the engine is idle, and
            // `readyok` waits for it.
            let sent = e.send(&change);
            e.send("isready");
            let reply = e.expect_line("readyok after setoption", PATIENCE, |l| l == "readyok");
            applied.push(reply.at - sent);
        }
        let sent = e.send("go infinite");
        // Right after `go`, while the search may still wait for the pool or table.
        e.send("isready");
        let reply = e.expect_line("readyok after go", PATIENCE, |l| {
            l == "readyok" || l.starts_with("bestmove")
        });
        assert_eq!(reply.line, "readyok", "{change}");
        ready.push(reply.at - sent);
        if trial % 3 != 0 {
            thread::sleep(Duration::from_millis(5 + (trial % 8) as u64 * 5));
        }
        if during {
            // During a search: applied when it ends, so the next search waits for it.
            e.send(&change);
            let sent = e.send("isready");
            let reply = e.expect_line("readyok after setoption", PATIENCE, |l| {
                l == "readyok" || l.starts_with("bestmove")
            });
            assert_eq!(reply.line, "readyok", "{change}");
            ready.push(reply.at - sent);
        }
        let sent = e.send("stop");
        let reply = e.expect_line("bestmove", PATIENCE, |l| l.starts_with("bestmove"));
        stop.push(reply.at - sent);
        assert_legal_bestmove(
            fen,
            &Search {
                infos: reply.before,
                bestmove: reply.line,
                elapsed: Duration::ZERO,
            },
        );
        if during {
            // The next search waits for the change; `stop` must still be prompt.
            e.send("go infinite");
            let sent = e.send("stop");
            let reply = e.expect_line("bestmove", PATIENCE, |l| l.starts_with("bestmove"));
            stop.push(reply.at - sent);
        }
    }
    let mut report = Vec::new();
    let mut worst = Vec::new();
    for (name, samples, limit) in [
        ("isready", &ready, ready_limit),
        ("stop", &stop, stop_limit),
    ] {
        let p = percentiles(samples);
        let (p95, p99, max) = (p.p95, p.p99, p.max);
        report.push(format!(
            "{name} p95 {p95:.2?} p99 {p99:.2?} max {max:.2?} ({} samples)",
            samples.len()
        ));
        let held = common::percentile(samples, percentile);
        if held > limit {
            worst.push(format!("{name} p{percentile} {held:?} > {limit:?}"));
        }
    }
    let p = percentiles(&applied);
    report.push(format!(
        "readyok after a change between searches p50 {:.2?} p95 {:.2?} max {:.2?}",
        p.p50, p.p95, p.max
    ));
    e.send("setoption name Threads value 1");
    e.send("setoption name Hash value 16");
    assert!(e.sync().iter().all(|l| l.starts_with("info string")));
    println!("option churn, {trials} trials: {}", report.join("; "));
    assert!(worst.is_empty(), "{}", worst.join("; "));
}

/// Latencies of `isready` (to `readyok`), `stop` and `ponderhit` (to `bestmove`) and `quit`
/// (to process exit), each sent while a search is deep in progress. `ponderhit` ends a
/// `go ponder movetime 1` search: its clock starts at the ponderhit, so `bestmove` is due
/// at once. `quit` needs a fresh engine per trial. Asserts the `percentile`th percentile of
/// each command's latencies.
fn latency_during_search(threads: usize, trials: usize, percentile: usize) {
    let _cpu = exclusive_cpu();
    let mut e = Engine::ready();
    e.send(&format!("setoption name Threads value {threads}"));
    e.sync();
    let (mut ready, mut stop, mut ponderhit, mut quit) = (vec![], vec![], vec![], vec![]);
    for trial in 0..trials {
        let fen = if trial % 2 == 0 { STARTPOS } else { KIWIPETE };
        // Let the search get some way in, a different distance each time.
        let think = Duration::from_millis(20 + (trial % 16) as u64 * 5);
        e.send(&format!("position fen {fen}"));
        e.start_go("go infinite");
        e.wait_for_info();
        thread::sleep(think);
        let sent = e.send("isready");
        let reply = e.expect_line("readyok during search", PATIENCE, |l| l == "readyok");
        ready.push(reply.at - sent);
        assert!(
            !reply.before.iter().any(|l| l.starts_with("bestmove")),
            "go infinite ended by itself: {:?}",
            reply.before
        );
        let (search, latency) = e.stop();
        stop.push(latency);
        assert_legal_bestmove(fen, &search);
        assert_no_second_bestmove(&mut e);

        e.start_go("go ponder movetime 1");
        e.wait_for_info();
        thread::sleep(think);
        let sent = e.send("ponderhit");
        let search = e.take_search(sent, PATIENCE);
        ponderhit.push(search.elapsed);
        assert_legal_bestmove(fen, &search);
        assert_no_second_bestmove(&mut e);

        let mut q = Engine::ready();
        q.send(&format!("setoption name Threads value {threads}"));
        q.send(&format!("position fen {fen}"));
        q.start_go("go infinite");
        q.wait_for_info();
        thread::sleep(think);
        q.send("quit");
        let (status, took) = q.wait_exit(PATIENCE);
        assert!(
            status.success(),
            "quit during a search: exit status {status}"
        );
        quit.push(took);
    }
    let mut worst = Duration::ZERO;
    let mut report = Vec::new();
    for (name, samples) in [
        ("isready", &ready),
        ("stop", &stop),
        ("ponderhit", &ponderhit),
        ("quit", &quit),
    ] {
        let p = percentiles(samples);
        let (p50, p99, max) = (p.p50, p.p99, p.max);
        worst = worst.max(common::percentile(samples, percentile));
        report.push(format!("{name} p50 {p50:?} p99 {p99:?} max {max:?}"));
    }
    println!("Threads={threads}, {trials} trials: {}", report.join("; "));
    assert!(
        worst < PROMPT,
        "{percentile}th percentile latency {worst:?}: {}",
        report.join("; ")
    );
}

/// `quit` during a search while other programs keep every core busy (here: one spinning
/// thread per core in this test process, at normal priority). The process ends only once
/// each thread has run again, and the `SCHED_IDLE` helpers get almost no CPU next to
/// normal programs: at `quit` the engine lifts them back to the normal policy, which needs
/// `CAP_SYS_NICE` (root) or a `RLIMIT_NICE` that allows it. Prints the percentiles; asserts
/// only that the engine exits well within `PATIENCE`.
/// `cargo test --release --test uci -- --ignored --nocapture quit_with_every_core_busy`
#[test]
#[ignore = "loads every core for about half a minute; run by hand"]
fn quit_with_every_core_busy() {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    let _cpu = exclusive_cpu();
    let cores = thread::available_parallelism().map_or(2, |n| n.get());
    let done = Arc::new(AtomicBool::new(false));
    let burners: Vec<_> = (0..cores)
        .map(|_| {
            let done = done.clone();
            thread::spawn(move || {
                while !done.load(Ordering::Relaxed) {
                    std::hint::spin_loop();
                }
            })
        })
        .collect();
    for threads in [1, 4] {
        let mut quit = Vec::new();
        for trial in 0..40 {
            let fen = if trial % 2 == 0 { STARTPOS } else { KIWIPETE };
            let mut q = Engine::ready();
            q.send(&format!("setoption name Threads value {threads}"));
            q.send(&format!("position fen {fen}"));
            q.start_go("go infinite");
            q.wait_for_info();
            thread::sleep(Duration::from_millis(20 + (trial % 16) as u64 * 5));
            q.send("quit");
            let (status, took) = q.wait_exit(PATIENCE);
            assert!(status.success(), "quit under load: exit status {status}");
            quit.push(took);
        }
        let p = percentiles(&quit);
        let (p50, p99, max) = (p.p50, p.p99, p.max);
        println!("every core busy, Threads={threads}, 40 trials: quit p50 {p50:?} p99 {p99:?} max {max:?}");
    }
    done.store(true, Ordering::Relaxed);
    for b in burners {
        b.join().unwrap();
    }
}

fn assert_no_second_bestmove(e: &mut Engine) {
    let after = e.sync();
    assert!(
        !after.iter().any(|l| l.starts_with("bestmove")),
        "second bestmove: {after:?}"
    );
}

#[test]
fn bad_input_gives_one_info_string_and_changes_nothing() {
    let _cpu = shared_cpu();
    let mut e = Engine::ready();
    e.send("position startpos moves e2e4 e7e5");
    let before = e.fen();
    assert_eq!(
        before,
        "rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2"
    );

    let long_garbage = vec![b'x'; 1 << 20];
    let mut long_option = b"setoption name ".to_vec();
    long_option.extend(std::iter::repeat_n(b'y', 1 << 20));
    long_option.extend(b" value 1");
    let cases: Vec<(&str, &[u8])> = vec![
        ("unknown command", b"frobnicate"),
        ("unknown command with arguments", b"goo depth 5"),
        ("go depth x", b"go depth x"),
        ("go depth without value", b"go depth"),
        ("go unknown parameter", b"go sideways 3"),
        ("go movetime not a number", b"go movetime soon"),
        (
            "go searchmoves illegal move",
            b"go searchmoves e2e5 depth 3",
        ),
        ("go perft 0", b"go perft 0"),
        ("Hash 0", b"setoption name Hash value 0"),
        ("Hash too big", b"setoption name Hash value 65537"),
        ("Hash not a number", b"setoption name Hash value lots"),
        ("Hash negative", b"setoption name Hash value -16"),
        ("Hash without value", b"setoption name Hash"),
        ("Threads 0", b"setoption name Threads value 0"),
        ("Threads too many", b"setoption name Threads value 100000"),
        (
            "Move Overhead negative",
            b"setoption name Move Overhead value -5",
        ),
        (
            "Move Overhead too big",
            b"setoption name Move Overhead value 5001",
        ),
        ("Ponder not a bool", b"setoption name Ponder value maybe"),
        (
            "UCI_Chess960 not a bool",
            b"setoption name UCI_Chess960 value 1",
        ),
        ("MultiPV 0", b"setoption name MultiPV value 0"),
        ("MultiPV too big", b"setoption name MultiPV value 257"),
        (
            "UCI_ShowWDL not a bool",
            b"setoption name UCI_ShowWDL value yes",
        ),
        (
            "SyzygyProbeDepth 0",
            b"setoption name SyzygyProbeDepth value 0",
        ),
        (
            "SyzygyProbeLimit too big",
            b"setoption name SyzygyProbeLimit value 8",
        ),
        (
            "Syzygy50MoveRule not a bool",
            b"setoption name Syzygy50MoveRule value 2",
        ),
        ("unknown option", b"setoption name Frobnication value 3"),
        ("UseNNUE not a bool", b"setoption name UseNNUE value on"),
        (
            "EvalFile that does not exist",
            b"setoption name EvalFile value /nonexistent/basalt.nnue",
        ),
        (
            "EvalFile that is not a net",
            concat!(
                "setoption name EvalFile value ",
                env!("CARGO_MANIFEST_DIR"),
                "/Cargo.toml"
            )
            .as_bytes(),
        ),
        ("setoption without name", b"setoption Hash value 5"),
        ("setoption name without a name", b"setoption name value 5"),
        ("garbage FEN", b"position fen garbage"),
        (
            "FEN without kings",
            b"position fen 8/8/8/8/8/8/8/8 w - - 0 1",
        ),
        (
            "FEN without a black king",
            b"position fen 8/8/8/8/8/8/8/4K3 w - - 0 1",
        ),
        (
            "FEN with two white kings",
            b"position fen 4k3/8/8/8/8/8/8/3KK3 w - - 0 1",
        ),
        (
            "FEN with the side not to move in check",
            b"position fen 4k3/4R3/8/8/8/8/8/4K3 w - - 0 1",
        ),
        (
            "FEN with a pawn on the first rank",
            b"position fen 4k3/8/8/8/8/8/8/P3K3 w - - 0 1",
        ),
        (
            "FEN with a bad side to move",
            b"position fen rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR x KQkq - 0 1",
        ),
        ("position with nothing after it", b"position"),
        ("position fen without a FEN", b"position fen"),
        (
            "position fen without a FEN but moves",
            b"position fen moves e2e4",
        ),
        ("position with an unknown kind", b"position sideways"),
        (
            "position startpos with extra words",
            b"position startpos please moves e2e4",
        ),
        ("debug without on/off", b"debug maybe"),
        ("1 MB unknown command", &long_garbage),
        ("1 MB option name", &long_option),
        ("non-UTF-8 command", b"\xff\xfe\xfd"),
        ("non-UTF-8 go argument", b"go depth \xff\xfe"),
        (
            "non-UTF-8 FEN",
            b"position fen \xc3\x28/8/8/8/8/8/8/8 w - - 0 1",
        ),
        ("control characters", b"\x01\x02\x03"),
    ];
    for (what, input) in cases {
        e.send_bytes(input);
        let out = e.sync();
        let ok = out.len() == 1 && out[0].starts_with("info string ") && out[0].len() < 300;
        if !ok {
            e.fail(&format!(
                "{what}: expected exactly one short info string line, got {out:?}"
            ));
        }
        let after = e.fen();
        if after != before {
            e.fail(&format!(
                "{what}: position changed from {before} to {after}"
            ));
        }
    }
    // The engine still searches normally from the unchanged position.
    let search = e.go("go depth 4");
    check_search(&before, false, &search);
}

#[test]
fn blank_lines_are_ignored_and_odd_spacing_accepted() {
    let _cpu = shared_cpu();
    let mut e = Engine::ready();
    for blank in [&b""[..], b"   ", b"\t", b"\r", b" \t \r"] {
        e.send_bytes(blank);
        let out = e.sync();
        assert!(out.is_empty(), "blank line {blank:?} gave output {out:?}");
    }
    // Windows line endings and extra whitespace between tokens.
    e.send("  position \t startpos   moves  e2e4\t d7d5 \r");
    assert_eq!(
        e.fen(),
        "rnbqkbnr/ppp1pppp/8/3p4/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2"
    );
    // `moves` with nothing after it is the position itself.
    e.send("position startpos moves");
    assert_eq!(e.fen(), STARTPOS);
    assert!(e.sync().is_empty());
}

#[test]
fn illegal_move_keeps_the_moves_before_it() {
    let _cpu = shared_cpu();
    let mut e = Engine::ready();
    let after_two = "rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2";
    let cases: Vec<(&[u8], &str)> = vec![
        (b"position startpos moves e2e4 e7e5 e1e3 g1f3", after_two),
        (b"position startpos moves e2e4 e7e5 e1g1", after_two),
        (b"position startpos moves e2e4 e7e5 nonsense", after_two),
        (b"position startpos moves e2e4 e7e5 \xc3\x28", after_two),
        (b"position startpos moves e2e4 e7e5 e2e4", after_two),
        (b"position startpos moves e7e5 e2e4", STARTPOS),
        // A promotion needs its piece letter.
        (
            b"position fen 8/P6k/8/8/8/8/8/K7 w - - 0 1 moves a7a8",
            "8/P6k/8/8/8/8/8/K7 w - - 0 1",
        ),
    ];
    for (input, expected) in cases {
        e.send("position startpos moves d2d4");
        e.send_bytes(input);
        let out = e.sync();
        let shown = String::from_utf8_lossy(input).to_string();
        if out.len() != 1 || !out[0].starts_with("info string ") {
            e.fail(&format!("{shown}: expected one info string, got {out:?}"));
        }
        let fen = e.fen();
        if fen != expected {
            e.fail(&format!("{shown}: position is {fen}, expected {expected}"));
        }
    }
}

#[test]
fn a_one_megabyte_move_list_is_accepted() {
    let _cpu = shared_cpu();
    let mut e = Engine::ready();
    let shuffles = 55_000;
    let mut line = String::from("position startpos moves");
    for _ in 0..shuffles {
        line.push_str(" g1f3 g8f6 f3g1 f6g8");
    }
    assert!(line.len() > 1 << 20);
    let start = Instant::now();
    e.send(&line);
    let fen = e.fen();
    println!("1 MB move list took {:?}", start.elapsed());
    assert_eq!(
        fen,
        format!(
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - {} {}",
            4 * shuffles,
            2 * shuffles + 1
        )
    );
    let search = e.go("go depth 3");
    check_search(&fen, false, &search);
}

/// The `Search` whose `bestmove` is `reply.line`, with the lines read before it.
fn search_of(reply: Reply) -> Search {
    Search {
        infos: reply.before,
        bestmove: reply.line,
        elapsed: Duration::ZERO,
    }
}

/// A `go` sent while a search runs is not refused: it waits for that search. `isready`
/// stays prompt meanwhile. `stop` ends every search sent before it, the running one and
/// the waiting one, each with its own `bestmove`, in order; a `go` sent after the `stop`
/// runs in full.
#[test]
fn go_while_searching_waits_for_the_search() {
    let _cpu = exclusive_cpu();
    let mut e = Engine::ready();
    e.start_go("go infinite");
    e.wait_for_info();
    e.send(&format!("position fen {KIWIPETE}"));
    e.send("go depth 30");
    let sent = e.send("isready");
    let reply = e.expect_line("readyok with a search waiting", PATIENCE, |l| {
        l == "readyok" || l.starts_with("bestmove") || l.starts_with("info string")
    });
    assert_eq!(reply.line, "readyok", "the second go was answered at once");
    assert!(
        reply.at - sent < PROMPT,
        "readyok took {:?}",
        reply.at - sent
    );
    // The first search is infinite and the second waits for it: no bestmove until stop.
    let meanwhile = e.lines_during(Duration::from_millis(300));
    assert!(
        !meanwhile
            .iter()
            .any(|l| l.starts_with("bestmove") || l.starts_with("info string")),
        "{meanwhile:?}"
    );
    let stop = e.send("stop");
    e.send("position startpos moves e2e4");
    e.send("go depth 6");
    let running = e.expect_line("bestmove of the running search", PATIENCE, |l| {
        l.starts_with("bestmove")
    });
    assert!(running.at - stop < PROMPT, "took {:?}", running.at - stop);
    assert_legal_bestmove(STARTPOS, &search_of(running));
    let waiting = e.expect_line("bestmove of the waiting search", PATIENCE, |l| {
        l.starts_with("bestmove")
    });
    assert!(
        waiting.at - stop < 2 * PROMPT,
        "took {:?}",
        waiting.at - stop
    );
    assert_legal_bestmove(KIWIPETE, &search_of(waiting));
    let after = e.expect_line("bestmove of the go after stop", PATIENCE, |l| {
        l.starts_with("bestmove")
    });
    let after = search_of(after);
    let fen = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1";
    check_search(fen, false, &after);
    assert_eq!(
        after.last_exact().depth,
        6,
        "the go after stop was cut short"
    );
    let rest = e.lines_during(Duration::from_millis(200));
    assert!(!rest.iter().any(|l| l.starts_with("bestmove")), "{rest:?}");
    assert!(e.sync().is_empty());
}

/// A `go` sent during a finite search runs once it ends, to its own limit, on the position
/// that was current when it was sent, not the one the running search has.
#[test]
fn go_sent_during_a_search_runs_after_it_on_its_own_position() {
    let _cpu = shared_cpu();
    let mut e = Engine::ready();
    e.send("go depth 10");
    e.send(&format!("position fen {KIWIPETE}"));
    e.send("go depth 6");
    let is_end = |l: &str| l.starts_with("bestmove");
    let first = search_of(e.expect_line("the first bestmove", PATIENCE, is_end));
    check_search(STARTPOS, false, &first);
    assert_eq!(first.last_exact().depth, 10);
    let second = search_of(e.expect_line("the second bestmove", PATIENCE, is_end));
    check_search(KIWIPETE, false, &second);
    assert_eq!(second.last_exact().depth, 6);
    for search in [&first, &second] {
        assert!(
            !search.infos.iter().any(|l| l.starts_with("info string")),
            "{:?}",
            search.infos
        );
    }
    assert!(e.sync().is_empty());
}

/// `ponderhit` reaches a `go ponder` that waits behind another search: once its turn
/// comes it runs as a normal search, ending on its own clock.
#[test]
fn ponderhit_reaches_a_waiting_ponder_search() {
    let _cpu = shared_cpu();
    let mut e = Engine::ready();
    e.send("go depth 9");
    e.send("position startpos moves e2e4");
    e.send("go ponder movetime 200");
    e.send("ponderhit");
    let is_end = |l: &str| l.starts_with("bestmove");
    let first = search_of(e.expect_line("the first bestmove", PATIENCE, is_end));
    check_search(STARTPOS, false, &first);
    assert_eq!(first.last_exact().depth, 9);
    // Without the ponderhit the second would ponder until `stop`.
    let second = search_of(e.expect_line("the pondered search's bestmove", PATIENCE, is_end));
    let fen = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1";
    check_search(fen, false, &second);
    assert!(e.sync().is_empty());
}

#[test]
fn go_right_after_stop_is_not_lost() {
    // Some GUIs (Arena on a ponder miss, for one) send `stop` and the next `position`/`go`
    // without waiting for the `bestmove`. The new search must still run.
    let _cpu = shared_cpu();
    let mut e = Engine::ready();
    e.start_go("go infinite");
    e.wait_for_info();
    e.send("stop\nposition startpos moves e2e4\ngo depth 2");
    e.expect_line("bestmove of the stopped search", PATIENCE, |l| {
        l.starts_with("bestmove")
    });
    let reply = e.expect_line("bestmove of the second go", Duration::from_secs(2), |l| {
        l.starts_with("bestmove")
    });
    let refused: Vec<&String> = reply
        .before
        .iter()
        .filter(|l| l.starts_with("info string"))
        .collect();
    assert!(refused.is_empty(), "second go refused: {refused:?}");
}

/// Sends `go` again the moment the previous job's last line (`end`) arrives; returns how
/// many of `rounds` such commands the engine answered with an `info string` (a refusal)
/// instead of a job. A `go` lost without a word fails it too: the last `end` never comes.
fn refusals_right_after(e: &mut Engine, go: &str, end: &str, rounds: usize) -> usize {
    let mut refused = 0;
    let mut finished = 0;
    e.send(go);
    while finished < rounds {
        let reply = e.expect_line("end of job or refusal", PATIENCE, |l| {
            l.starts_with(end) || l.starts_with("info string")
        });
        if reply.line.starts_with(end) {
            finished += 1;
        } else {
            refused += 1;
        }
        e.send(go);
    }
    e.expect_line("end of the last job", PATIENCE, |l| l.starts_with(end));
    refused
}

#[test]
fn go_right_after_bestmove_is_not_lost() {
    // A GUI may start the next search the moment it reads `bestmove` (match runners and
    // python-chess's pondering do). Such a `go` must not find the engine still busy.
    let _cpu = shared_cpu();
    let mut e = Engine::ready();
    let rounds = 200;
    let refused = refusals_right_after(&mut e, "go depth 1", "bestmove", rounds);
    assert_eq!(refused, 0, "{refused} of {rounds} go commands refused");
}

#[test]
fn go_right_after_perft_is_not_lost() {
    let _cpu = shared_cpu();
    let mut e = Engine::ready();
    let rounds = 200;
    let refused = refusals_right_after(&mut e, "go perft 1", "Nodes searched", rounds);
    assert_eq!(refused, 0, "{refused} of {rounds} go commands refused");
}

#[test]
fn terminal_positions() {
    let _cpu = shared_cpu();
    let mut e = Engine::ready();
    let checkmated = "7k/6Q1/6K1/8/8/8/8/8 b - - 0 1";
    let stalemated = "7k/8/6QK/8/8/8/8/8 b - - 0 1";
    for fen in [checkmated, stalemated] {
        e.send(&format!("position fen {fen}"));
        for go in ["go depth 5", "go wtime 1000 btime 1000", "go movetime 50"] {
            let search = e.go(go);
            assert_eq!(search.bestmove, "bestmove (none)", "{fen} {go}");
        }
        // `go infinite` still waits for `stop` before saying so.
        e.start_go("go infinite");
        let early = e.lines_during(Duration::from_millis(100));
        assert!(
            !early.iter().any(|l| l.starts_with("bestmove")),
            "{early:?}"
        );
        let (search, _) = e.stop();
        assert_eq!(search.bestmove, "bestmove (none)");
    }
    // The only legal move: Kf2 (the rook holds the first rank, the pawns block the rest).
    e.send("position fen 7k/8/8/8/8/8/6PP/r5K1 w - - 0 1");
    for go in ["go depth 6", "go wtime 1000 btime 1000", "go nodes 1000"] {
        let search = e.go(go);
        assert_eq!(search.best(), "g1f2", "{go}: {:?}", search.bestmove);
    }
}

#[test]
fn depth_and_node_limits() {
    let _cpu = shared_cpu();
    let mut e = Engine::ready();
    e.send(&format!("position fen {KIWIPETE}"));
    let search = e.go("go depth 6");
    check_search(KIWIPETE, false, &search);
    assert_eq!(search.last_exact().depth, 6);
    assert!(search.iterations().iter().all(|i| i.depth <= 6));

    let limit = 20_000;
    let search = e.go(&format!("go nodes {limit}"));
    check_search(KIWIPETE, false, &search);
    // The last line has the nodes spent, not the last finished iteration's count.
    let used = search.last_exact().nodes;
    assert!(
        (limit..limit + 1024).contains(&used),
        "reported {used} nodes for {limit}"
    );
    println!("go nodes {limit}: the last line reports {used} nodes");

    e.send("position startpos");
    let search = e.go("go depth 1");
    check_search(STARTPOS, false, &search);
    assert_eq!(search.iterations().len(), 1);
}

#[test]
fn a_node_limit_counts_every_thread() {
    let _cpu = shared_cpu();
    let mut e = Engine::ready();
    e.sync_after("setoption name Threads value 2");
    e.send(&format!("position fen {KIWIPETE}"));
    let limit = 20_000;
    let search = e.go(&format!("go nodes {limit}"));
    check_search(KIWIPETE, false, &search);
    // Each thread counts its own nodes exactly and reads the other's as published, every
    // 1024 of its own nodes (CLOCK_CHECK_INTERVAL in src/search/mod.rs), so it sees the
    // total up to 1023 unpublished nodes and one interval of publishing late; the first
    // thread to stop does so that far past the limit, the other within one more interval
    // of its own. Four intervals bound it; the main thread's count alone would be about
    // twice the limit with two free cores.
    let used = search.last_exact().nodes;
    assert!(
        (limit..limit + 4 * 1024).contains(&used),
        "reported {used} nodes for {limit} with two threads"
    );
    println!("go nodes {limit}, Threads 2: the last line reports {used} nodes");
}

#[test]
fn movetime_is_kept() {
    let _cpu = exclusive_cpu();
    let mut e = Engine::ready();
    e.send(&format!("position fen {KIWIPETE}"));
    let mut seen = Vec::new();
    for movetime in [100u64, 300, 600] {
        let search = e.go(&format!("go movetime {movetime}"));
        check_search(KIWIPETE, false, &search);
        let allowed = Duration::from_millis(movetime) + Duration::from_millis(50);
        assert!(
            search.elapsed <= allowed,
            "movetime {movetime}: bestmove after {:?}",
            search.elapsed
        );
        // A fixed movetime is spent in full (less the 10 ms default Move Overhead): the
        // search does not stop early between iterations in an undecided position.
        let spent = Duration::from_millis(movetime - 10);
        assert!(
            search.elapsed >= spent,
            "movetime {movetime}: bestmove already after {:?}",
            search.elapsed
        );
        seen.push(format!("{movetime} ms -> {:?}", search.elapsed));
    }
    println!("go movetime: {}", seen.join(", "));

    // A proven mate does not end a movetime search early either (Stockfish's convention):
    // it goes on until the time is up or the depth limit is reached, still reporting
    // the mate.
    let fen = "6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1";
    e.send(&format!("position fen {fen}"));
    let search = e.go("go movetime 300");
    check_search(fen, false, &search);
    let last = search.last_exact();
    assert_eq!(last.score, Score::Mate(1));
    assert_eq!(search.best(), "d1d8");
    assert!(
        search.elapsed >= Duration::from_millis(290) || last.depth == 100,
        "a mate in 1 ended movetime 300 after {:?} at depth {}",
        search.elapsed,
        last.depth
    );
    println!(
        "mate in 1, go movetime 300: depth {} after {:?}",
        last.depth, search.elapsed
    );
}

#[test]
fn odd_but_valid_go_parameters_still_answer() {
    let _cpu = shared_cpu();
    let mut e = Engine::ready();
    // Out-of-range numbers are clamped, not refused: each of these must still give a legal
    // move, quickly.
    for go in [
        "go depth 0",
        "go depth -3",
        "go nodes 0",
        "go nodes -5",
        "go movetime 0",
        "go movetime -10",
        "go wtime 0 btime 0",
        "go wtime -100 btime -100",
        "go wtime 99999999999999999999 btime 1 depth 2",
        "go movestogo 0 wtime 100 btime 100",
        "go movestogo 1 wtime 20 btime 20",
        "go wtime 10 btime 10 winc 100000 binc 100000",
        "go mate 0 depth 3",
        "go searchmoves depth 2",
    ] {
        let search = e.go_within(go, Duration::from_secs(2));
        if search.iterations().is_empty() {
            // A search stopped inside its first iteration prints no info line.
            play_line(STARTPOS, false, &[search.best()]).unwrap();
        } else {
            check_search(STARTPOS, false, &search);
        }
        assert!(
            search.elapsed < Duration::from_millis(500),
            "{go}: {:?}",
            search.elapsed
        );
    }
}

#[test]
fn mate_search_reports_the_mate() {
    let _cpu = shared_cpu();
    let mut e = Engine::ready();
    // Two rooks against a bare king: mate in 2 (Ra7 and Rb8, or Rb7 and Ra8), not in 1.
    let fen = "7k/8/8/8/8/8/R7/1R4K1 w - - 0 1";
    e.send(&format!("position fen {fen}"));
    let search = e.go("go mate 2");
    check_search(fen, false, &search);
    assert_eq!(search.last_exact().score, Score::Mate(2));
    let last = search.last_exact();
    let line: Vec<&str> = last.pv.iter().take(3).map(String::as_str).collect();
    let end = play_line(fen, false, &line).unwrap();
    assert!(end.is_checkmate(), "pv {line:?} does not mate");

    // The losing side sees a negative mate score.
    let fen = "7k/R7/8/8/8/8/8/1R4K1 b - - 1 1";
    e.send(&format!("position fen {fen}"));
    let search = e.go("go depth 6");
    check_search(fen, false, &search);
    assert_eq!(search.last_exact().score, Score::Mate(-1));
    assert_eq!(search.best(), "h8g8");

    // Mate in one is found at once and reported as such.
    let fen = "6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1";
    e.send(&format!("position fen {fen}"));
    let search = e.go("go mate 1");
    assert_eq!(search.best(), "a1a8");
    assert_eq!(search.last_exact().score, Score::Mate(1));
}

/// `per_position` moves from each of `fens` with `go`, each after a `go depth 1`: the
/// latencies of both. Depth 1 is the shortest search there is (the first iteration always
/// completes), so its latency is what the machine adds to any move: the pipes, and the
/// search thread's wait for a core.
fn moves_on_a_clock(
    e: &mut Engine,
    fens: &[&str],
    go: &str,
    per_position: usize,
) -> (Vec<Duration>, Vec<Duration>) {
    let (mut moves, mut shortest) = (Vec::new(), Vec::new());
    for fen in fens {
        e.send(&format!("position fen {fen}"));
        for _ in 0..per_position {
            for (command, times) in [("go depth 1", &mut shortest), (go, &mut moves)] {
                let search = e.go_within(command, Duration::from_secs(2));
                check_search(fen, false, &search);
                times.push(search.elapsed);
            }
        }
    }
    (moves, shortest)
}

/// Moves on a `clock` come back inside it: the median, and nine in ten once what the
/// machine adds is allowed for. On such a clock the engine plans the shortest search or
/// little more, well under a millisecond of its own; a move later than that waited for a
/// core, and where every core is busy the search thread waits for one for several of the
/// scheduler's slices (measured: up to 20 ms with four spinning threads on two cores, where
/// `isready`, answered by the command thread with its short slice, took 30 µs). So the
/// 90th percentile of the moves is held to the clock plus the 90th percentile of `go depth
/// 1` taken between them. A time manager that plans too much, or a stop that is polled too
/// rarely, makes most moves late and fails either bound.
fn assert_inside_the_clock(what: &str, moves: &[Duration], shortest: &[Duration], clock: Duration) {
    let (median, p90) = (common::percentile(moves, 50), common::percentile(moves, 90));
    let machine = common::percentile(shortest, 90);
    println!(
        "{what}: median {median:?} p90 {p90:?} max {:?} over {} moves; go depth 1 p90 {machine:?}",
        common::percentile(moves, 100),
        moves.len()
    );
    assert!(median < clock, "{what}: median {median:?}");
    assert!(
        p90 < clock + machine,
        "{what}: 90th percentile {p90:?}, over {clock:?} and the machine's {machine:?}"
    );
}

/// 30 moves on a 25 ms clock (`assert_inside_the_clock`).
#[test]
fn tiny_clock_answers_inside_it() {
    let _cpu = exclusive_cpu();
    let mut e = Engine::ready();
    let fens = [
        STARTPOS,
        KIWIPETE,
        "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R b KQkq - 2 3",
    ];
    let (moves, shortest) = moves_on_a_clock(&mut e, &fens, "go wtime 25 btime 25", 10);
    assert_inside_the_clock(
        "go wtime 25 btime 25",
        &moves,
        &shortest,
        Duration::from_millis(25),
    );
}

#[test]
fn searchmoves_restricts_the_root() {
    let _cpu = shared_cpu();
    let mut e = Engine::ready();
    let search = e.go("go searchmoves a2a3 depth 5");
    check_search(STARTPOS, false, &search);
    assert_eq!(search.best(), "a2a3");
    assert!(search
        .iterations()
        .iter()
        .all(|i| i.pv.first().is_none_or(|m| m == "a2a3")));

    let search = e.go("go depth 4 searchmoves h2h3 b1a3");
    check_search(STARTPOS, false, &search);
    assert!(
        ["h2h3", "b1a3"].contains(&search.best()),
        "{}",
        search.bestmove
    );
}

#[test]
fn perft_divide() {
    let _cpu = shared_cpu();
    let mut e = Engine::ready();
    e.start_go("go perft 3");
    let reply = e.expect_since_go("Nodes searched", PATIENCE, |l| {
        l.starts_with("Nodes searched")
    });
    assert_eq!(reply.line, "Nodes searched: 8902");
    let mut total = 0;
    let mut moves = 0;
    for line in reply.before.iter().filter(|l| !l.is_empty()) {
        let Some((mv, count)) = line.split_once(": ") else {
            panic!("not a divide line: {line:?}")
        };
        assert!(mv.parse::<UciMove>().is_ok(), "{line:?}");
        total += count.parse::<u64>().expect("count");
        moves += 1;
    }
    assert_eq!((moves, total), (20, 8902));
    let after = e.sync();
    assert!(after.is_empty(), "output after perft: {after:?}");

    e.send(&format!("position fen {KIWIPETE}"));
    e.start_go("go perft 2");
    let reply = e.expect_since_go("Nodes searched", PATIENCE, |l| {
        l.starts_with("Nodes searched")
    });
    assert_eq!(reply.line, "Nodes searched: 2039");
}

#[test]
fn perft_can_be_stopped() {
    let _cpu = exclusive_cpu();
    let mut e = Engine::ready();
    e.start_go("go perft 7");
    thread::sleep(Duration::from_millis(150));
    let sent = e.send("isready");
    let ready = e.expect_line("readyok during perft", PATIENCE, |l| l == "readyok");
    let ready_latency = ready.at - sent;
    let sent = e.send("stop");
    let stopped = e.expect_since_go("perft stopped", PATIENCE, |l| {
        l == "info string perft stopped" || l.starts_with("Nodes searched")
    });
    let stop_latency = stopped.at - sent;
    println!("perft 7: isready {ready_latency:?}, stop {stop_latency:?}");
    assert_eq!(stopped.line, "info string perft stopped");
    assert!(ready_latency < PROMPT, "readyok took {ready_latency:?}");
    assert!(stop_latency < PROMPT, "stop took {stop_latency:?}");
    assert!(e.sync().is_empty());
    let search = e.go("go depth 3");
    check_search(STARTPOS, false, &search);
}

/// Chess960 positions (from the Fischer-random perft suite) where White can castle now, the
/// castling move in king-takes-rook notation, and where king and rook end up.
const CASTLES_960: [(&str, &str, Square, Square); 5] = [
    // The king stays on g1; only the rook moves.
    (
        "qnbnr1kr/ppp1b1pp/4p3/3p1p2/8/2NPP3/PPP1BPPP/QNB1R1KR w HEhe - 1 9",
        "g1h1",
        Square::G1,
        Square::F1,
    ),
    // King and rook swap squares.
    (
        "b1q1rrkb/pppppppp/3nn3/8/P7/1PPP4/4PPPP/BQNNRKRB w GE - 1 9",
        "f1g1",
        Square::G1,
        Square::F1,
    ),
    // Queenside with the rook already on its destination.
    (
        "1qnrkbbr/1pppppp1/p1n4p/8/P7/1P1N1P2/2PPP1PP/QN1RKBBR w HDhd - 0 9",
        "e1d1",
        Square::C1,
        Square::D1,
    ),
    // Queenside with the king landing on the rook's square.
    (
        "qnrnk1br/p1p2ppp/8/1pbpp3/8/PP2N3/1QPPPPPP/1NR1KBBR w HChc - 0 9",
        "e1c1",
        Square::C1,
        Square::D1,
    ),
    // The standard king and rook squares, castled the Chess960 way.
    (
        "nnbrkqrb/p2ppp2/Q5pp/1pp5/4PP2/2N5/PPPP2PP/N1BRK1RB w GDgd - 0 9",
        "e1g1",
        Square::G1,
        Square::F1,
    ),
];

#[test]
fn chess960_castling_is_king_takes_rook() {
    let _cpu = shared_cpu();
    let mut e = Engine::ready();
    e.send("setoption name UCI_Chess960 value true");
    assert!(e.sync().is_empty());
    for (fen, castle, king, rook) in CASTLES_960 {
        e.send(&format!("position fen {fen} moves {castle}"));
        let out = e.sync();
        assert!(out.is_empty(), "{fen} moves {castle}: {out:?}");
        let after = e.fen();
        let pos = board(&after, true);
        let pieces = pos.board();
        assert_eq!(
            pieces.king_of(Color::White),
            Some(king),
            "{fen} moves {castle} -> {after}"
        );
        assert_eq!(
            pieces.piece_at(rook).map(|p| (p.color, p.role)),
            Some((Color::White, Role::Rook)),
            "{fen} moves {castle} -> {after}"
        );
        assert!(
            !pos.castles().has_color(Color::White),
            "White keeps castling rights: {after}"
        );
        assert_eq!(pos.turn(), Color::Black);

        // The engine writes its own castling the same way.
        e.send(&format!("position fen {fen}"));
        let search = e.go(&format!("go searchmoves {castle} depth 3"));
        check_search(fen, true, &search);
        assert_eq!(search.best(), castle, "{fen}");
    }

    // A standard start position in Chess960 mode castles king-takes-rook too.
    let fen = "r1bqk1nr/pppp1ppp/2n5/2b1p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4";
    e.send(&format!("position fen {fen}"));
    let search = e.go("go searchmoves e1h1 depth 3");
    check_search(fen, true, &search);
    assert_eq!(search.best(), "e1h1");
    e.send(&format!("position fen {fen} moves e1h1"));
    assert!(e
        .fen()
        .starts_with("r1bqk1nr/pppp1ppp/2n5/2b1p3/2B1P3/5N2/PPPP1PPP/RNBQ1RK1 b"));

    // And back in standard mode the same move is e1g1.
    e.send("setoption name UCI_Chess960 value false");
    e.send(&format!("position fen {fen}"));
    let search = e.go("go searchmoves e1g1 depth 3");
    check_search(fen, false, &search);
    assert_eq!(search.best(), "e1g1");
}

#[test]
fn chess960_castling_in_the_pv() {
    let _cpu = shared_cpu();
    let mut e = Engine::ready();
    e.send("setoption name UCI_Chess960 value true");
    // Restricted to the castling move, every iteration's PV starts with it, printed
    // king-takes-rook (which `check_search` insists on), whatever the evaluation prefers.
    for (fen, castle, _, _) in CASTLES_960 {
        e.send(&format!("position fen {fen}"));
        let search = e.go(&format!("go searchmoves {castle} depth 6"));
        check_search(fen, true, &search);
        assert_eq!(search.best(), castle, "{fen}");
        let iterations = search.iterations();
        let first_moves: Vec<&str> = iterations
            .iter()
            .filter_map(|i| i.pv.first().map(String::as_str))
            .collect();
        assert!(!first_moves.is_empty(), "{fen}: no PV");
        assert!(
            first_moves.iter().all(|&m| m == castle),
            "{fen}: {first_moves:?}"
        );
    }
}

#[test]
fn ponder_waits_for_ponderhit_or_stop() {
    let _cpu = exclusive_cpu();
    let mut e = Engine::ready();
    e.send("setoption name Ponder value true");
    e.send("position startpos moves e2e4 c7c5");
    // The clock alone would end this search after ~100 ms; pondering ignores it.
    e.start_go("go ponder wtime 2000 btime 2000 winc 0 binc 0");
    let early = e.lines_during(Duration::from_millis(1000));
    assert!(
        !early.iter().any(|l| l.starts_with("bestmove")),
        "bestmove while pondering: {early:?}"
    );
    assert!(early.iter().any(|l| l.starts_with("info depth")));
    let sent = e.send("ponderhit");
    let search = e.take_search(sent, PATIENCE);
    let after_hit = search.elapsed;
    let fen = "rnbqkbnr/pp1ppppp/8/2p5/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2";
    check_search(fen, false, &search);

    // Pondering then `stop` (a ponder miss): bestmove at once.
    e.send("position startpos moves e2e4 e7e5");
    e.start_go("go ponder wtime 2000 btime 2000");
    let early = e.lines_during(Duration::from_millis(500));
    assert!(
        !early.iter().any(|l| l.starts_with("bestmove")),
        "{early:?}"
    );
    let (_, after_stop) = e.stop();
    println!("ponder: bestmove {after_hit:?} after ponderhit, {after_stop:?} after stop");
    // After ponderhit the engine has ~2 s on its clock; it must not use most of it.
    assert!(
        after_hit < Duration::from_millis(1000),
        "took {after_hit:?}"
    );
    assert!(after_stop < PROMPT, "took {after_stop:?}");
}

#[test]
fn ponder_info_lines_report_real_time() {
    let _cpu = shared_cpu();
    let mut e = Engine::ready();
    e.send("position startpos moves e2e4 c7c5");
    let sent = e.start_go("go ponder wtime 2000 btime 2000");
    e.lines_during(Duration::from_millis(800));
    let (search, _) = e.stop();
    let waited = sent.elapsed();
    let last = search.last_exact();
    // The last line holds the search's totals when `stop` ended it; its `time` must be the
    // search's real age then, not a clock restarted at every node check.
    assert!(
        last.time > 0 && u128::from(last.time) <= waited.as_millis(),
        "pondered {waited:?}, last info line: {last:?}"
    );
    assert!(last.nps < 100_000_000, "impossible nps: {last:?}");
}

#[test]
fn quit_and_end_of_input_exit_promptly() {
    let _cpu = shared_cpu();
    let mut report = Vec::new();
    for (what, during_search, by_eof) in [
        ("quit", false, false),
        ("quit during go infinite", true, false),
        ("end of input", false, true),
        ("end of input during go infinite", true, true),
    ] {
        let mut e = Engine::ready();
        if during_search {
            e.start_go("go infinite");
            e.wait_for_info();
        }
        if by_eof {
            e.close_stdin();
        } else {
            e.send("quit");
        }
        let (status, took) = e.wait_exit(Duration::from_secs(5));
        assert!(status.success(), "{what}: exit status {status}");
        assert!(took < Duration::from_secs(1), "{what}: took {took:?}");
        report.push(format!("{what} {took:?}"));
    }
    println!("exit: {}", report.join(", "));
}

#[test]
fn info_lines_are_complete_and_pvs_legal() {
    let _cpu = shared_cpu();
    let mut e = Engine::ready();
    let positions = [
        STARTPOS,
        KIWIPETE,
        // En passant available, promotions near.
        "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
        "rnbqkb1r/pp1p1ppp/4pn2/2pP4/8/5N2/PPP1PPPP/RNBQKB1R w KQkq c6 0 4",
        "n1n5/PPPk4/8/8/8/8/4Kppp/5N1N b - - 0 1",
        // Mate in a few for White.
        "r1bqkb1r/pppp1ppp/2n2n2/4p2Q/2B1P3/8/PPPP1PPP/RNB1K1NR w KQkq - 4 4",
        // A pawn ending deep enough to fill the PV.
        "8/8/4k3/8/2p5/8/B2K4/8 b - - 0 1",
    ];
    for fen in positions {
        e.send("ucinewgame");
        e.send(&format!("position fen {fen}"));
        let search = e.go("go nodes 150000");
        check_search(fen, false, &search);
    }
    // Also a search continued through the same table (the TT feeds PVs and ponder moves).
    e.send(&format!("position fen {KIWIPETE} moves e2a6 b4c3"));
    let search = e.go("go depth 7");
    let fen = "r3k2r/p1ppqpb1/Bn2pnp1/3PN3/4P3/2p2Q1p/PPPB1PPP/R3K2R w KQkq - 0 2";
    check_search(fen, false, &search);
}

#[test]
fn hash_changes_during_a_search_are_deferred() {
    let _cpu = shared_cpu();
    let mut e = Engine::ready();
    e.send(&format!("position fen {KIWIPETE}"));
    e.start_go("go infinite");
    e.wait_for_info();
    for option in ["setoption name Hash value 32", "setoption name Clear Hash"] {
        e.send(option);
        let reply = e.expect_line("info string deferring the change", PROMPT * 5, |l| {
            l.starts_with("info string") || l.starts_with("bestmove")
        });
        assert!(
            reply.line.starts_with("info string") && reply.line.contains("search ends"),
            "{option}: {:?}",
            reply.line
        );
    }
    e.send("ucinewgame");
    let meanwhile = e.lines_during(Duration::from_millis(200));
    assert!(
        !meanwhile.iter().any(|l| l.starts_with("bestmove")),
        "the search ended early: {meanwhile:?}"
    );
    let (search, _) = e.stop();
    check_search(KIWIPETE, false, &search);
    // The deferred changes are applied now; the engine keeps working.
    assert!(e.sync().is_empty());
    let search = e.go("go depth 6");
    check_search(KIWIPETE, false, &search);
    e.send("setoption name Hash value 1");
    e.send("setoption name Clear Hash");
    assert!(e.sync().is_empty());
    let search = e.go("go depth 6");
    check_search(KIWIPETE, false, &search);
}

/// Lazy SMP under stress: eight threads on this two-core machine share a 1 MB table, so
/// entries are overwritten (and torn) constantly. Every best move and PV must still be
/// legal, no balanced opening may show a mate score, and known mates are found (by depth 16)
/// at their true distance, never shorter.
#[test]
fn eight_threads_on_a_tiny_table_stay_correct() {
    let _cpu = exclusive_cpu();
    let mut e = Engine::ready();
    e.send("setoption name Threads value 8");
    e.send("setoption name Hash value 1");
    e.sync();
    let book = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/eval_book_8moves_v3.epd"
    ))
    .unwrap();
    let openings: Vec<&str> = book
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .take(40)
        .collect();
    for fen in &openings {
        e.send(&format!("position fen {fen}"));
        let search = e.go("go movetime 40");
        check_search(fen, false, &search);
        for info in search.iterations() {
            assert!(
                !matches!(info.score, Score::Mate(_)),
                "mate score in a balanced opening {fen}: {info:?}"
            );
        }
    }
    let mates = [
        (1, "6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1"),
        (
            2,
            "2rr3k/pp3pp1/1nnqbN1p/3pN3/2pP4/2P3Q1/PPB4P/R4RK1 w - - 0 1",
        ),
        (2, "3RNbk1/pp3p2/4rQpp/8/1qr5/7P/P4P2/3R2K1 w - - 0 1"),
        (1, "k7/2P5/1K6/8/8/8/8/8 w - - 0 1"),
    ];
    for (distance, fen) in mates {
        e.send(&format!("position fen {fen}"));
        // A depth, not a clock: on a loaded two-core machine eight threads may not reach the
        // depth that sees the quiet queen sacrifice of the second position in a fixed time.
        // Pruning hides that sacrifice until depth 12-16 (it varies with the threads'
        // interleaving), and once it is seen the deeper iterations take milliseconds.
        let search = e.go("go depth 24");
        check_search(fen, false, &search);
        for info in search.iterations() {
            if let Score::Mate(n) = info.score {
                assert!(n >= distance, "mate in {n} < {distance} in {fen}: {info:?}");
            }
        }
        assert_eq!(
            search.last_exact().score,
            Score::Mate(distance),
            "{fen}: {:?}",
            search.bestmove
        );
    }
    e.send("setoption name Threads value 1");
    e.sync();
}

/// Sends an option change and returns once it has been applied: a search without a clock
/// waits for the search thread's work (`readyok` does too, but gives up after 5 s).
fn settle_after(e: &mut Engine, line: &str) {
    e.send(line);
    e.send("position startpos");
    // The search waits for the new table. The first touch of 512 MB took 4 s on this
    // project's (virtual) machine with nothing else running and more than `PATIENCE` with
    // every core busy, so the deadline here is only there to catch a hang.
    e.go_within("go depth 1", TABLE_PATIENCE);
}

/// How long a search may wait for a big table to be allocated and zeroed (`settle_after`).
const TABLE_PATIENCE: Duration = Duration::from_secs(60);

/// `Hash` allocates what it promises, resizing frees the old table, and a size the machine
/// cannot give is refused with one info string while the old table stays in use.
#[test]
fn hash_sizes_allocate_and_free_their_memory() {
    let _cpu = exclusive_cpu();
    let mut e = Engine::ready();
    let Some(base) = e.resident_mb() else {
        println!("SKIPPED: no /proc/<pid>/status here");
        return;
    };
    let mut seen = Vec::new();
    for _ in 0..3 {
        settle_after(&mut e, "setoption name Hash value 512");
        let big = e.resident_mb().unwrap();
        settle_after(&mut e, "setoption name Hash value 1");
        let small = e.resident_mb().unwrap();
        seen.push((big, small));
        // 512 MB of table, plus the 16 MB default dropped, plus a few MB of slack.
        assert!(
            (512..=512 + base + 16).contains(&big),
            "Hash=512: resident {big} MB"
        );
        assert!(
            small <= base + 8,
            "Hash=1 after 512: resident {small} MB (start {base} MB)"
        );
    }
    println!("resident MB: start {base}, (Hash=512, Hash=1) x3: {seen:?}");
    let refusal = e.sync_after("setoption name Hash value 65536");
    let available_gb = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|m| {
            m.lines()
                .find(|l| l.starts_with("MemAvailable:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
        })
        .map(|kb| kb / 1024 / 1024);
    if available_gb.is_some_and(|gb| gb < 60) {
        assert_eq!(refusal.len(), 1, "{refusal:?}");
        assert!(
            refusal[0].starts_with("info string cannot allocate"),
            "{refusal:?}"
        );
        assert!(e.resident_mb().unwrap() <= base + 8);
    } else {
        println!(
            "SKIPPED: the refusal of Hash=65536 is checked only with less than 60 GB free \
             ({available_gb:?} GB here)"
        );
    }
    e.send("position startpos");
    let search = e.go("go depth 6");
    check_search(STARTPOS, false, &search);
}

/// With both cores busy (two spinning threads here, besides whatever else runs), 60 moves
/// on a 10 ms clock with no increment (`assert_inside_the_clock`).
#[test]
fn ten_millisecond_clock_on_a_loaded_machine() {
    let _cpu = exclusive_cpu();
    let mut e = Engine::ready();
    let burning = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true));
    let burners: Vec<_> = (0..2)
        .map(|_| {
            let burning = burning.clone();
            thread::spawn(move || {
                let mut x = 0u64;
                while burning.load(std::sync::atomic::Ordering::Relaxed) {
                    x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
                }
            })
        })
        .collect();
    let go = "go wtime 10 btime 10 winc 0 binc 0";
    let (moves, shortest) = moves_on_a_clock(&mut e, &[STARTPOS, KIWIPETE], go, 30);
    burning.store(false, std::sync::atomic::Ordering::Relaxed);
    for b in burners {
        let _ = b.join();
    }
    assert_inside_the_clock(
        "go wtime 10 on a loaded machine",
        &moves,
        &shortest,
        Duration::from_millis(10),
    );
}

/// The `info` lines of one search grouped by depth: `lines[d]` holds the exact lines of
/// depth d in the order printed.
fn exact_lines_by_depth(search: &Search) -> std::collections::BTreeMap<u32, Vec<Info>> {
    let mut by_depth: std::collections::BTreeMap<u32, Vec<Info>> = Default::default();
    for info in search.iterations() {
        if info.bound.is_none() {
            by_depth.entry(info.depth).or_default().push(info);
        }
    }
    by_depth
}

#[test]
fn multipv_reports_the_best_lines_each_iteration() {
    let _cpu = shared_cpu();
    let mut e = Engine::ready();
    e.send("setoption name MultiPV value 3");
    e.send(&format!("position fen {KIWIPETE}"));
    let search = e.go("go depth 6");
    let by_depth = exact_lines_by_depth(&search);
    assert_eq!(
        by_depth.keys().copied().collect::<Vec<_>>(),
        (1..=6).collect::<Vec<_>>()
    );
    for (depth, lines) in &by_depth {
        let numbers: Vec<u32> = lines.iter().map(|i| i.multipv).collect();
        assert_eq!(numbers, vec![1, 2, 3], "depth {depth}: {lines:?}");
        let firsts: std::collections::HashSet<&str> =
            lines.iter().map(|i| i.pv[0].as_str()).collect();
        assert_eq!(
            firsts.len(),
            3,
            "depth {depth}: first moves not distinct: {lines:?}"
        );
        for info in lines {
            let pv: Vec<&str> = info.pv.iter().map(String::as_str).collect();
            if let Err(err) = play_line(KIWIPETE, false, &pv) {
                panic!("illegal PV in {info:?}: {err}");
            }
        }
    }
    let last = &by_depth[&6];
    assert_eq!(search.best(), last[0].pv[0], "bestmove is not line 1");
    // Every iteration's lines are shown best first (a line searched without line 1's move
    // can score above it; the engine re-sorts them).
    let cp = |i: &Info| match i.score {
        Score::Cp(cp) => cp,
        Score::Mate(m) => 100_000 * m.signum() - m,
    };
    for (depth, lines) in &by_depth {
        for pair in lines.windows(2) {
            assert!(cp(&pair[1]) <= cp(&pair[0]), "depth {depth}: {lines:?}");
        }
    }

    // Fewer legal moves than lines: one line per legal move. searchmoves limits them too.
    e.send("position fen 7k/8/8/8/8/8/6q1/7K w - - 0 1");
    let search = e.go("go depth 4");
    let by_depth = exact_lines_by_depth(&search);
    for (depth, lines) in &by_depth {
        assert_eq!(
            lines.len(),
            1,
            "depth {depth}: only Kxg2 is legal: {lines:?}"
        );
    }
    e.send("position startpos");
    let search = e.go("go depth 5 searchmoves e2e4 d2d4");
    for (depth, lines) in &exact_lines_by_depth(&search) {
        let mut firsts: Vec<&str> = lines.iter().map(|i| i.pv[0].as_str()).collect();
        firsts.sort();
        assert_eq!(firsts, ["d2d4", "e2e4"], "depth {depth}: {lines:?}");
    }
    // Back to one line: plain output again.
    e.send("setoption name MultiPV value 1");
    e.send(&format!("position fen {KIWIPETE}"));
    let search = e.go("go depth 5");
    check_search(KIWIPETE, false, &search);
}

#[test]
fn limit_strength_varies_its_moves_but_keeps_material() {
    let _cpu = shared_cpu();
    let mut e = Engine::ready();
    e.send("setoption name UCI_LimitStrength value true");
    e.send("setoption name UCI_Elo value 1320");
    e.send("position startpos");
    let mut chosen = std::collections::BTreeSet::new();
    for _ in 0..30 {
        let search = e.go("go wtime 60000 btime 60000");
        check_search(STARTPOS, false, &search);
        // The weakened search shows one line (the user's MultiPV), and a small budget.
        assert!(
            search.iterations().iter().all(|i| i.multipv == 1),
            "{:?}",
            search.infos
        );
        assert!(search.last_exact().nodes < 5_000, "{:?}", search.infos);
        chosen.insert(search.best().to_string());
    }
    assert!(
        chosen.len() >= 2,
        "always the same move at 1320: {chosen:?}"
    );

    // The move played is never far below the best line the search found: the last info
    // line is the one played, the line before it at the same depth is the best. An Italian
    // game with several quiet moves close together and captures that lose material
    // (Bxf7+, Nxe5): in Kiwipete one capture is more than the largest accepted loss ahead
    // of everything else, so a correct weakened search plays it every time.
    e.send(&format!("position fen {ITALIAN}"));
    let mut weaker_moves = 0;
    for _ in 0..30 {
        let search = e.go("go wtime 60000 btime 60000");
        check_search(ITALIAN, false, &search);
        let infos = search.iterations();
        let (played, before) = infos.split_last().unwrap();
        // No other line at this depth (the last line may repeat the one played, with the
        // search's totals): the best line was played.
        let best = before
            .iter()
            .rev()
            .find(|i| i.depth == played.depth && i.pv != played.pv);
        if let (
            Score::Cp(p),
            Some(Info {
                score: Score::Cp(b),
                ..
            }),
        ) = (&played.score, best)
        {
            assert!(*p >= b - 150, "{:?}", search.infos);
            weaker_moves += 1;
        }
    }

    assert!(weaker_moves > 0, "the best move every time in 30 searches");

    // At a middling level a free queen is always taken.
    e.send("setoption name UCI_Elo value 1800");
    let free_queen = "4k3/8/8/3q4/8/8/3R4/4K3 w - - 0 1";
    e.send(&format!("position fen {free_queen}"));
    for _ in 0..20 {
        let search = e.go("go wtime 60000 btime 60000");
        assert_eq!(search.best(), "d2d5", "{:?}", search.infos);
    }

    // Out of range: refused, the level stays; switching the limit off restores full depth.
    e.send("setoption name UCI_Elo value 1000");
    let said = e.sync();
    assert!(
        said.len() == 1 && said[0].starts_with("info string option UCI_Elo"),
        "{said:?}"
    );
    e.send("setoption name UCI_LimitStrength value false");
    e.send("position startpos");
    let search = e.go("go depth 8");
    assert_eq!(search.last_exact().depth, 8, "{:?}", search.infos);
}

#[test]
fn show_wdl_adds_win_draw_loss_permille() {
    let _cpu = shared_cpu();
    let mut e = Engine::ready();
    e.send("position startpos");
    let search = e.go("go depth 5");
    assert!(
        search.iterations().iter().all(|i| i.wdl.is_none()),
        "wdl without UCI_ShowWDL"
    );

    e.send("setoption name UCI_ShowWDL value true");
    for fen in [
        STARTPOS,
        KIWIPETE,
        // White is a queen up: mostly a win for the side to move.
        "4k3/8/8/8/8/8/PPP5/1K1Q4 w - - 0 1",
        // The same seen from the side that is a queen down.
        "4k3/8/8/8/8/8/PPP5/1K1Q4 b - - 0 1",
    ] {
        e.send(&format!("position fen {fen}"));
        let search = e.go("go depth 6");
        check_search(fen, false, &search);
        for info in search.iterations() {
            let Some((w, d, l)) = info.wdl else {
                panic!("no wdl in {info:?}");
            };
            assert_eq!(w + d + l, 1000, "{info:?}");
            match info.score {
                Score::Cp(cp) if cp > 0 => assert!(w >= l, "{info:?}"),
                Score::Cp(cp) if cp < 0 => assert!(w <= l, "{info:?}"),
                Score::Cp(_) => assert_eq!(w, l, "{info:?}"),
                Score::Mate(m) if m > 0 => assert_eq!((w, d, l), (1000, 0, 0), "{info:?}"),
                Score::Mate(_) => assert_eq!((w, d, l), (0, 0, 1000), "{info:?}"),
            }
        }
        let last = search.last_exact();
        let (w, _, l) = last.wdl.unwrap();
        if fen.ends_with("w - - 0 1") && fen.starts_with("4k3") {
            assert!(w > 900, "a queen up should be a near-certain win: {last:?}");
        }
        if fen.ends_with("b - - 0 1") {
            assert!(
                l > 900,
                "a queen down should be a near-certain loss: {last:?}"
            );
        }
    }
    // A forced mate: certain.
    e.send("position fen 6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1");
    let search = e.go("go depth 4");
    assert_eq!(search.last_exact().wdl, Some((1000, 0, 0)));
}

#[test]
fn uci_opponent_is_accepted_and_ignored() {
    let _cpu = shared_cpu();
    let mut e = Engine::ready();
    let out = e.sync_after("setoption name UCI_Opponent value GM 2800 human Some Player");
    assert!(out.is_empty(), "{out:?}");
    let out = e.sync_after("setoption name UCI_Opponent value none none computer Stockfish 17");
    assert!(out.is_empty(), "{out:?}");
    e.send("position startpos");
    check_search(STARTPOS, false, &e.go("go depth 4"));
}

#[test]
fn ponder_move_is_legal_and_absent_when_the_best_move_ends_the_game() {
    let _cpu = shared_cpu();
    let mut e = Engine::ready();
    e.send("setoption name Ponder value true");
    // The best (or only allowed) move ends the game: mate, stalemate, insufficient material,
    // the fifty-move rule. No ponder move then.
    for (fen, go, expected) in [
        ("6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1", "go depth 5", "a1a8"),
        (
            "r1bqkbnr/pppp1ppp/2n5/4p3/2B1P3/5Q2/PPPP1PPP/RNB1K1NR w KQkq - 2 3",
            "go depth 5",
            "f3f7",
        ),
        (
            "k7/8/1K6/8/8/8/8/2Q5 w - - 0 1",
            "go depth 4 searchmoves c1c7",
            "c1c7",
        ),
        (
            "8/8/8/4k3/8/8/3p4/3K4 w - - 0 1",
            "go depth 4 searchmoves d1d2",
            "d1d2",
        ),
        (
            "8/8/8/4k3/8/8/8/R3K3 w - - 99 90",
            "go depth 4 searchmoves a1a2",
            "a1a2",
        ),
    ] {
        e.send(&format!("position fen {fen}"));
        let search = e.go(go);
        assert_eq!(search.best(), expected, "{fen}: {}", search.bestmove);
        assert_eq!(search.ponder(), None, "{fen}: {}", search.bestmove);
    }
    // Otherwise the ponder move is there and legal after the best move.
    for fen in [
        STARTPOS,
        KIWIPETE,
        "8/8/8/4k3/8/8/8/R3K3 w - - 90 90",
        "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3",
    ] {
        e.send(&format!("position fen {fen}"));
        let search = e.go("go depth 6");
        check_search(fen, false, &search);
        assert!(
            search.ponder().is_some(),
            "{fen}: no ponder move: {}",
            search.bestmove
        );
    }
}

fn tablebase(dir: &str) -> shakmaty_syzygy::Tablebase<Chess> {
    let mut tables = shakmaty_syzygy::Tablebase::new();
    tables
        .add_directory(dir)
        .expect("the table directory reads");
    tables
}

/// The tables' verdict for the side to move after `moves` from `fen`, with its halfmove
/// clock (so the fifty-move rule counts).
fn wdl_after(
    tables: &shakmaty_syzygy::Tablebase<Chess>,
    fen: &str,
    moves: &[&str],
) -> shakmaty_syzygy::AmbiguousWdl {
    let pos = play_line(fen, false, moves).unwrap_or_else(|e| panic!("{e}"));
    tables
        .probe_wdl(&pos)
        .expect("the position is in the tables")
}

/// Sets SyzygyPath and checks the engine's report of what it found, which comes with the
/// next search (not right after `setoption`, where clients do not expect output).
fn engine_with_tables(dir: &str) -> Engine {
    let mut e = Engine::ready();
    let out = e.sync_after(&format!("setoption name SyzygyPath value {dir}"));
    assert!(out.is_empty(), "{out:?}");
    e.send("position startpos");
    let search = e.go("go depth 1");
    let notes: Vec<&String> = search
        .infos
        .iter()
        .filter(|l| l.starts_with("info string"))
        .collect();
    assert!(
        notes.len() == 1
            && notes[0].starts_with("info string Syzygy: ")
            && notes[0].contains("4 pieces"),
        "{notes:?}"
    );
    // Only once.
    let search = e.go("go depth 1");
    assert!(
        !search.infos.iter().any(|l| l.starts_with("info string")),
        "{:?}",
        search.infos
    );
    e
}

#[test]
fn syzygy_path_that_is_empty_or_missing_disables_probing() {
    let _cpu = shared_cpu();
    let mut e = Engine::ready();
    // A path naming no directory is refused at once.
    for value in ["", "<empty>"] {
        let out = e.sync_after(&format!("setoption name SyzygyPath value {value}"));
        assert!(
            out.len() == 1 && out[0].starts_with("info string SyzygyPath: "),
            "{value:?}: {out:?}"
        );
    }
    // Directories are scanned by the search thread, which reports a failure itself (so
    // `isready` need not wait for a slow disk): one line, soon.
    e.send("setoption name SyzygyPath value /nonexistent/syzygy");
    let reply = e.expect_line("the scan's report", PATIENCE, |l| {
        l.starts_with("info string")
    });
    assert!(
        reply
            .line
            .starts_with("info string SyzygyPath: cannot read /nonexistent/syzygy")
            && reply.before.iter().all(|l| l == "readyok"),
        "{reply:?}",
        reply = (&reply.before, &reply.line)
    );
    assert!(e.sync().is_empty());
    let fen = "8/8/8/4k3/8/8/8/KR6 w - - 0 1";
    e.send(&format!("position fen {fen}"));
    let search = e.go("go depth 5");
    check_search(fen, false, &search);
    assert!(search.iterations().iter().all(|i| i.tbhits == 0));
    let dir = syzygy_dir();
    // Tables, then a bad path again: probing is off again.
    e = engine_with_tables(dir);
    e.send(&format!("position fen {fen}"));
    assert!(e.go("go depth 5").last_exact().tbhits > 0);
    e.sync_after("setoption name SyzygyPath value /nonexistent/syzygy");
    assert!(e
        .go("go depth 5")
        .iterations()
        .iter()
        .all(|i| i.tbhits == 0));
}

#[test]
fn syzygy_wins_are_kept_and_draws_held() {
    let _cpu = shared_cpu();
    let dir = syzygy_dir();
    let tables = tablebase(dir);
    let mut e = engine_with_tables(dir);
    use shakmaty_syzygy::AmbiguousWdl;
    for (what, fen, win) in [
        ("KRvK", "8/8/8/4k3/8/8/8/KR6 w - - 0 1", true),
        ("KQvKR", "8/Q7/2k5/3r4/8/8/8/5K2 w - - 0 1", true),
        // Several rook moves here lose the rook or walk into a skewer.
        ("KRvKR", "8/8/8/6r1/8/4R3/K7/5k2 w - - 0 1", false),
    ] {
        assert_eq!(
            wdl_after(&tables, fen, &[]),
            if win {
                AmbiguousWdl::Win
            } else {
                AmbiguousWdl::Draw
            },
            "{what}: wrong test position"
        );
        e.send(&format!("position fen {fen}"));
        let search = e.go("go depth 6");
        check_search(fen, false, &search);
        let last = search.last_exact();
        assert!(last.tbhits > 0, "{what}: no tablebase hits: {last:?}");
        let after = wdl_after(&tables, fen, &[search.best()]);
        if win {
            assert_eq!(
                after,
                AmbiguousWdl::Loss,
                "{what}: {} lets the win go",
                search.best()
            );
            assert!(
                matches!(last.score, Score::Cp(cp) if cp > 20_000)
                    || matches!(last.score, Score::Mate(m) if m > 0),
                "{what}: not a winning score: {last:?}"
            );
        } else {
            assert_eq!(
                after,
                AmbiguousWdl::Draw,
                "{what}: {} loses the draw",
                search.best()
            );
            assert_eq!(last.score, Score::Cp(0), "{what}: {last:?}");
        }
    }
}

#[test]
fn syzygy_dtz_keeps_a_win_from_the_fifty_move_rule() {
    let _cpu = shared_cpu();
    let dir = syzygy_dir();
    let tables = tablebase(dir);
    use shakmaty_syzygy::AmbiguousWdl;
    // Mate (the next zeroing move) is 29 plies away with best play; with 70 plies already on
    // the clock only the moves that keep it at 28 plies for the defender (Re1, Kb2) still win
    // under the fifty-move rule. Every other rook or king move lets it become a draw.
    let fen = "8/8/8/4k3/8/8/8/KR6 w - - 70 80";
    let keeping: Vec<String> = board(fen, false)
        .legal_moves()
        .iter()
        .map(|m| m.to_uci(CastlingMode::Standard).to_string())
        .filter(|m| wdl_after(&tables, fen, &[m]) == AmbiguousWdl::Loss)
        .collect();
    assert!(
        !keeping.is_empty() && keeping.len() <= 3,
        "wrong test position: {keeping:?}"
    );
    let mut e = engine_with_tables(dir);
    for depth in [1, 4, 8] {
        e.send(&format!("position fen {fen}"));
        let search = e.go(&format!("go depth {depth}"));
        check_search(fen, false, &search);
        assert!(
            keeping.iter().any(|m| m == search.best()),
            "depth {depth}: {} does not keep the win (only {keeping:?} do)",
            search.best()
        );
        assert!(
            matches!(search.last_exact().score, Score::Cp(cp) if cp > 20_000),
            "{:?}",
            search.last_exact()
        );
    }
    // With Syzygy50MoveRule off the fifty-move rule is ignored: the win counts for every move
    // that wins at all, so the score stays a win whatever is played.
    e.send("setoption name Syzygy50MoveRule value false");
    e.send(&format!("position fen {fen}"));
    let search = e.go("go depth 4");
    assert!(matches!(search.last_exact().score, Score::Cp(cp) if cp > 20_000));
}

/// MultiPV at a tablebase root: every line shows the tablebase value of its own first move
/// (a win, a draw or a loss, as line 1 shows the root's), the lines come wins first, then
/// draws, then losses, and line 1 is the move played. Here Rxb8+ wins, Rb2 holds the draw
/// (the rooks facing, White's king behind its own) and every other move loses the rook.
#[test]
fn syzygy_multipv_lines_each_show_the_value_of_their_move() {
    let _cpu = shared_cpu();
    let dir = syzygy_dir();
    let tables = tablebase(dir);
    use shakmaty_syzygy::AmbiguousWdl;
    let fen = "1r4k1/1R6/8/8/8/8/8/1K6 w - - 0 1";
    // For the side to move: 1 won, 0 drawn, -1 lost.
    let value_of_move = |m: &str| match wdl_after(&tables, fen, &[m]) {
        AmbiguousWdl::Loss => 1,
        AmbiguousWdl::Draw => 0,
        AmbiguousWdl::Win => -1,
        other => panic!("wrong test position: {m} leads to {other:?}"),
    };
    let value_shown = |info: &Info| match info.score {
        Score::Cp(cp) if cp > 20_000 => 1,
        Score::Mate(m) if m > 0 => 1,
        Score::Cp(0) => 0,
        Score::Cp(cp) if cp < -20_000 => -1,
        Score::Mate(m) if m < 0 => -1,
        _ => panic!("not a tablebase value: {info:?}"),
    };
    let legal = board(fen, false).legal_moves().len();
    let mut e = engine_with_tables(dir);
    for multipv in [3, legal] {
        e.send(&format!("setoption name MultiPV value {multipv}"));
        e.send(&format!("position fen {fen}"));
        let search = e.go("go depth 6");
        let by_depth = exact_lines_by_depth(&search);
        assert_eq!(by_depth.len(), 6, "{:?}", search.infos);
        for (depth, lines) in &by_depth {
            let numbers: Vec<usize> = lines.iter().map(|i| i.multipv as usize).collect();
            assert_eq!(numbers, (1..=multipv).collect::<Vec<_>>(), "depth {depth}");
            let firsts: std::collections::HashSet<&str> =
                lines.iter().map(|i| i.pv[0].as_str()).collect();
            assert_eq!(firsts.len(), multipv, "depth {depth}: {lines:?}");
            let mut values = Vec::new();
            for info in lines {
                let pv: Vec<&str> = info.pv.iter().map(String::as_str).collect();
                if let Err(err) = play_line(fen, false, &pv) {
                    panic!("illegal PV in {info:?}: {err}");
                }
                let value = value_of_move(&info.pv[0]);
                assert_eq!(value_shown(info), value, "depth {depth}: {info:?}");
                values.push(value);
            }
            assert!(
                values.windows(2).all(|v| v[0] >= v[1]),
                "depth {depth}: lines out of order: {lines:?}"
            );
            if multipv == 3 {
                assert_eq!(values, [1, 0, -1], "depth {depth}: {lines:?}");
            }
        }
        assert_eq!(
            search.best(),
            by_depth[&6][0].pv[0],
            "bestmove is not line 1"
        );
        assert_eq!(search.best(), "b7b8");
    }
}

/// The value after `prefix` up to " cp" in the `eval` output, e.g. "NNUE evaluation: ".
fn eval_line_cp(lines: &[String], prefix: &str) -> (i32, String) {
    let line = lines
        .iter()
        .find(|l| l.starts_with(prefix))
        .unwrap_or_else(|| panic!("no {prefix:?} line in {lines:?}"));
    let cp = line[prefix.len()..]
        .split(" cp")
        .next()
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or_else(|| panic!("no number in {line:?}"));
    (cp, line.clone())
}

#[test]
fn eval_shows_both_evaluations_and_the_options_choose_one() {
    let _cpu = shared_cpu();
    let mut e = Engine::ready();
    e.send("position fen r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3");
    let lines = e.sync_after("eval");
    let (hce, _) = eval_line_cp(&lines, "Hand-crafted evaluation: ");
    let (net, net_line) = eval_line_cp(&lines, "NNUE evaluation: ");
    assert!(net_line.ends_with("(<embedded>)"), "{net_line}");
    // The net is the default since it passed its SPRT against the hand-crafted evaluation.
    let (used, line) = eval_line_cp(&lines, "Final evaluation: ");
    assert_eq!(used, net, "{line}");
    assert!(line.ends_with("(NNUE)"), "{line}");

    assert!(e
        .sync_after("setoption name UseNNUE value false")
        .is_empty());
    let lines = e.sync_after("eval");
    let (used, line) = eval_line_cp(&lines, "Final evaluation: ");
    assert_eq!(used, hce, "{line}");
    assert!(line.ends_with("(hand-crafted, UseNNUE false)"), "{line}");
    let search = e.go("go depth 5");
    assert!(search.bestmove.starts_with("bestmove "));
    assert!(e.sync_after("setoption name UseNNUE value true").is_empty());

    // Loading the same net from its file: the same evaluation, and the name shows.
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/nets/basalt.nnue");
    let out = e.sync_after(&format!("setoption name EvalFile value {path}"));
    assert!(
        out.len() == 1 && out[0].contains("loaded"),
        "loading the net file: {out:?}"
    );
    let lines = e.sync_after("eval");
    let (from_file, line) = eval_line_cp(&lines, "NNUE evaluation: ");
    assert_eq!(from_file, net);
    assert!(line.contains(path), "{line}");
    // A file that fails keeps the loaded one.
    let out = e.sync_after("setoption name EvalFile value /nonexistent.nnue");
    assert!(out.len() == 1 && out[0].contains(path), "{out:?}");
    let lines = e.sync_after("eval");
    assert!(eval_line_cp(&lines, "NNUE evaluation: ").1.contains(path));
    let search = e.go("go depth 5");
    assert!(search.bestmove.starts_with("bestmove "));
}
