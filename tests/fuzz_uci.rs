//! Fuzzes the UCI front end of the built `basalt` binary. A seeded generator sends thousands
//! of lines: valid commands with wrong, missing or extra arguments, truncated and mutated
//! FENs, real games as a GUI sends them, garbage text and raw bytes (non-UTF-8, NUL),
//! 100 KB lines, huge numbers, blank lines, and searches that are stopped, pondered or
//! re-configured at random moments.
//!
//! The harness keeps its own model of the engine's documented state (README, "UCI commands"):
//! the current position (a bad FEN keeps the previous one, an illegal move keeps the moves
//! before it), `UCI_Chess960`, `debug`, and the searches that have been started and not yet
//! answered. From that model it checks, for every line the engine prints:
//!
//! - every `bestmove` (and its ponder move) is legal in the position that was current when
//!   its `go` was sent, `(none)` only when that position has no legal move, inside
//!   `searchmoves`, and never before `stop`/`ponderhit` for `go infinite`/`go ponder`;
//! - every search ends in exactly one `bestmove`, every `go perft` in one total (checked
//!   against shakmaty) or in "perft stopped" after `stop`, every PV is legal;
//! - jobs answer in the order their `go`s were sent: a `go` sent while another job runs
//!   waits for it (never refused), and `stop`/`ponderhit` reach every job sent before them;
//! - every bad line gets exactly one `info string`, in order, saying the right kind of thing;
//!   option changes during a search that surely runs are deferred with an `info string`;
//! - `d` shows the position the model expects;
//! - the process never exits or writes to stderr (panics go there), every `isready` gets
//!   `readyok` within `READY_TIMEOUT` (`SETUP_READY_TIMEOUT` when it may wait for a table
//!   change), and `quit` at the end exits cleanly;
//! - an `isready` sent after `stop` comes after the stopped job's last line;
//! - `isready` (to `readyok`) and `stop` (to the job's last line) are prompt (at the 95th
//!   percentile in CI, the 99th on a quiet machine) while `Threads` jumps to 32..1024 and
//!   back, `Hash` to 128..1024 MB and `SyzygyPath` changes, during searches and between
//!   them (`LATENCY_*`).
//!
//! Every wait has a deadline, so a hang fails the test instead of stalling CI. On failure the
//! whole input is saved (path in the message) and can be replayed with
//! `target/release/basalt < FILE`.
//!
//! `cargo test --release --test fuzz_uci` runs a fixed seed; the long run is
//! `FUZZ_SEED=7 FUZZ_LINES=50000 cargo test --release --test fuzz_uci -- --ignored --nocapture`.

mod common;

use std::collections::VecDeque;
use std::fmt::Display;
use std::path::Path;
use std::sync::mpsc::{RecvTimeoutError, TryRecvError};
use std::thread;
use std::time::{Duration, Instant};

use common::{
    castling_mode, check_line, check_move, fen_of, legal_move, parse_bestmove, percentile,
    percentiles, quiet_machine, syzygy_dir, Engine, Line, Stream,
};
use rand::rngs::StdRng;
use rand::seq::IndexedRandom;
use rand::{Rng, SeedableRng};
use shakmaty::fen::Fen;
use shakmaty::{CastlingMode, Chess, Move, Position};

/// `isready` must be answered within this however busy the engine is. Far above the few
/// milliseconds it needs, so a chess match on the other core does not make the test flaky.
const READY_TIMEOUT: Duration = Duration::from_secs(5);
/// `isready` after a `Hash`, `Threads`, `Clear Hash` or `ucinewgame` waits for the change, at
/// most 5 s (then the engine answers with a note saying what is not ready); this adds slack.
const SETUP_READY_TIMEOUT: Duration = Duration::from_secs(15);
/// A failed Syzygy scan must be reported within this once the lines are all sent.
const TABLES_REPORT_TIMEOUT: Duration = Duration::from_secs(60);
/// A search must answer `stop` with its `bestmove` within this.
const STOP_TIMEOUT: Duration = Duration::from_secs(10);
/// The engine must exit within this after `quit`.
const QUIT_TIMEOUT: Duration = Duration::from_secs(5);

/// What "a very long line" means here.
const LONG_LINE: usize = 100 * 1024;

/// The issue's targets for the 99th percentiles, asserted in the long runs on a quiet
/// machine (`common::quiet_machine`).
const LATENCY_READY: Duration = Duration::from_millis(10);
const LATENCY_STOP: Duration = Duration::from_millis(50);
/// The CI run's limits: ten times looser, for a CI machine that runs other builds on both
/// cores, yet far below what a thread pool or table built on the UCI thread cost (0.4 to
/// 4 s at 30 to 1024 threads).
const CI_LATENCY_READY: Duration = Duration::from_millis(100);
const CI_LATENCY_STOP: Duration = Duration::from_millis(500);
/// The percentile the CI limits hold. With both cores kept busy by two spinning loops and
/// other builds beside them (load average 15 to 25 on two cores), the 99th reached 870 ms
/// for `isready` (over 152 samples) and 660 ms from `stop` (over 1028) while the 95th
/// stayed under 16 ms and 141 ms: the tail is the scheduler's. The 95th lets 5% through (7
/// of about 150 `isready`s); a command thread that waits for searches or for tables slows
/// far more than that, and `tests/uci.rs` times each option change on its own.
const CI_PERCENTILE: usize = 95;
/// The percentile the targets hold on a quiet machine.
const QUIET_PERCENTILE: usize = 99;

const CI_SEED: u64 = 0xBA5A_17F0_2200;
const CI_LINES: usize = 4000;
const DEFAULT_LONG_SEED: u64 = 1;
const DEFAULT_LONG_LINES: usize = 20_000;

#[test]
fn fuzz_uci_fixed_seed() {
    let stats = fuzz(CI_SEED, CI_LINES);
    println!("{stats}");
    stats.assert_latency(CI_PERCENTILE, CI_LATENCY_READY, CI_LATENCY_STOP);
}

/// `FUZZ_SEED` (decimal or 0x-hex) and `FUZZ_LINES` choose the run.
#[test]
#[ignore = "long: run with --ignored, FUZZ_SEED and FUZZ_LINES"]
fn fuzz_uci_long() {
    let seed = std::env::var("FUZZ_SEED").map_or(DEFAULT_LONG_SEED, |s| parse_seed(&s));
    let lines = std::env::var("FUZZ_LINES").map_or(DEFAULT_LONG_LINES, |s| {
        s.trim()
            .parse()
            .unwrap_or_else(|_| panic!("FUZZ_LINES={s:?} is not a number"))
    });
    let stats = fuzz(seed, lines);
    println!("{stats}");
    if quiet_machine() {
        stats.assert_latency(QUIET_PERCENTILE, LATENCY_READY, LATENCY_STOP);
    } else {
        println!(
            "targets of a quiet machine (BASALT_QUIET_MACHINE unset, not asserted): isready \
             p99 {LATENCY_READY:?}, stop p99 {LATENCY_STOP:?}; holding the CI limits at p95"
        );
        stats.assert_latency(CI_PERCENTILE, CI_LATENCY_READY, CI_LATENCY_STOP);
    }
}

fn parse_seed(text: &str) -> u64 {
    let text = text.trim();
    let parsed = match text.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => text.parse(),
    };
    parsed.unwrap_or_else(|_| panic!("FUZZ_SEED={text:?} is not a number"))
}

/// Sends `lines` generated lines (plus the harness's own `isready`/`stop`) and checks every
/// reply; panics with the recent traffic on the first violation.
fn fuzz(seed: u64, lines: usize) -> Stats {
    let started = Instant::now();
    let mut generator = Generator::new(seed);
    let mut fuzz = Fuzz::start(seed);
    fuzz.send(b"isready".to_vec());
    let mut next_drain = generator.rng.random_range(100..300);
    for n in 0..lines {
        let line = generator.next_line(&fuzz.model);
        let was_go = matches!(fuzz.model.meaning(&lossy(&line)), Meaning::Go(_));
        fuzz.stats.generated += 1;
        fuzz.send(line);
        // Most searches are cut short by the next `stop`; let some run for a while. The
        // draws depend only on the lines, so a seed always generates the same input.
        if was_go && generator.rng.random_bool(0.3) {
            let ms = generator.rng.random_range(5..80);
            fuzz.wait_idle(Duration::from_millis(ms));
        } else if generator.rng.random_bool(0.02) {
            let ms = generator.rng.random_range(1..20);
            fuzz.pause(Duration::from_millis(ms));
        }
        if n == next_drain {
            fuzz.drain();
            next_drain += generator.rng.random_range(100..300);
        }
    }
    fuzz.drain();
    fuzz.await_tables_reports();
    // Nothing may trickle in after everything has been answered.
    fuzz.pause(Duration::from_millis(50));
    fuzz.send(b"isready".to_vec());
    fuzz.quit();
    fuzz.stats.elapsed = started.elapsed();
    fuzz.stats.seed = seed;
    fuzz.stats
}

fn lossy(line: &[u8]) -> String {
    String::from_utf8_lossy(line).into_owned()
}

// ---------------------------------------------------------------------------------------
// The model: what a line means to the engine, as documented
// ---------------------------------------------------------------------------------------

/// The engine state a line can change.
#[derive(Clone)]
struct Model {
    board: Chess,
    /// Castling mode of the current position (fixed when the `position` command was read).
    mode: CastlingMode,
    /// The `UCI_Chess960` option, used by the next `position`.
    chess960: bool,
    debug: bool,
}

/// The one `info string` a bad line (or a deferred option change) must produce.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Notice {
    UnknownCommand,
    Debug,
    SetOption,
    PositionSyntax,
    Fen,
    /// The 1-based index of the first move that could not be played.
    Move(usize),
    Go,
    HashDeferred,
    ThreadsDeferred,
    ClearDeferred,
    /// A SyzygyPath naming no directory, refused by the UCI thread at once.
    SyzygyOff,
}

impl Notice {
    fn matches(self, text: &str) -> bool {
        match self {
            Notice::UnknownCommand => text.starts_with("unknown command"),
            Notice::Debug => text.starts_with("debug"),
            Notice::SetOption => {
                text.starts_with("setoption")
                    || text.starts_with("option ")
                    || text.starts_with("no such option")
            }
            Notice::PositionSyntax => text.starts_with("position"),
            Notice::Fen => text.starts_with("invalid FEN"),
            Notice::Move(n) => text.starts_with(&format!("illegal or unparsable move {n} ")),
            Notice::Go => text.starts_with("go"),
            Notice::HashDeferred => text.starts_with("Hash will be resized"),
            Notice::ThreadsDeferred => text.starts_with("Threads will change"),
            Notice::ClearDeferred => text.starts_with("hash will be cleared"),
            Notice::SyzygyOff => text.starts_with("SyzygyPath: "),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Setting {
    Hash(u64),
    Threads(u64),
    ClearHash,
    Chess960(bool),
    SyzygyOff,
    /// A SyzygyPath naming directories: the search thread scans them and reports a failure
    /// itself, so its notice may come at any time (`tables_reports_due`).
    SyzygyScan {
        fails: bool,
    },
    Other,
}

#[derive(Clone, Debug, Default)]
struct Go {
    perft: Option<u32>,
    infinite: bool,
    ponder: bool,
    search_moves: Vec<Move>,
}

enum Meaning {
    Blank,
    Bad(Notice),
    Uci,
    IsReady,
    NewGame,
    Stop,
    PonderHit,
    Quit,
    Display,
    Eval,
    Bench,
    Debug(bool),
    SetOption(Setting),
    Position {
        board: Chess,
        mode: CastlingMode,
        bad_move: Option<usize>,
    },
    Go(Go),
}

const GO_KEYWORDS: [&str; 13] = [
    "wtime",
    "btime",
    "winc",
    "binc",
    "movestogo",
    "depth",
    "nodes",
    "mate",
    "movetime",
    "infinite",
    "ponder",
    "searchmoves",
    "perft",
];

/// A `go` number: an integer, or a run of digits too long for one, which saturates.
fn go_number(text: Option<&str>) -> Option<i64> {
    let text = text?;
    if let Ok(v) = text.parse::<i64>() {
        return Some(v);
    }
    let digits = text.strip_prefix('-').unwrap_or(text);
    let all_digits = !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit());
    match (all_digits, text.starts_with('-')) {
        (false, _) => None,
        (true, true) => Some(i64::MIN),
        (true, false) => Some(i64::MAX),
    }
}

impl Model {
    fn new() -> Model {
        Model {
            board: Chess::default(),
            mode: CastlingMode::Standard,
            chess960: false,
            debug: false,
        }
    }

    fn fen(&self) -> String {
        fen_of(&self.board)
    }

    /// What the engine makes of `line` (already decoded the way it decodes input).
    fn meaning(&self, line: &str) -> Meaning {
        let words: Vec<&str> = line.split_whitespace().collect();
        let Some((&head, rest)) = words.split_first() else {
            return Meaning::Blank;
        };
        match head {
            "uci" => Meaning::Uci,
            "isready" => Meaning::IsReady,
            "ucinewgame" => Meaning::NewGame,
            "stop" => Meaning::Stop,
            "ponderhit" => Meaning::PonderHit,
            "quit" => Meaning::Quit,
            "d" => Meaning::Display,
            "eval" => Meaning::Eval,
            "bench" => Meaning::Bench,
            "debug" => match rest.first().copied() {
                Some("on") => Meaning::Debug(true),
                Some("off") => Meaning::Debug(false),
                _ => Meaning::Bad(Notice::Debug),
            },
            "setoption" => self.setoption(rest),
            "position" => self.position(rest),
            "go" => self.go(rest),
            _ => Meaning::Bad(Notice::UnknownCommand),
        }
    }

    fn setoption(&self, words: &[&str]) -> Meaning {
        if words.first() != Some(&"name") {
            return Meaning::Bad(Notice::SetOption);
        }
        let value_at = words.iter().position(|&w| w == "value");
        let name = words[1..value_at.unwrap_or(words.len())].join(" ");
        if name.is_empty() {
            return Meaning::Bad(Notice::SetOption);
        }
        let value = value_at.map(|i| words[i + 1..].join(" "));
        let value = value.as_deref().map(str::trim);
        let spin = |min: u64, max: u64| {
            value
                .and_then(|v| v.parse::<u64>().ok())
                .filter(|v| (min..=max).contains(v))
        };
        let check = || match value.map(str::to_ascii_lowercase).as_deref() {
            Some("true") => Some(true),
            Some("false") => Some(false),
            _ => None,
        };
        let setting = match name.to_ascii_lowercase().as_str() {
            "hash" => spin(1, 65536).map(Setting::Hash),
            "clear hash" => Some(Setting::ClearHash),
            "threads" => spin(1, 1024).map(Setting::Threads),
            "move overhead" => spin(0, 5000).map(|_| Setting::Other),
            "ponder" => check().map(|_| Setting::Other),
            "uci_chess960" => check().map(Setting::Chess960),
            "multipv" => spin(1, 256).map(|_| Setting::Other),
            "uci_showwdl" | "syzygy50moverule" | "uci_limitstrength" => {
                check().map(|_| Setting::Other)
            }
            "uci_elo" => spin(1320, 3000).map(|_| Setting::Other),
            "uci_opponent" => Some(Setting::Other),
            "syzygyprobedepth" => spin(1, 100).map(|_| Setting::Other),
            "syzygyprobelimit" => spin(0, 7).map(|_| Setting::Other),
            "syzygypath" => {
                let path = value.unwrap_or_default();
                let names_none =
                    path == "<empty>" || path.split([':', ';']).all(|dir| dir.trim().is_empty());
                Some(if names_none {
                    Setting::SyzygyOff
                } else {
                    Setting::SyzygyScan {
                        fails: path.trim() != syzygy_dir(),
                    }
                })
            }
            _ => None,
        };
        setting.map_or(Meaning::Bad(Notice::SetOption), Meaning::SetOption)
    }

    fn position(&self, words: &[&str]) -> Meaning {
        let (setup, moves) = match words.iter().position(|&w| w == "moves") {
            Some(i) => (&words[..i], &words[i + 1..]),
            None => (words, &[][..]),
        };
        let mode = castling_mode(self.chess960);
        let mut board = match setup {
            ["startpos"] => Chess::default(),
            ["fen", fen @ ..] if !fen.is_empty() => {
                let parsed = fen.join(" ").trim().parse::<Fen>();
                match parsed
                    .ok()
                    .and_then(|f| f.into_position::<Chess>(mode).ok())
                {
                    Some(board) => board,
                    None => return Meaning::Bad(Notice::Fen),
                }
            }
            _ => return Meaning::Bad(Notice::PositionSyntax),
        };
        let mut bad_move = None;
        for (i, text) in moves.iter().enumerate() {
            match legal_move(&board, text) {
                Some(m) => board.play_unchecked(m),
                None => {
                    bad_move = Some(i + 1);
                    break;
                }
            }
        }
        Meaning::Position {
            board,
            mode,
            bad_move,
        }
    }

    fn go(&self, words: &[&str]) -> Meaning {
        let mut go = Go::default();
        let mut i = 0;
        while i < words.len() {
            let value = words.get(i + 1).copied();
            match words[i] {
                "infinite" => go.infinite = true,
                "ponder" => go.ponder = true,
                "searchmoves" => {
                    while i + 1 < words.len() && !GO_KEYWORDS.contains(&words[i + 1]) {
                        match legal_move(&self.board, words[i + 1]) {
                            Some(m) => go.search_moves.push(m),
                            None => return Meaning::Bad(Notice::Go),
                        }
                        i += 1;
                    }
                }
                "perft" => {
                    match go_number(value).filter(|n| (1..=20).contains(n)) {
                        Some(n) => go.perft = Some(n as u32),
                        None => return Meaning::Bad(Notice::Go),
                    }
                    i += 1;
                }
                key if GO_KEYWORDS.contains(&key) => {
                    if go_number(value).is_none() {
                        return Meaning::Bad(Notice::Go);
                    }
                    i += 1;
                }
                _ => return Meaning::Bad(Notice::Go),
            }
            i += 1;
        }
        Meaning::Go(go)
    }
}

// ---------------------------------------------------------------------------------------
// The harness
// ---------------------------------------------------------------------------------------

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum JobKind {
    Search,
    Perft(u32),
}

/// A `go` the engine accepted (or, until `isready` tells, may have accepted).
struct Job {
    /// Jobs are numbered in the order their `go`s were sent, which is the order they run.
    id: u64,
    line_no: usize,
    go: String,
    kind: JobKind,
    board: Chess,
    mode: CastlingMode,
    search_moves: Vec<Move>,
    infinite: bool,
    ponder: bool,
    debug: bool,
    stopped: bool,
    /// When the first `stop` after this job's `go` was sent.
    stop_sent: Option<Instant>,
    ponderhit: bool,
    debug_lines: usize,
    divide: Vec<(String, u64)>,
}

impl Job {
    /// A search only `stop` (or `ponderhit`) can end: while it is queued the engine is busy.
    fn cannot_end(&self) -> bool {
        self.kind == JobKind::Search
            && !self.stopped
            && (self.infinite || (self.ponder && !self.ponderhit))
    }

    fn describe(&self) -> String {
        format!(
            "job {} `{}` (line {}) in {}",
            self.id,
            self.go,
            self.line_no,
            fen_of(&self.board)
        )
    }
}

/// An `info string` the main thread must (or, when timing decides, may) print.
struct Expected {
    notice: Notice,
    required: bool,
    line_no: usize,
}

#[derive(Debug, Default)]
struct Stats {
    seed: u64,
    generated: usize,
    sent: usize,
    bytes: usize,
    long_lines: usize,
    searches: usize,
    perfts: usize,
    /// `go`s sent before the answers of earlier jobs had been read.
    queued: usize,
    bestmoves: usize,
    no_move: usize,
    perfts_checked: usize,
    perfts_stopped: usize,
    pv_lines: usize,
    info_strings: usize,
    complaints: usize,
    deferrals: usize,
    fens_checked: usize,
    readyoks: usize,
    drains: usize,
    max_ready: Duration,
    /// `isready` to `readyok`, and `stop` to the stopped job's last line. An `isready`
    /// sent while a stopped job had not printed its last line waits for that line by
    /// design, so its latency is a stop latency and is kept apart (`ready_after_stop`), and
    /// so is one that may wait for a table change (`ready_after_setup`).
    ready_latency: Vec<Duration>,
    ready_after_stop: Vec<Duration>,
    ready_after_setup: Vec<Duration>,
    /// `readyok`s sent before a change was done, after the engine's 5 s patience.
    unready_notes: usize,
    stop_latency: Vec<Duration>,
    /// Option changes of the churn: big thread counts, big tables, Syzygy rescans.
    churn: usize,
    elapsed: Duration,
}

impl Stats {
    /// The `p`th percentiles of the latencies are within `ready` and `stop`.
    fn assert_latency(&self, p: usize, ready: Duration, stop: Duration) {
        let ready_p = percentile(&self.ready_latency, p);
        let stop_p = percentile(&self.stop_latency, p);
        let after_stop_p = percentile(&self.ready_after_stop, p);
        assert!(
            after_stop_p <= stop,
            "seed {:#x}: isready after stop p{p} {after_stop_p:?} > {stop:?}",
            self.seed
        );
        assert!(
            ready_p <= ready,
            "seed {:#x}: isready p{p} {ready_p:?} > {ready:?}",
            self.seed
        );
        assert!(
            stop_p <= stop,
            "seed {:#x}: stop -> bestmove p{p} {stop_p:?} > {stop:?}",
            self.seed
        );
    }
}

impl Display for Stats {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(f, "UCI fuzz, seed {:#x}, {:.1?}:", self.seed, self.elapsed)?;
        writeln!(
            f,
            "  lines: {} generated, {} sent in all ({:.1} MB, {} of 100 KB)",
            self.generated,
            self.sent,
            self.bytes as f64 / 1e6,
            self.long_lines
        )?;
        writeln!(
            f,
            "  searches started: {}; {} `go` (perft included) sent before earlier jobs answered",
            self.searches, self.queued
        )?;
        writeln!(
            f,
            "  perfts started: {} ({} totals checked, {} stopped)",
            self.perfts, self.perfts_checked, self.perfts_stopped
        )?;
        writeln!(
            f,
            "  bestmoves checked: {} ({} `(none)`), PV lines checked: {}",
            self.bestmoves, self.no_move, self.pv_lines
        )?;
        writeln!(
            f,
            "  info strings seen: {} ({} complaints about bad input, {} deferred options)",
            self.info_strings, self.complaints, self.deferrals
        )?;
        writeln!(
            f,
            "  `d` positions checked: {}, readyoks: {}, max isready latency: {:.1?}, drains: {}",
            self.fens_checked, self.readyoks, self.max_ready, self.drains
        )?;
        let ready = percentiles(&self.ready_latency);
        let (r95, r99, rmax) = (ready.p95, ready.p99, ready.max);
        let stop = percentiles(&self.stop_latency);
        let (s95, s99, smax) = (stop.p95, stop.p99, stop.max);
        let after_stop = percentiles(&self.ready_after_stop);
        let (a95, a99, amax) = (after_stop.p95, after_stop.p99, after_stop.max);
        let after_setup = percentiles(&self.ready_after_setup);
        writeln!(
            f,
            "  isready after a table change: p50 {:.2?} p95 {:.2?} max {:.2?} ({} \
             samples, {} answered before the change was done)",
            after_setup.p50,
            after_setup.p95,
            after_setup.max,
            self.ready_after_setup.len(),
            self.unready_notes
        )?;
        write!(
            f,
            "  option churn lines: {}; isready p95 {r95:.2?} p99 {r99:.2?} max {rmax:.2?} \
             ({} samples); isready after stop p95 {a95:.2?} p99 {a99:.2?} max {amax:.2?} \
             ({} samples); stop -> last line p95 {s95:.2?} p99 {s99:.2?} max {smax:.2?} \
             ({} samples)",
            self.churn,
            self.ready_latency.len(),
            self.ready_after_stop.len(),
            self.stop_latency.len()
        )
    }
}

struct Fuzz {
    seed: u64,
    engine: Engine,
    model: Model,
    /// Started jobs whose last line has not been read yet, oldest first. Jobs run one at a
    /// time, so the front one owns every search/perft line read.
    jobs: VecDeque<Job>,
    next_job: u64,
    expected: VecDeque<Expected>,
    fens_due: VecDeque<String>,
    uciok_due: usize,
    evals_due: usize,
    ready_sent: Option<Instant>,
    /// The pending `isready` was sent while a stopped job had not ended yet.
    ready_waits_for_stop: bool,
    /// A table change (`Hash`, `Clear Hash`, `ucinewgame`) may not be
    /// done yet: no `readyok` has answered an `isready` sent with the engine idle since.
    setup_pending: bool,
    /// How the pending `isready` may wait for such a change: `Some(idle)` if it may, `idle`
    /// if no job was running or waiting when it was sent (so its `readyok` means done).
    ready_waits_for_setup: Option<bool>,
    /// The engine said it answers `isready` before a change is done.
    unready_noted: bool,
    /// Syzygy scans whose failure the search thread has yet to report.
    tables_reports_due: usize,
    /// When the output line being handled arrived.
    line_at: Instant,
    line_no: usize,
    transcript: Vec<Vec<u8>>,
    log: VecDeque<String>,
    stats: Stats,
}

impl Fuzz {
    fn start(seed: u64) -> Fuzz {
        Fuzz {
            seed,
            engine: Engine::start(),
            model: Model::new(),
            jobs: VecDeque::new(),
            next_job: 0,
            expected: VecDeque::new(),
            fens_due: VecDeque::new(),
            uciok_due: 0,
            evals_due: 0,
            ready_sent: None,
            ready_waits_for_stop: false,
            setup_pending: false,
            ready_waits_for_setup: None,
            unready_noted: false,
            tables_reports_due: 0,
            line_at: Instant::now(),
            line_no: 0,
            transcript: Vec::new(),
            log: VecDeque::new(),
            stats: Stats::default(),
        }
    }

    fn note(&mut self, entry: String) {
        const KEEP: usize = 150;
        if self.log.len() >= KEEP {
            self.log.pop_front();
        }
        self.log.push_back(entry);
    }

    /// Saves every line sent so the run can be replayed, and fails with the recent traffic.
    fn fail(&self, why: impl Display) -> ! {
        let path =
            Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("fuzz_uci_{:#x}.in", self.seed));
        let mut bytes = Vec::new();
        for line in &self.transcript {
            bytes.extend_from_slice(line);
            bytes.push(b'\n');
        }
        let saved = match std::fs::write(&path, &bytes) {
            Ok(()) => format!(
                "all {} lines sent are in {}",
                self.transcript.len(),
                path.display()
            ),
            Err(e) => format!("cannot save the input to {}: {e}", path.display()),
        };
        let log: Vec<&str> = self.log.iter().map(String::as_str).collect();
        panic!(
            "UCI fuzz, seed {:#x}, line {}: {why}\n{saved}\n\
             --- recent traffic (> sent, < received) ---\n{}",
            self.seed,
            self.line_no,
            log.join("\n")
        );
    }

    fn check_alive(&mut self) {
        match self.engine.try_wait() {
            Ok(None) => {}
            Ok(Some(status)) => {
                let stderr = self.pause_quietly();
                self.fail(format!("the engine exited ({status}); stderr: {stderr:?}"))
            }
            Err(e) => self.fail(format!("cannot poll the engine: {e}")),
        }
    }

    /// Reads what is left of the output of a dead engine into the log (for the report).
    /// Returns the engine's stderr lines among them (a panic message, say).
    fn pause_quietly(&mut self) -> Vec<String> {
        let mut stderr = Vec::new();
        while let Ok(line) = self.engine.recv(Duration::from_millis(100)) {
            let tag = if line.stream == Stream::Stderr {
                "<!"
            } else {
                "<"
            };
            self.note(format!("{tag} {}", shorten(&line.text)));
            if line.stream == Stream::Stderr {
                stderr.push(line.text);
            }
        }
        stderr
    }

    /// Sends one line and does what the model says it means; returns once its immediate
    /// consequences are checked (`isready` answered).
    fn send(&mut self, line: Vec<u8>) {
        let text = lossy(&line);
        let meaning = self.model.meaning(&text);
        if let Meaning::SetOption(setting) = meaning {
            self.settle_deferrals(setting);
            if is_churn(setting) {
                self.stats.churn += 1;
            }
        }
        self.line_no += 1;
        self.stats.sent += 1;
        self.stats.bytes += line.len() + 1;
        if line.len() >= LONG_LINE {
            self.stats.long_lines += 1;
        }
        self.note(format!("> {}", shorten(&text)));
        self.transcript.push(line.clone());
        if !self.engine.write_line(line) {
            self.fail("cannot write to the engine");
        }
        match meaning {
            Meaning::Blank => {}
            Meaning::NewGame => self.setup_pending = true,
            Meaning::Bad(notice) => self.expect(notice, true),
            Meaning::Uci => self.uciok_due += 1,
            Meaning::IsReady => self.await_ready(),
            Meaning::Stop => {
                let now = Instant::now();
                for job in &mut self.jobs {
                    job.stopped = true;
                    job.stop_sent.get_or_insert(now);
                }
            }
            Meaning::PonderHit => self.jobs.iter_mut().for_each(|j| j.ponderhit = true),
            Meaning::Quit | Meaning::Bench => {
                self.fail("the generator must not send quit or bench")
            }
            Meaning::Display => self.fens_due.push_back(self.model.fen()),
            Meaning::Eval => self.evals_due += 1,
            Meaning::Debug(on) => self.model.debug = on,
            Meaning::SetOption(setting) => self.set_option(setting),
            Meaning::Position {
                board,
                mode,
                bad_move,
            } => {
                self.model.board = board;
                self.model.mode = mode;
                if let Some(n) = bad_move {
                    self.expect(Notice::Move(n), true);
                }
            }
            Meaning::Go(go) => self.go(go, &text),
        }
        self.pump_available();
        self.check_alive();
    }

    fn expect(&mut self, notice: Notice, required: bool) {
        self.expected.push_back(Expected {
            notice,
            required,
            line_no: self.line_no,
        });
    }

    /// A change that must be deferred gets the same notice as earlier ones that may have
    /// been; `isready` first settles those, so the notice cannot be credited to them.
    fn settle_deferrals(&mut self, setting: Setting) {
        let Some(notice) = deferral_notice(setting) else {
            return;
        };
        let must_defer = self.jobs.iter().any(Job::cannot_end);
        let unsettled = self
            .expected
            .iter()
            .any(|e| !e.required && e.notice == notice);
        if must_defer && unsettled {
            self.send(b"isready".to_vec());
        }
    }

    fn set_option(&mut self, setting: Setting) {
        if let Setting::Chess960(on) = setting {
            self.model.chess960 = on;
        }
        // New search threads start between jobs: `readyok` does not wait for them.
        if matches!(setting, Setting::Hash(_) | Setting::ClearHash) {
            self.setup_pending = true;
        }
        if setting == Setting::SyzygyOff {
            self.expect(Notice::SyzygyOff, true);
            return;
        }
        if let Setting::SyzygyScan { fails } = setting {
            self.tables_reports_due += usize::from(fails);
            return;
        }
        let Some(deferred) = deferral_notice(setting) else {
            return;
        };
        // With no job queued the engine is idle and applies the change silently; with one
        // that cannot end on its own it is surely busy and must defer it with a notice;
        // otherwise the search may just have ended, and either is right.
        if !self.jobs.is_empty() {
            let busy = self.jobs.iter().any(Job::cannot_end);
            self.expect(deferred, busy);
        }
    }

    fn go(&mut self, go: Go, text: &str) {
        // A `go` sent while jobs run or wait is never refused: it runs after them, on the
        // position it was sent with, and answers in turn (`jobs` is in that order).
        if !self.jobs.is_empty() {
            self.stats.queued += 1;
        }
        let id = self.next_job;
        self.next_job += 1;
        let kind = match go.perft {
            Some(depth) => JobKind::Perft(depth),
            None => JobKind::Search,
        };
        self.jobs.push_back(Job {
            id,
            line_no: self.line_no,
            go: shorten(text),
            kind,
            board: self.model.board.clone(),
            mode: self.model.mode,
            search_moves: go.search_moves,
            infinite: go.infinite,
            ponder: go.ponder,
            debug: self.model.debug,
            stopped: false,
            stop_sent: None,
            ponderhit: false,
            debug_lines: 0,
            divide: Vec::new(),
        });
        match kind {
            JobKind::Search => self.stats.searches += 1,
            JobKind::Perft(_) => self.stats.perfts += 1,
        }
    }

    fn await_ready(&mut self) {
        let sent = Instant::now();
        self.ready_sent = Some(sent);
        self.ready_waits_for_stop = self.jobs.iter().any(|j| j.stop_sent.is_some());
        // A job that cannot end keeps the engine busy, and `isready` is then answered at
        // once; otherwise it may wait for a change sent before it.
        let busy = self.jobs.iter().any(Job::cannot_end);
        self.ready_waits_for_setup = (self.setup_pending && !busy).then_some(self.jobs.is_empty());
        self.unready_noted = false;
        let timeout = if self.ready_waits_for_setup.is_some() {
            SETUP_READY_TIMEOUT
        } else {
            READY_TIMEOUT
        };
        let deadline = sent + timeout;
        while self.ready_sent.is_some() {
            if !self.pump_until(deadline) {
                self.check_alive();
                self.fail(format!("no readyok within {timeout:?}"));
            }
        }
    }

    /// Reads output until the engine has answered every job, or `timeout`; true if idle.
    fn wait_idle(&mut self, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        while !self.jobs.is_empty() {
            if !self.pump_until(deadline) {
                return false;
            }
        }
        true
    }

    /// Reads output for `duration`.
    fn pause(&mut self, duration: Duration) {
        let deadline = Instant::now() + duration;
        while self.pump_until(deadline) {}
    }

    /// `stop`, `isready`, and every job must end with its last line within `STOP_TIMEOUT`.
    fn drain(&mut self) {
        self.stats.drains += 1;
        self.send(b"stop".to_vec());
        self.send(b"isready".to_vec());
        if !self.wait_idle(STOP_TIMEOUT) {
            self.check_alive();
            let pending: Vec<String> = self.jobs.iter().map(Job::describe).collect();
            self.fail(format!(
                "no bestmove/perft end within {STOP_TIMEOUT:?} of stop for {}",
                pending.join(", ")
            ));
        }
    }

    fn quit(&mut self) {
        self.note("> quit".into());
        self.transcript.push(b"quit".to_vec());
        self.engine.write_line(b"quit".to_vec());
        self.engine.close_stdin();
        let deadline = Instant::now() + QUIT_TIMEOUT;
        let status = loop {
            match self.engine.try_wait() {
                Ok(Some(status)) => break status,
                Ok(None) if Instant::now() < deadline => {
                    self.pump_until(Instant::now() + Duration::from_millis(5));
                }
                Ok(None) => self.fail(format!("no exit within {QUIT_TIMEOUT:?} of quit")),
                Err(e) => self.fail(format!("cannot wait for the engine: {e}")),
            }
        };
        // The readers end at end of output; anything left is checked like the rest.
        while self.pump_until(Instant::now() + Duration::from_millis(200)) {}
        if !status.success() {
            self.fail(format!("the engine exited with {status} after quit"));
        }
    }

    fn pump_available(&mut self) {
        loop {
            match self.engine.try_recv() {
                Ok(line) => self.on_output(line),
                Err(TryRecvError::Empty | TryRecvError::Disconnected) => return,
            }
        }
    }

    /// Handles the next output line if one arrives before `deadline`.
    fn pump_until(&mut self, deadline: Instant) -> bool {
        let left = deadline.saturating_duration_since(Instant::now());
        match self.engine.recv(left) {
            Ok(line) => {
                self.on_output(line);
                true
            }
            Err(RecvTimeoutError::Timeout) => false,
            Err(RecvTimeoutError::Disconnected) => {
                thread::sleep(left.min(Duration::from_millis(5)));
                false
            }
        }
    }

    fn on_output(&mut self, output: Line) {
        let Line {
            at,
            stream,
            text: line,
        } = output;
        self.line_at = at;
        if stream == Stream::Stderr {
            self.note(format!("<! {}", shorten(&line)));
            let mut stderr = vec![line];
            stderr.extend(self.pause_quietly());
            let shown: Vec<&str> = stderr
                .iter()
                .map(String::as_str)
                .filter(|l| !l.is_empty())
                .take(3)
                .collect();
            let what = if stderr.iter().any(|l| l.contains("panicked")) {
                "the engine panicked"
            } else {
                "the engine wrote to stderr"
            };
            self.fail(format!("{what}: {}", shown.join(" / ")));
        }
        // Search iterations and board pictures would push everything else out of the log.
        if !line.starts_with("info depth") && !is_board_or_eval_line(&line) {
            self.note(format!("< {}", shorten(&line)));
        }
        if line.contains("panicked") {
            self.fail(format!("output mentions a panic: {line:?}"));
        }
        if line == "readyok" {
            self.on_readyok(at);
        } else if line.starts_with("bestmove") {
            self.on_bestmove(&line);
        } else if let Some(text) = line.strip_prefix("info string ") {
            self.on_info_string(text);
        } else if line.starts_with("info ") {
            self.on_search_info(&line);
        } else if let Some(total) = line.strip_prefix("Nodes searched: ") {
            self.on_perft_total(total);
        } else if line == "uciok" {
            if self.uciok_due == 0 {
                self.fail("uciok without uci");
            }
            self.uciok_due -= 1;
        } else if line.starts_with("id ") || line.starts_with("option name ") {
            if self.uciok_due == 0 {
                self.fail(format!("{line:?} without uci"));
            }
        } else if let Some(fen) = line.strip_prefix("Fen: ") {
            self.on_display_fen(fen);
        } else if line.starts_with("Final evaluation: ") {
            if self.evals_due == 0 {
                self.fail("evaluation without eval");
            }
            self.evals_due -= 1;
        } else if let Some((m, count)) = divide_entry(&line) {
            self.on_divide(m, count);
        } else if !is_board_or_eval_line(&line) {
            self.fail(format!("unexpected output line {line:?}"));
        }
    }

    /// The job whose last line has just been read, its stop latency noted.
    fn pop_job(&mut self) -> Option<Job> {
        let job = self.jobs.pop_front()?;
        if let Some(sent) = job.stop_sent {
            let latency = self.line_at.saturating_duration_since(sent);
            self.stats.stop_latency.push(latency);
        }
        Some(job)
    }

    /// Failed Syzygy scans are reported by the search thread when it gets to them: after the
    /// table work queued before them (up to 1 GB to allocate and zero, which took more than
    /// `READY_TIMEOUT` with every core busy), so the deadline only catches a report that
    /// never comes.
    fn await_tables_reports(&mut self) {
        let deadline = Instant::now() + TABLES_REPORT_TIMEOUT;
        while self.tables_reports_due > 0 {
            if !self.pump_until(deadline) {
                self.fail(format!(
                    "{} SyzygyPath scans never reported their failure",
                    self.tables_reports_due
                ));
            }
        }
    }

    fn on_readyok(&mut self, at: Instant) {
        let Some(sent) = self.ready_sent.take() else {
            self.fail("readyok without isready");
        };
        self.stats.readyoks += 1;
        let latency = at.saturating_duration_since(sent);
        self.stats.max_ready = self.stats.max_ready.max(latency);
        if let Some(idle) = self.ready_waits_for_setup {
            self.stats.ready_after_setup.push(latency);
            // With nothing running, `readyok` comes once the changes are done, unless the
            // engine said it could not wait for them.
            if idle && !self.unready_noted {
                self.setup_pending = false;
            }
        } else if self.ready_waits_for_stop {
            self.stats.ready_after_stop.push(latency);
        } else {
            self.stats.ready_latency.push(latency);
        }
        // `isready` after `stop` waits for the stopped job's last line.
        if let Some(job) = self
            .jobs
            .iter()
            .find(|j| j.stop_sent.is_some_and(|t| t < sent))
        {
            self.fail(format!(
                "readyok for an isready sent after stop came before the end of {}",
                job.describe()
            ));
        }
        // The main thread answers lines in order, so whatever it had to print for the lines
        // before `isready` has been printed by now.
        while let Some(e) = self.expected.pop_front() {
            if e.required {
                self.fail(format!(
                    "line {} got no info string ({:?}) before readyok",
                    e.line_no, e.notice
                ));
            }
        }
        if let Some(fen) = self.fens_due.front() {
            self.fail(format!(
                "`d` printed no Fen line before readyok (expected {fen})"
            ));
        }
        if self.uciok_due > 0 || self.evals_due > 0 {
            self.fail("`uci` or `eval` not answered before readyok");
        }
    }

    fn on_info_string(&mut self, text: &str) {
        self.stats.info_strings += 1;
        if text.starts_with("SyzygyPath: cannot read") && self.tables_reports_due > 0 {
            self.tables_reports_due -= 1;
            self.stats.complaints += 1;
            return;
        }
        // `readyok` that could not wait longer for a table change.
        if text.starts_with("not ready after ") {
            self.unready_noted = true;
            self.stats.unready_notes += 1;
            return;
        }
        // The search thread says what it found before the first search after a scan.
        if text.starts_with("Syzygy: ") && text.contains(" table files, up to ") {
            if self.jobs.is_empty() {
                self.fail(format!(
                    "tables reported without tables or a search: {text}"
                ));
            }
            return;
        }
        if text == "perft stopped" {
            let Some(job) = self.pop_job() else {
                self.fail("perft stopped without a perft");
            };
            if !matches!(job.kind, JobKind::Perft(_)) || !job.stopped {
                self.fail(format!(
                    "perft stopped ends {} (stop sent: {})",
                    job.describe(),
                    job.stopped
                ));
            }
            self.stats.perfts_stopped += 1;
            return;
        }
        if text.starts_with("nodes ") && text.contains(" qnodes ") {
            match self.jobs.front_mut() {
                Some(job) if job.kind == JobKind::Search && job.debug => job.debug_lines += 1,
                _ => self.fail("search statistics without a search in debug mode"),
            }
            return;
        }
        // Everything else comes from the main thread, in the order of the lines sent.
        loop {
            let Some(e) = self.expected.pop_front() else {
                self.fail(format!("unexpected info string {text:?}"));
            };
            if e.notice.matches(text) {
                if matches!(
                    e.notice,
                    Notice::HashDeferred | Notice::ThreadsDeferred | Notice::ClearDeferred
                ) {
                    self.stats.deferrals += 1;
                } else {
                    self.stats.complaints += 1;
                }
                return;
            }
            if e.required {
                self.fail(format!(
                    "line {} should have got an info string ({:?}), got {text:?}",
                    e.line_no, e.notice
                ));
            }
        }
    }

    fn on_bestmove(&mut self, line: &str) {
        let Some(job) = self.pop_job() else {
            self.fail(format!("{line:?} with no search running"));
        };
        if let Err(e) = check_bestmove(&job, line) {
            self.fail(format!("{line:?} for {}: {e}", job.describe()));
        }
        self.stats.bestmoves += 1;
        if line.starts_with("bestmove (none)") {
            self.stats.no_move += 1;
        }
    }

    fn on_search_info(&mut self, line: &str) {
        let Some(job) = self.jobs.front() else {
            self.fail(format!("{line:?} with no search running"));
        };
        if job.kind != JobKind::Search {
            self.fail(format!("{line:?} during {}", job.describe()));
        }
        let words: Vec<&str> = line.split_whitespace().collect();
        // A PV, or the root move searched (`currmove`, a few seconds into a search).
        let at = |key: &str| words.iter().position(|&w| w == key).map(|at| at + 1);
        let (what, moves) = match (at("pv"), at("currmove")) {
            (Some(pv), _) => ("PV", &words[pv..]),
            (None, Some(current)) => ("currmove", words.get(current..=current).unwrap_or_default()),
            (None, None) => return,
        };
        let checked =
            check_line(&job.board, job.mode, moves).and_then(|moves| match moves.first() {
                Some(first)
                    if !job.search_moves.is_empty() && !job.search_moves.contains(first) =>
                {
                    Err(format!("the {what} starts outside searchmoves"))
                }
                None if what == "currmove" => Err("no move".to_string()),
                _ => Ok(()),
            });
        if let Err(e) = checked {
            self.fail(format!(
                "illegal {what} in {line:?} for {}: {e}",
                job.describe()
            ));
        }
        if what == "PV" {
            self.stats.pv_lines += 1;
        }
    }

    fn on_divide(&mut self, m: &str, count: u64) {
        let checked = match self.jobs.front() {
            Some(job) if matches!(job.kind, JobKind::Perft(_)) => {
                check_move(&job.board, job.mode, m)
            }
            _ => self.fail(format!("perft line {m}: {count} without a perft")),
        };
        if let Err(e) = checked {
            let job = self.jobs.front().map(Job::describe).unwrap_or_default();
            self.fail(format!("perft divide for {job}: {e}"));
        }
        if let Some(job) = self.jobs.front_mut() {
            job.divide.push((m.to_string(), count));
        }
    }

    fn on_perft_total(&mut self, total: &str) {
        let Some(job) = self.pop_job() else {
            self.fail("perft total without a perft");
        };
        if let Err(e) = check_perft(&job, total) {
            self.fail(format!("perft for {}: {e}", job.describe()));
        }
        self.stats.perfts_checked += 1;
    }

    fn on_display_fen(&mut self, fen: &str) {
        let Some(expected) = self.fens_due.pop_front() else {
            self.fail("Fen line without d");
        };
        if fen != expected {
            self.fail(format!("`d` shows {fen}, the model expects {expected}"));
        }
        self.stats.fens_checked += 1;
    }
}

/// The option changes the churn is about: big thread counts and tables, Syzygy rescans.
fn is_churn(setting: Setting) -> bool {
    match setting {
        Setting::Threads(n) => n >= 32,
        Setting::Hash(mb) => mb >= 128,
        Setting::SyzygyScan { .. } => true,
        _ => false,
    }
}

/// The notice for a change the engine defers while a search runs.
fn deferral_notice(setting: Setting) -> Option<Notice> {
    match setting {
        Setting::Hash(_) => Some(Notice::HashDeferred),
        Setting::Threads(_) => Some(Notice::ThreadsDeferred),
        Setting::ClearHash => Some(Notice::ClearDeferred),
        Setting::Chess960(_) | Setting::SyzygyOff | Setting::SyzygyScan { .. } | Setting::Other => {
            None
        }
    }
}

fn check_bestmove(job: &Job, line: &str) -> Result<(), String> {
    if job.kind != JobKind::Search {
        return Err("bestmove ended a perft".into());
    }
    if job.cannot_end() {
        return Err("bestmove before stop (go infinite) or ponderhit (go ponder)".into());
    }
    let expected_debug = usize::from(job.debug);
    if job.debug_lines != expected_debug {
        return Err(format!(
            "{} search statistics lines with debug {}",
            job.debug_lines,
            if job.debug { "on" } else { "off" }
        ));
    }
    let (best, ponder) = parse_bestmove(line)?;
    if best == "(none)" {
        let legal = job.board.legal_moves().len();
        if legal > 0 || ponder.is_some() {
            return Err(format!("(none) with {legal} legal moves"));
        }
        return Ok(());
    }
    let mut moves = vec![best];
    moves.extend(ponder);
    let played = check_line(&job.board, job.mode, &moves)?;
    if !job.search_moves.is_empty() && !job.search_moves.contains(&played[0]) {
        return Err("the move is not one of searchmoves".into());
    }
    Ok(())
}

/// Checks a finished perft: divide lines are the legal moves once each, they add up to the
/// total, and the total is shakmaty's.
fn check_perft(job: &Job, total: &str) -> Result<(), String> {
    let JobKind::Perft(depth) = job.kind else {
        return Err("a perft total ended a search".into());
    };
    let total: u64 = total
        .trim()
        .parse()
        .map_err(|_| format!("total {total:?} is not a number"))?;
    let sum: u64 = job.divide.iter().map(|(_, n)| n).sum();
    if sum != total {
        return Err(format!("divide lines add up to {sum}, total says {total}"));
    }
    let mut listed: Vec<&str> = job.divide.iter().map(|(m, _)| m.as_str()).collect();
    listed.sort_unstable();
    let mut legal: Vec<String> = job
        .board
        .legal_moves()
        .iter()
        .map(|m| m.to_uci(job.mode).to_string())
        .collect();
    legal.sort_unstable();
    if listed != legal {
        return Err(format!(
            "divide lists {listed:?}, legal moves are {legal:?}"
        ));
    }
    if depth <= 4 {
        let expected = shakmaty::perft(&job.board, depth);
        if expected != total {
            return Err(format!("total {total}, shakmaty counts {expected}"));
        }
    }
    Ok(())
}

/// `e2e4: 20` in `go perft` output.
fn divide_entry(line: &str) -> Option<(&str, u64)> {
    let (m, count) = line.split_once(": ")?;
    let looks_like_move =
        (4..=5).contains(&m.len()) && m.bytes().all(|b| b.is_ascii_alphanumeric());
    if !looks_like_move {
        return None;
    }
    Some((m, count.parse().ok()?))
}

/// The rest of the `d` and `eval` output (their checked lines are handled before).
fn is_board_or_eval_line(line: &str) -> bool {
    line.is_empty()
        || line.starts_with(" +---")
        || line.starts_with(" |")
        || line.starts_with("   a   b")
        || line.starts_with("Key: ")
        || line.starts_with("Checkers:")
        || line.starts_with("Phase: ")
        || line.starts_with("Hand-crafted evaluation: ")
        || line.starts_with("NNUE evaluation: ")
        || line.starts_with("-----")
        || line.contains(" | ")
}

fn shorten(text: &str) -> String {
    const SHOWN: usize = 160;
    let count = text.chars().count();
    if count <= SHOWN {
        return text.to_string();
    }
    let head: String = text.chars().take(SHOWN).collect();
    format!("{head}... ({count} chars)")
}

// ---------------------------------------------------------------------------------------
// The generator
// ---------------------------------------------------------------------------------------

/// Numbers that do not fit `i64`, `u64` or `u32`, or only just.
const HUGE: [&str; 10] = [
    "99999999999999999999",
    "-99999999999999999999",
    "18446744073709551615",
    "18446744073709551616",
    "9223372036854775807",
    "9223372036854775808",
    "-9223372036854775808",
    "4294967296",
    "2147483648",
    "100000000000000000000000000000000000000000000000000",
];

/// Arguments that are not quite numbers.
const ODD_VALUES: [&str; 16] = [
    "-1",
    "0",
    "abc",
    "1e3",
    "3.5",
    "+3",
    "-0",
    "0x10",
    "\u{663}",
    "NaN",
    "--5",
    "1_000",
    "-",
    "",
    "5ms",
    "99999999999999999999",
];

const FEN_CHARS: &[u8] = b"pnbrqkPNBRQK12345678/ -wbKQkqabcdefgh09";

const COMMAND_WORDS: [&str; 12] = [
    "go",
    "position",
    "position fen",
    "position startpos moves",
    "setoption name",
    "setoption name Hash value",
    "debug",
    "stop",
    "ucinewgame",
    "ponderhit",
    "go searchmoves",
    "d",
];

/// Hand-picked positions: terminal ones, clock edge cases, promotions, en passant.
const SPECIAL_FENS: [&str; 12] = [
    "rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3",
    "7k/5Q2/6K1/8/8/8/8/8 b - - 0 1",
    "8/8/4k3/8/8/3K4/8/8 w - - 0 1",
    "8/8/4k3/8/8/3K4/8/8 w - - 99 80",
    "4k3/8/8/8/8/8/4P3/4K3 w - - 100 90",
    "8/P6k/8/8/8/8/8/K7 w - - 0 1",
    "rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3",
    "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
    "6k1/5ppp/8/8/8/8/5PPP/R5K1 w - - 0 1",
    "k7/8/1QK5/8/8/8/8/8 b - - 0 1",
    "4k3/4R3/8/8/8/8/8/4K3 w - - 0 1",
    "QQQQQQQQ/QQQQQQQQ/8/8/8/8/k7/7K w - - 0 1",
];

/// A game played the way a GUI reports it: the start and every move so far, on every move.
struct Game {
    start: Option<String>,
    board: Chess,
    mode: CastlingMode,
    moves: Vec<String>,
}

impl Game {
    fn line(&self) -> String {
        let mut line = match &self.start {
            None => "position startpos".to_string(),
            Some(fen) => format!("position fen {fen}"),
        };
        if !self.moves.is_empty() {
            line.push_str(" moves");
            for m in &self.moves {
                line.push(' ');
                line.push_str(m);
            }
        }
        line
    }
}

struct Generator {
    rng: StdRng,
    /// The perft suites and `SPECIAL_FENS`: starting points and mutation fodder.
    suite_fens: Vec<String>,
    /// Positions reached in generated games.
    game_fens: Vec<String>,
    /// Positions whose side to move is in check: with the turn flipped they are illegal.
    check_fens: Vec<String>,
    game: Option<Game>,
    /// Lines already decided on (follow-ups, bursts), sent before anything new.
    queued: VecDeque<Vec<u8>>,
}

impl Generator {
    fn new(seed: u64) -> Generator {
        Generator {
            rng: StdRng::seed_from_u64(seed),
            suite_fens: load_suite_fens(),
            game_fens: Vec::new(),
            check_fens: Vec::new(),
            game: None,
            queued: VecDeque::new(),
        }
    }

    /// The next line to send. Never `quit` or `bench`, never a perft deeper than 4, and big
    /// Hash and Threads values only from the churn's list: the rest would end or stall the
    /// run.
    fn next_line(&mut self, model: &Model) -> Vec<u8> {
        loop {
            let line = match self.queued.pop_front() {
                Some(line) => line,
                None => self.fresh_line(model),
            };
            if acceptable(model, &line) {
                return line;
            }
        }
    }

    fn fresh_line(&mut self, model: &Model) -> Vec<u8> {
        let roll = self.rng.random_range(0..1000);
        let line = match roll {
            0..=179 => self.valid_go(model),
            180..=269 => "stop".into(),
            270..=319 => "isready".into(),
            320..=344 => "ponderhit".into(),
            345..=499 => {
                let line = self.game_position(model);
                if self.rng.random_bool(0.5) {
                    let (board, mode) = (self.game_board(), self.game_mode());
                    let go = self.valid_go_from(&board, mode);
                    self.queued.push_back(go.into_bytes());
                }
                line
            }
            500..=569 => self.other_position(model),
            570..=644 => self.setoption(),
            645..=659 => "ucinewgame".into(),
            660..=684 => "d".into(),
            685..=689 => "eval".into(),
            690..=692 => "uci".into(),
            693..=701 => self
                .pick(&["debug on", "debug off", "debug off", "debug", "debug maybe"])
                .to_string(),
            702..=759 => self.bad_go(model),
            760..=809 => return self.printable_garbage(),
            810..=844 => return self.raw_bytes(),
            845..=874 => return self.blank(),
            875..=877 => return self.long_line(model),
            878..=909 => self.huge_numbers(),
            910..=929 => {
                self.burst(model);
                return self.queued.pop_front().unwrap_or_default();
            }
            _ => self.command_with_junk(model),
        };
        line.into_bytes()
    }

    fn pick<'a>(&mut self, options: &[&'a str]) -> &'a str {
        options.choose(&mut self.rng).copied().unwrap_or_default()
    }

    fn game_board(&self) -> Chess {
        self.game
            .as_ref()
            .map_or_else(Chess::default, |g| g.board.clone())
    }

    fn game_mode(&self) -> CastlingMode {
        self.game
            .as_ref()
            .map_or(CastlingMode::Standard, |g| g.mode)
    }

    /// A search that ends on its own (or after `stop`/`ponderhit` for infinite/ponder).
    fn valid_go(&mut self, model: &Model) -> String {
        self.valid_go_from(&model.board, model.mode)
    }

    fn valid_go_from(&mut self, board: &Chess, mode: CastlingMode) -> String {
        let r = &mut self.rng;
        match r.random_range(0..100) {
            0..=24 => format!("go depth {}", r.random_range(1..=4)),
            25..=39 => format!("go nodes {}", r.random_range(1..=5000)),
            40..=54 => format!("go movetime {}", r.random_range(1..=30)),
            55..=63 => "go infinite".into(),
            64..=73 => {
                let extra = [
                    "",
                    " depth 3",
                    " wtime 500 btime 500",
                    " movetime 20",
                    " nodes 2000",
                    " infinite",
                ];
                format!("go ponder{}", extra.choose(r).copied().unwrap_or_default())
            }
            74..=82 => format!("go perft {}", r.random_range(1..=3)),
            83..=92 => {
                let mut line = format!(
                    "go wtime {} btime {}",
                    r.random_range(0..=3000),
                    r.random_range(0..=3000)
                );
                if r.random_bool(0.5) {
                    let inc = r.random_range(0..=100);
                    line.push_str(&format!(" winc {inc} binc {inc}"));
                }
                if r.random_bool(0.3) {
                    line.push_str(&format!(" movestogo {}", r.random_range(1..=40)));
                }
                line
            }
            _ => {
                let legal: Vec<String> = board
                    .legal_moves()
                    .iter()
                    .map(|m| m.to_uci(mode).to_string())
                    .collect();
                let count = r.random_range(1..=3).min(legal.len());
                let chosen: Vec<&String> = legal.choose_multiple(r, count).collect();
                let mut moves = String::new();
                for m in chosen {
                    moves.push(' ');
                    moves.push_str(m);
                }
                match r.random_range(0..3) {
                    0 => format!("go searchmoves{moves} depth {}", r.random_range(1..=3)),
                    1 => format!("go depth {} searchmoves{moves}", r.random_range(1..=3)),
                    _ => format!("go searchmoves{moves} movetime 10"),
                }
            }
        }
    }

    fn bad_go(&mut self, model: &Model) -> String {
        let fixed = [
            "go depth -1",
            "go depth",
            "go depth abc",
            "go wtime abc",
            "go btime",
            "go movetime 99999999999999999999",
            "go movetime -5",
            "go nodes 0",
            "go nodes -1",
            "go mate 0",
            "go mate -3",
            "go searchmoves zz99",
            "go searchmoves e2e5",
            "go searchmoves",
            "go searchmoves depth 2",
            "go perft 0",
            "go perft -1",
            "go perft 21",
            "go perft abc",
            "go perft",
            "go sideways",
            "go depth 3 depth",
            "go infinite infinite",
            "go ponder ponder depth 2",
            "go depth +3",
            "go depth 3.5",
            "go movestogo 0 wtime 100 btime 100",
            "go wtime 0 btime 0",
            "go wtime -100 btime -100 winc -5 binc -5",
            "go depth 2 extra",
            "go INFINITE",
            "go infinite 5",
            "go Depth 2",
            "go depth 1 perft 2",
            "go perft 1 infinite",
        ];
        if self.rng.random_bool(0.6) {
            return self.pick(&fixed).to_string();
        }
        let key = self.pick(&GO_KEYWORDS);
        let value = self.pick(&ODD_VALUES);
        if key == "searchmoves" && self.rng.random_bool(0.5) {
            // A legal move next to an illegal one.
            let legal = model.board.legal_moves();
            if let Some(m) = legal.choose(&mut self.rng) {
                return format!("go searchmoves {} zz99 depth 1", m.to_uci(model.mode));
            }
        }
        format!("go {key} {value}")
    }

    fn setoption(&mut self) -> String {
        let r = &mut self.rng;
        match r.random_range(0..24) {
            0..=3 => format!("setoption name Threads value {}", r.random_range(1..=4)),
            // The churn: thread pools and tables that take long to build, and rescans.
            20 => format!(
                "setoption name Threads value {}",
                [32, 64, 256, 1024].choose(r).copied().unwrap_or(32)
            ),
            21 => format!("setoption name Threads value {}", r.random_range(1..=4)),
            22 => format!(
                "setoption name Hash value {}",
                [128, 256, 512, 1024].choose(r).copied().unwrap_or(128)
            ),
            23 => format!(
                "setoption name SyzygyPath value {}",
                if r.random_bool(0.5) {
                    syzygy_dir()
                } else {
                    "/nonexistent/syzygy"
                }
            ),
            4..=7 => format!("setoption name Hash value {}", r.random_range(1..=64)),
            8 | 9 => "setoption name Clear Hash".into(),
            10 => format!(
                "setoption name Move Overhead value {}",
                r.random_range(0..=100)
            ),
            11 => format!("setoption name Ponder value {}", r.random_bool(0.5)),
            12 => format!("setoption name UCI_Chess960 value {}", r.random_bool(0.4)),
            13 => {
                let v = [
                    "0",
                    "65537",
                    "-3",
                    "abc",
                    "",
                    "1.5",
                    "64MB",
                    "99999999999999999999",
                ];
                format!(
                    "setoption name Hash value {}",
                    v.choose(r).copied().unwrap_or_default()
                )
            }
            14 => {
                let v = ["0", "-1", "1025", "x", "", "2 3"];
                format!(
                    "setoption name Threads value {}",
                    v.choose(r).copied().unwrap_or_default()
                )
            }
            15 => {
                let v = [
                    "setoption name Frobnicate value 3",
                    "setoption name Hash Size value 3",
                    "setoption name Threadz value 2",
                    "setoption name Clear value 1",
                    "setoption name UCI_Variant value crazyhouse",
                    "setoption name MultiPV value 0",
                    "setoption name MultiPV value 3",
                    "setoption name MultiPV value 1",
                    "setoption name UCI_ShowWDL value true",
                    "setoption name UCI_LimitStrength value true",
                    "setoption name UCI_LimitStrength value false",
                    "setoption name UCI_Elo value 1320",
                    "setoption name UCI_Elo value 99999",
                    "setoption name UCI_Opponent value none none computer X",
                    "setoption name SyzygyPath value /nonexistent/syzygy",
                    "setoption name SyzygyPath value",
                    "setoption name SyzygyProbeLimit value 9",
                ];
                v.choose(r).copied().unwrap_or_default().into()
            }
            16 => {
                let v = [
                    "setoption",
                    "setoption Hash value 5",
                    "setoption name",
                    "setoption name value 5",
                    "setoption value 5 name Hash",
                    "setoption Name Hash value 5",
                ];
                v.choose(r).copied().unwrap_or_default().into()
            }
            17 => {
                let v = [
                    "setoption name hash value 8",
                    "setoption name THREADS value 2",
                    "setoption name clear hash",
                    "setoption name Clear Hash value now",
                    "setoption name move overhead value 30",
                    "setoption name ponder value TRUE",
                    "setoption name uci_chess960 value FALSE",
                ];
                v.choose(r).copied().unwrap_or_default().into()
            }
            18 => {
                let v = [
                    "setoption name Move Overhead value -5",
                    "setoption name Move Overhead value 5001",
                    "setoption name Move Overhead value x",
                    "setoption name Ponder value maybe",
                    "setoption name Ponder",
                    "setoption name UCI_Chess960 value 1",
                    "setoption name UCI_Chess960 value yes",
                ];
                v.choose(r).copied().unwrap_or_default().into()
            }
            _ => format!(
                "setoption\tname  Threads \t value   {}",
                r.random_range(1..=4)
            ),
        }
    }

    /// The next position of the current game (a new game when it is over or long).
    fn game_position(&mut self, model: &Model) -> String {
        let over = self
            .game
            .as_ref()
            .is_none_or(|g| g.board.legal_moves().is_empty() || g.moves.len() > 500);
        if over || self.rng.random_bool(0.01) {
            self.game = Some(self.new_game(model));
        }
        let plies = if self.rng.random_bool(0.05) {
            self.rng.random_range(20..=200)
        } else {
            self.rng.random_range(1..=2)
        };
        let mut game = self.game.take().expect("a game is on");
        let moves = self.random_walk(&mut game.board, game.mode, plies);
        game.moves.extend(moves);
        self.harvest(&game.board);
        let line = game.line();
        self.game = Some(game);
        line
    }

    fn new_game(&mut self, model: &Model) -> Game {
        let mode = castling_mode(model.chess960);
        if self.rng.random_bool(0.3) {
            for _ in 0..5 {
                let fen = self.suite_fen();
                if let Some(board) = parse_board(&fen, mode) {
                    return Game {
                        start: Some(fen),
                        board,
                        mode,
                        moves: Vec::new(),
                    };
                }
            }
        }
        Game {
            start: None,
            board: Chess::default(),
            mode,
            moves: Vec::new(),
        }
    }

    fn suite_fen(&mut self) -> String {
        self.suite_fens
            .choose(&mut self.rng)
            .cloned()
            .unwrap_or_default()
    }

    fn any_fen(&mut self) -> String {
        if !self.game_fens.is_empty() && self.rng.random_bool(0.4) {
            return self
                .game_fens
                .choose(&mut self.rng)
                .cloned()
                .unwrap_or_default();
        }
        self.suite_fen()
    }

    /// Keeps some positions reached in games for later `position fen` lines.
    fn harvest(&mut self, board: &Chess) {
        const KEEP: usize = 400;
        let fen = fen_of(board);
        if board.is_check() {
            if self.check_fens.len() < KEEP {
                self.check_fens.push(fen.clone());
            } else {
                let i = self.rng.random_range(0..KEEP);
                self.check_fens[i] = fen.clone();
            }
        }
        if self.rng.random_bool(0.2) {
            if self.game_fens.len() < KEEP {
                self.game_fens.push(fen);
            } else {
                let i = self.rng.random_range(0..KEEP);
                self.game_fens[i] = fen;
            }
        }
    }

    /// Plays up to `plies` random legal moves (mates in one and captures preferred, so
    /// games end in mate now and then); returns them in UCI.
    fn random_walk(&mut self, board: &mut Chess, mode: CastlingMode, plies: usize) -> Vec<String> {
        let mut played = Vec::new();
        for _ in 0..plies {
            let legal = board.legal_moves();
            if legal.is_empty() {
                break;
            }
            let mate = legal.iter().copied().find(|&m| {
                let mut after = board.clone();
                after.play_unchecked(m);
                after.is_checkmate()
            });
            let forcing: Vec<Move> = legal
                .iter()
                .copied()
                .filter(|m| m.is_capture() || m.is_promotion())
                .collect();
            let m = match mate {
                Some(m) if self.rng.random_bool(0.7) => m,
                _ if !forcing.is_empty() && self.rng.random_bool(0.4) => {
                    *forcing.choose(&mut self.rng).expect("not empty")
                }
                _ => *legal.choose(&mut self.rng).expect("not empty"),
            };
            played.push(m.to_uci(mode).to_string());
            board.play_unchecked(m);
        }
        played
    }

    /// `position` lines other than the running game: suite and game FENs (mutated or not),
    /// random walks with an illegal move somewhere, and malformed commands.
    fn other_position(&mut self, model: &Model) -> String {
        let mode = castling_mode(model.chess960);
        match self.rng.random_range(0..10) {
            0..=2 => {
                let fen = self.any_fen();
                let fen = if self.rng.random_bool(0.7) {
                    self.mutate_fen(&fen)
                } else {
                    fen
                };
                format!("position fen {fen}")
            }
            3..=5 => {
                let (setup, mut board) = if self.rng.random_bool(0.5) {
                    ("position startpos".to_string(), Some(Chess::default()))
                } else {
                    let fen = self.any_fen();
                    let board = parse_board(&fen, mode);
                    (format!("position fen {fen}"), board)
                };
                let mut moves = match board.as_mut() {
                    Some(board) => {
                        let plies = self.rng.random_range(0..=60);
                        self.random_walk(board, mode, plies)
                    }
                    None => Vec::new(),
                };
                if self.rng.random_bool(0.6) {
                    let at = self.rng.random_range(0..=moves.len());
                    let bad = self.illegal_move(board.as_ref(), mode);
                    moves.insert(at, bad);
                }
                format!("{setup} moves {}", moves.join(" "))
            }
            6 => {
                let fen = self.check_fens.choose(&mut self.rng).cloned();
                let fen = fen.unwrap_or_else(|| SPECIAL_FENS[0].to_string());
                format!("position fen {}", flip_turn(&fen))
            }
            7 => {
                let fen = self.any_fen();
                format!(
                    "position fen {}",
                    remove_king(&fen, self.rng.random_bool(0.5))
                )
            }
            _ => {
                let fen = self.any_fen();
                let v = [
                    "position".to_string(),
                    "position fen".to_string(),
                    "position startpos extra".to_string(),
                    "position startpos please moves e2e4".to_string(),
                    "position fen moves e2e4".to_string(),
                    "position sideways".to_string(),
                    "position moves e2e4".to_string(),
                    "position startpos moves".to_string(),
                    "position startpos moves moves e2e4".to_string(),
                    format!("position  \tfen\t {}  moves ", fen.replace(' ', "  ")),
                    format!("position fen {fen} {fen}"),
                    format!("position fen {fen} startpos"),
                    format!("position startpos fen {fen}"),
                ];
                v.choose(&mut self.rng).cloned().unwrap_or_default()
            }
        }
    }

    /// A move that is probably illegal where it is inserted (the model decides).
    fn illegal_move(&mut self, board: Option<&Chess>, mode: CastlingMode) -> String {
        let legal: Vec<Move> = board.map(|b| b.legal_moves().to_vec()).unwrap_or_default();
        let any_legal = legal
            .choose(&mut self.rng)
            .map(|m| m.to_uci(mode).to_string());
        match self.rng.random_range(0..9) {
            0 => {
                let sq = |r: &mut StdRng| {
                    format!(
                        "{}{}",
                        char::from(b'a' + r.random_range(0..8u8)),
                        r.random_range(1..=8)
                    )
                };
                format!("{}{}", sq(&mut self.rng), sq(&mut self.rng))
            }
            1 => "e2e5".into(),
            2 => "0000".into(),
            3 => "zz99".into(),
            4 => any_legal.map_or("E2E4".into(), |m| m.to_uppercase()),
            5 => any_legal.map_or("e2e4q".into(), |m| format!("{m}q")),
            6 => self
                .pick(&["e1g1", "e1c1", "e8g8", "e8c8", "e1h1", "e8a8"])
                .into(),
            7 => self
                .pick(&["a7a8", "h2h1", "e7e8k", "e2e4e", "e2", "e2e4e6"])
                .into(),
            _ => {
                let len = self.rng.random_range(1..=8);
                (0..len)
                    .map(|_| char::from(self.rng.random_range(b'!'..=b'~')))
                    .collect()
            }
        }
    }

    /// One to three random edits to a FEN; the model decides whether it is still legal.
    fn mutate_fen(&mut self, fen: &str) -> String {
        let mut fen = fen.to_string();
        for _ in 0..self.rng.random_range(1..=3) {
            fen = self.mutate_once(&fen);
        }
        fen
    }

    fn mutate_once(&mut self, fen: &str) -> String {
        let mut bytes = fen.as_bytes().to_vec();
        let mut fields: Vec<String> = fen.split(' ').map(str::to_string).collect();
        let r = &mut self.rng;
        let set_field = |fields: &mut Vec<String>, i: usize, value: &str| {
            if i < fields.len() {
                fields[i] = value.to_string();
            }
        };
        match r.random_range(0..12) {
            0 if !bytes.is_empty() => {
                bytes.truncate(r.random_range(0..bytes.len()));
                return String::from_utf8_lossy(&bytes).into_owned();
            }
            1 if !bytes.is_empty() => {
                for _ in 0..r.random_range(1..=3) {
                    let at = r.random_range(0..bytes.len());
                    bytes[at] = *FEN_CHARS.choose(r).expect("not empty");
                }
                return String::from_utf8_lossy(&bytes).into_owned();
            }
            2 if bytes.len() > 1 => {
                let a = r.random_range(0..bytes.len());
                let b = r.random_range(0..bytes.len());
                bytes.swap(a, b);
                return String::from_utf8_lossy(&bytes).into_owned();
            }
            3 => {
                let extra = [" extra", " 0 1", " - - 5", " w", " KQkq", " 0 1 0 1"];
                return format!("{fen}{}", extra.choose(r).copied().unwrap_or_default());
            }
            4 => return remove_king(fen, r.random_bool(0.5)),
            5 => return flip_turn(fen),
            6 => {
                let v = [
                    "99",
                    "100",
                    "101",
                    "150",
                    "1000",
                    "-1",
                    "abc",
                    "99999999999999999999",
                ];
                set_field(&mut fields, 4, v.choose(r).copied().unwrap_or_default());
            }
            7 => {
                let v = ["0", "-1", "1000", "abc", "99999999999999999999"];
                set_field(&mut fields, 5, v.choose(r).copied().unwrap_or_default());
            }
            8 => {
                let v = ["e3", "a6", "h6", "d3", "h9", "z3", "e4", "-"];
                set_field(&mut fields, 3, v.choose(r).copied().unwrap_or_default());
            }
            9 => {
                let v = [
                    "KQkq", "HAha", "-", "KQkqKQ", "Kk", "AHah", "X", "Qk", "BGbg",
                ];
                set_field(&mut fields, 2, v.choose(r).copied().unwrap_or_default());
            }
            10 if fields.len() > 1 => {
                let keep = r.random_range(1..fields.len());
                fields.truncate(keep);
            }
            _ if !bytes.is_empty() => {
                // An extra piece where a board character was.
                let board_len = fields[0].len();
                if board_len > 0 {
                    let at = r.random_range(0..board_len);
                    bytes[at] = *b"pnbrqkPNBRQK".choose(r).expect("not empty");
                }
                return String::from_utf8_lossy(&bytes).into_owned();
            }
            _ => {}
        }
        fields.join(" ")
    }

    fn printable_garbage(&mut self) -> Vec<u8> {
        let len = self.rng.random_range(1..=120);
        let mut line = self.maybe_command_prefix();
        line.extend((0..len).map(|_| self.rng.random_range(b' '..=b'~')));
        line
    }

    fn raw_bytes(&mut self) -> Vec<u8> {
        let mut line = self.maybe_command_prefix();
        match self.rng.random_range(0..6) {
            0 => line.extend_from_slice(
                self.pick(&["isready\0", "go depth 1\0", "\0", "stop\0\0"])
                    .as_bytes(),
            ),
            1 => line.extend_from_slice(b"\xff\xfe\xfd"),
            2 => line.extend_from_slice(b"go depth \xc3\x28"),
            _ => {
                let len = self.rng.random_range(1..=120);
                line.extend((0..len).map(|_| loop {
                    let b: u8 = self.rng.random();
                    if b != b'\n' {
                        break b;
                    }
                }));
            }
        }
        line
    }

    fn maybe_command_prefix(&mut self) -> Vec<u8> {
        if self.rng.random_bool(0.3) {
            format!("{} ", self.pick(&COMMAND_WORDS)).into_bytes()
        } else {
            Vec::new()
        }
    }

    fn blank(&mut self) -> Vec<u8> {
        let blanks = [
            "", " ", "\t", "\r", " \t \r ", "\x0b", "\x0c", "\u{a0}", "\u{3000}", "\u{2028}",
            "\u{85}",
        ];
        self.pick(&blanks).as_bytes().to_vec()
    }

    fn long_line(&mut self, model: &Model) -> Vec<u8> {
        let mut line = Vec::with_capacity(LONG_LINE + 64);
        match self.rng.random_range(0..7) {
            0 => {
                line.extend_from_slice(b"position startpos moves");
                while line.len() < LONG_LINE {
                    line.extend_from_slice(b" g1f3 g8f6 f3g1 f6g8");
                }
            }
            1 => line.extend((0..LONG_LINE).map(|_| self.rng.random_range(b' '..=b'~'))),
            2 => line.extend(
                (0..LONG_LINE)
                    .map(|_| self.rng.random::<u8>())
                    .filter(|&b| b != b'\n'),
            ),
            3 => {
                line.extend_from_slice(b"go");
                while line.len() < LONG_LINE {
                    line.extend_from_slice(b" depth 2");
                }
            }
            4 => {
                line.extend_from_slice(b"setoption name ");
                line.extend(std::iter::repeat_n(b'y', LONG_LINE));
                line.extend_from_slice(b" value 1");
            }
            5 => {
                line.extend_from_slice(b"position fen ");
                line.extend(
                    (0..LONG_LINE).map(|_| *FEN_CHARS.choose(&mut self.rng).expect("not empty")),
                );
            }
            _ => {
                line.extend_from_slice(b"go searchmoves");
                let legal: Vec<String> = model
                    .board
                    .legal_moves()
                    .iter()
                    .map(|m| m.to_uci(model.mode).to_string())
                    .collect();
                if legal.is_empty() {
                    line.extend_from_slice(b" a1a1");
                }
                while !legal.is_empty() && line.len() < LONG_LINE {
                    for m in &legal {
                        line.push(b' ');
                        line.extend_from_slice(m.as_bytes());
                    }
                }
                line.extend_from_slice(b" depth 1");
            }
        }
        line
    }

    fn huge_numbers(&mut self) -> String {
        let h = self.pick(&HUGE);
        match self.rng.random_range(0..12) {
            0 => format!("go wtime {h} btime {h}"),
            1 => format!("go wtime 1000 btime 1000 winc {h} binc {h}"),
            2 => format!("go wtime {h} btime {h} movestogo 1"),
            3 => format!("go movestogo {h} wtime 500 btime 500"),
            4 => format!("go depth {h}"),
            5 => format!("go nodes {h}"),
            6 => format!("go movetime {h}"),
            7 => format!("go mate {h}"),
            8 => format!("go perft {h}"),
            9 => {
                let name = self.pick(&["Hash", "Threads", "Move Overhead"]);
                format!("setoption name {name} value {h}")
            }
            10 => {
                let fen = self.any_fen();
                let fields: Vec<&str> = fen.split(' ').take(4).collect();
                format!("position fen {} {h} {h}", fields.join(" "))
            }
            _ => format!("go wtime {h} btime {h} winc {h} binc {h} movestogo {h}"),
        }
    }

    /// A valid command with junk after it, or a real command word glued to junk.
    fn command_with_junk(&mut self, model: &Model) -> String {
        let junk: String = (0..self.rng.random_range(1..=12))
            .map(|_| char::from(self.rng.random_range(b'!'..=b'~')))
            .collect();
        match self.rng.random_range(0..6) {
            0 => format!("{} {junk}", self.valid_go(model)),
            1 => format!("isready {junk}"),
            2 => format!("stop {junk}"),
            3 => format!("ucinewgame {junk}"),
            4 => format!(
                "{}{junk}",
                self.pick(&["go", "isready", "stop", "position", "uci"])
            ),
            _ => format!("{junk} isready"),
        }
    }

    /// Several state changes in a row with nothing in between: searches started, stopped,
    /// re-configured and restarted before the engine has caught up.
    fn burst(&mut self, model: &Model) {
        for _ in 0..self.rng.random_range(4..=10) {
            let line = match self.rng.random_range(0..12) {
                0 | 1 => {
                    let v = [
                        "go infinite",
                        "go ponder",
                        "go depth 2",
                        "go nodes 500",
                        "go movetime 5",
                    ];
                    self.pick(&v).to_string()
                }
                2 => format!("go perft {}", self.rng.random_range(1..=3)),
                3 | 4 => "stop".into(),
                5 => "isready".into(),
                6 => "ponderhit".into(),
                7 => format!(
                    "setoption name Hash value {}",
                    self.rng.random_range(1..=16)
                ),
                8 => format!(
                    "setoption name Threads value {}",
                    self.rng.random_range(1..=4)
                ),
                9 => "setoption name Clear Hash".into(),
                10 => "ucinewgame".into(),
                _ => self.game_position(model),
            };
            self.queued.push_back(line.into_bytes());
        }
    }
}

/// Lines the run must not send: they would end it (`quit`), block it for long (`bench`, deep
/// perft, a table of many GB), or fake a panic message in the echo of bad input.
fn acceptable(model: &Model, line: &[u8]) -> bool {
    let text = lossy(line);
    if text.contains("panicked") {
        return false;
    }
    match model.meaning(&text) {
        Meaning::Quit | Meaning::Bench => false,
        Meaning::SetOption(Setting::Hash(mb)) => mb <= 64 || [128, 256, 512, 1024].contains(&mb),
        Meaning::SetOption(Setting::Threads(n)) => n <= 4 || [32, 64, 256, 1024].contains(&n),
        Meaning::Go(go) => go.perft.is_none_or(|d| d <= 4),
        _ => true,
    }
}

fn parse_board(fen: &str, mode: CastlingMode) -> Option<Chess> {
    fen.parse::<Fen>().ok()?.into_position(mode).ok()
}

fn flip_turn(fen: &str) -> String {
    let mut fields: Vec<&str> = fen.split(' ').collect();
    if fields.len() > 1 {
        fields[1] = if fields[1] == "w" { "b" } else { "w" };
    }
    fields.join(" ")
}

/// Replaces a king by an empty square (the rank stays eight squares long).
fn remove_king(fen: &str, white: bool) -> String {
    let king = if white { 'K' } else { 'k' };
    let (board, rest) = fen.split_once(' ').unwrap_or((fen, ""));
    format!("{} {rest}", board.replacen(king, "1", 1))
}

/// Every FEN of the perft suites, and the hand-picked ones.
fn load_suite_fens() -> Vec<String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("perft");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()))
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "epd"))
        .collect();
    // Sorted, so a seed picks the same positions on every machine.
    files.sort();
    let mut fens: Vec<String> = SPECIAL_FENS.iter().map(|s| s.to_string()).collect();
    for file in files {
        let text = std::fs::read_to_string(&file)
            .unwrap_or_else(|e| panic!("cannot read {}: {e}", file.display()));
        for line in text.lines() {
            let fen = line.split(';').next().unwrap_or_default().trim();
            if !fen.is_empty() {
                fens.push(fen.to_string());
            }
        }
    }
    fens
}
