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
//! thread alone decides when the search ends and which move to play; `go nodes` counts
//! the nodes of all threads, which each publishes in the search's `Counters`, and a helper
//! also stops by itself once that total reaches the limit. The main thread raises the
//! helpers' stop flag and prints `bestmove` without waiting for them: a helper that the
//! scheduler has not run for a while (more threads than cores) must not hold up the move
//! or the clock.
//! Each search gives the helpers a fresh stop flag, so a helper still unwinding the last
//! search cannot miss the stop, and picks up the next search from its queue when done.
//!
//! A panic in a search (the main thread's or a helper's), a perft or a bench ends that job
//! only: it still gets its last line, `bestmove` a legal move, after an `info string` with
//! what the panic said, and the threads take the next job (docs/reliability.md, "A fault
//! stays contained").
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
//!
//! By role, one file each:
//! - `command.rs`: [`SearchThread`], the command thread's side, which sends jobs and flips
//!   flags and never waits on a search;
//! - `worker.rs`: the search thread's job loop, which hands each [`Job`] to one method;
//! - `pool.rs`: the Lazy SMP helpers;
//! - `table.rs`: the hash table's life (its size, resizes and clears, the table a search
//!   gets meanwhile);
//! - `ready.rs`: `isready` on the search thread;
//! - `tablebases.rs`: the Syzygy tables the search thread holds;
//! - `upkeep.rs`: the thread that allocates and clears tables and scans Syzygy paths;
//! - `priority.rs`, `memory.rs`: scheduling priorities, and giving retired helpers' memory
//!   back.

use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::AtomicU64;
use std::sync::Arc;

use shakmaty::CastlingMode;

use crate::nnue::Network;
use crate::position::Position;
use crate::search::{CurrentMove, Iteration, Limits, SearchResult, StopFlags};

mod command;
mod memory;
mod pool;
mod priority;
mod ready;
mod table;
mod tablebases;
mod upkeep;
mod worker;
pub use command::SearchThread;
pub use priority::{lift_helper_priority, lower_helper_priority, shorten_time_slice};

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

/// Runs `work` and catches a panic in it: `Err` then holds what the panic said, on one line
/// (it goes out as an `info string`). The callers make sure that what the panic may have
/// left half done is not used again.
fn contained<T>(work: impl FnOnce() -> T) -> Result<T, String> {
    panic::catch_unwind(AssertUnwindSafe(work)).map_err(|payload| {
        let text = payload
            .downcast_ref::<&str>()
            .copied()
            .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
            .unwrap_or("a panic without a message");
        text.split_whitespace().collect::<Vec<_>>().join(" ")
    })
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
