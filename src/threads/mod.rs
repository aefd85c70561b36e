//! The search threads: a persistent main worker that receives jobs from the UCI thread over
//! a channel, so the UCI thread never blocks on a search, and `Threads - 1` persistent
//! helpers for Lazy SMP. The main worker reports iterations, the best move and perft and
//! bench results itself, through a [`Reporter`] the UCI layer gives it (which turns them into
//! `info` and `bestmove` lines); the UCI thread only flips the flags in `StopFlags`.
//!
//! Jobs run one at a time in the order they were sent: a `go` that arrives while a search
//! runs waits behind it, with the position and options it was sent with, and option
//! changes sent between two `go`s apply between the two searches. Every search and perft
//! has flags of its own, so `stop` (and `ponderhit`) reach exactly the jobs sent before
//! it, running or waiting, and never one sent after it.
//!
//! Lazy SMP: every helper searches the same root with its own histories and stack, sharing
//! only the transposition table, and odd helpers start one iteration deeper so the threads
//! spread over depths. Their results reach the main thread through the table. The main
//! thread alone decides when to stop and which move to play. It raises the helpers' stop
//! flag and prints `bestmove` without waiting for them: a helper that the scheduler has
//! not run for a while (more threads than cores) must not hold up the move or the clock.
//! Each search gives the helpers a fresh stop flag, so a helper still unwinding the last
//! search cannot miss the stop, and picks up the next search from its queue when done.
//!
//! Option changes never make the UCI thread wait (docs/reliability.md). The search thread
//! owns the hash table, the helpers and the Syzygy tables. It grows the pool one helper at
//! a time between jobs and retires helpers without joining them; the upkeep thread
//! allocates and clears tables and scans Syzygy directories. `readyok` waits for the
//! table changes sent before `isready` (the search thread prints it when they are
//! done; the UCI thread reads on meanwhile), except those queued behind a search. A search
//! waits for that work unless `stop` arrives first or, with a clock, a quarter of its soft
//! limit has passed: it then starts with what there is (a table not yet ready is replaced
//! by a small empty one for that search), so `bestmove` is never late because of it.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossbeam_channel::{select, Receiver, RecvTimeoutError, TryRecvError};
use shakmaty::CastlingMode;

use crate::nnue::Network;
use crate::perft;
use crate::position::Position;
use crate::search::{CurrentMove, Iteration, Limits, SearchResult, Searcher, StopFlags};

mod command;
mod memory;
mod pool;
mod priority;
mod ready;
mod table;
mod tablebases;
mod upkeep;
pub use command::SearchThread;
use pool::{HelperPool, HelperSearch};
pub use priority::{lift_helper_priority, lower_helper_priority, shorten_time_slice};
use ready::Readiness;
use table::HashTable;
use tablebases::SyzygyTables;
use upkeep::{Done, Task, Upkeep};

/// What the search thread has to say. It knows no protocol: the UCI layer's [`Reporter`]
/// writes each report as its lines.
pub enum Report<'a> {
    /// A finished iteration (one per PV line), with the helpers' nodes and tablebase hits;
    /// also, last before the move, the lines of the move played with the search's totals.
    Iteration {
        iteration: &'a Iteration,
        mode: CastlingMode,
        show_wdl: bool,
    },
    /// The root move the main thread starts on, a few seconds into a search.
    CurrentMove {
        current: CurrentMove,
        mode: CastlingMode,
    },
    /// The search's result: the move to play.
    BestMove {
        result: &'a SearchResult,
        mode: CastlingMode,
    },
    /// `go perft`: one root move's count.
    PerftMove { uci_move: &'a str, nodes: u64 },
    /// `go perft`: the total, its last line.
    PerftTotal(u64),
    /// `bench`: the totals, its last line.
    BenchTotal { nodes: u64, nps: u64 },
    /// Anything else for the user: a note, a warning, statistics.
    Note(&'a str),
    /// `isready`'s answer, once the table changes sent before it are done.
    Ready,
}

pub type Reporter = Arc<dyn Fn(Report) + Send + Sync>;

pub enum Job {
    Search {
        position: Box<Position>,
        limits: Limits,
        /// `go infinite`: hold `bestmove` back until `stop` even if the search ends.
        infinite: bool,
        debug: bool,
        /// Options that shape the search and its output.
        setup: SearchSetup,
    },
    Perft {
        position: Box<Position>,
        depth: u32,
    },
    Bench {
        depth: i32,
        /// The net to evaluate with; `None` for the hand-crafted evaluation.
        network: Option<Arc<Network>>,
    },
    /// Hash table size in MB (the UCI thread has checked that it fits in memory).
    SetHash(usize),
    ClearHash,
    /// Total search threads wanted (main thread included).
    SetThreads(usize),
    ClearHistory,
    /// `isready` that has to wait for table changes: answered once they are done.
    Ready,
    /// Scan `SyzygyPath` again. `report`: print why it failed (false when the UCI thread
    /// has already said so).
    LoadTables {
        path: String,
        report: bool,
    },
    /// End now: jobs still queued are dropped and a `readyok` still owed is not printed.
    Quit,
    /// The end of the input: answer the `isready`s still owed, then end.
    Finish,
}

impl Job {
    /// Whether `isready` waits for this job's work: a table change. (New helpers are
    /// not waited for: see ready.rs.)
    fn is_setup(&self) -> bool {
        matches!(self, Job::SetHash(_) | Job::ClearHash)
    }
}

/// Per-search options from the UCI options.
#[derive(Clone, Default)]
pub struct SearchSetup {
    /// MultiPV lines (the main thread only; helpers search one line).
    pub multipv: usize,
    /// `wdl W D L` in `info` lines (UCI_ShowWDL).
    pub show_wdl: bool,
    /// `UCI_LimitStrength` with its `UCI_Elo`; `None` at full strength.
    pub strength: Option<crate::search::skill::StrengthLimit>,
    /// Syzygy probing options; the search thread adds the tables it has loaded.
    pub probe: ProbeOptions,
    /// The network that evaluates; `None` for the hand-crafted evaluation (`UseNNUE`).
    pub network: Option<Arc<Network>>,
}

#[derive(Clone, Copy, Default)]
pub struct ProbeOptions {
    pub limit: usize,
    pub depth: i32,
    pub rule50: bool,
}

/// Stack for search threads: deep recursion (MAX_PLY plies of search frames) needs more
/// than the default.
const SEARCH_STACK_BYTES: usize = 64 * 1024 * 1024;

/// What the search thread's inbox carries: a job, and for a search or perft the flags that
/// `stop` and `ponderhit` raise for it.
type Queued = (Job, Option<Arc<StopFlags>>);

/// What the search thread has got through, counted as it goes, so that the command thread
/// can tell where it is without waiting on it.
#[derive(Default)]
struct Progress {
    /// Jobs finished, counted just before their last line is printed
    /// (`Worker::count_job_done`).
    jobs_done: AtomicU64,
    /// Jobs whose last line has been printed.
    jobs_printed: AtomicU64,
    /// Table changes done, published whenever all those taken from the queue are.
    setups_done: AtomicU64,
    /// `readyok`s printed.
    readies_printed: AtomicU64,
}

struct Worker {
    searcher: Searcher,
    /// The flags of the current (or last) search or perft, raised by `stop` and
    /// `ponderhit`.
    job_flags: Arc<StopFlags>,
    /// Counts jobs finished (just before their last line) and jobs whose last line has
    /// been printed.
    progress: Arc<Progress>,
    output: Reporter,
    pool: HelperPool,
    table: HashTable,
    ready: Readiness,
    upkeep: Upkeep,
    syzygy: SyzygyTables,
}

impl Worker {
    fn run(mut self, inbox: Receiver<Queued>) {
        while let Some((job, flags)) = self.next_job(&inbox) {
            if let Some(flags) = flags {
                self.searcher.set_flags(flags.clone());
                self.job_flags = flags;
            }
            if job.is_setup() {
                self.ready.setup_received();
            }
            if matches!(
                job,
                Job::Search { .. } | Job::Perft { .. } | Job::Bench { .. }
            ) {
                // The `isready`s sent before this job are answered before its output: the
                // client sent it without waiting for them, and the search copes with a
                // table that is not ready.
                self.ready.answer(&self.output);
            }
            match job {
                Job::Search {
                    mut position,
                    limits,
                    infinite,
                    debug,
                    setup,
                } => {
                    let show_wdl = setup.show_wdl;
                    let mode = position.castling_mode();
                    let result = self.run_search(&mut position, limits, infinite, setup);
                    if debug {
                        (self.output)(Report::Note(&self.searcher.stats.summary()));
                    }
                    // The last word before the move, whatever ended the search, unless it has
                    // just been said.
                    if debug || !result.final_lines_shown {
                        for line in &result.final_lines {
                            (self.output)(Report::Iteration {
                                iteration: line,
                                mode,
                                show_wdl,
                            });
                        }
                    }
                    self.count_job_done();
                    (self.output)(Report::BestMove {
                        result: &result,
                        mode,
                    });
                    self.count_job_printed();
                    continue;
                }
                Job::Perft {
                    mut position,
                    depth,
                } => {
                    self.perft(&mut position, depth);
                    self.count_job_printed();
                    continue;
                }
                Job::Bench { depth, network } => {
                    let output = self.output.clone();
                    let report =
                        crate::bench::run(depth, network, &mut |line| output(Report::Note(&line)));
                    self.count_job_done();
                    (self.output)(Report::BenchTotal {
                        nodes: report.nodes,
                        nps: report.nps,
                    });
                    self.count_job_printed();
                    continue;
                }
                Job::SetHash(mb) => {
                    self.table.ask_size(mb);
                    self.start_resize();
                    continue;
                }
                Job::ClearHash => {
                    if let Some(task) = self.table.start_clear(self.pool.threads()) {
                        self.upkeep.give(task);
                    }
                    continue;
                }
                Job::LoadTables { path, report } => {
                    self.upkeep.give(Task::LoadTables { path, report });
                    continue;
                }
                Job::SetThreads(threads) => {
                    self.pool.set_threads(threads);
                    continue;
                }
                Job::ClearHistory => {
                    self.pool.clear_histories();
                    self.searcher.clear();
                    continue;
                }
                Job::Ready => {
                    // Answered by `next_job` once the changes before it are done.
                    self.ready.owe();
                    continue;
                }
                Job::Finish => {
                    if self.ready.is_owed() {
                        self.settle_setups();
                        self.ready.answer(&self.output);
                    }
                    break;
                }
                Job::Quit => break,
            }
        }
        self.pool.retire();
    }

    /// The next job. While the pool lacks helpers it adds them one at a time between
    /// looks at the inbox, so a job never waits for more than one thread start. Whenever
    /// the table changes taken so far are done, it says so to `isready`.
    fn next_job(&mut self, inbox: &Receiver<Queued>) -> Option<Queued> {
        loop {
            while let Ok(done) = self.upkeep.done.try_recv() {
                self.take_upkeep_done(done);
            }
            if self.table.is_settled() {
                self.ready.settled(&self.output);
            } else {
                let table = &self.table;
                self.ready
                    .give_up_if_overdue(&self.output, || table.unready());
            }
            if !self.pool.is_complete() {
                match inbox.try_recv() {
                    Ok(job) => return Some(job),
                    Err(TryRecvError::Empty) => self.add_helper(),
                    Err(TryRecvError::Disconnected) => return None,
                }
                continue;
            }
            let ready_due = self
                .ready
                .deadline()
                .map_or_else(crossbeam_channel::never, crossbeam_channel::at);
            select! {
                recv(inbox) -> job => return job.ok(),
                recv(self.upkeep.done) -> done => match done {
                    Ok(done) => self.take_upkeep_done(done),
                    // The upkeep thread has gone (it panicked): only jobs are left.
                    Err(_) => return inbox.recv().ok(),
                },
                recv(ready_due) -> _ => {}
            }
        }
    }

    fn add_helper(&mut self) {
        if let Some(note) = self.pool.grow(self.table.idle()) {
            (self.output)(Report::Note(&note));
        }
    }

    /// Waits until every table change taken from the queue is done.
    fn settle_setups(&mut self) {
        while !self.table.is_settled() {
            match self.upkeep.done.recv() {
                Ok(done) => self.take_upkeep_done(done),
                Err(_) => return,
            }
        }
    }

    /// Starts the resize asked for, unless one is under way (`take_upkeep_done` starts the
    /// next). The main thread lets go of the old table here, the helpers when their search
    /// ends.
    fn start_resize(&mut self) {
        if let Some(task) = self.table.start_resize(self.pool.threads()) {
            self.searcher.tt = self.table.idle().clone();
            self.upkeep.give(task);
        }
    }

    /// Takes in the upkeep thread's answer to one task.
    fn take_upkeep_done(&mut self, done: Done) {
        self.upkeep.answered();
        match done {
            Done::Table(result) => {
                if let Some(why) = self.table.resized(result) {
                    (self.output)(Report::Note(&why));
                }
                self.start_resize();
            }
            Done::Cleared => self.table.cleared(),
            Done::Tables { result, report } => {
                if let Some(why) = self.syzygy.scanned(result, report) {
                    (self.output)(Report::Note(&why));
                }
            }
        }
    }

    /// Before a search: completes the pool and waits for the upkeep thread's work, unless
    /// `stop` comes first or `budget` runs out; the search then runs with the threads and
    /// tables there are. Returns how long it waited.
    fn prepare(&mut self, budget: Option<Duration>) -> Duration {
        const POLL: Duration = Duration::from_micros(500);
        let started = Instant::now();
        loop {
            while let Ok(done) = self.upkeep.done.try_recv() {
                self.take_upkeep_done(done);
            }
            if self.job_flags.stop.load(Ordering::Relaxed) {
                break;
            }
            let left = budget.map(|b| b.saturating_sub(started.elapsed()));
            if left == Some(Duration::ZERO) {
                break;
            }
            if !self.pool.is_complete() {
                self.add_helper();
            } else if self.upkeep.is_idle() {
                break;
            } else {
                match self
                    .upkeep
                    .done
                    .recv_timeout(left.map_or(POLL, |left| left.min(POLL)))
                {
                    Ok(done) => self.take_upkeep_done(done),
                    Err(RecvTimeoutError::Timeout) => {}
                    Err(RecvTimeoutError::Disconnected) => break,
                }
            }
        }
        started.elapsed()
    }

    /// The job's last line is out.
    fn count_job_printed(&self) {
        self.progress.jobs_printed.fetch_add(1, Ordering::Release);
    }

    /// Marks the job finished. Called before a job's last line goes out: a client answers
    /// that line (`bestmove`, `Nodes searched`) at once, with an option change say, which
    /// must not find the worker still marked busy and be told it is deferred. Jobs are
    /// queued, so a new one cannot start before this one has printed its last line.
    /// Called exactly once per job and nowhere else: a second call would count the *next*
    /// job finished while it runs.
    fn count_job_done(&self) {
        self.progress.jobs_done.fetch_add(1, Ordering::Release);
    }

    fn run_search(
        &mut self,
        position: &mut Position,
        mut limits: Limits,
        infinite: bool,
        setup: SearchSetup,
    ) -> SearchResult {
        // A search on the clock waits for the table and the pool at most a quarter of its
        // soft limit, and that wait counts against its time (unless the clock has not
        // started: pondering). Without a clock nothing can be late, and waiting keeps
        // such searches independent of how fast the machine allocates.
        let waited = self.prepare(limits.time.map(|time| time.soft / 4));
        if !self.job_flags.pondering.load(Ordering::Relaxed) {
            if let Some(time) = &mut limits.time {
                time.soft = time.soft.saturating_sub(waited);
                time.hard = time.hard.saturating_sub(waited);
            }
        }
        if let Some(note) = self.syzygy.take_note() {
            (self.output)(Report::Note(&note));
        }
        let tablebases = self.syzygy.for_search(setup.probe);
        let tt = self.table.for_search();
        self.searcher.tt = tt.clone();
        // One generation per search, started before any thread of it stores an entry.
        tt.new_search();
        // Helpers search without limits of their own: the main thread stops them. Held
        // to the end of the search, so the helpers never free the shared root.
        let helper_search = HelperSearch {
            position: Arc::new(position.clone()),
            limits: Limits {
                depth: limits.depth,
                search_moves: limits.search_moves.clone(),
                ..Limits::default()
            },
            tablebases: tablebases.clone(),
            network: setup.network.clone(),
            tt: tt.clone(),
            job_flags: self.job_flags.clone(),
        };
        let helpers = self.pool.start(&helper_search);
        let output = self.output.clone();
        let mode = position.castling_mode();
        self.searcher.multipv = setup.multipv.max(1);
        self.searcher.tablebases = tablebases;
        self.searcher.network = setup.network;
        self.searcher.strength = setup.strength;
        let show_wdl = setup.show_wdl;
        let announce = self.output.clone();
        self.searcher.on_root_move = Some(Box::new(move |current| {
            announce(Report::CurrentMove { current, mode })
        }));
        let mut result =
            self.searcher
                .iterative_deepening(position, limits, &mut |it: &Iteration| {
                    let mut it = it.clone();
                    helpers.add_to(&mut it);
                    output(Report::Iteration {
                        iteration: &it,
                        mode,
                        show_wdl,
                    })
                });
        self.searcher.on_root_move = None;
        for line in &mut result.final_lines {
            helpers.add_to(line);
        }
        // UCI: in `go infinite` and while pondering, `bestmove` waits for `stop`/`ponderhit`.
        while !self.job_flags.stop.load(Ordering::Relaxed)
            && (infinite || self.job_flags.pondering.load(Ordering::Relaxed))
        {
            std::thread::sleep(Duration::from_micros(500));
        }
        self.pool.stop();
        result.nodes += helpers.nodes();
        result
    }

    /// `go perft`: divide output, abandoned when `stop` arrives.
    fn perft(&mut self, position: &mut Position, depth: u32) {
        let output = self.output.clone();
        let total = perft::divide_until(position, depth, &self.job_flags.stop, &mut |m, n| {
            output(Report::PerftMove {
                uci_move: m,
                nodes: n,
            })
        });
        self.count_job_done();
        match total {
            Some(total) => (self.output)(Report::PerftTotal(total)),
            None => (self.output)(Report::Note("perft stopped")),
        }
    }
}
