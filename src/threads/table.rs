//! The hash table's life on the search thread: asked a size, allocated, cleared, handed to
//! each search. The upkeep thread does the slow part (allocating, freeing, clearing); this
//! type decides what to ask of it and which table a search gets meanwhile. A resize asked
//! for while another is under way waits for it, and only the last size asked is made.

use std::sync::Arc;

use super::upkeep::Task;
use crate::tt::TranspositionTable;

pub struct HashTable {
    /// A 1 MB table held in place of the real one while that is being replaced, and that
    /// a search uses (emptied first) while the real one is not ready.
    idle: Arc<TranspositionTable>,
    /// The hash table and the size in MB it was asked for.
    tt: Arc<TranspositionTable>,
    mb: usize,
    /// Whether a search has used `tt` since it was allocated or cleared: if not, it is
    /// empty and `ucinewgame` need not clear it again.
    used: bool,
    /// A size asked for while a resize was under way, applied when it ends.
    wanted: Option<usize>,
    /// The size being allocated by the upkeep thread.
    resizing: Option<usize>,
    /// Clears of `tt` given to the upkeep thread and not done yet.
    clearing: usize,
}

impl HashTable {
    pub fn new(tt: Arc<TranspositionTable>) -> HashTable {
        HashTable {
            idle: Arc::new(TranspositionTable::new(1)),
            mb: tt.size_mb(),
            tt,
            used: false,
            wanted: None,
            resizing: None,
            clearing: 0,
        }
    }

    /// `Hash`: the size wanted, made by the next [`HashTable::start_resize`].
    pub fn ask_size(&mut self, mb: usize) {
        self.wanted = Some(mb);
    }

    /// The task that resizes the table to the size asked for, unless one is under way
    /// ([`HashTable::resized`] is followed by the next) or the table has that size. The
    /// caller's threads let go of the old table (helpers do when their search ends), so
    /// the upkeep thread can free it before it allocates the new one.
    pub fn start_resize(&mut self, search_threads: usize) -> Option<Task> {
        if self.resizing.is_some() {
            return None;
        }
        let mb = self.wanted.take()?;
        if mb == self.mb {
            return None;
        }
        let old = std::mem::replace(&mut self.tt, self.idle.clone());
        let old_mb = self.mb;
        self.mb = 1;
        self.resizing = Some(mb);
        Some(Task::Resize {
            mb,
            old,
            old_mb,
            threads: clearing_threads(search_threads),
        })
    }

    /// `ucinewgame`: the task that clears the table, if it needs it. A table being
    /// allocated comes zeroed, and one that no search has used since it was allocated or
    /// cleared is empty.
    pub fn start_clear(&mut self, search_threads: usize) -> Option<Task> {
        if self.resizing.is_some() || !self.used {
            return None;
        }
        self.used = false;
        self.clearing += 1;
        Some(Task::Clear {
            tt: self.tt.clone(),
            threads: clearing_threads(search_threads),
        })
    }

    /// Takes in a resize's result: the new table, or why there is none and the table
    /// to use instead, which is returned to be said.
    pub fn resized(
        &mut self,
        result: Result<Arc<TranspositionTable>, (String, Arc<TranspositionTable>)>,
    ) -> Option<String> {
        let asked = self.resizing.take().unwrap_or(1);
        self.used = false;
        let (tt, mb, why) = match result {
            Ok(tt) => (tt, asked, None),
            Err((why, fallback)) => {
                let mb = fallback.size_mb().max(1);
                (fallback, mb, Some(why))
            }
        };
        (self.tt, self.mb) = (tt, mb);
        why
    }

    pub fn cleared(&mut self) {
        self.clearing -= 1;
    }

    /// Whether every change asked of the table is done.
    pub fn is_settled(&self) -> bool {
        self.resizing.is_none() && self.wanted.is_none() && self.clearing == 0
    }

    /// The table a search uses: the hash table once it is allocated and cleared; before
    /// that (a `go` that did not wait for `readyok`, or cut its wait short) the small idle
    /// table, emptied so the search does not depend on what an earlier one left there.
    pub fn for_search(&mut self) -> Arc<TranspositionTable> {
        if self.resizing.is_none() && self.clearing == 0 {
            self.used = true;
            self.tt.clone()
        } else {
            self.idle.clear();
            self.idle.clone()
        }
    }

    /// What is not ready yet, for a `readyok` that cannot wait any longer.
    pub fn unready(&self) -> String {
        match self.resizing {
            Some(mb) => format!("the {mb} MB hash table is still being allocated"),
            None => "the hash table is still being cleared".to_string(),
        }
    }
}

/// Threads that allocate or clear a table: the search's threads, as in other engines,
/// but with one core left to the command and search threads, which keep working while
/// the table is made (`stop`, a `go` on the small table). On this two-core machine two
/// threads cleared no faster than one (docs/reliability.md).
fn clearing_threads(search_threads: usize) -> usize {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    search_threads.min(cores - 1).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_resize_hands_out_the_idle_table_until_it_is_done() {
        let mut table = HashTable::new(Arc::new(TranspositionTable::new(1)));
        table.ask_size(1);
        assert!(table.start_resize(1).is_none(), "the table has that size");
        assert!(table.is_settled());

        table.ask_size(2);
        let Some(Task::Resize {
            mb: 2, old_mb: 1, ..
        }) = table.start_resize(1)
        else {
            panic!("no resize to 2 MB");
        };
        table.ask_size(4);
        assert!(table.start_resize(1).is_none(), "one resize at a time");
        assert!(!table.is_settled());
        assert!(Arc::ptr_eq(&table.for_search(), &table.idle));
        assert!(table.unready().contains("2 MB"));

        assert!(table
            .resized(Ok(Arc::new(TranspositionTable::new(2))))
            .is_none());
        assert!(!table.is_settled(), "4 MB is still wanted");
        assert!(matches!(
            table.start_resize(1),
            Some(Task::Resize { mb: 4, .. })
        ));
        table.resized(Ok(Arc::new(TranspositionTable::new(4))));
        assert!(table.is_settled());
        assert!(!Arc::ptr_eq(&table.for_search(), &table.idle));
    }

    #[test]
    fn only_a_table_a_search_has_used_is_cleared() {
        let mut table = HashTable::new(Arc::new(TranspositionTable::new(1)));
        assert!(table.start_clear(1).is_none(), "a new table is empty");
        table.for_search();
        assert!(matches!(table.start_clear(1), Some(Task::Clear { .. })));
        assert!(table.start_clear(1).is_none(), "cleared once");
        assert!(!table.is_settled());
        assert!(Arc::ptr_eq(&table.for_search(), &table.idle));
        table.cleared();
        assert!(table.is_settled());
    }
}
