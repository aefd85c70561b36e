//! Basalt driven from a pipe, as in `printf 'position startpos\ngo depth 10\n' | basalt`:
//! every input is written at once and stdin closed, then the whole output is read until the
//! engine exits. At the end of input a search with a limit of its own runs to it and
//! answers, `go infinite` and a `go ponder` still pondering are stopped and answer at once,
//! `go perft` prints its count, searches sent one after another all answer in order, and
//! the engine exits within a second of its last answer; `quit` still ends everything at
//! once (README, "UCI commands").
//!
//! With one thread the engine is deterministic, so "runs to its limit" is checked by
//! comparing with the same commands sent interactively, each answer awaited.
//!
//! Timing bounds are loose (a second where the engine needs milliseconds) so a loaded
//! two-core CI machine does not flake, yet each would catch the failure it is about: a
//! search stopped at the end of input answers in microseconds, one not stopped never does.

mod common;

use std::time::{Duration, Instant};

use common::{
    assert_legal_bestmove, check_search, exclusive_cpu, Engine, Score, Search, KIWIPETE, PATIENCE,
    STARTPOS,
};

/// The engine must exit within this of its last answer.
const EXIT_AFTER_LAST_ANSWER: Duration = Duration::from_secs(1);

/// A search that the end of input stops must answer within this of it.
const ANSWER_AFTER_END: Duration = Duration::from_secs(1);

/// What the engine printed for a piped input.
struct Piped {
    /// Every output line with the moment it arrived.
    lines: Vec<(Instant, String)>,
    /// When the first input line was written. The engine may start a search before stdin is
    /// closed, so a search's lower bound on time counts from here, not from `closed`.
    written: Instant,
    /// When the input was written and stdin closed.
    closed: Instant,
    /// When the output ended (the engine exited).
    exited: Instant,
}

/// Starts an engine, waits until it is ready (so start-up does not count), writes `input`
/// line by line, closes stdin and reads everything until the engine exits, which it must
/// do successfully.
fn pipe(input: &[&str]) -> Piped {
    let mut e = Engine::ready();
    let written = Instant::now();
    for line in input {
        e.send(line);
    }
    e.close_stdin();
    let closed = Instant::now();
    let lines = e.rest_of_output(PATIENCE * 3);
    let exited = Instant::now();
    let (status, _) = e.wait_exit(PATIENCE);
    assert!(status.success(), "exit status {status}");
    Piped {
        lines,
        written,
        closed,
        exited,
    }
}

impl Piped {
    /// The searches, in the order they answered: each `bestmove` with the lines before it
    /// (back to the previous answer); `elapsed` counts from closing stdin.
    fn searches(&self) -> Vec<Search> {
        let mut searches = Vec::new();
        let mut infos = Vec::new();
        for (at, line) in &self.lines {
            if line.starts_with("bestmove") {
                searches.push(Search {
                    infos: std::mem::take(&mut infos),
                    bestmove: line.clone(),
                    elapsed: at.saturating_duration_since(self.closed),
                });
            } else {
                infos.push(line.clone());
            }
        }
        searches
    }

    /// How long after the first input line the first `bestmove` arrived: at least a
    /// `movetime`, however long the writing and closing took.
    fn first_answer_since_input(&self) -> Duration {
        let (at, _) = self
            .lines
            .iter()
            .find(|(_, l)| l.starts_with("bestmove"))
            .unwrap_or_else(|| panic!("no bestmove: {:?}", self.text()));
        at.saturating_duration_since(self.written)
    }

    /// When the last `bestmove` or perft total arrived.
    fn last_answer(&self) -> Instant {
        self.lines
            .iter()
            .rev()
            .find(|(_, l)| {
                l.starts_with("bestmove") || l.starts_with("Nodes searched") || l.ends_with(" nps")
            })
            .map(|(at, _)| *at)
            .unwrap_or_else(|| panic!("no answer at all: {:?}", self.text()))
    }

    /// Checks that the engine exited within `EXIT_AFTER_LAST_ANSWER` of its last answer.
    fn assert_prompt_exit(&self) {
        let took = self.exited.saturating_duration_since(self.last_answer());
        assert!(
            took < EXIT_AFTER_LAST_ANSWER,
            "exited {took:?} after the last answer"
        );
    }

    fn text(&self) -> Vec<&str> {
        self.lines.iter().map(|(_, l)| l.as_str()).collect()
    }
}

/// The same commands sent to an engine interactively, each search's `bestmove` awaited
/// before the next command: what the piped run must reproduce.
fn interactive(input: &[&str]) -> Vec<Search> {
    let mut e = Engine::ready();
    let mut searches = Vec::new();
    for line in input {
        if line.starts_with("go") {
            searches.push(e.go(line));
        } else {
            e.send(line);
        }
    }
    searches
}

/// The parts of an `info` line that do not depend on timing: everything but `nps` and
/// `time`.
fn untimed(info: &str) -> String {
    let mut words = info.split_whitespace();
    let mut kept = Vec::new();
    while let Some(word) = words.next() {
        if word == "nps" || word == "time" {
            words.next();
        } else {
            kept.push(word);
        }
    }
    kept.join(" ")
}

/// Checks that two runs of the same searches printed the same, timing aside.
fn assert_same_searches(piped: &[Search], interactive: &[Search]) {
    assert_eq!(piped.len(), interactive.len(), "number of searches");
    for (n, (p, i)) in piped.iter().zip(interactive).enumerate() {
        let p_infos: Vec<String> = p.infos.iter().map(|l| untimed(l)).collect();
        let i_infos: Vec<String> = i.infos.iter().map(|l| untimed(l)).collect();
        assert_eq!(p_infos, i_infos, "search {}: info lines", n + 1);
        assert_eq!(p.bestmove, i.bestmove, "search {}", n + 1);
    }
}

#[test]
fn finite_searches_run_to_their_limit_then_the_engine_exits() {
    let _cpu = exclusive_cpu();
    // Deterministic limits: the piped run prints exactly what the interactive one does.
    for go in ["go depth 10", "go nodes 40000"] {
        let input = ["position startpos", go];
        let piped = pipe(&input);
        let searches = piped.searches();
        assert_eq!(searches.len(), 1, "{go}: {:?}", piped.text());
        check_search(STARTPOS, false, &searches[0]);
        assert_same_searches(&searches, &interactive(&input));
        piped.assert_prompt_exit();
    }
    // A mate limit: stopped at the end of input, the search would end after its first
    // iteration, long before it sees the mate in 2.
    let fen = "7k/8/8/8/8/8/R7/1R4K1 w - - 0 1";
    let piped = pipe(&[&format!("position fen {fen}"), "go mate 2"]);
    let searches = piped.searches();
    assert_eq!(searches.len(), 1, "{:?}", piped.text());
    check_search(fen, false, &searches[0]);
    assert_eq!(searches[0].last_exact().score, Score::Mate(2));
    piped.assert_prompt_exit();
    // Time limits: `movetime` is spent in full (less the 10 ms Move Overhead), and a clock
    // with a few seconds gets far past the first iterations.
    let piped = pipe(&["position startpos", "go movetime 400"]);
    let searches = piped.searches();
    assert_eq!(searches.len(), 1, "{:?}", piped.text());
    check_search(STARTPOS, false, &searches[0]);
    assert!(
        piped.first_answer_since_input() >= Duration::from_millis(390),
        "go movetime 400 answered after {:?}",
        piped.first_answer_since_input()
    );
    piped.assert_prompt_exit();
    let piped = pipe(&[
        &format!("position fen {KIWIPETE}"),
        "go wtime 20000 btime 20000",
    ]);
    let searches = piped.searches();
    assert_eq!(searches.len(), 1, "{:?}", piped.text());
    check_search(KIWIPETE, false, &searches[0]);
    let depth = searches[0].last_exact().depth;
    assert!(depth >= 4, "a 20 s clock stopped at depth {depth}");
    piped.assert_prompt_exit();
}

#[test]
fn searches_without_an_end_of_their_own_are_stopped_at_the_end_of_input() {
    let _cpu = exclusive_cpu();
    for go in ["go infinite", "go", "go searchmoves e2e4 d2d4"] {
        let piped = pipe(&["position startpos", go]);
        let searches = piped.searches();
        assert_eq!(searches.len(), 1, "{go}: {:?}", piped.text());
        assert_legal_bestmove(STARTPOS, &searches[0]);
        assert!(
            searches[0].elapsed < ANSWER_AFTER_END,
            "{go}: bestmove {:?} after the end of input",
            searches[0].elapsed
        );
        piped.assert_prompt_exit();
    }
}

#[test]
fn ponder_is_stopped_at_the_end_of_input_unless_ponderhit_came() {
    let _cpu = exclusive_cpu();
    // Still pondering: nothing could end it any more.
    let piped = pipe(&[
        "position startpos moves e2e4",
        "go ponder wtime 60000 btime 60000",
    ]);
    let searches = piped.searches();
    assert_eq!(searches.len(), 1, "{:?}", piped.text());
    let fen = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1";
    check_search(fen, false, &searches[0]);
    assert!(
        searches[0].elapsed < ANSWER_AFTER_END,
        "bestmove {:?} after the end of input",
        searches[0].elapsed
    );
    piped.assert_prompt_exit();
    // After `ponderhit` it is a normal search on its clock, which it spends.
    let piped = pipe(&[
        "position startpos moves e2e4",
        "go ponder movetime 400",
        "ponderhit",
    ]);
    let searches = piped.searches();
    assert_eq!(searches.len(), 1, "{:?}", piped.text());
    check_search(fen, false, &searches[0]);
    assert!(
        piped.first_answer_since_input() >= Duration::from_millis(390),
        "movetime 400 after ponderhit answered after {:?}",
        piped.first_answer_since_input()
    );
    piped.assert_prompt_exit();
}

#[test]
fn perft_prints_its_count_then_the_engine_exits() {
    let _cpu = exclusive_cpu();
    let piped = pipe(&["position startpos", "go perft 5"]);
    let text = piped.text();
    assert_eq!(text.last(), Some(&"Nodes searched: 4865609"), "{text:?}");
    let divide: Vec<&str> = text.iter().copied().filter(|l| l.contains(": ")).collect();
    let sum: u64 = divide
        .iter()
        .filter(|l| !l.starts_with("Nodes searched"))
        .map(|l| l.split_once(": ").unwrap().1.parse::<u64>().unwrap())
        .sum();
    assert_eq!((divide.len(), sum), (21, 4_865_609), "{text:?}");
    piped.assert_prompt_exit();
}

/// The example: two searches sent one after the other. Both run, in order, each
/// to its limit (the same output as sent one at a time), each on its own position.
#[test]
fn two_queued_searches_both_run_in_order() {
    let _cpu = exclusive_cpu();
    let kiwipete = format!("position fen {KIWIPETE}");
    let input = ["position startpos", "go depth 8", &kiwipete, "go depth 8"];
    let piped = pipe(&input);
    let searches = piped.searches();
    assert_eq!(searches.len(), 2, "{:?}", piped.text());
    check_search(STARTPOS, false, &searches[0]);
    check_search(KIWIPETE, false, &searches[1]);
    assert_same_searches(&searches, &interactive(&input));
    piped.assert_prompt_exit();
}

/// Each waiting search keeps the position and options of the moment its `go` was read:
/// `MultiPV` and the position changed between two `go`s apply to the second only.
#[test]
fn a_queued_search_keeps_the_position_and_options_it_was_sent_with() {
    let _cpu = exclusive_cpu();
    let piped = pipe(&[
        "position startpos",
        "go depth 7",
        "setoption name MultiPV value 3",
        &format!("position fen {KIWIPETE}"),
        "go depth 6",
        "setoption name MultiPV value 1",
        "position startpos moves e2e4",
    ]);
    let searches = piped.searches();
    assert_eq!(searches.len(), 2, "{:?}", piped.text());
    check_search(STARTPOS, false, &searches[0]);
    assert_eq!(searches[0].last_exact().depth, 7);
    let lines = searches[1].iterations();
    let at_depth_6: Vec<u32> = lines
        .iter()
        .filter(|i| i.depth == 6 && i.bound.is_none())
        .map(|i| i.multipv)
        .collect();
    assert_eq!(at_depth_6, [1, 2, 3], "{:?}", searches[1].infos);
    for info in &lines {
        let pv: Vec<&str> = info.pv.iter().map(String::as_str).collect();
        if let Err(e) = common::play_line(KIWIPETE, false, &pv) {
            panic!("PV not from the position sent with the go: {e}");
        }
    }
    assert!(common::play_line(KIWIPETE, false, &[searches[1].best()]).is_ok());
    piped.assert_prompt_exit();
}

/// `stop` ends the searches sent before it, the running one and the one waiting behind
/// it, each with its own `bestmove`; a search sent after it runs in full.
#[test]
fn stop_ends_the_searches_sent_before_it_and_not_after() {
    let _cpu = exclusive_cpu();
    let piped = pipe(&[
        "position startpos",
        "go infinite",
        &format!("position fen {KIWIPETE}"),
        "go depth 40",
        "stop",
        "position startpos moves e2e4",
        "go depth 6",
    ]);
    let searches = piped.searches();
    assert_eq!(searches.len(), 3, "{:?}", piped.text());
    assert_legal_bestmove(STARTPOS, &searches[0]);
    assert_legal_bestmove(KIWIPETE, &searches[1]);
    assert!(
        searches[1].elapsed < ANSWER_AFTER_END,
        "go depth 40 was not stopped: {:?}",
        searches[1].elapsed
    );
    let fen = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1";
    check_search(fen, false, &searches[2]);
    assert_eq!(searches[2].last_exact().depth, 6);
    piped.assert_prompt_exit();
}

/// `isready` is answered as soon as it is read, not after the searches before it.
#[test]
fn isready_is_answered_before_the_searches_sent_before_it() {
    let _cpu = exclusive_cpu();
    let piped = pipe(&["position startpos", "go depth 12", "go depth 12", "isready"]);
    let text = piped.text();
    let ready = text.iter().position(|&l| l == "readyok");
    let first_answer = text.iter().position(|l| l.starts_with("bestmove"));
    assert!(
        ready.is_some() && ready < first_answer,
        "readyok waited for a search: {text:?}"
    );
    assert_eq!(piped.searches().len(), 2);
    piped.assert_prompt_exit();
}

/// `quit` still ends everything at once: the running search is abandoned and what was sent
/// after `quit` is never read.
#[test]
fn quit_ends_everything_at_once() {
    let _cpu = exclusive_cpu();
    for go in ["go depth 60", "go infinite"] {
        let piped = pipe(&["position startpos", go, "quit", "go depth 1"]);
        let took = piped.exited.saturating_duration_since(piped.closed);
        assert!(
            took < EXIT_AFTER_LAST_ANSWER,
            "{go}, quit: exit took {took:?}"
        );
        let answers = piped.searches().len();
        assert!(answers <= 1, "{go}, quit: {answers} bestmoves");
    }
}

/// `quit` after `bench` lets the bench finish, as Stockfish's `bench` (which holds up its
/// command loop) does: `printf 'bench\nquit\n' | basalt` prints every position's line and
/// the total, the same total as the command-line bench, and nothing sent after `quit` runs.
#[test]
fn quit_after_bench_prints_the_bench_first() {
    let _cpu = exclusive_cpu();
    let piped = pipe(&["bench 4", "quit", "position startpos", "go depth 1"]);
    let text = piped.text();
    let total = *text.last().expect("no output");
    assert!(total.ends_with(" nps"), "{text:?}");
    let positions = text.iter().filter(|l| l.contains(" bestmove ")).count();
    assert_eq!(positions, 50, "{text:?}");
    assert!(piped.searches().is_empty(), "{text:?}");
    let command_line = common::run_engine(
        common::basalt().args(["bench", "--depth", "4"]),
        PATIENCE * 6,
        &[],
    );
    assert!(command_line.status.success());
    let out = String::from_utf8_lossy(&command_line.stdout);
    let nodes = |line: &str| line.split_whitespace().next().map(str::to_owned);
    assert_eq!(nodes(total), out.lines().last().and_then(nodes), "{out}");
    piped.assert_prompt_exit();
}

/// A bad line in a pipe gets its one `info string` and changes nothing; the searches
/// around it answer as usual.
#[test]
fn bad_input_in_a_pipe_gets_one_info_string() {
    let _cpu = exclusive_cpu();
    let piped = pipe(&[
        "position startpos moves e2e4",
        "go depth 4",
        "position fen 8/8/8/8/8/8/8/8 w - - 0 1",
        "go depth 5 sideways",
        "go depth 5",
    ]);
    let strings: Vec<&str> = piped
        .text()
        .into_iter()
        .filter(|l| l.starts_with("info string"))
        .collect();
    assert_eq!(strings.len(), 2, "{strings:?}");
    let searches = piped.searches();
    assert_eq!(searches.len(), 2, "{:?}", piped.text());
    let fen = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1";
    // The info strings came while the first search ran; `check_search` reads past them.
    check_search(fen, false, &searches[0]);
    check_search(fen, false, &searches[1]);
    assert_eq!(searches[1].last_exact().depth, 5);
    piped.assert_prompt_exit();
}
