//! The Syzygy tables the search thread holds: the last `SyzygyPath` scan's result (the upkeep
//! thread scans), handed to each search with the probing options it is sent with.

use super::ProbeOptions;
use crate::syzygy::{LoadedTables, Tablebases};

#[derive(Default)]
pub struct SyzygyTables {
    loaded: Option<LoadedTables>,
    /// What the last scan found, printed when the next search starts: an `info string`
    /// right after `setoption` (which has no reply) makes clients such as python-chess log
    /// "unexpected engine output".
    note: Option<String>,
}

impl SyzygyTables {
    /// Takes in a scan's result. Returns why it failed, to be said now, if `report`.
    pub fn scanned(
        &mut self,
        result: Result<LoadedTables, String>,
        report: bool,
    ) -> Option<String> {
        match result {
            Ok(tables) => {
                self.note = Some(format!(
                    "Syzygy: {} table files, up to {} pieces",
                    tables.files, tables.max_pieces
                ));
                self.loaded = Some(tables);
                None
            }
            Err(why) => {
                self.loaded = None;
                self.note = None;
                report.then_some(why)
            }
        }
    }

    /// What the last scan found, once: for the search about to start.
    pub fn take_note(&mut self) -> Option<String> {
        self.note.take()
    }

    pub fn for_search(&self, probe: ProbeOptions) -> Tablebases {
        Tablebases::new(self.loaded.as_ref(), probe.limit, probe.depth, probe.rule50)
    }
}
