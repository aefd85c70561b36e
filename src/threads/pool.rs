//! The Lazy SMP helpers: `Threads - 1` persistent threads, each with its own `Searcher`
//! (histories, stack), sharing only the transposition table. A helper waits on its job
//! channel between searches; the search thread hands every helper the same root, and
//! stops them all through one flag when it has decided. The pool grows one helper at a
//! time (the search thread adds them between jobs) and retires helpers without joining
//! them.
//!
//! A helper whose search panics catches it, starts afresh for the next search and tells the
//! search thread what it said; the search goes on without it.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::thread::JoinHandle;

use crossbeam_channel::{unbounded, Receiver, Sender};

use super::priority::lower_helper_priority;
use super::{contained, SEARCH_STACK_BYTES};
use crate::nnue::Network;
use crate::position::Position;
use crate::search::{Counters, Iteration, Limits, SearchJob, Searcher, StopFlags};
use crate::syzygy::Tablebases;
use crate::tt::TranspositionTable;

/// One search as every helper is given it.
#[derive(Clone)]
pub struct HelperSearch {
    /// Shared: a helper copies it on its own thread, so the main thread does not spend
    /// a copy of a long game per helper before it can search (or answer `stop`).
    pub position: Arc<Position>,
    pub limits: Limits,
    pub tablebases: Tablebases,
    pub network: Option<Arc<Network>>,
    pub tt: Arc<TranspositionTable>,
    /// The job's flags, raised by `stop`.
    pub job_flags: Arc<StopFlags>,
}

/// One search's counters as the main thread holds them: where each helper given the search
/// publishes its nodes and tablebase hits (`Counters`: one slot per thread, new for every
/// search).
pub struct HelperCounters {
    counters: Counters,
    /// How many helpers were given the search (the tests check that a stopped one is
    /// given to none).
    #[cfg_attr(not(test), allow(dead_code))]
    given: usize,
}

impl HelperCounters {
    /// The counters for the main thread's own search: its slot among the helpers'.
    pub fn for_main_thread(&self) -> Counters {
        self.counters.clone()
    }

    /// Adds the helpers' nodes and tablebase hits so far to one of the main thread's.
    pub fn add_to(&self, iteration: &mut Iteration) {
        iteration.nodes += self.counters.others_nodes();
        iteration.tbhits += self.counters.others_tb_hits();
    }

    pub fn nodes(&self) -> u64 {
        self.counters.others_nodes()
    }
}

/// What a helper thread is asked to do.
enum HelperJob {
    Search {
        search: HelperSearch,
        /// The helpers' stop flag for this search, raised by the main thread when it has
        /// decided.
        helpers_stop: Arc<StopFlags>,
        counters: Counters,
    },
    ClearHistory,
}

pub struct HelperPool {
    helpers: Vec<Helper>,
    /// `Threads - 1`: the helpers the pool grows to.
    wanted: usize,
    /// The current search's stop flag for the helpers: raised when the main thread has
    /// finished.
    stop: Arc<StopFlags>,
    /// What helpers whose search panicked said, for the search thread to pass on: each
    /// helper holds a sender.
    faults: (Sender<String>, Receiver<String>),
}

impl HelperPool {
    pub fn new() -> HelperPool {
        HelperPool {
            helpers: Vec::new(),
            wanted: 0,
            stop: Arc::new(StopFlags::default()),
            faults: unbounded(),
        }
    }

    /// The threads that search, the main thread included, once the pool is complete.
    pub fn threads(&self) -> usize {
        self.wanted + 1
    }

    pub fn is_complete(&self) -> bool {
        self.helpers.len() >= self.wanted
    }

    /// `Threads`: retires the helpers beyond the new count at once; the pool grows to it
    /// with [`HelperPool::grow`].
    pub fn set_threads(&mut self, threads: usize) {
        self.wanted = threads.saturating_sub(1);
        let retired = self.helpers.split_off(self.wanted.min(self.helpers.len()));
        // Not joined: each ends once it has been scheduled, freeing its memory
        // (`memory::map_large_blocks`).
        retired.into_iter().for_each(Helper::retire);
    }

    /// Starts one more helper. When the system will start no more threads, keeps the pool
    /// there is and returns what to tell the user.
    pub fn grow(&mut self) -> Option<String> {
        let id = self.helpers.len() + 1;
        match Helper::spawn(id, self.faults.0.clone()) {
            Some(helper) => {
                self.helpers.push(helper);
                None
            }
            None => {
                self.wanted = self.helpers.len();
                Some(format!("cannot start search thread {}; using {id}", id + 1))
            }
        }
    }

    /// `ucinewgame`: every helper forgets its histories.
    pub fn clear_histories(&self) {
        for helper in &self.helpers {
            let _ = helper.jobs.send(HelperJob::ClearHistory);
        }
    }

    /// Hands the search to every helper, under a new stop flag and with new counters.
    /// Handing a search to a thousand helpers takes tens of milliseconds on two cores:
    /// after `stop` the rest are left out, as they would be stopped at once anyway.
    pub fn start(&mut self, search: &HelperSearch) -> HelperCounters {
        self.stop = Arc::new(StopFlags::default());
        let counters = Counters::new(self.helpers.len() + 1);
        let mut given = 0;
        for helper in &self.helpers {
            if search.job_flags.stop.load(Ordering::Relaxed) {
                break;
            }
            given += 1;
            let _ = helper.jobs.send(HelperJob::Search {
                search: search.clone(),
                helpers_stop: self.stop.clone(),
                counters: counters.for_thread(given),
            });
        }
        HelperCounters { counters, given }
    }

    /// The main thread has decided: the helpers stop.
    pub fn stop(&self) {
        self.stop.stop.store(true, Ordering::Relaxed);
    }

    /// What the helpers whose search panicked since the last call said, one line each.
    pub fn faults(&self) -> impl Iterator<Item = String> + '_ {
        self.faults.1.try_iter()
    }

    /// The process is ending: the helpers are stopped and left to wind down (or be ended
    /// with the process) rather than joined, so `quit` does not wait for them.
    pub fn retire(&mut self) {
        self.stop();
        self.helpers.clear();
    }
}

struct Helper {
    jobs: Sender<HelperJob>,
    handle: Option<JoinHandle<()>>,
}

impl Helper {
    /// `None` if the system will not start another thread. `faults`: where it says that
    /// its search panicked.
    fn spawn(id: usize, faults: Sender<String>) -> Option<Helper> {
        let (jobs, inbox) = unbounded::<HelperJob>();
        let searcher = Searcher::helper(id);
        let (lowered, priority_lowered) = crossbeam_channel::bounded::<()>(1);
        let handle = std::thread::Builder::new()
            .name(format!("helper-{id}"))
            .stack_size(SEARCH_STACK_BYTES)
            .spawn(move || {
                lower_helper_priority();
                let _ = lowered.send(());
                serve(id, searcher, &inbox, &faults);
            })
            .ok()?;
        // A new thread starts at the search thread's priority. Growing the pool by a
        // thousand without waiting here left a thousand normal-priority threads queued
        // for a first time slice, and the search thread waited seconds among them
        // before it could hand out the search (or see `stop`).
        let _ = priority_lowered.recv();
        Some(Helper {
            jobs,
            handle: Some(handle),
        })
    }

    /// Asks the helper to end once it has unwound its search, without waiting for it: a
    /// helper at idle priority may not run for a long time on a busy machine, and joining
    /// a thousand of them took seconds. Dropping it does that: `Drop` detaches the thread,
    /// then the job channel closes, which ends the helper's loop.
    fn retire(self) {}
}

impl Drop for Helper {
    /// Detaches the thread before the job channel closes. A detached thread frees its own
    /// stack as it exits; glibc's `pthread_detach` still reads the thread's descriptor,
    /// which lives on that stack, after marking it detached, so detaching a thread that is
    /// already on its way out raced with that free (a SIGSEGV in `pthread_detach` seen in
    /// the option-churn fuzz run). Here the thread is still waiting on its channel or
    /// searching: it can only end after this, once `jobs` is dropped.
    fn drop(&mut self) {
        drop(self.handle.take());
    }
}

/// A helper's life: one job at a time until the pool drops its channel. Its searcher lets
/// go of each search's table when done, so a resize can free the old table without asking
/// the helpers.
fn serve(id: usize, mut searcher: Searcher, inbox: &Receiver<HelperJob>, faults: &Sender<String>) {
    // Kept from search to search so that copying the root does not allocate: an
    // idle-priority thread that the scheduler stops inside the allocator holds locks that
    // the normal-priority threads may be waiting for.
    let mut root = Position::default();
    while let Ok(job) = inbox.recv() {
        match job {
            HelperJob::Search {
                search,
                helpers_stop,
                counters,
            } => {
                let HelperSearch {
                    position,
                    limits,
                    tablebases,
                    network,
                    tt,
                    job_flags,
                } = search;
                let job = SearchJob {
                    tablebases,
                    network,
                    flags: helpers_stop,
                    job_flags: Some(job_flags),
                    counters,
                    ages_table: false,
                    ..SearchJob::new(tt, limits)
                };
                root.clone_from(&position);
                drop(position);
                // A panic ends this search only. The searcher and the root are left
                // mid-search (a line half made, a search's table held), so both start
                // afresh; the next search finds the helper as a new one.
                let searched =
                    contained(|| searcher.iterative_deepening(&mut root, job, &mut |_| {}));
                if let Err(message) = searched {
                    searcher = Searcher::helper(id);
                    root = Position::default();
                    let _ = faults.send(format!(
                        "helper thread {id} panicked: {message}; the search went on without it"
                    ));
                }
            }
            HelperJob::ClearHistory => searcher.clear(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn search_on(tt: &Arc<TranspositionTable>, job_flags: Arc<StopFlags>) -> HelperSearch {
        HelperSearch {
            position: Arc::new(Position::default()),
            limits: Limits {
                depth: Some(1),
                ..Limits::default()
            },
            tablebases: Tablebases::default(),
            network: None,
            tt: tt.clone(),
            job_flags,
        }
    }

    #[test]
    fn the_pool_grows_to_the_threads_wanted_and_shrinks_at_once() {
        let mut pool = HelperPool::new();
        assert!(pool.is_complete() && pool.threads() == 1);
        pool.set_threads(3);
        assert_eq!(pool.threads(), 3);
        while !pool.is_complete() {
            assert_eq!(pool.grow(), None);
        }
        assert_eq!(pool.helpers.len(), 2);
        pool.set_threads(2);
        assert!(pool.is_complete() && pool.helpers.len() == 1);
        pool.retire();
        assert!(pool.helpers.is_empty() && pool.stop.stop.load(Ordering::Relaxed));
    }

    #[test]
    fn a_stopped_job_is_handed_to_no_helper() {
        let idle = Arc::new(TranspositionTable::new(1));
        let mut pool = HelperPool::new();
        pool.set_threads(2);
        pool.grow();
        let stopped = Arc::new(StopFlags::default());
        stopped.stop.store(true, Ordering::Relaxed);
        assert_eq!(pool.start(&search_on(&idle, stopped)).given, 0);

        let counters = pool.start(&search_on(&idle, Arc::new(StopFlags::default())));
        assert_eq!(counters.given, 1);
        pool.retire();
    }
}
