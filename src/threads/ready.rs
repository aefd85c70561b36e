//! `isready` on the search thread. The command thread answers `isready` itself when nothing
//! it sent is unfinished ([`super::SearchThread::ready`]); otherwise it hands the question
//! here, and the search thread prints `readyok` once the table changes taken from its queue
//! are done, or once [`READY_PATIENCE`] has passed, whichever comes first. New helpers are
//! not waited for: each waits for its priority to drop before the next starts (see
//! `Helper::spawn` in pool.rs), about 10 ms on a loaded two-core machine, so a pool of a
//! thousand would hold `readyok` for seconds; the pool grows between jobs as before, and
//! a search on the clock waits for it at most a quarter of its soft limit.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::{Progress, Report, Reporter};

/// The longest `isready` waits for table changes. A GUI gives up on an engine
/// that does not answer `isready` in time (cutechess-cli forfeits the game after 15 s), and
/// on a virtual machine whose host must first back the memory, a table of some GB took
/// longer than that (docs/reliability.md). Past this, `readyok` goes out after an `info
/// string` saying what is not ready, and searches use what is until the rest is.
const READY_PATIENCE: Duration = Duration::from_secs(5);

pub struct Readiness {
    /// Where the table changes done and the `readyok`s printed are published.
    progress: Arc<Progress>,
    /// Table changes taken from the queue; published whenever all of them are done.
    setups_received: u64,
    /// `isready`s taken from the queue and not answered yet.
    owed: u64,
    /// When the oldest `readyok` owed is due whatever is not ready (`READY_PATIENCE`).
    deadline: Option<Instant>,
}

impl Readiness {
    pub fn new(progress: Arc<Progress>) -> Readiness {
        Readiness {
            progress,
            setups_received: 0,
            owed: 0,
            deadline: None,
        }
    }

    /// A table change has been taken from the queue.
    pub fn setup_received(&mut self) {
        self.setups_received += 1;
    }

    /// An `isready` has been taken from the queue.
    pub fn owe(&mut self) {
        if self.owed == 0 {
            self.deadline = Some(Instant::now() + READY_PATIENCE);
        }
        self.owed += 1;
    }

    pub fn is_owed(&self) -> bool {
        self.owed > 0
    }

    /// When the oldest `readyok` owed is due whatever is not ready.
    pub fn deadline(&self) -> Option<Instant> {
        self.deadline
    }

    /// Prints the `readyok`s owed.
    pub fn answer(&mut self, output: &Reporter) {
        self.deadline = None;
        while self.owed > 0 {
            output(Report::Ready);
            self.owed -= 1;
            self.progress
                .readies_printed
                .fetch_add(1, Ordering::Release);
        }
    }

    /// Every table change taken from the queue is done: says so, and answers `isready`.
    pub fn settled(&mut self, output: &Reporter) {
        self.progress
            .setups_done
            .store(self.setups_received, Ordering::Release);
        self.answer(output);
    }

    /// Answers `isready` if it has waited long enough, after saying `what` is not ready.
    pub fn give_up_if_overdue(&mut self, output: &Reporter, what: impl FnOnce() -> String) {
        if self.deadline.is_some_and(|due| Instant::now() >= due) {
            output(Report::Note(&format!(
                "not ready after {} s: {}; until it is ready, searches use a 1 MB table",
                READY_PATIENCE.as_secs(),
                what()
            )));
            self.answer(output);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    /// A reporter that keeps `ready` for each `readyok` and the text of each note.
    fn recorder() -> (Reporter, Arc<Mutex<Vec<String>>>) {
        let lines = Arc::new(Mutex::new(Vec::new()));
        let kept = lines.clone();
        let output: Reporter = Arc::new(move |report| {
            let line = match report {
                Report::Ready => "ready".to_string(),
                Report::Note(note) => note.to_string(),
                _ => "other".to_string(),
            };
            kept.lock().unwrap().push(line);
        });
        (output, lines)
    }

    #[test]
    fn every_readyok_owed_is_printed_and_counted_once() {
        let (output, lines) = recorder();
        let progress = Arc::new(Progress::default());
        let mut ready = Readiness::new(progress.clone());
        ready.setup_received();
        ready.owe();
        ready.owe();
        assert!(ready.is_owed() && ready.deadline().is_some());
        ready.give_up_if_overdue(&output, || unreachable!("not overdue yet"));
        assert!(lines.lock().unwrap().is_empty());

        ready.settled(&output);
        assert_eq!(*lines.lock().unwrap(), ["ready", "ready"]);
        assert_eq!(progress.readies_printed.load(Ordering::Relaxed), 2);
        assert_eq!(progress.setups_done.load(Ordering::Relaxed), 1);
        assert!(!ready.is_owed() && ready.deadline().is_none());
        ready.answer(&output);
        assert_eq!(lines.lock().unwrap().len(), 2);
    }

    #[test]
    fn an_overdue_readyok_says_what_is_not_ready() {
        let (output, lines) = recorder();
        let mut ready = Readiness::new(Arc::new(Progress::default()));
        ready.owe();
        ready.deadline = Some(Instant::now());
        ready.give_up_if_overdue(&output, || "the table".to_string());
        let lines = lines.lock().unwrap();
        assert!(
            lines[0].contains("not ready after 5 s: the table"),
            "{lines:?}"
        );
        assert_eq!(lines[1], "ready");
    }
}
