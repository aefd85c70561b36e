//! What the integration tests that run the `basalt` binary share: where the binary is, one
//! engine driver (start it, send lines, read its replies with deadlines, close its input,
//! wait for it to exit), the parsing of `info` and `bestmove` lines, legality checks for the
//! moves it prints, latency percentiles, and the lock that keeps timing tests apart.
//!
//! The driver writes to the engine's stdin from a writer thread, so an engine that stops
//! reading cannot block a test in `write`, and reads stdout and stderr on reader threads
//! that stamp each line with the moment it arrived. Every wait has a deadline, so an engine
//! that hangs fails the test instead of stalling CI. A line on stderr that the test did not
//! say would come fails it (`Engine::expect_stderr`; `run_engine` for a command run to its
//! end), so a panic cannot pass unseen behind a legal `bestmove`.
//!
//! Each test file declares `mod common;`.

// Every test binary compiles this module whole and uses only part of it; without this each
// would warn about the items the others need.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender, TryRecvError};
use std::sync::{RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::thread;
use std::time::{Duration, Instant};

use shakmaty::fen::Fen;
use shakmaty::uci::UciMove;
use shakmaty::{CastlingMode, Chess, EnPassantMode, Move, Position};

const BINARY: &str = env!("CARGO_BIN_EXE_basalt");

/// The engine under test: this crate's binary, or `BASALT_BIN` when it is set (to measure
/// another build, e.g. the latency percentiles of two builds side by side).
pub fn binary() -> String {
    std::env::var("BASALT_BIN").unwrap_or_else(|_| BINARY.to_string())
}

/// The `UCI_LimitStrength` seed every engine under test runs with (`BASALT_SEED`): its
/// random picks are then the same on every run, and a test of them cannot fail by chance.
pub const STRENGTH_SEED: &str = "20251203";

/// A command that runs the engine under test (add the arguments).
pub fn basalt() -> Command {
    let mut command = Command::new(binary());
    command.env("BASALT_SEED", STRENGTH_SEED);
    command
}

/// Deadline for anything that should finish quickly; only reached when something hangs.
pub const PATIENCE: Duration = Duration::from_secs(10);

/// "Promptly": replies that need no thinking (`readyok`, `bestmove` after `stop`). Far above
/// what the engine needs (a few ms) so a loaded CI machine does not flake.
pub const PROMPT: Duration = Duration::from_millis(200);

pub const STARTPOS: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";
pub const KIWIPETE: &str = "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1";

/// Runs `command` (stdin closed, stdout and stderr captured) and returns its output; fails
/// the test, after killing the process, when it has not exited within `timeout`: a command
/// that hangs fails instead of stalling CI.
pub fn run_within(command: &mut Command, timeout: Duration) -> std::process::Output {
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {command:?}: {e}"));
    // Drained on threads, so a chatty process cannot block on a full pipe.
    let drain = |mut source: Box<dyn Read + Send>| {
        thread::spawn(move || {
            let mut bytes = Vec::new();
            let _ = source.read_to_end(&mut bytes);
            bytes
        })
    };
    let stdout = drain(Box::new(child.stdout.take().expect("stdout is piped")));
    let stderr = drain(Box::new(child.stderr.take().expect("stderr is piped")));
    let start = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if start.elapsed() < timeout => thread::sleep(Duration::from_millis(5)),
            Ok(None) => {
                let _ = child.kill();
                let _ = child.wait();
                panic!("{command:?} did not exit within {timeout:?}");
            }
            Err(e) => panic!("cannot wait for {command:?}: {e}"),
        }
    };
    std::process::Output {
        status,
        stdout: stdout.join().expect("the stdout reader"),
        stderr: stderr.join().expect("the stderr reader"),
    }
}

/// `run_within` for the engine binary (`basalt()` with arguments), which also fails the
/// test on a stderr line that contains none of `allowed_stderr`: the messages the command
/// is meant to print there (datagen's progress, an error it is asked to report). Anything
/// else, a panic message above all, is a fault even when the command's output looks right.
pub fn run_engine(
    command: &mut Command,
    timeout: Duration,
    allowed_stderr: &[&str],
) -> std::process::Output {
    let output = run_within(command, timeout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let unexpected: Vec<&str> = stderr
        .lines()
        .filter(|line| !allowed_stderr.iter().any(|allowed| line.contains(allowed)))
        .collect();
    assert!(
        unexpected.is_empty(),
        "{command:?} ({}) wrote to stderr what it should not: {unexpected:?}\n--- stderr ---\n{stderr}",
        output.status
    );
    output
}

// ---------------------------------------------------------------------------------------
// Sharing the machine
// ---------------------------------------------------------------------------------------

/// Tests that measure latency take this exclusively; all others share it. On a two-core
/// machine a latency test next to two searching engines would measure the scheduler.
static CPU: RwLock<()> = RwLock::new(());

pub fn shared_cpu() -> RwLockReadGuard<'static, ()> {
    CPU.read().unwrap_or_else(|poisoned| poisoned.into_inner())
}

pub fn exclusive_cpu() -> RwLockWriteGuard<'static, ()> {
    CPU.write().unwrap_or_else(|poisoned| poisoned.into_inner())
}

// ---------------------------------------------------------------------------------------
// Percentiles, Syzygy tables
// ---------------------------------------------------------------------------------------

/// Nearest-rank percentiles of a set of latencies.
#[derive(Clone, Copy, Debug, Default)]
pub struct Percentiles {
    pub p50: Duration,
    pub p95: Duration,
    pub p99: Duration,
    pub max: Duration,
}

/// Median, 95th and 99th percentile (nearest rank) and maximum; all zero without samples.
pub fn percentiles(samples: &[Duration]) -> Percentiles {
    Percentiles {
        p50: percentile(samples, 50),
        p95: percentile(samples, 95),
        p99: percentile(samples, 99),
        max: percentile(samples, 100),
    }
}

/// Whether the ignored latency runs should hold the 10 ms / 50 ms targets of
/// docs/reliability.md: those are the engine's figures on a quiet machine, and a machine
/// that runs other builds misses them by its own scheduling alone. Set
/// `BASALT_QUIET_MACHINE=1` where nothing else runs; without it the runs print the targets
/// beside what they measured and hold the CI limits.
pub fn quiet_machine() -> bool {
    std::env::var_os("BASALT_QUIET_MACHINE").is_some()
}

/// The `p`th percentile by nearest rank: the smallest sample that at least `p`% of the
/// samples do not exceed (zero without samples). Of n samples, `n - ceil(n * p / 100)` may
/// lie above it: a 95th percentile over 40 samples lets 2 through, a 99th over 40 none
/// (it is the maximum), a 99th over 200 two.
pub fn percentile(samples: &[Duration], p: usize) -> Duration {
    let mut sorted = samples.to_vec();
    sorted.sort();
    match sorted.len() {
        0 => Duration::ZERO,
        n => sorted[(n * p).div_ceil(100).clamp(1, n) - 1],
    }
}

/// The Syzygy tables the tests probe, shipped in the repository (tests/data/syzygy/README.md).
pub const SYZYGY_DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/syzygy");

/// The endings in `SYZYGY_DIR`, each as a WDL and a DTZ file: every 3-piece ending and the
/// two 4-piece ones the UCI tests play (a KQvKR win, a KRvKR draw).
pub const SYZYGY_ENDINGS: [&str; 7] = ["KBvK", "KNvK", "KPvK", "KQvK", "KRvK", "KQvKR", "KRvKR"];

/// `SYZYGY_DIR`, after checking that every table is there: the one place that decides
/// whether the tables are present, and a missing one fails the test that needs it (a skip
/// would let a broken checkout pass).
pub fn syzygy_dir() -> &'static str {
    let missing: Vec<String> = SYZYGY_ENDINGS
        .iter()
        .flat_map(|ending| [format!("{ending}.rtbw"), format!("{ending}.rtbz")])
        .filter(|file| !std::path::Path::new(SYZYGY_DIR).join(file).is_file())
        .collect();
    assert!(
        missing.is_empty(),
        "Syzygy tables missing from {SYZYGY_DIR}: {missing:?} (they ship with the repository)"
    );
    SYZYGY_DIR
}

// ---------------------------------------------------------------------------------------
// Positions and moves
// ---------------------------------------------------------------------------------------

pub fn castling_mode(chess960: bool) -> CastlingMode {
    if chess960 {
        CastlingMode::Chess960
    } else {
        CastlingMode::Standard
    }
}

pub fn board(fen: &str, chess960: bool) -> Chess {
    let parsed: Fen = fen
        .parse()
        .unwrap_or_else(|e| panic!("bad FEN {fen:?}: {e}"));
    parsed
        .into_position(castling_mode(chess960))
        .unwrap_or_else(|e| panic!("illegal position {fen:?}: {e}"))
}

pub fn fen_of(board: &Chess) -> String {
    Fen::from_position(board, EnPassantMode::Legal).to_string()
}

/// How the engine reads a move: any UCI spelling shakmaty accepts in this position.
pub fn legal_move(board: &Chess, text: &str) -> Option<Move> {
    text.parse::<UciMove>().ok()?.to_move(board).ok()
}

/// How the engine must write a move: legal, and spelled the way the castling mode says
/// (king-takes-rook in Chess960, king two squares otherwise).
pub fn check_move(board: &Chess, mode: CastlingMode, text: &str) -> Result<Move, String> {
    let m = legal_move(board, text).ok_or_else(|| format!("{text:?} is not a legal move"))?;
    let canonical = m.to_uci(mode).to_string();
    if canonical != text {
        return Err(format!("{text:?} should be written {canonical:?}"));
    }
    Ok(m)
}

/// Checks a sequence of moves (a PV, bestmove + ponder) from `board`.
pub fn check_line(board: &Chess, mode: CastlingMode, moves: &[&str]) -> Result<Vec<Move>, String> {
    let mut board = board.clone();
    let mut played = Vec::with_capacity(moves.len());
    for (i, text) in moves.iter().enumerate() {
        let m = check_move(&board, mode, text).map_err(|e| format!("move {}: {e}", i + 1))?;
        board.play_unchecked(m);
        played.push(m);
    }
    Ok(played)
}

/// Plays `moves` from `fen` (each checked as by `check_move`); the position they reach.
pub fn play_line(fen: &str, chess960: bool, moves: &[&str]) -> Result<Chess, String> {
    let mut pos = board(fen, chess960);
    let played = check_line(&pos, castling_mode(chess960), moves)
        .map_err(|e| format!("{moves:?} from {fen}: {e}"))?;
    for m in played {
        pos.play_unchecked(m);
    }
    Ok(pos)
}

/// The move and the ponder move of a `bestmove` line.
pub fn parse_bestmove(line: &str) -> Result<(&str, Option<&str>), String> {
    let words: Vec<&str> = line.split_whitespace().collect();
    match words.as_slice() {
        ["bestmove", best] => Ok((best, None)),
        ["bestmove", best, "ponder", ponder] => Ok((best, Some(ponder))),
        _ => Err(format!("malformed bestmove line: {line:?}")),
    }
}

// ---------------------------------------------------------------------------------------
// Search output
// ---------------------------------------------------------------------------------------

/// What a `go` produced.
pub struct Search {
    pub infos: Vec<String>,
    pub bestmove: String,
    /// From sending `go` to reading `bestmove`.
    pub elapsed: Duration,
}

impl Search {
    pub fn best(&self) -> &str {
        self.bestmove.split_whitespace().nth(1).unwrap_or("")
    }

    pub fn ponder(&self) -> Option<&str> {
        parse_bestmove(&self.bestmove)
            .unwrap_or_else(|e| panic!("{e}"))
            .1
    }

    /// The search's `info` lines other than `info string` and `currmove`, parsed.
    pub fn iterations(&self) -> Vec<Info> {
        self.infos
            .iter()
            .filter(|l| l.starts_with("info ") && !l.starts_with("info string"))
            .filter(|l| !l.contains(" currmove "))
            .map(|l| Info::parse(l))
            .collect()
    }

    /// The last iteration reported without a bound: the one `bestmove` comes from.
    pub fn last_exact(&self) -> Info {
        match self
            .iterations()
            .into_iter()
            .rev()
            .find(|i| i.bound.is_none())
        {
            Some(info) => info,
            None => panic!("no exact info line before {:?}", self.bestmove),
        }
    }
}

#[derive(Debug, PartialEq, Eq)]
pub enum Score {
    Cp(i32),
    Mate(i32),
}

#[derive(Debug)]
pub struct Info {
    pub depth: u32,
    pub seldepth: u32,
    pub multipv: u32,
    pub score: Score,
    pub bound: Option<String>,
    pub nodes: u64,
    pub nps: u64,
    pub hashfull: u32,
    pub tbhits: u64,
    pub time: u64,
    /// `wdl W D L` (only with UCI_ShowWDL).
    pub wdl: Option<(u32, u32, u32)>,
    pub pv: Vec<String>,
}

impl Info {
    /// Parses an `info depth ...` line; panics naming the line when a field is missing.
    pub fn parse(line: &str) -> Info {
        fn number<T: std::str::FromStr>(line: &str, key: &str, word: Option<&str>) -> T {
            match word.and_then(|w| w.parse().ok()) {
                Some(v) => v,
                None => panic!("`{key}` without a number in {line:?}"),
            }
        }
        let mut words = line.split_whitespace();
        assert_eq!(words.next(), Some("info"), "not an info line: {line:?}");
        let (mut depth, mut seldepth, mut multipv, mut nodes) = (None, None, None, None);
        let (mut nps, mut hashfull, mut time, mut score) = (None, None, None, None);
        let mut bound = None;
        let mut pv = None;
        let (mut tbhits, mut wdl) = (None, None);
        while let Some(key) = words.next() {
            match key {
                "depth" => depth = Some(number(line, key, words.next())),
                "seldepth" => seldepth = Some(number(line, key, words.next())),
                "multipv" => multipv = Some(number(line, key, words.next())),
                "nodes" => nodes = Some(number(line, key, words.next())),
                "nps" => nps = Some(number(line, key, words.next())),
                "hashfull" => hashfull = Some(number(line, key, words.next())),
                "time" => time = Some(number(line, key, words.next())),
                "tbhits" => tbhits = Some(number(line, key, words.next())),
                "wdl" => {
                    let w = number(line, "wdl", words.next());
                    let d = number(line, "wdl", words.next());
                    let l = number(line, "wdl", words.next());
                    wdl = Some((w, d, l));
                }
                "score" => {
                    score = match words.next() {
                        Some("cp") => Some(Score::Cp(number(line, "cp", words.next()))),
                        Some("mate") => Some(Score::Mate(number(line, "mate", words.next()))),
                        other => panic!("score kind {other:?} in {line:?}"),
                    }
                }
                "lowerbound" | "upperbound" => bound = Some(key.to_string()),
                "pv" => {
                    pv = Some(words.by_ref().map(str::to_string).collect::<Vec<_>>());
                }
                other => panic!("unexpected info field {other:?} in {line:?}"),
            }
        }
        let missing = |field: &str| -> ! { panic!("no `{field}` in {line:?}") };
        // A fail-low (upperbound) iteration may have no move to show.
        let pv = match (pv, bound.is_some()) {
            (Some(pv), _) => pv,
            (None, true) => Vec::new(),
            (None, false) => missing("pv"),
        };
        Info {
            depth: depth.unwrap_or_else(|| missing("depth")),
            seldepth: seldepth.unwrap_or_else(|| missing("seldepth")),
            multipv: multipv.unwrap_or_else(|| missing("multipv")),
            score: score.unwrap_or_else(|| missing("score")),
            nodes: nodes.unwrap_or_else(|| missing("nodes")),
            nps: nps.unwrap_or_else(|| missing("nps")),
            hashfull: hashfull.unwrap_or_else(|| missing("hashfull")),
            time: time.unwrap_or_else(|| missing("time")),
            tbhits: tbhits.unwrap_or_else(|| missing("tbhits")),
            wdl,
            bound,
            pv,
        }
    }
}

/// Checks a finished search: every info line complete, every PV legal, the last line
/// before `bestmove` an exact one that holds the search's totals, and `bestmove` (with its
/// ponder move) legal and equal to the last exact PV's first move.
pub fn check_search(fen: &str, chess960: bool, search: &Search) {
    let iterations = search.iterations();
    assert!(
        !iterations.is_empty(),
        "no info lines before {:?}",
        search.bestmove
    );
    let last_line = search.infos.last().expect("an info line");
    let last = iterations.last().expect("an iteration");
    assert!(
        last_line.starts_with("info depth") && last.bound.is_none(),
        "the last line before {:?} is {last_line:?}",
        search.bestmove
    );
    // Depth never falls below the last finished iteration's: the last line may repeat that
    // one's line after a fail-high or fail-low of the deeper iteration it was cut in.
    let mut finished_depth = 0;
    let (mut last_nodes, mut last_time) = (0, 0);
    let mut last_hashfull = 0;
    for info in &iterations {
        assert!(info.depth >= finished_depth, "depth went down: {info:?}");
        if info.bound.is_none() {
            finished_depth = info.depth;
        }
        assert!(
            info.nodes >= last_nodes && info.time >= last_time,
            "nodes or time went down: {info:?}"
        );
        (last_nodes, last_time) = (info.nodes, info.time);
        // A search stores entries of one table generation only, so the share of them can
        // only grow; a drop means some thread started a new generation mid-search.
        assert!(
            info.hashfull >= last_hashfull,
            "hashfull went down from {last_hashfull}: {info:?}"
        );
        last_hashfull = info.hashfull;
        assert!(info.seldepth >= info.depth, "seldepth < depth: {info:?}");
        assert_eq!(info.multipv, 1);
        assert!(info.nodes > 0 && info.hashfull <= 1000, "{info:?}");
        if let Some(expected) = (info.nodes * 1000).checked_div(info.time) {
            assert!(info.nps.abs_diff(expected) <= expected / 10 + 1, "{info:?}");
        }
        assert!(
            !info.pv.is_empty() || info.bound.is_some(),
            "empty pv: {info:?}"
        );
        let pv: Vec<&str> = info.pv.iter().map(String::as_str).collect();
        if let Err(e) = play_line(fen, chess960, &pv) {
            panic!("illegal PV in {info:?}: {e}");
        }
    }
    let best = search.best();
    let mut line = vec![best];
    line.extend(search.ponder());
    if let Err(e) = play_line(fen, chess960, &line) {
        panic!("illegal {:?}: {e}", search.bestmove);
    }
    let last = search.last_exact();
    assert_eq!(best, last.pv[0], "bestmove is not the last PV's first move");
    if let (Some(ponder), Some(second)) = (search.ponder(), last.pv.get(1)) {
        assert_eq!(
            ponder, second,
            "ponder move is not the last PV's second move"
        );
    }
}

/// The best move (ponder move not checked) is legal in the standard position `fen`.
pub fn assert_legal_bestmove(fen: &str, search: &Search) {
    if let Err(e) = play_line(fen, false, &[search.best()]) {
        panic!("illegal {:?}: {e}", search.bestmove);
    }
}

// ---------------------------------------------------------------------------------------
// The engine process
// ---------------------------------------------------------------------------------------

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stream {
    Stdout,
    Stderr,
}

/// One line the engine wrote, without its line ending, and when the reader got it.
pub struct Line {
    pub at: Instant,
    pub stream: Stream,
    pub text: String,
}

/// A line that matched, the lines before it, and when it arrived.
pub struct Reply {
    pub before: Vec<String>,
    pub line: String,
    pub at: Instant,
}

/// An engine process with piped stdin, stdout and stderr.
///
/// Two layers: `write_line`, `recv`, `try_recv` and `try_wait` only move lines (the fuzz
/// harness, which checks every line against its own model, uses those); the rest reads
/// stdout the way a GUI does and fails the test, showing the recent traffic, when a reply
/// does not come.
///
/// The engine writes nothing to stderr in play, so a line there is a fault (a helper
/// thread's panic message, say, which may still let a legal `bestmove` through): it fails
/// the test when the GUI layer reads it, and when the engine is dropped every line nobody
/// read is checked too. A test that provokes stderr output on purpose declares it first
/// with `expect_stderr`.
pub struct Engine {
    child: Child,
    /// Lines for the writer thread; `None` once stdin is closed.
    input: Option<Sender<Vec<u8>>>,
    output: Receiver<Line>,
    /// Every stdout line received since the last `go` was sent with `start_go`.
    since_go: Vec<(Instant, String)>,
    /// Recent traffic, shown when a test fails.
    log: Vec<String>,
    /// The stderr lines the test said would come (`expect_stderr`).
    expected_stderr: Vec<ExpectedStderr>,
    /// Whether empty stderr lines pass (`allow_blank_stderr`).
    blank_stderr_allowed: bool,
    /// Every stderr line read so far.
    stderr: Vec<String>,
}

/// Stderr lines a test provokes on purpose: those containing `pattern`, and whether one
/// has come.
struct ExpectedStderr {
    pattern: String,
    seen: bool,
}

impl Engine {
    pub fn start() -> Engine {
        Engine::spawn(basalt())
    }

    /// Drives `command` as the engine (the driver's own tests give it a stand-in).
    pub fn spawn(mut command: Command) -> Engine {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {command:?}: {e}"));
        let (sender, output) = mpsc::channel();
        let stdout = child.stdout.take().expect("stdout is piped");
        let stderr = child.stderr.take().expect("stderr is piped");
        read_lines(stdout, Stream::Stdout, sender.clone());
        read_lines(stderr, Stream::Stderr, sender);
        let mut stdin = child.stdin.take().expect("stdin is piped");
        let (input, lines) = mpsc::channel::<Vec<u8>>();
        thread::spawn(move || {
            for mut line in lines {
                line.push(b'\n');
                if stdin.write_all(&line).and_then(|()| stdin.flush()).is_err() {
                    break;
                }
            }
            // Dropping `stdin` here closes it: the engine reads the end of its input.
        });
        Engine {
            child,
            input: Some(input),
            output,
            since_go: Vec::new(),
            log: Vec::new(),
            expected_stderr: Vec::new(),
            blank_stderr_allowed: false,
            stderr: Vec::new(),
        }
    }

    /// Starts an engine and waits until it is ready, so start-up does not count in timings.
    pub fn ready() -> Engine {
        let mut engine = Engine::start();
        let before = engine.sync();
        assert!(before.is_empty(), "output before any command: {before:?}");
        engine
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// A number from the engine process's `/proc/<pid>/status` line `field:` (Linux), if
    /// it can be read: `VmRSS` in kB, `Threads`.
    pub fn status_field(&self, field: &str) -> Option<u64> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid())).ok()?;
        let line = status
            .lines()
            .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))?;
        line.split_whitespace().next()?.parse().ok()
    }

    /// Resident memory of the engine process in MB (Linux), if it can be read.
    pub fn resident_mb(&self) -> Option<u64> {
        self.status_field("VmRSS").map(|kb| kb / 1024)
    }

    // --- Lines only ----------------------------------------------------------------------

    /// Hands one line (without its newline) to the writer thread; false if stdin is
    /// closed or the writer has given up (the engine closed its end).
    pub fn write_line(&mut self, line: Vec<u8>) -> bool {
        self.input
            .as_ref()
            .is_some_and(|input| input.send(line).is_ok())
    }

    /// The next line on either stream. `Disconnected` once the engine has closed both.
    pub fn recv(&mut self, timeout: Duration) -> Result<Line, RecvTimeoutError> {
        self.output.recv_timeout(timeout)
    }

    pub fn try_recv(&mut self) -> Result<Line, TryRecvError> {
        self.output.try_recv()
    }

    pub fn try_wait(&mut self) -> std::io::Result<Option<ExitStatus>> {
        self.child.try_wait()
    }

    /// Closes the engine's stdin once the lines already sent are written: the end of input.
    pub fn close_stdin(&mut self) {
        self.note("> (closes stdin)".into());
        self.input = None;
    }

    // --- Stderr -------------------------------------------------------------------------

    /// Declares that the engine will write stderr lines containing `pattern` (for a test
    /// that provokes them on purpose): they are shown and let through, and the test fails
    /// if none has come by the time the engine is dropped. Any other stderr line fails it.
    pub fn expect_stderr(&mut self, pattern: &str) {
        self.expected_stderr.push(ExpectedStderr {
            pattern: pattern.to_string(),
            seen: false,
        });
    }

    /// Lets empty stderr lines through without asking for one (Rust's panic hook may set
    /// its report apart with one).
    pub fn allow_blank_stderr(&mut self) {
        self.blank_stderr_allowed = true;
    }

    /// A line the engine wrote on stderr: shown, kept for [`Engine::stderr`], and the test
    /// failed unless it was expected.
    fn take_stderr(&mut self, text: String) {
        eprintln!("engine stderr: {text}");
        self.note(format!("<! {text}"));
        if text.is_empty() && self.blank_stderr_allowed {
            self.stderr.push(text);
            return;
        }
        match self
            .expected_stderr
            .iter_mut()
            .find(|e| text.contains(&e.pattern))
        {
            Some(expected) => expected.seen = true,
            None => self.fail(&format!("the engine wrote to stderr: {text:?}")),
        }
        self.stderr.push(text);
    }

    // --- As a GUI ------------------------------------------------------------------------

    pub fn note(&mut self, entry: String) {
        const KEEP: usize = 60;
        if self.log.len() >= 2 * KEEP {
            self.log.drain(..KEEP);
        }
        self.log.push(entry);
    }

    pub fn fail(&self, why: &str) -> ! {
        // Whatever the engine said on stderr and nobody has read yet (a panic, say).
        let mut stderr = Vec::new();
        while let Ok(line) = self.output.try_recv() {
            if line.stream == Stream::Stderr {
                stderr.push(line.text);
            }
        }
        let stderr = if stderr.is_empty() {
            String::new()
        } else {
            format!("\n--- unread stderr ---\n{}", stderr.join("\n"))
        };
        panic!(
            "{why}\n--- recent traffic (> sent, < received, <! stderr) ---\n{}{stderr}",
            self.log.join("\n")
        );
    }

    /// Sends one line; returns the moment just before writing it.
    pub fn send(&mut self, line: &str) -> Instant {
        self.send_bytes(line.as_bytes())
    }

    pub fn send_bytes(&mut self, bytes: &[u8]) -> Instant {
        let shown: String = String::from_utf8_lossy(bytes).chars().take(100).collect();
        self.note(format!("> {shown}"));
        if self.input.is_none() {
            self.fail("stdin already closed");
        }
        let at = Instant::now();
        if !self.write_line(bytes.to_vec()) {
            self.fail("cannot write to the engine");
        }
        at
    }

    /// The next stdout line, or `None` if none arrives within `timeout` or the output has
    /// ended.
    pub fn next_line(&mut self, timeout: Duration) -> Option<(Instant, String)> {
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = self.output.recv_timeout(left).ok()?;
            if line.stream == Stream::Stderr {
                self.take_stderr(line.text);
                continue;
            }
            self.note(format!("< {}", line.text));
            self.since_go.push((line.at, line.text.clone()));
            return Some((line.at, line.text));
        }
    }

    /// Reads until a line satisfies `wanted`; fails the test after `timeout`.
    pub fn expect_line(
        &mut self,
        what: &str,
        timeout: Duration,
        wanted: impl Fn(&str) -> bool,
    ) -> Reply {
        let deadline = Instant::now() + timeout;
        let mut before = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.next_line(left) {
                Some((at, line)) if wanted(&line) => return Reply { before, line, at },
                Some((_, line)) => before.push(line),
                None => self.fail(&format!("no {what} within {timeout:?}")),
            }
        }
    }

    /// The stderr lines read so far (those that came before the stdout lines read).
    pub fn stderr(&self) -> &[String] {
        &self.stderr
    }

    /// Collects whatever arrives during `window`.
    pub fn lines_during(&mut self, window: Duration) -> Vec<String> {
        let deadline = Instant::now() + window;
        let mut lines = Vec::new();
        while let Some((_, line)) =
            self.next_line(deadline.saturating_duration_since(Instant::now()))
        {
            lines.push(line);
        }
        lines
    }

    /// Every stdout line until the engine has closed its output (it exits), with when each
    /// arrived; fails the test if that takes longer than `timeout`.
    pub fn rest_of_output(&mut self, timeout: Duration) -> Vec<(Instant, String)> {
        let deadline = Instant::now() + timeout;
        let mut lines = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.output.recv_timeout(left) {
                Ok(line) if line.stream == Stream::Stderr => self.take_stderr(line.text),
                Ok(line) => {
                    self.note(format!("< {}", line.text));
                    lines.push((line.at, line.text));
                }
                Err(RecvTimeoutError::Disconnected) => return lines,
                Err(RecvTimeoutError::Timeout) => self.fail(&format!(
                    "the engine's output did not end within {timeout:?}"
                )),
            }
        }
    }

    /// Sends `line`, then `isready`, and returns what came before `readyok`.
    pub fn sync_after(&mut self, line: &str) -> Vec<String> {
        self.send(line);
        self.sync()
    }

    /// `isready` and the lines printed before its `readyok`.
    pub fn sync(&mut self) -> Vec<String> {
        self.send("isready");
        self.expect_line("readyok", PATIENCE, |l| l == "readyok")
            .before
    }

    /// The current position as the engine's `d` command reports it.
    pub fn fen(&mut self) -> String {
        self.send("d");
        let lines = self.sync();
        match lines.iter().find_map(|l| l.strip_prefix("Fen: ")) {
            Some(fen) => fen.to_string(),
            None => self.fail("`d` printed no `Fen:` line"),
        }
    }

    /// Sends a `go` command and reads up to its `bestmove`.
    pub fn go(&mut self, command: &str) -> Search {
        self.go_within(command, PATIENCE)
    }

    pub fn go_within(&mut self, command: &str, timeout: Duration) -> Search {
        let sent = self.start_go(command);
        self.take_search(sent, timeout)
    }

    /// Like `expect_line`, but for output of the job begun by `start_go`: also looks at
    /// lines already read, and returns every line since that `go`.
    pub fn expect_since_go(
        &mut self,
        what: &str,
        timeout: Duration,
        wanted: impl Fn(&str) -> bool,
    ) -> Reply {
        if !self.since_go.iter().any(|(_, l)| wanted(l)) {
            self.expect_line(what, timeout, &wanted);
        }
        let mut lines = std::mem::take(&mut self.since_go);
        let end = lines
            .iter()
            .position(|(_, l)| wanted(l))
            .expect("the wanted line has arrived");
        self.since_go = lines.split_off(end + 1);
        let (at, line) = lines.pop().expect("the wanted line is there");
        Reply {
            before: lines.into_iter().map(|(_, l)| l).collect(),
            line,
            at,
        }
    }

    /// The search begun by `start_go`, up to its `bestmove`.
    pub fn take_search(&mut self, sent: Instant, timeout: Duration) -> Search {
        let reply = self.expect_since_go("bestmove", timeout, |l| l.starts_with("bestmove"));
        Search {
            infos: reply.before,
            bestmove: reply.line,
            elapsed: reply.at - sent,
        }
    }

    /// Sends a `go` that starts a search; returns when it was sent. `isready` right after
    /// shows that the engine has read it; fails the test if it complained about it (a
    /// `go` it cannot parse is ignored with an `info string`, and every caller means to
    /// start a job).
    pub fn start_go(&mut self, command: &str) -> Instant {
        self.since_go.clear();
        let sent = self.send(command);
        self.send("isready");
        let reply = self.expect_line("readyok after go", PATIENCE, |l| l == "readyok");
        self.since_go.retain(|(_, l)| l != "readyok");
        if reply
            .before
            .iter()
            .any(|l| l.starts_with("info string") && l.contains("ignored"))
        {
            self.fail(&format!("{command:?} was not taken"));
        }
        sent
    }

    /// Sends `stop` and returns the search's output and how long `bestmove` took.
    pub fn stop(&mut self) -> (Search, Duration) {
        let sent = self.send("stop");
        let search = self.take_search(sent, PATIENCE);
        let latency = search.elapsed;
        (search, latency)
    }

    /// Waits for the first `info depth` line of a running search.
    pub fn wait_for_info(&mut self) {
        if !self
            .since_go
            .iter()
            .any(|(_, l)| l.starts_with("info depth"))
        {
            self.expect_line("info depth line", PATIENCE, |l| l.starts_with("info depth"));
        }
    }

    /// Waits for the process to exit; returns its status and how long that took.
    pub fn wait_exit(&mut self, timeout: Duration) -> (ExitStatus, Duration) {
        let start = Instant::now();
        loop {
            match self.child.try_wait() {
                Ok(Some(status)) => return (status, start.elapsed()),
                // Polled finely: the latency test reports exit times well below a millisecond.
                Ok(None) if start.elapsed() < timeout => thread::sleep(Duration::from_micros(100)),
                Ok(None) => self.fail(&format!("the engine did not exit within {timeout:?}")),
                Err(e) => self.fail(&format!("cannot wait for the engine: {e}")),
            }
        }
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        self.input = None;
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
        }
        let _ = self.child.wait();
        if thread::panicking() {
            return;
        }
        // The process is gone and its pipes are closing: what it wrote on stderr that no
        // test read (a panic after the last reply the test waited for) is checked now.
        let deadline = Instant::now() + PATIENCE;
        while let Ok(line) = self
            .output
            .recv_timeout(deadline.saturating_duration_since(Instant::now()))
        {
            if line.stream == Stream::Stderr {
                self.take_stderr(line.text);
            }
        }
        let missing: Vec<&str> = self
            .expected_stderr
            .iter()
            .filter(|e| !e.seen)
            .map(|e| e.pattern.as_str())
            .collect();
        if !missing.is_empty() {
            self.fail(&format!(
                "no stderr line containing {missing:?}, which the test expected"
            ));
        }
    }
}

/// Reads `source` line by line on its own thread into `sender`, stamping each line with
/// the moment it was read.
fn read_lines(source: impl Read + Send + 'static, stream: Stream, sender: Sender<Line>) {
    thread::spawn(move || {
        let mut reader = BufReader::new(source);
        let mut buf = Vec::new();
        loop {
            buf.clear();
            match reader.read_until(b'\n', &mut buf) {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
            let at = Instant::now();
            let text = String::from_utf8_lossy(&buf);
            let text = text.trim_end_matches(['\n', '\r']).to_string();
            if sender.send(Line { at, stream, text }).is_err() {
                break;
            }
        }
    });
}
