//! The upkeep thread: allocates and clears hash tables and scans Syzygy directories for the
//! search thread, so neither the UCI thread nor a `stop` waits for that work. Tasks run one
//! at a time in the order given; each one answers with exactly one `Done`. A table is
//! allocated, made resident and cleared by as many threads as the search has, one core
//! left free (`clearing_threads` in table.rs), started here for the task: the helpers
//! themselves run at idle priority, and on a busy machine they would leave the clearing,
//! and the `readyok` that waits for it, to starve.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crossbeam_channel::{unbounded, Receiver, Sender};

use crate::syzygy::{self, LoadedTables};
use crate::tt::TranspositionTable;

pub enum Task {
    /// Allocate a table of `mb` once `old` (the table it replaces) has been freed here,
    /// so the two never take memory at the same time and no other thread spends the
    /// milliseconds that freeing a big table takes.
    Resize {
        mb: usize,
        old: Arc<TranspositionTable>,
        old_mb: usize,
        threads: usize,
    },
    Clear {
        tt: Arc<TranspositionTable>,
        threads: usize,
    },
    LoadTables {
        path: String,
        report: bool,
    },
}

pub enum Done {
    /// The new table, or why it could not be had and the table to use instead.
    Table(Result<Arc<TranspositionTable>, (String, Arc<TranspositionTable>)>),
    Cleared,
    Tables {
        result: Result<LoadedTables, String>,
        report: bool,
    },
}

/// How long a resize waits for the old table to be freed. Threads drop it as soon as they
/// have unwound the last search, which takes milliseconds; this only guards against a
/// handle kept by mistake, which would otherwise stall every later search.
const OLD_TABLE_PATIENCE: Duration = Duration::from_secs(2);

/// The search thread's handle on the upkeep thread, which ends when this is dropped.
pub struct Upkeep {
    tasks: Sender<Task>,
    /// One answer for each task given; each one taken is counted with [`Upkeep::answered`].
    pub done: Receiver<Done>,
    /// Tasks given whose answer has not been taken in yet.
    outstanding: usize,
}

impl Upkeep {
    pub fn spawn() -> Upkeep {
        let (tasks, inbox) = unbounded::<Task>();
        let (done, results) = unbounded::<Done>();
        std::thread::Builder::new()
            .name("upkeep".into())
            .spawn(move || {
                // Normal priority, unlike the helpers: the next search waits for this work,
                // and at idle priority a machine busy with other programs starved a 16 MB
                // clear for seconds (a python-chess game lost on time).
                while let Ok(task) = inbox.recv() {
                    if done.send(run(task)).is_err() {
                        break;
                    }
                }
            })
            .expect("cannot start the upkeep thread");
        Upkeep {
            tasks,
            done: results,
            outstanding: 0,
        }
    }

    pub fn give(&mut self, task: Task) {
        if self.tasks.send(task).is_ok() {
            self.outstanding += 1;
        }
    }

    /// One answer has been taken from `done`.
    pub fn answered(&mut self) {
        self.outstanding -= 1;
    }

    /// Whether every task given has been answered and the answer taken in.
    pub fn is_idle(&self) -> bool {
        self.outstanding == 0
    }
}

fn run(task: Task) -> Done {
    match task {
        Task::Resize {
            mb,
            old,
            old_mb,
            threads,
        } => {
            let deadline = Instant::now() + OLD_TABLE_PATIENCE;
            while Arc::strong_count(&old) > 1 && Instant::now() < deadline {
                std::thread::sleep(Duration::from_micros(500));
            }
            drop(old);
            Done::Table(match TranspositionTable::try_new(mb, threads) {
                Some(tt) => Ok(Arc::new(tt)),
                None => {
                    let fallback = TranspositionTable::try_new(old_mb, threads)
                        .unwrap_or_else(|| TranspositionTable::new(1));
                    let why = format!(
                        "cannot allocate {mb} MB for the hash table; using {} MB",
                        fallback.size_mb().max(1)
                    );
                    Err((why, Arc::new(fallback)))
                }
            })
        }
        Task::Clear { tt, threads } => {
            tt.clear_with_threads(threads);
            Done::Cleared
        }
        Task::LoadTables { path, report } => Done::Tables {
            result: syzygy::load(&path),
            report,
        },
    }
}
