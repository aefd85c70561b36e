//! The UCI front end: reads commands on the main thread, keeps the engine's state (position,
//! options) and hands searches to the search thread. Bad input never changes state: it gets
//! one `info string` line saying what was wrong.

pub mod format;
mod options;
mod parse;
pub mod wdl;

use std::io::{BufRead, Write};
use std::sync::Arc;

use shakmaty::Position as _;

use crate::eval;
use crate::nnue::{self, Network};
use crate::position::Position;
use crate::search::skill::StrengthLimit;
use crate::syzygy;
use crate::threads::{Job, ProbeOptions, Reporter, SearchSetup, SearchThread};
use crate::tt::TranspositionTable;
pub use options::Options;
use parse::{Command, GoCommand};

pub const ENGINE_NAME: &str = "Basalt";
pub const ENGINE_AUTHOR: &str = "the Basalt developers";

/// Where the engine's lines go: stdout, or a test's buffer.
pub type Output = Arc<dyn Fn(&str) + Send + Sync>;

/// The search thread's reports, written as UCI lines to `output`.
fn reporter(output: Output) -> Reporter {
    Arc::new(move |report| {
        for line in format::report(&report) {
            output(&line);
        }
    })
}

/// Writes one line to stdout and flushes it. Errors (a closed pipe) are ignored: the engine
/// then simply runs until its input ends.
pub fn stdout_output() -> Output {
    Arc::new(|line: &str| {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{line}");
        let _ = out.flush();
    })
}

/// The UCI thread's side. It never waits for a search, except that after `stop` it answers
/// `isready` only once the stopped searches have printed their `bestmove` (milliseconds).
/// Searches, and table, pool and Syzygy changes, are jobs for the search thread, which runs
/// them in the order they were sent: a `go` during a search waits for it, and a change
/// sent during a search applies when it ends. After a table change the search
/// thread answers `isready` itself once the change is done.
pub struct Engine {
    position: Position,
    options: Options,
    /// The hash size last accepted, which the search thread has or is allocating.
    hash_mb: usize,
    worker: SearchThread,
    output: Output,
    debug: bool,
    /// The network `EvalFile` names, loaded; searches use it while `UseNNUE` is on.
    network: Arc<Network>,
}

impl Engine {
    pub fn new(output: Output) -> Engine {
        let options = Options::default();
        let tt = Arc::new(TranspositionTable::new(options.hash_mb));
        let worker = SearchThread::spawn(tt, reporter(output.clone()));
        Engine {
            position: Position::default(),
            hash_mb: options.hash_mb,
            options,
            worker,
            output,
            debug: false,
            network: nnue::embedded(),
        }
    }

    fn say(&self, line: &str) {
        (self.output)(line);
    }

    fn info_string(&self, text: &str) {
        self.say(&format!("info string {text}"));
    }

    /// Reads commands until `quit` or the end of input, then ends the search thread: at
    /// once after `quit`; after the end of input once the searches sent have answered
    /// (`SearchThread::end_of_input`).
    pub fn run(&mut self, input: impl BufRead) {
        match self.read_commands(input) {
            Ending::Quit => self.worker.quit(),
            Ending::EndOfInput => self.worker.end_of_input(),
        }
    }

    /// Reads and handles commands until `quit` or the end of input.
    fn read_commands(&mut self, input: impl BufRead) -> Ending {
        let mut input = input;
        let mut buf = Vec::new();
        loop {
            buf.clear();
            match input.read_until(b'\n', &mut buf) {
                Ok(0) | Err(_) => return Ending::EndOfInput,
                Ok(_) => {}
            }
            let line = String::from_utf8_lossy(&buf);
            if !self.handle_line(&line) {
                return Ending::Quit;
            }
        }
    }

    /// Handles one input line; false means quit.
    pub fn handle_line(&mut self, line: &str) -> bool {
        let command = match parse::parse(line, &self.position) {
            Ok(Some(c)) => c,
            Ok(None) => return true,
            Err(why) => {
                self.info_string(&why);
                return true;
            }
        };
        match command {
            Command::Uci => self.uci(),
            Command::IsReady => {
                // After `stop`, a client that waits for `readyok` before its next search must
                // not take a stopped search's `bestmove` as that search's answer.
                self.worker.wait_stopped();
                // After a table change, `readyok` means the change is done: the
                // search thread then prints it, and the command loop reads on meanwhile.
                if self.worker.ready() {
                    self.say("readyok");
                }
            }
            Command::Debug(on) => self.debug = on,
            Command::UciNewGame => self.new_game(),
            Command::SetOption { name, value } => self.set_option(&name, value.as_deref()),
            Command::Position { fen, moves } => self.set_position(fen.as_deref(), &moves),
            Command::Go(go) => self.go(go),
            Command::Stop => self.worker.stop(),
            Command::PonderHit => self.worker.ponderhit(),
            Command::Quit => return false,
            Command::Display => self.display(),
            Command::Eval => self.eval(),
            Command::Bench(depth) => self.bench(depth),
        }
        true
    }

    fn uci(&self) {
        self.say(&format!(
            "id name {ENGINE_NAME} {}",
            env!("CARGO_PKG_VERSION")
        ));
        self.say(&format!("id author {ENGINE_AUTHOR}"));
        for line in options::declarations() {
            self.say(&line);
        }
        self.say("uciok");
    }

    fn new_game(&mut self) {
        self.worker.send(Job::ClearHash);
        self.worker.send(Job::ClearHistory);
    }

    fn set_position(&mut self, fen: Option<&str>, moves: &[String]) {
        let start = match fen {
            None => Ok(Position::from_board(
                shakmaty::Chess::default(),
                self.castling_mode(),
            )),
            Some(fen) => Position::from_fen(fen, self.options.chess960),
        };
        let mut position = match start {
            Ok(p) => p,
            Err(e) => {
                self.info_string(&format!("{e}; position unchanged"));
                return;
            }
        };
        if let Err(e) = position.play_uci_moves(moves.iter().map(String::as_str)) {
            self.info_string(&format!("{e}; position set up to the move before it"));
        }
        self.position = position;
    }

    fn castling_mode(&self) -> shakmaty::CastlingMode {
        if self.options.chess960 {
            shakmaty::CastlingMode::Chess960
        } else {
            shakmaty::CastlingMode::Standard
        }
    }

    fn set_option(&mut self, name: &str, value: Option<&str>) {
        let change = match self.options.set(name, value) {
            Ok(c) => c,
            Err(why) => {
                self.info_string(&why);
                return;
            }
        };
        match change {
            options::Change::None => {}
            options::Change::Hash(mb) => {
                // Refused here, at once, when the machine surely cannot hold it; the old
                // table then stays, contents and all.
                if !TranspositionTable::fits_in_memory(mb, self.hash_mb) {
                    self.options.hash_mb = self.hash_mb;
                    self.info_string(&format!(
                        "cannot allocate {mb} MB for the hash table; keeping {} MB",
                        self.hash_mb
                    ));
                    return;
                }
                self.hash_mb = mb;
                self.defer_notice("Hash will be resized when the search ends");
                self.worker.send(Job::SetHash(mb));
            }
            options::Change::Threads(threads) => {
                self.defer_notice("Threads will change when the search ends");
                self.worker.send(Job::SetThreads(threads));
            }
            options::Change::SyzygyPath(path) => {
                // A list naming no directory is refused here; scanning directories is left
                // to the search thread, which reports failures itself. A search already
                // running keeps the tables it started with.
                let report = match syzygy::directories(&path) {
                    Ok(_) => true,
                    Err(why) => {
                        self.info_string(&why);
                        false
                    }
                };
                self.worker.send(Job::LoadTables { path, report });
            }
            options::Change::EvalFile(path) => self.load_network(path),
            options::Change::ClearHash => {
                self.defer_notice("hash will be cleared when the search ends");
                self.worker.send(Job::ClearHash);
            }
        }
    }

    /// Loads the network `EvalFile` names; a file that cannot be read or is not a net
    /// (a FIFO, a device or a file larger than any net is refused unread, so the command
    /// thread never waits on it) leaves the current one in place. A running search keeps
    /// the net it started with.
    fn load_network(&mut self, path: String) {
        let loaded = if path == options::EMBEDDED_NET {
            Ok(nnue::embedded())
        } else {
            Network::read_file(std::path::Path::new(&path)).map(Arc::new)
        };
        match loaded {
            Ok(network) => {
                self.info_string(&format!(
                    "EvalFile {path}: network {}, loaded",
                    network.describe()
                ));
                self.network = network;
                self.options.eval_file = path;
            }
            Err(why) => self.info_string(&format!(
                "EvalFile {path}: {why}; keeping {}",
                self.options.eval_file
            )),
        }
    }

    /// Says that a change waits for the searches sent before it to end (it is queued behind
    /// them).
    fn defer_notice(&self, text: &str) {
        if self.worker.is_busy() {
            self.info_string(text);
        }
    }

    /// Sends the search (or perft) to the search thread. One sent while another runs waits
    /// for it, as Stockfish's does (its command thread waits for the running search before
    /// it starts the next; here the command loop goes on): GUIs send `stop` and the next
    /// `go` without waiting for the `bestmove` (after a missed ponder), and a script piped
    /// in sends every `go` at once. The job takes the position and options of now with it.
    fn go(&mut self, go: GoCommand) {
        let position = Box::new(self.position.clone());
        if let Some(depth) = go.perft {
            self.worker.start(Job::Perft { position, depth }, false);
            return;
        }
        let us = self.position.turn();
        let limits = go.limits(us, self.options.move_overhead_ms);
        let infinite = go.infinite;
        let setup = SearchSetup {
            multipv: self.options.multipv,
            show_wdl: self.options.show_wdl,
            strength: self
                .options
                .limit_strength
                .then(|| StrengthLimit::new(self.options.elo)),
            probe: ProbeOptions {
                limit: self.options.syzygy_probe_limit,
                depth: self.options.syzygy_probe_depth,
                rule50: self.options.syzygy_50_move_rule,
            },
            network: self.options.use_nnue.then(|| self.network.clone()),
        };
        self.worker.start(
            Job::Search {
                position,
                limits,
                infinite,
                debug: self.debug,
                setup,
            },
            go.ponder,
        );
    }

    fn bench(&mut self, depth: i32) {
        if self.worker.is_busy() {
            self.info_string("a search is running; bench ignored");
            return;
        }
        let network = self.options.use_nnue.then(|| self.network.clone());
        self.worker.start(Job::Bench { depth, network }, false);
    }

    fn display(&self) {
        let board = self.position.board().board().clone();
        self.say("");
        self.say(" +---+---+---+---+---+---+---+---+");
        for rank in (0..8).rev() {
            let mut row = String::from(" |");
            for file in 0..8 {
                let sq = shakmaty::Square::from_coords(
                    shakmaty::File::new(file),
                    shakmaty::Rank::new(rank),
                );
                let c = board.piece_at(sq).map_or(' ', |p| p.char());
                row.push_str(&format!(" {c} |"));
            }
            row.push_str(&format!(" {}", rank + 1));
            self.say(&row);
            self.say(" +---+---+---+---+---+---+---+---+");
        }
        self.say("   a   b   c   d   e   f   g   h");
        self.say("");
        self.say(&format!("Fen: {}", self.position.fen()));
        self.say(&format!("Key: {:016X}", self.position.key()));
        let checkers: Vec<String> = self
            .position
            .board()
            .checkers()
            .into_iter()
            .map(|sq| sq.to_string())
            .collect();
        self.say(&format!("Checkers: {}", checkers.join(" ")));
    }

    fn eval(&self) {
        let board = self.position.board();
        let br = eval::breakdown(board);
        self.say("      Term      |    White    |    Black    |    Total");
        self.say("                |   MG    EG  |   MG    EG  |   MG    EG");
        self.say("----------------+-------------+-------------+------------");
        for (i, term) in eval::TERMS.iter().enumerate() {
            let [w, b] = br.terms[i];
            let t = w - b;
            self.say(&format!(
                "{:>15} | {:>5} {:>5} | {:>5} {:>5} | {:>5} {:>5}",
                term.name(),
                w.mg,
                w.eg,
                b.mg,
                b.eg,
                t.mg,
                t.eg
            ));
        }
        self.say(&format!(
            "Phase: {} / {}, endgame scale: {} / {}",
            br.phase,
            eval::MAX_PHASE,
            br.scale,
            eval::FULL_SCALE
        ));
        let white_view = |stm: i32| {
            if board.turn() == shakmaty::Color::White {
                stm
            } else {
                -stm
            }
        };
        let hce = eval::evaluate(board);
        self.say(&format!(
            "Hand-crafted evaluation: {} cp (White's side), {hce} cp for the side to move",
            white_view(hce)
        ));
        let net = self.network.evaluate_from_scratch(board);
        self.say(&format!(
            "NNUE evaluation: {} cp (White's side), {net} cp for the side to move ({})",
            white_view(net),
            self.options.eval_file
        ));
        let (used, name) = if self.options.use_nnue {
            (net, "NNUE")
        } else {
            (hce, "hand-crafted, UseNNUE false")
        };
        self.say(&format!(
            "Final evaluation: {} cp (White's side), {used} cp for the side to move ({name})",
            white_view(used)
        ));
    }
}

/// How the command loop ended.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Ending {
    Quit,
    EndOfInput,
}

/// Runs the UCI loop on stdin/stdout until `quit` or the end of input.
pub fn run_stdio() {
    let mut engine = Engine::new(stdout_output());
    // Only now: the search thread, spawned above, must not inherit the short slice.
    crate::threads::shorten_time_slice();
    let stdin = std::io::stdin();
    match engine.read_commands(stdin.lock()) {
        // Input piped in (`printf 'position startpos\ngo depth 10\n' | basalt`) is answered
        // in full: each search sent runs to its limit and prints its `bestmove` (searches
        // without an end of their own are stopped), then the engine exits.
        Ending::EndOfInput => engine.worker.end_of_input(),
        // Searches end at once; a bench sent before `quit` prints its total first.
        Ending::Quit => engine.worker.quit_after_bench(),
    }
    // The process ends here, so the search threads are stopped but not joined: joining
    // waits until each has been scheduled again, several milliseconds with more threads
    // than cores. `exit` flushes stdout; the kernel ends the threads with the process,
    // which it can do only once each has run again, hence the lift.
    engine.worker.stop();
    crate::threads::lift_helper_priority();
    std::process::exit(0);
}
