//! What one search is given: its table, limits, options, stop flags and where it reports.
//! The thread layer, datagen, bench and the tests build one [`SearchJob`] per search and
//! hand it to `Searcher::iterative_deepening`; the searcher keeps it for that search only.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, LazyLock};

use super::skill::StrengthLimit;
use super::{CurrentMove, Limits, SearchConfig, StopFlags};
use crate::nnue::Network;
use crate::syzygy::Tablebases;
use crate::tt::TranspositionTable;

/// Where the threads of one search publish their nodes and tablebase hits, each in a slot
/// of its own, every `CLOCK_CHECK_INTERVAL` nodes and when it ends: the main thread reports
/// the sums over all threads, and a node limit counts them all (`go nodes` with `Threads`
/// above 1 stops at the total, as in Stockfish). Made anew for every search, so that a
/// helper still unwinding the last one cannot add its count to this one's.
#[derive(Clone)]
pub struct Counters {
    slots: Arc<[Slot]>,
    /// The slot this thread writes; it only reads the others.
    own: usize,
}

/// One thread's counts, on a cache line of their own: a thread's stores then never evict
/// the line another thread writes.
#[derive(Default)]
#[repr(align(64))]
struct Slot {
    nodes: AtomicU64,
    tb_hits: AtomicU64,
}

impl Counters {
    /// The counters of a search by `threads` threads, as the main thread (slot 0) holds
    /// them; [`Counters::for_thread`] gives each other thread its own.
    pub fn new(threads: usize) -> Counters {
        Counters {
            slots: (0..threads.max(1)).map(|_| Slot::default()).collect(),
            own: 0,
        }
    }

    /// The same search's counters as thread `index` (0 is the main thread) holds them.
    pub fn for_thread(&self, index: usize) -> Counters {
        assert!(index < self.slots.len(), "no slot for thread {index}");
        Counters {
            slots: self.slots.clone(),
            own: index,
        }
    }

    /// This thread's counts so far.
    pub(super) fn publish(&self, nodes: u64, tb_hits: u64) {
        let own = &self.slots[self.own];
        own.nodes.store(nodes, Ordering::Relaxed);
        own.tb_hits.store(tb_hits, Ordering::Relaxed);
    }

    /// The nodes the other threads have published.
    pub fn others_nodes(&self) -> u64 {
        self.others()
            .map(|slot| slot.nodes.load(Ordering::Relaxed))
            .sum()
    }

    /// The tablebase hits the other threads have published.
    pub fn others_tb_hits(&self) -> u64 {
        self.others()
            .map(|slot| slot.tb_hits.load(Ordering::Relaxed))
            .sum()
    }

    fn others(&self) -> impl Iterator<Item = &Slot> {
        let own = self.own;
        self.slots
            .iter()
            .enumerate()
            .filter(move |&(index, _)| index != own)
            .map(|(_, slot)| slot)
    }
}

impl Default for Counters {
    /// A search by one thread.
    fn default() -> Counters {
        Counters::new(1)
    }
}

/// One search as a searcher is given it.
pub struct SearchJob {
    pub tt: Arc<TranspositionTable>,
    pub limits: Limits,
    pub config: SearchConfig,
    /// How many best root moves to search and report (MultiPV); line 1 is the one played.
    pub multipv: usize,
    /// `UCI_LimitStrength`: play weaker by a node budget and a random pick among the best
    /// few root moves.
    pub strength: Option<StrengthLimit>,
    /// Syzygy tables and probing options.
    pub tablebases: Tablebases,
    /// The network that evaluates positions; `None` for the hand-crafted evaluation.
    pub network: Option<Arc<Network>>,
    /// The stop and ponder flags this search obeys: the job's for the main thread, the
    /// helpers' own for a helper (raised when the main thread has decided).
    pub flags: Arc<StopFlags>,
    /// A helper also obeys the job's flags, which the UCI thread raises: after `stop` it
    /// then yields the core at once instead of searching on until the main thread has
    /// unwound and told it to stop.
    pub job_flags: Option<Arc<StopFlags>>,
    pub counters: Counters,
    /// Told, once the search has run for `CURRMOVE_AFTER`, of the root move it searches
    /// and then of each one as it starts on it; `None` (helpers, bench, datagen) tells
    /// nobody.
    pub on_root_move: Option<Box<dyn FnMut(CurrentMove) + Send>>,
    /// Whether the search starts a new table generation. A thread pool starts it once for
    /// all its threads: a helper that the scheduler starts late would otherwise age the
    /// entries the others stored in this very search, making them the first victims.
    pub ages_table: bool,
}

impl SearchJob {
    /// A search of `tt` within `limits`, everything else as `go` with no options set: one
    /// line at full strength, no tablebases, the hand-crafted evaluation, its own flags.
    pub fn new(tt: Arc<TranspositionTable>, limits: Limits) -> SearchJob {
        SearchJob {
            tt,
            limits,
            config: SearchConfig::default(),
            multipv: 1,
            strength: None,
            tablebases: Tablebases::default(),
            network: None,
            flags: Arc::new(StopFlags::default()),
            job_flags: None,
            counters: Counters::default(),
            on_root_move: None,
            ages_table: true,
        }
    }

    /// What a searcher holds between searches: nothing of the last one, so that it keeps
    /// no hold on a table a resize has to free, nor on tablebases or a net replaced since.
    pub(super) fn none() -> SearchJob {
        static NO_TABLE: LazyLock<Arc<TranspositionTable>> =
            LazyLock::new(|| Arc::new(TranspositionTable::new(1)));
        SearchJob::new(NO_TABLE.clone(), Limits::default())
    }
}
