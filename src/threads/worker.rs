//! The search thread's job loop. It waits on its inbox, on the upkeep thread's answers and
//! on the deadline of a `readyok` owed, whichever comes first, and hands each job to one
//! method. Between jobs it grows the helper pool one thread at a time. It owns the main
//! thread's `Searcher`, the hash table, the helpers and the Syzygy tables, so none of them
//! needs a lock.
//!
//! A panic in a search, a perft or a bench ends that job only: the job still gets its last
//! line (`bestmove` a legal move), after an `info string` with what the panic said, and the
//! loop takes the next job. What the panic may have left half done (the main thread's
//! searcher) is replaced; a helper does the same for itself (pool.rs).

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crossbeam_channel::{select, Receiver, RecvTimeoutError, TryRecvError};
use shakmaty::Move;

use super::pool::{HelperCounters, HelperPool, HelperSearch};
use super::ready::Readiness;
use super::table::HashTable;
use super::tablebases::SyzygyTables;
use super::upkeep::{Done, Task, Upkeep};
use super::{
    contained, memory, Job, Progress, Queued, Report, Reporter, SearchSetup, SEARCH_STACK_BYTES,
};
use crate::nnue::Network;
use crate::perft;
use crate::position::Position;
use crate::search::{Iteration, Limits, SearchJob, SearchResult, Searcher, StopFlags};
use crate::tt::{Bound, TranspositionTable};

/// Starts the search thread on `inbox`; it ends at `Job::Quit`, `Job::Finish` or when the
/// sender is dropped.
pub fn spawn(
    tt: Arc<TranspositionTable>,
    output: Reporter,
    progress: Arc<Progress>,
    inbox: Receiver<Queued>,
) -> JoinHandle<()> {
    let job_flags = Arc::new(StopFlags::default());
    memory::map_large_blocks();
    let upkeep = Upkeep::spawn();
    let worker = Worker {
        searcher: Searcher::new(),
        job_flags,
        progress: progress.clone(),
        output,
        pool: HelperPool::new(),
        table: HashTable::new(tt),
        ready: Readiness::new(progress),
        upkeep,
        syzygy: SyzygyTables::default(),
    };
    std::thread::Builder::new()
        .name("search".into())
        .stack_size(SEARCH_STACK_BYTES)
        .spawn(move || worker.run(inbox))
        .expect("cannot start the search thread")
}

/// A main-thread search's panic: its message, and the last iteration's best move shown.
struct Panicked {
    message: String,
    shown: Option<Move>,
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
                    position,
                    limits,
                    infinite,
                    debug,
                    setup,
                } => self.search(position, limits, infinite, debug, setup),
                Job::Perft { position, depth } => self.perft(position, depth),
                Job::Bench { depth, network } => self.bench(depth, network),
                Job::SetHash(mb) => self.set_hash(mb),
                Job::ClearHash => self.clear_hash(),
                Job::SetThreads(threads) => self.pool.set_threads(threads),
                Job::ClearHistory => self.clear_history(),
                Job::LoadTables { path, report } => {
                    self.upkeep.give(Task::LoadTables { path, report })
                }
                // Answered by `next_job` once the changes before it are done.
                Job::Ready => self.ready.owe(),
                Job::Finish => {
                    self.finish();
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

    /// `go`: the search, then its last lines and the move.
    fn search(
        &mut self,
        mut position: Box<Position>,
        limits: Limits,
        infinite: bool,
        debug: bool,
        setup: SearchSetup,
    ) {
        let show_wdl = setup.show_wdl;
        let mode = position.castling_mode();
        let result = self.run_search(&mut position, limits, infinite, setup);
        if debug {
            (self.output)(Report::Note(&self.searcher.stats().summary()));
        }
        // The last word before the move, whatever ended the search, unless it has just
        // been said.
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
    }

    /// The search itself: on the table and pool there are, with the helpers, until the
    /// main thread decides and (`go infinite`, pondering) `stop` or `ponderhit` lets the
    /// move out.
    fn run_search(
        &mut self,
        position: &mut Position,
        mut limits: Limits,
        infinite: bool,
        setup: SearchSetup,
    ) -> SearchResult {
        self.wait_for_setup(&mut limits);
        if let Some(note) = self.syzygy.take_note() {
            (self.output)(Report::Note(&note));
        }
        let tablebases = self.syzygy.for_search(setup.probe);
        let tt = self.table.for_search();
        // One generation per search, started before any thread of it stores an entry.
        tt.new_search();
        // Helpers have no clock of their own: the main thread stops them when it has
        // decided. They share its depth limit and `go nodes`, which counts the nodes of all
        // threads: each thread stops itself once the total reaches it, so the search ends
        // there even while the main thread waits for a core. Held to the end of the
        // search, so the helpers never free the shared root.
        let helper_search = HelperSearch {
            position: Arc::new(position.clone()),
            limits: Limits {
                depth: limits.depth,
                hard_nodes: limits.hard_nodes,
                search_moves: limits.search_moves.clone(),
                ..Limits::default()
            },
            tablebases: tablebases.clone(),
            network: setup.network.clone(),
            tt: tt.clone(),
            job_flags: self.job_flags.clone(),
        };
        let helpers = self.pool.start(&helper_search);
        let job = SearchJob {
            multipv: setup.multipv.max(1),
            strength: setup.strength,
            tablebases,
            network: setup.network,
            flags: self.job_flags.clone(),
            // Aged above, for all threads.
            ages_table: false,
            counters: helpers.for_main_thread(),
            ..SearchJob::new(tt, limits)
        };
        let mut result = self
            .search_main(position, job, &helpers, setup.show_wdl)
            .unwrap_or_else(|panicked| self.recover(panicked, &helper_search));
        // UCI: in `go infinite` and while pondering, `bestmove` waits for `stop`/`ponderhit`.
        while !self.job_flags.stop.load(Ordering::Relaxed)
            && (infinite || self.job_flags.pondering.load(Ordering::Relaxed))
        {
            std::thread::sleep(Duration::from_micros(500));
        }
        self.pool.stop();
        for fault in self.pool.faults() {
            (self.output)(Report::Note(&fault));
        }
        result.nodes += helpers.nodes();
        result
    }

    /// The main thread's search panicked: says so and plays the best move of the last
    /// iteration shown, or, if none was, the first legal move (of `searchmoves`, if one
    /// is). Its searcher was left mid-search (a line half made, the search's table held),
    /// so the next search gets a new one, with empty histories.
    fn recover(&mut self, panicked: Panicked, search: &HelperSearch) -> SearchResult {
        self.searcher = Searcher::new();
        let legal = search.position.legal_moves();
        let best_move = panicked.shown.or_else(|| {
            let wanted = &search.limits.search_moves;
            let first = wanted.iter().find(|m| legal.contains(m));
            first.or(legal.first()).copied()
        });
        let played = match (panicked.shown, best_move) {
            (Some(_), _) => "playing the best move found before it",
            (None, Some(_)) => "playing the first legal move",
            (None, None) => "no legal move",
        };
        let note = format!("search thread panicked: {}; {played}", panicked.message);
        (self.output)(Report::Note(&note));
        SearchResult {
            best_move,
            final_lines_shown: true,
            ..SearchResult::default()
        }
    }

    /// Completes the pool and the upkeep thread's work before the search, as long as its
    /// limits let it wait (`Limits::setup_wait`); the wait counts against its time.
    fn wait_for_setup(&mut self, limits: &mut Limits) {
        let waited = self.prepare(limits.setup_wait());
        limits.charge_setup_wait(waited, self.job_flags.pondering.load(Ordering::Relaxed));
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

    /// The main thread's iterative deepening, each iteration reported with the helpers'
    /// nodes and tablebase hits added, as are the search's last lines; the root move it
    /// searches announced a few seconds in. `Err` if it panicked.
    fn search_main(
        &mut self,
        position: &mut Position,
        job: SearchJob,
        helpers: &HelperCounters,
        show_wdl: bool,
    ) -> Result<SearchResult, Panicked> {
        let output = self.output.clone();
        let mode = position.castling_mode();
        let announce = self.output.clone();
        let job = SearchJob {
            on_root_move: Some(Box::new(move |current| {
                announce(Report::CurrentMove { current, mode })
            })),
            ..job
        };
        let mut shown = None;
        let searched = contained(|| {
            self.searcher
                .iterative_deepening(position, job, &mut |it: &Iteration| {
                    if it.multipv == 1 && it.bound == Bound::Exact {
                        shown = it.pv.first().copied().or(shown);
                    }
                    let mut it = it.clone();
                    helpers.add_to(&mut it);
                    output(Report::Iteration {
                        iteration: &it,
                        mode,
                        show_wdl,
                    })
                })
        });
        let mut result = searched.map_err(|message| Panicked { message, shown })?;
        for line in &mut result.final_lines {
            helpers.add_to(line);
        }
        Ok(result)
    }

    /// `go perft`: divide output, abandoned when `stop` arrives.
    fn perft(&mut self, mut position: Box<Position>, depth: u32) {
        let output = self.output.clone();
        let stop = &self.job_flags.stop;
        let total = contained(|| {
            perft::divide_until(&mut position, depth, stop, &mut |m, n| {
                output(Report::PerftMove {
                    uci_move: m,
                    nodes: n,
                })
            })
        });
        self.count_job_done();
        match total {
            Ok(Some(total)) => (self.output)(Report::PerftTotal(total)),
            Ok(None) => (self.output)(Report::Note("perft stopped")),
            Err(message) => (self.output)(Report::Note(&format!("perft panicked: {message}"))),
        }
        self.count_job_printed();
    }

    /// `bench`, on a searcher and tables of its own.
    fn bench(&mut self, depth: i32, network: Option<Arc<Network>>) {
        let output = self.output.clone();
        let report =
            contained(|| crate::bench::run(depth, network, &mut |l| output(Report::Note(&l))));
        self.count_job_done();
        match report {
            Ok(report) => (self.output)(Report::BenchTotal {
                nodes: report.nodes,
                nps: report.nps,
            }),
            Err(message) => (self.output)(Report::Note(&format!("bench panicked: {message}"))),
        }
        self.count_job_printed();
    }

    fn set_hash(&mut self, mb: usize) {
        self.table.ask_size(mb);
        self.start_resize();
    }

    fn clear_hash(&mut self) {
        if let Some(task) = self.table.start_clear(self.pool.threads()) {
            self.upkeep.give(task);
        }
    }

    fn clear_history(&mut self) {
        self.pool.clear_histories();
        self.searcher.clear();
    }

    /// The end of the input: answers the `isready`s still owed, once the table changes
    /// before them are done.
    fn finish(&mut self) {
        if self.ready.is_owed() {
            self.settle_setups();
            self.ready.answer(&self.output);
        }
    }

    fn add_helper(&mut self) {
        if let Some(note) = self.pool.grow() {
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
    /// next). The searchers have let go of the old table when their search ended.
    fn start_resize(&mut self) {
        if let Some(task) = self.table.start_resize(self.pool.threads()) {
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

    /// Marks the job finished. Called before a job's last line goes out: a client answers
    /// that line (`bestmove`, `Nodes searched`) at once, with an option change say, which
    /// must not find the worker still marked busy and be told it is deferred. Jobs are
    /// queued, so a new one cannot start before this one has printed its last line.
    /// Called exactly once per job and nowhere else: a second call would count the *next*
    /// job finished while it runs.
    fn count_job_done(&self) {
        self.progress.jobs_done.fetch_add(1, Ordering::Release);
    }

    /// The job's last line is out.
    fn count_job_printed(&self) {
        self.progress.jobs_printed.fetch_add(1, Ordering::Release);
    }
}
