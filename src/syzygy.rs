//! Syzygy endgame tablebases, probed through `shakmaty-syzygy`: loading the table files
//! (`SyzygyPath`), WDL probes for the search, and the DTZ ranking of root moves that keeps
//! a tablebase win from being squandered to the fifty-move rule.
//!
//! The table handle is shared (`Arc`) by every search thread. The UCI thread builds a new
//! handle when `SyzygyPath` is set and hands it to the next search; a running search keeps
//! the handle it started with.

use std::sync::Arc;

use shakmaty::{Chess, Move, Position as _};
use shakmaty_syzygy::{Tablebase, Wdl};

/// The largest tables that exist (7 pieces), and so the top of `SyzygyProbeLimit`.
pub const MAX_TB_PIECES: usize = 7;
pub const DEFAULT_PROBE_DEPTH: i32 = 1;
pub const MAX_PROBE_DEPTH: i32 = 100;

/// Loaded tables: the handle, how many files it found and the largest piece count.
#[derive(Clone)]
pub struct LoadedTables {
    pub tables: Arc<Tablebase<Chess>>,
    pub files: usize,
    pub max_pieces: usize,
}

/// Scans the colon-separated directories in `paths` (`;` also separates, for Windows-style
/// lists). An empty list, a directory that cannot be read or one without any table file is
/// an error, and no tables are used.
pub fn load(paths: &str) -> Result<LoadedTables, String> {
    let dirs = directories(paths)?;
    let mut tables = Tablebase::new();
    let mut files = 0;
    for dir in dirs {
        match tables.add_directory(dir) {
            Ok(n) => files += n,
            Err(e) => {
                return Err(format!(
                    "SyzygyPath: cannot read {dir}: {e}; tablebases off"
                ))
            }
        }
    }
    if files == 0 {
        return Err("SyzygyPath: no Syzygy table files found; tablebases off".to_string());
    }
    let max_pieces = tables.max_pieces();
    Ok(LoadedTables {
        tables: Arc::new(tables),
        files,
        max_pieces,
    })
}

/// The directories a `SyzygyPath` names, or why it names none (no file system access).
pub fn directories(paths: &str) -> Result<Vec<&str>, String> {
    let separators: &[char] = if cfg!(windows) { &[';'] } else { &[':', ';'] };
    let dirs: Vec<&str> = paths
        .split(separators)
        .map(str::trim)
        .filter(|d| !d.is_empty())
        .collect();
    if dirs.is_empty() || paths.trim() == "<empty>" {
        return Err("SyzygyPath: no directory given; tablebases off".to_string());
    }
    Ok(dirs)
}

/// What a search needs to probe: the tables (if any) and the probing options.
#[derive(Clone)]
pub struct Tablebases {
    tables: Option<Arc<Tablebase<Chess>>>,
    /// Positions with at most this many pieces are probed; 0 when no tables are loaded.
    pub cardinality: usize,
    /// Probes inside the search only at this remaining depth or more.
    pub probe_depth: i32,
    /// Cursed wins and blessed losses count as draws (the fifty-move rule applies).
    pub rule50: bool,
}

impl Default for Tablebases {
    fn default() -> Self {
        Tablebases {
            tables: None,
            cardinality: 0,
            probe_depth: DEFAULT_PROBE_DEPTH,
            rule50: true,
        }
    }
}

/// A probe result from the side to move's view: won, drawn or lost (with the fifty-move rule
/// applied as configured).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Outcome {
    Loss,
    Draw,
    Win,
}

/// The tablebase verdict on the root moves.
#[derive(Clone, Debug)]
pub struct RootRanking {
    /// The moves that keep the root's best outcome, the winning ones ordered by distance to
    /// the next zeroing move (shortest first).
    pub moves: Vec<Move>,
    pub outcome: Outcome,
}

impl Tablebases {
    pub fn new(
        tables: Option<&LoadedTables>,
        probe_limit: usize,
        probe_depth: i32,
        rule50: bool,
    ) -> Tablebases {
        Tablebases {
            tables: tables.map(|t| t.tables.clone()),
            cardinality: tables.map_or(0, |t| t.max_pieces.min(probe_limit)),
            probe_depth,
            rule50,
        }
    }

    /// Whether `pos` is in the probed tables: few enough pieces and no castling rights.
    #[inline]
    pub fn covers(&self, pos: &Chess) -> bool {
        pos.board().occupied().count() <= self.cardinality && !pos.castles().any()
    }

    fn outcome(&self, wdl: Wdl) -> Outcome {
        match wdl {
            Wdl::Win => Outcome::Win,
            Wdl::CursedWin if !self.rule50 => Outcome::Win,
            Wdl::BlessedLoss if !self.rule50 => Outcome::Loss,
            Wdl::CursedWin | Wdl::Draw | Wdl::BlessedLoss => Outcome::Draw,
            Wdl::Loss => Outcome::Loss,
        }
    }

    /// WDL probe of a position reached by a capture or pawn move (halfmove clock 0), which
    /// is what the WDL tables encode. `None` when the tables cannot answer.
    pub fn probe_wdl(&self, pos: &Chess) -> Option<Outcome> {
        let tables = self.tables.as_ref()?;
        debug_assert_eq!(pos.halfmoves(), 0);
        tables
            .probe_wdl_after_zeroing(pos)
            .ok()
            .map(|wdl| self.outcome(wdl))
    }

    /// Ranks the root moves by DTZ, taking the current halfmove clock into account: a win
    /// counts only if the next zeroing move comes before the fifty-move rule (when it
    /// applies). Returns the moves that keep the best outcome, or `None` when the root is
    /// not in the tables or a probe fails.
    pub fn rank_root_moves(&self, pos: &Chess, moves: &[Move]) -> Option<RootRanking> {
        let tables = self.tables.as_ref()?;
        if moves.is_empty() || !self.covers(pos) {
            return None;
        }
        // (move, outcome for us, plies until the game is won or the clock is reset)
        let mut ranked: Vec<(Move, Outcome, u32)> = Vec::with_capacity(moves.len());
        for &m in moves {
            let mut after = pos.clone();
            after.play_unchecked(m);
            if after.is_checkmate() {
                ranked.push((m, Outcome::Win, 1));
                continue;
            }
            // DTZ of the position after the move, from the opponent's side: negative when
            // the opponent loses, with |dtz| plies until a zeroing move.
            let dtz = tables.probe_dtz(&after).ok()?.ignore_rounding().0;
            let clock = after.halfmoves();
            let to_zeroing = dtz.unsigned_abs();
            let within_rule = clock + to_zeroing <= 100;
            let outcome = match dtz.signum() {
                0 => Outcome::Draw,
                -1 if within_rule || !self.rule50 => Outcome::Win,
                1 if within_rule || !self.rule50 => Outcome::Loss,
                _ => Outcome::Draw,
            };
            let distance = if m.is_zeroing() { 1 } else { to_zeroing + 1 };
            ranked.push((m, outcome, distance));
        }
        let best = ranked.iter().map(|r| r.1).max()?;
        ranked.retain(|r| r.1 == best);
        if best == Outcome::Win {
            ranked.sort_by_key(|r| r.2);
        }
        Some(RootRanking {
            moves: ranked.into_iter().map(|r| r.0).collect(),
            outcome: best,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_or_missing_paths_are_refused() {
        assert!(load("").is_err());
        assert!(load("<empty>").is_err());
        assert!(load("/nonexistent/syzygy/dir").is_err());
        let empty = std::env::temp_dir().join(format!("basalt-no-tables-{}", std::process::id()));
        std::fs::create_dir_all(&empty).unwrap();
        assert!(load(empty.to_str().unwrap()).is_err());
        let _ = std::fs::remove_dir(&empty);
    }

    #[test]
    fn no_tables_covers_nothing() {
        let tb = Tablebases::default();
        assert_eq!(tb.cardinality, 0);
        assert!(!tb.covers(&Chess::default()));
        assert_eq!(tb.probe_wdl(&Chess::default()), None);
    }
}
