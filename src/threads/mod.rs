//! The search threads: a persistent main worker that receives jobs from the UCI thread over
//! a channel, so the UCI thread never blocks on a search, and `Threads - 1` persistent
//! helpers for Lazy SMP. The main worker prints `info` and `bestmove` itself; the UCI thread
//! only flips the flags in `Control`.
//!
//! Lazy SMP: every helper searches the same root with its own histories and stack, sharing
//! only the transposition table, and odd helpers start one iteration deeper so the threads
//! spread over depths. Their results reach the main thread through the table. The main
//! thread alone decides when to stop and which move to play. It raises the helpers' stop
//! flag and prints `bestmove` without waiting for them: a helper that the scheduler has
//! not run for a while (more threads than cores) must not hold up the move or the clock.
//! Each search gives the helpers a fresh stop flag, so a helper still unwinding the last
//! search cannot miss the stop, and picks up the next search from its queue when done.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use crossbeam_channel::{unbounded, Receiver, Sender};

use crate::position::Position;
use crate::search::{Control, Iteration, Limits, SearchResult, Searcher};
use crate::syzygy::Tablebases;
use crate::tt::TranspositionTable;
use crate::uci::format;

mod priority;
pub use priority::{lift_helper_priority, lower_helper_priority, shorten_time_slice};

pub type Output = Arc<dyn Fn(&str) + Send + Sync>;

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
    },
    /// Switch every thread to this table; the acknowledgement is sent once no thread holds
    /// the old one any more.
    SetTable(Arc<TranspositionTable>, Sender<()>),
    /// Total search threads wanted (main thread included).
    SetThreads(usize),
    ClearHistory,
    Quit,
}

/// Per-search options from the UCI options.
#[derive(Clone, Default)]
pub struct SearchSetup {
    /// MultiPV lines (the main thread only; helpers search one line).
    pub multipv: usize,
    /// `wdl W D L` in `info` lines (UCI_ShowWDL).
    pub show_wdl: bool,
    /// `UCI_LimitStrength` with its `UCI_Elo`; `None` at full strength.
    pub strength: Option<crate::strength::StrengthLimit>,
    /// Tables and probing options, shared by every thread of this search.
    pub tablebases: Tablebases,
}

/// What a helper thread is asked to do.
enum HelperJob {
    Search {
        position: Box<Position>,
        limits: Limits,
        tablebases: Tablebases,
        /// This search's stop flag, raised by the main thread when it has decided.
        control: Arc<Control>,
    },
    SetTable(Arc<TranspositionTable>, Sender<()>),
    ClearHistory,
    Quit,
}

struct Helper {
    jobs: Sender<HelperJob>,
    nodes: Arc<AtomicU64>,
    tb_hits: Arc<AtomicU64>,
    handle: Option<JoinHandle<()>>,
}

/// Stack for search threads: deep recursion (MAX_PLY plies of search frames) needs more
/// than the default.
const SEARCH_STACK_BYTES: usize = 64 * 1024 * 1024;

impl Helper {
    fn spawn(id: usize, tt: Arc<TranspositionTable>) -> Helper {
        let (jobs, inbox) = unbounded::<HelperJob>();
        let mut searcher = Searcher::new(tt, Arc::new(Control::default()));
        searcher.helper_id = id;
        let nodes = searcher.node_counter.clone();
        let tb_hits = searcher.tb_hit_counter.clone();
        let handle = std::thread::Builder::new()
            .name(format!("helper-{id}"))
            .stack_size(SEARCH_STACK_BYTES)
            .spawn(move || {
                lower_helper_priority();
                while let Ok(job) = inbox.recv() {
                    match job {
                        HelperJob::Search {
                            mut position,
                            limits,
                            tablebases,
                            control,
                        } => {
                            searcher.tablebases = tablebases;
                            searcher.set_control(control);
                            searcher.search(&mut position, limits, &mut |_| {});
                        }
                        HelperJob::SetTable(tt, ack) => {
                            searcher.tt = tt;
                            let _ = ack.send(());
                        }
                        HelperJob::ClearHistory => searcher.clear(),
                        HelperJob::Quit => break,
                    }
                }
            })
            .expect("cannot start a helper thread");
        Helper {
            jobs,
            nodes,
            tb_hits,
            handle: Some(handle),
        }
    }

    fn quit(&mut self) {
        let _ = self.jobs.send(HelperJob::Quit);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

pub struct SearchThread {
    jobs: Sender<Job>,
    pub control: Arc<Control>,
    busy: Arc<AtomicBool>,
    handle: Option<JoinHandle<()>>,
}

impl SearchThread {
    pub fn spawn(tt: Arc<TranspositionTable>, output: Output) -> SearchThread {
        let (jobs, inbox) = unbounded();
        let control = Arc::new(Control::default());
        let busy = Arc::new(AtomicBool::new(false));
        let worker = Worker {
            searcher: Searcher::new(tt, control.clone()),
            control: control.clone(),
            busy: busy.clone(),
            output,
            helpers: Vec::new(),
            helper_control: Arc::new(Control::default()),
        };
        let handle = std::thread::Builder::new()
            .name("search".into())
            .stack_size(SEARCH_STACK_BYTES)
            .spawn(move || worker.run(inbox))
            .expect("cannot start the search thread");
        SearchThread {
            jobs,
            control,
            busy,
            handle: Some(handle),
        }
    }

    /// True from the moment a job is submitted until its last line has been printed.
    pub fn is_busy(&self) -> bool {
        self.busy.load(Ordering::Acquire)
    }

    /// Starts a search, perft or bench job. The caller checks `is_busy` first.
    pub fn start(&self, job: Job, pondering: bool) {
        self.control.stop.store(false, Ordering::Relaxed);
        self.control.pondering.store(pondering, Ordering::Relaxed);
        self.busy.store(true, Ordering::Release);
        let _ = self.jobs.send(job);
    }

    /// Jobs that only change the worker's state (run between searches).
    pub fn send(&self, job: Job) {
        let _ = self.jobs.send(job);
    }

    /// Makes every search thread use `tt`, returning once none holds its old table, so
    /// the old table's memory is free when this returns.
    pub fn set_table(&self, tt: Arc<TranspositionTable>) {
        let (ack, switched) = crossbeam_channel::bounded(1);
        if self.jobs.send(Job::SetTable(tt, ack)).is_ok() {
            let _ = switched.recv();
        }
    }

    pub fn stop(&self) {
        self.control.stop.store(true, Ordering::Relaxed);
    }

    pub fn stop_requested(&self) -> bool {
        self.control.stop.load(Ordering::Relaxed)
    }

    pub fn ponderhit(&self) {
        self.control.pondering.store(false, Ordering::Relaxed);
    }

    /// Waits until the current job (if any) has finished.
    pub fn wait(&self) {
        while self.is_busy() {
            std::thread::sleep(Duration::from_micros(200));
        }
    }

    pub fn quit(&mut self) {
        self.stop();
        let _ = self.jobs.send(Job::Quit);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

impl Drop for SearchThread {
    fn drop(&mut self) {
        self.quit();
    }
}

struct Worker {
    searcher: Searcher,
    control: Arc<Control>,
    busy: Arc<AtomicBool>,
    output: Output,
    helpers: Vec<Helper>,
    /// The current search's stop flag for the helpers: raised when the main thread has
    /// finished.
    helper_control: Arc<Control>,
}

impl Worker {
    fn run(mut self, inbox: Receiver<Job>) {
        while let Ok(job) = inbox.recv() {
            match job {
                Job::Search {
                    mut position,
                    limits,
                    infinite,
                    debug,
                    setup,
                } => {
                    let result = self.search(&mut position, limits, infinite, setup);
                    if debug {
                        (self.output)(&format!("info string {}", self.searcher.stats.summary()));
                    }
                    self.idle();
                    (self.output)(&format::bestmove(position.castling_mode(), &result));
                    continue;
                }
                Job::Perft {
                    mut position,
                    depth,
                } => {
                    self.perft(&mut position, depth);
                    continue;
                }
                Job::Bench { depth } => {
                    let output = self.output.clone();
                    let report = crate::bench::run(depth, &mut |line| {
                        output(&format!("info string {line}"))
                    });
                    self.idle();
                    (self.output)(&format!("{} nodes {} nps", report.nodes, report.nps));
                    continue;
                }
                Job::SetTable(tt, ack) => {
                    let (helper_ack, helpers_switched) = unbounded();
                    for h in &self.helpers {
                        let _ = h
                            .jobs
                            .send(HelperJob::SetTable(tt.clone(), helper_ack.clone()));
                    }
                    for _ in &self.helpers {
                        let _ = helpers_switched.recv();
                    }
                    self.searcher.tt = tt;
                    let _ = ack.send(());
                    continue;
                }
                Job::SetThreads(threads) => {
                    self.set_helpers(threads.saturating_sub(1));
                    continue;
                }
                Job::ClearHistory => {
                    for h in &self.helpers {
                        let _ = h.jobs.send(HelperJob::ClearHistory);
                    }
                    self.searcher.clear();
                    continue;
                }
                Job::Quit => break,
            }
        }
        // The process is ending: helpers whose stop flag is up are left to wind down (or be
        // ended with the process) rather than joined, so `quit` does not wait for them.
        self.helper_control.stop.store(true, Ordering::Relaxed);
        self.helpers.clear();
        self.busy.store(false, Ordering::Release);
    }

    /// Replaces the helper threads by `count` fresh ones (joined and freed first).
    fn set_helpers(&mut self, count: usize) {
        if count == self.helpers.len() {
            return;
        }
        for h in &mut self.helpers {
            h.quit();
        }
        self.helpers = (1..=count)
            .map(|id| Helper::spawn(id, self.searcher.tt.clone()))
            .collect();
    }

    fn helper_nodes(&self) -> u64 {
        self.helpers
            .iter()
            .map(|h| h.nodes.load(Ordering::Relaxed))
            .sum()
    }

    /// Marks the job finished. Called before a job's last line goes out: a client answers
    /// that line (`bestmove`, `Nodes searched`) with its next `go` at once, and that `go`
    /// must not find the worker still marked busy. Jobs are queued, so a new one cannot
    /// start before this one has printed its last line. Called exactly once per job and
    /// nowhere else: a second, later store could mark the *next* job idle while it runs.
    fn idle(&self) {
        self.busy.store(false, Ordering::Release);
    }

    fn search(
        &mut self,
        position: &mut Position,
        limits: Limits,
        infinite: bool,
        setup: SearchSetup,
    ) -> SearchResult {
        // Helpers search without limits of their own: the main thread stops them.
        self.helper_control = Arc::new(Control::default());
        for h in &self.helpers {
            h.nodes.store(0, Ordering::Relaxed);
            let helper_limits = Limits {
                depth: limits.depth,
                search_moves: limits.search_moves.clone(),
                ..Limits::default()
            };
            h.tb_hits.store(0, Ordering::Relaxed);
            let _ = h.jobs.send(HelperJob::Search {
                position: Box::new(position.clone()),
                limits: helper_limits,
                tablebases: setup.tablebases.clone(),
                control: self.helper_control.clone(),
            });
        }
        let output = self.output.clone();
        let mode = position.castling_mode();
        let helpers: Vec<(Arc<AtomicU64>, Arc<AtomicU64>)> = self
            .helpers
            .iter()
            .map(|h| (h.nodes.clone(), h.tb_hits.clone()))
            .collect();
        self.searcher.multipv = setup.multipv.max(1);
        self.searcher.tablebases = setup.tablebases;
        self.searcher.strength = setup.strength;
        let show_wdl = setup.show_wdl;
        let mut result = self
            .searcher
            .search(position, limits, &mut |it: &Iteration| {
                let mut it = it.clone();
                for (nodes, tb_hits) in &helpers {
                    it.nodes += nodes.load(Ordering::Relaxed);
                    it.tbhits += tb_hits.load(Ordering::Relaxed);
                }
                output(&format::info(mode, &it, show_wdl))
            });
        // UCI: in `go infinite` and while pondering, `bestmove` waits for `stop`/`ponderhit`.
        while !self.control.stop.load(Ordering::Relaxed)
            && (infinite || self.control.pondering.load(Ordering::Relaxed))
        {
            std::thread::sleep(Duration::from_micros(500));
        }
        self.helper_control.stop.store(true, Ordering::Relaxed);
        result.nodes += self.helper_nodes();
        result
    }

    /// `go perft`: divide output, abandoned when `stop` arrives.
    fn perft(&mut self, position: &mut Position, depth: u32) {
        let mut total = 0;
        for m in position.legal_moves() {
            if self.control.stop.load(Ordering::Relaxed) {
                self.idle();
                (self.output)("info string perft stopped");
                return;
            }
            let uci = position.to_uci(m);
            position.make_move(m);
            let n = if depth <= 1 {
                1
            } else {
                match perft_stoppable(position, depth - 1, &self.control.stop) {
                    Some(n) => n,
                    None => {
                        self.idle();
                        (self.output)("info string perft stopped");
                        return;
                    }
                }
            };
            position.unmake_move();
            total += n;
            (self.output)(&format!("{uci}: {n}"));
        }
        self.idle();
        (self.output)("");
        (self.output)(&format!("Nodes searched: {total}"));
    }
}

fn perft_stoppable(pos: &mut Position, depth: u32, stop: &AtomicBool) -> Option<u64> {
    if depth <= 1 {
        return Some(pos.legal_moves().len() as u64);
    }
    if depth >= 3 && stop.load(Ordering::Relaxed) {
        return None;
    }
    let mut total = 0;
    for m in pos.legal_moves() {
        pos.make_move(m);
        let n = perft_stoppable(pos, depth - 1, stop);
        pos.unmake_move();
        total += n?;
    }
    Some(total)
}
