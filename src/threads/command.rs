//! The command thread's side of the search thread: [`SearchThread`] sends it jobs and
//! flips the flags of those sent, and never waits on a search. It keeps a list of the jobs
//! whose last line is not out yet, so `stop`, `ponderhit` and `isready` reach exactly the
//! jobs sent before them.

use std::collections::VecDeque;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use crossbeam_channel::{unbounded, Sender};

use super::{worker, Job, Progress, Queued, Reporter};
use crate::search::StopFlags;
use crate::tt::TranspositionTable;

/// A search, perft or bench handed to the search thread whose last line has not been
/// printed yet (as far as the UCI thread has looked).
struct Pending {
    /// Jobs are numbered 1, 2, ... in the order they were sent, which is the order they run.
    id: u64,
    /// `None` for bench, which `stop` does not end.
    flags: Option<Arc<StopFlags>>,
    /// A search with no end of its own (`go infinite`, or no depth, nodes, mate or clock).
    unbounded: bool,
    /// A `stop` was sent after it.
    stopped: bool,
}

pub struct SearchThread {
    jobs: Sender<Queued>,
    pending: VecDeque<Pending>,
    /// Jobs sent so far (the last one's id).
    sent: u64,
    /// Table changes sent.
    setups_sent: u64,
    /// `isready`s handed to the search thread to answer.
    readies_sent: u64,
    /// What the search thread has finished of what was sent.
    progress: Arc<Progress>,
    handle: Option<JoinHandle<()>>,
}

impl SearchThread {
    pub fn spawn(tt: Arc<TranspositionTable>, output: Reporter) -> SearchThread {
        let (jobs, inbox) = unbounded();
        let progress = Arc::new(Progress::default());
        let handle = worker::spawn(tt, output, progress.clone(), inbox);
        SearchThread {
            jobs,
            pending: VecDeque::new(),
            sent: 0,
            setups_sent: 0,
            readies_sent: 0,
            progress,
            handle: Some(handle),
        }
    }

    /// True from the moment a search, perft or bench is sent until the last one sent has
    /// finished (just before its last line is printed, so a client that answers that line
    /// at once finds the engine idle).
    pub fn is_busy(&self) -> bool {
        self.progress.jobs_done.load(Ordering::Acquire) < self.sent
    }

    /// Sends a search, perft or bench job: it runs once the jobs sent before it have
    /// ended. `pondering`: a `go ponder`, whose clock waits for `ponderhit`.
    pub fn start(&mut self, job: Job, pondering: bool) {
        self.forget_printed();
        // Bench has no flags: `stop` does not end it.
        let (stoppable, unbounded) = match &job {
            Job::Search {
                limits, infinite, ..
            } => (true, *infinite || !limits.is_bounded()),
            Job::Perft { .. } => (true, false),
            _ => (false, false),
        };
        let flags = stoppable.then(|| {
            let flags = StopFlags::default();
            flags.pondering.store(pondering, Ordering::Relaxed);
            Arc::new(flags)
        });
        self.sent += 1;
        self.pending.push_back(Pending {
            id: self.sent,
            flags: flags.clone(),
            unbounded,
            stopped: false,
        });
        let _ = self.jobs.send((job, flags));
    }

    /// Jobs that only change the worker's state. They run in turn with the searches: a
    /// change sent during a search applies when it (and any search sent before the
    /// change) has ended.
    pub fn send(&mut self, job: Job) {
        if job.is_setup() {
            self.setups_sent += 1;
        }
        let _ = self.jobs.send((job, None));
    }

    /// `isready`, after [`SearchThread::wait_stopped`]: true if `readyok` is due now.
    /// Otherwise the worker prints it once the table changes sent before are
    /// done, and the caller reads on meanwhile (a `quit` or `stop` is not held up). A
    /// change queued behind a search that has not ended does not hold up `readyok`
    /// (`isready` during a search is answered at once); `readyok`s come out in order.
    pub fn ready(&mut self) -> bool {
        self.forget_printed();
        let owed = self.readies_sent > self.progress.readies_printed.load(Ordering::Acquire);
        if self.is_busy() {
            // A job sent after the owed `isready`s is queued: the worker answers them
            // before it starts that job, within milliseconds.
            while self.progress.readies_printed.load(Ordering::Acquire) < self.readies_sent {
                std::thread::sleep(Duration::from_micros(200));
            }
            return true;
        }
        if !owed && self.progress.setups_done.load(Ordering::Acquire) == self.setups_sent {
            return true;
        }
        self.readies_sent += 1;
        let _ = self.jobs.send((Job::Ready, None));
        false
    }

    /// Drops the jobs whose last line is out from `pending`.
    fn forget_printed(&mut self) {
        let printed = self.progress.jobs_printed.load(Ordering::Acquire);
        while self.pending.front().is_some_and(|p| p.id <= printed) {
            self.pending.pop_front();
        }
    }

    /// `stop`: ends the running job and every job sent before this `stop` that waits
    /// behind it. Each still prints its answer (a waiting search after its first
    /// iteration, which takes microseconds); a job sent after the `stop` runs normally.
    /// Ending the waiting ones too is what a GUI needs: after `stop` it expects the engine
    /// to be idle, and a waiting `go infinite` left running would hold up every later `go`.
    pub fn stop(&mut self) {
        self.forget_printed();
        for job in &mut self.pending {
            if let Some(flags) = &job.flags {
                flags.stop.store(true, Ordering::Relaxed);
            }
            job.stopped = true;
        }
    }

    /// `ponderhit`: every search sent before it that is pondering, running or waiting,
    /// becomes a normal search whose clock starts now (or when it starts).
    pub fn ponderhit(&mut self) {
        self.forget_printed();
        for job in &self.pending {
            if let Some(flags) = &job.flags {
                flags.pondering.store(false, Ordering::Relaxed);
            }
        }
    }

    /// For `isready` after `stop`: waits until every job that a `stop` has ended has
    /// printed its last line, milliseconds after the `stop`, so a client that waits for
    /// `readyok` before its next `go` never takes a stopped search's `bestmove` for the
    /// new one's. A job sent after the last `stop` is not waited for, and neither is
    /// anything behind a bench, which `stop` does not end.
    pub fn wait_stopped(&mut self) {
        self.forget_printed();
        let Some(last) = self.pending.iter().rev().find(|job| job.stopped) else {
            return;
        };
        let last = last.id;
        if self
            .pending
            .iter()
            .any(|job| job.id <= last && job.flags.is_none())
        {
            return;
        }
        while self.progress.jobs_printed.load(Ordering::Acquire) < last {
            std::thread::sleep(Duration::from_micros(200));
        }
    }

    /// The end of the input: every job sent runs to its end and prints its answer, then
    /// the search thread ends. A search with no end of its own (`go infinite`, a `go
    /// ponder` still pondering, a `go` without limits) is stopped: nothing can stop it
    /// any more. Returns when the last answer has been printed.
    pub fn end_of_input(&mut self) {
        self.forget_printed();
        for job in &self.pending {
            if let Some(flags) = &job.flags {
                if job.unbounded || flags.pondering.load(Ordering::Relaxed) {
                    flags.stop.store(true, Ordering::Relaxed);
                }
            }
        }
        let _ = self.jobs.send((Job::Finish, None));
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }

    /// `quit` read from stdin: every search and perft is stopped, but a bench sent before
    /// it runs to its last line (`stop` does not end a bench either), as in Stockfish, whose
    /// `bench` holds up its command loop: `printf 'bench\nquit\n' | basalt` prints the
    /// bench. Returns at once if no bench is waiting or running, else once it has printed.
    pub fn quit_after_bench(&mut self) {
        self.stop();
        if self.pending.iter().any(|job| job.flags.is_none()) {
            self.end_of_input();
        }
    }

    /// Stops every job and ends the search thread.
    pub fn quit(&mut self) {
        self.stop();
        let _ = self.jobs.send((Job::Quit, None));
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
