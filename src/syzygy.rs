//! Syzygy endgame tablebases, probed through `shakmaty-syzygy`: loading the table files
//! (`SyzygyPath`), WDL probes for the search, and the DTZ ranking of root moves that keeps
//! a tablebase win from being squandered to the fifty-move rule.
//!
//! The table handle is shared (`Arc`) by every search thread. The UCI thread builds a new
//! handle when `SyzygyPath` is set and hands it to the next search; a running search keeps
//! the handle it started with.

use std::sync::Arc;

use shakmaty::{Chess, Move, Position as _};
use shakmaty_syzygy::{AmbiguousWdl, Tablebase, Wdl};

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
    /// Every root move with its outcome, best outcome first: the winning moves by distance
    /// to the next zeroing move (shortest first), the drawing and then the losing ones in
    /// the order given.
    pub moves: Vec<(Move, Outcome)>,
    /// The root's outcome: that of its best move.
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

    /// The outcome of `pos` whatever its halfmove clock (a WDL probe at a clock of 0, else
    /// DTZ against the clock). `None` when `pos` is not covered, a table (a DTZ table, at a
    /// clock above 0) is missing, or DTZ rounding leaves a win or loss in doubt: a game
    /// played on reaches a zeroing move that settles it.
    pub fn probe_outcome(&self, pos: &Chess) -> Option<Outcome> {
        if !self.covers(pos) {
            return None;
        }
        if pos.halfmoves() == 0 {
            return self.probe_wdl(pos);
        }
        let wdl = match self.tables.as_ref()?.probe_wdl(pos).ok()? {
            AmbiguousWdl::Win => Wdl::Win,
            AmbiguousWdl::CursedWin => Wdl::CursedWin,
            AmbiguousWdl::Draw => Wdl::Draw,
            AmbiguousWdl::BlessedLoss => Wdl::BlessedLoss,
            AmbiguousWdl::Loss => Wdl::Loss,
            AmbiguousWdl::MaybeWin | AmbiguousWdl::MaybeLoss => return None,
        };
        Some(self.outcome(wdl))
    }

    /// Ranks the root moves by DTZ, taking the current halfmove clock into account: a win
    /// counts only if the next zeroing move comes before the fifty-move rule (when it
    /// applies). Returns every move with its outcome, best first, or `None` when the root
    /// is not in the tables or a probe fails.
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
        // A stable sort: the moves of one outcome other than a win keep the order given.
        ranked.sort_by_key(|&(_, outcome, distance)| {
            let distance = if outcome == Outcome::Win { distance } else { 0 };
            (std::cmp::Reverse(outcome), distance)
        });
        let outcome = ranked.first()?.1;
        Some(RootRanking {
            moves: ranked.into_iter().map(|(m, o, _)| (m, o)).collect(),
            outcome,
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
    fn probe_outcome_counts_the_halfmove_clock() {
        // The tables the tests ship (tests/data/syzygy); a missing KRvK or KQvK table turns
        // a probe below into `None` and fails it.
        let loaded = load(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/syzygy")).unwrap();
        let tb = Tablebases::new(Some(&loaded), MAX_TB_PIECES, DEFAULT_PROBE_DEPTH, true);
        let outcome = |fen: &str| {
            let pos = crate::position::Position::from_fen(fen, false).unwrap();
            tb.probe_outcome(pos.board())
        };
        // King and rook against king: won for White, lost for Black to move...
        assert_eq!(
            outcome("8/8/8/4k3/8/8/8/R3K3 w - - 0 1"),
            Some(Outcome::Win)
        );
        assert_eq!(
            outcome("8/8/8/4k3/8/8/8/R3K3 b - - 0 1"),
            Some(Outcome::Loss)
        );
        assert_eq!(
            outcome("8/8/8/4k3/8/8/8/R3K3 w - - 40 60"),
            Some(Outcome::Win)
        );
        // ...unless the fifty-move rule comes first (mate is well over five plies away).
        assert_eq!(
            outcome("8/8/8/4k3/8/8/8/R3K3 w - - 95 80"),
            Some(Outcome::Draw)
        );
        let without_rule = Tablebases::new(Some(&loaded), MAX_TB_PIECES, 1, false);
        let pos = crate::position::Position::from_fen("8/8/8/4k3/8/8/8/R3K3 w - - 95 80", false);
        assert_eq!(
            without_rule.probe_outcome(pos.unwrap().board()),
            Some(Outcome::Win)
        );
        // The queen hangs to the king: a draw, whoever has it.
        assert_eq!(
            outcome("8/8/8/8/3Q4/2k5/8/K7 b - - 0 1"),
            Some(Outcome::Draw)
        );
        // Out of reach: five pieces, or castling rights.
        assert_eq!(outcome("8/8/8/4k3/8/8/7P/R3K2R w - - 0 1"), None);
        assert_eq!(outcome("4k3/8/8/8/8/8/8/R3K3 w Q - 0 1"), None);
    }

    #[test]
    fn root_moves_are_ranked_wins_then_draws_then_losses() {
        let loaded = load(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/syzygy")).unwrap();
        let tb = Tablebases::new(Some(&loaded), MAX_TB_PIECES, DEFAULT_PROBE_DEPTH, true);
        // Rxb8+ wins, Rb2 holds the draw (the rooks face each other, White's king behind
        // its own), every other move loses the rook.
        let pos = crate::position::Position::from_fen("1r4k1/1R6/8/8/8/8/8/1K6 w - - 0 1", false);
        let pos = pos.unwrap();
        let moves = pos.board().legal_moves().to_vec();
        let ranking = tb.rank_root_moves(pos.board(), &moves).unwrap();
        let ranked: Vec<(String, Outcome)> = (ranking.moves.iter())
            .map(|&(m, o)| (m.to_uci(shakmaty::CastlingMode::Standard).to_string(), o))
            .collect();
        assert_eq!(ranked.len(), moves.len());
        assert_eq!(ranked[0], ("b7b8".to_string(), Outcome::Win));
        assert_eq!(ranked[1], ("b7b2".to_string(), Outcome::Draw));
        assert!(
            ranked[2..].iter().all(|r| r.1 == Outcome::Loss),
            "{ranked:?}"
        );
        assert_eq!(ranking.outcome, Outcome::Win);
    }

    #[test]
    fn no_tables_covers_nothing() {
        let tb = Tablebases::default();
        assert_eq!(tb.cardinality, 0);
        assert!(!tb.covers(&Chess::default()));
        assert_eq!(tb.probe_wdl(&Chess::default()), None);
    }
}
