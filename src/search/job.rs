//! What one search is given: its table, limits, options, stop flags and where it reports.
//! The thread layer, datagen, bench and the tests build one [`SearchJob`] per search and
//! hand it to `Searcher::iterative_deepening`; the searcher keeps it for that search only.

use std::sync::atomic::AtomicU64;
use std::sync::{Arc, LazyLock};

use super::skill::StrengthLimit;
use super::{CurrentMove, Limits, SearchConfig, StopFlags};
use crate::nnue::Network;
use crate::syzygy::Tablebases;
use crate::tt::TranspositionTable;

/// Where a search thread publishes its nodes and tablebase hits every few hundred
/// microseconds, so that the main thread can report the sums over all threads.
#[derive(Clone, Default)]
pub struct Counters {
    pub nodes: Arc<AtomicU64>,
    pub tb_hits: Arc<AtomicU64>,
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
