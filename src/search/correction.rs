//! Correction history: what the search has learnt about how far the static evaluation
//! misjudges positions with a given pawn structure or a given material balance.
//!
//! After a node is searched, the gap between its search score and its (corrected) static
//! eval is blended into two tables, one indexed by a hash of the pawns, one by a hash of
//! the piece counts, per side to move. The static eval of later nodes is shifted by the
//! average of their two entries, so pruning decisions that read the eval (reverse
//! futility, null move, futility, improving) start from a better estimate.

use shakmaty::{Board, Chess, Color, Position, Role};

use super::params::*;
use crate::score::*;

/// The two table indices of a position, computed once per node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CorrectionKeys {
    pawns: usize,
    material: usize,
}

/// Multiplicative hashing (odd 64-bit constants), top bits as the index.
#[inline]
fn mix(x: u64, k: u64) -> u64 {
    x.wrapping_mul(k)
}

#[inline]
fn index_of(hash: u64) -> usize {
    (hash >> (64 - CORRECTION_TABLE_BITS)) as usize
}

impl CorrectionKeys {
    #[inline]
    pub fn of(board: &Board) -> CorrectionKeys {
        let white = board.white();
        let pawns = board.pawns();
        let pawn_hash = mix((pawns & white).0, 0x9E37_79B9_7F4A_7C15)
            ^ mix((pawns & !white).0.rotate_left(32), 0xC2B2_AE3D_27D4_EB4F);
        // Piece counts, four bits each: pawns, knights, bishops, rooks, queens per colour.
        let mut counts = 0u64;
        for role in Role::ALL {
            if role == Role::King {
                continue;
            }
            for color in Color::ALL {
                let n = (board.by_role(role) & board.by_color(color)).count() as u64;
                counts = counts << 4 | n.min(15);
            }
        }
        CorrectionKeys {
            pawns: index_of(pawn_hash),
            material: index_of(mix(counts, 0xD6E8_FEB8_6659_FD93)),
        }
    }
}

type Table = [[i16; 1 << CORRECTION_TABLE_BITS]; 2];

pub struct CorrectionHistory {
    pawns: Box<Table>,
    material: Box<Table>,
}

fn empty_table() -> Box<Table> {
    vec![[0i16; 1 << CORRECTION_TABLE_BITS]; 2]
        .into_boxed_slice()
        .try_into()
        .expect("two colours")
}

impl Default for CorrectionHistory {
    fn default() -> Self {
        CorrectionHistory {
            pawns: empty_table(),
            material: empty_table(),
        }
    }
}

impl CorrectionHistory {
    pub fn clear(&mut self) {
        *self = CorrectionHistory::default();
    }

    /// The static eval `raw` (side to move's view) shifted by what the tables learnt.
    /// Never turns an ordinary eval into a mate or tablebase score.
    #[inline]
    pub fn corrected(&self, turn: Color, keys: CorrectionKeys, raw: i32) -> i32 {
        let side = turn as usize;
        let sum =
            i32::from(self.pawns[side][keys.pawns]) + i32::from(self.material[side][keys.material]);
        (raw + sum / (2 * CORRECTION_GRAIN)).clamp(-TB_WIN_BOUND + 1, TB_WIN_BOUND - 1)
    }

    /// Moves both entries toward `gap` = search score - corrected eval, more for deeper
    /// (more trustworthy) searches.
    #[inline]
    pub fn update(&mut self, turn: Color, keys: CorrectionKeys, depth: i32, gap: i32) {
        let side = turn as usize;
        let weight = (depth + 1).min(CORRECTION_MAX_WEIGHT);
        let step = gap.clamp(-CORRECTION_MAX_GAP, CORRECTION_MAX_GAP) * CORRECTION_GRAIN * weight
            / CORRECTION_WEIGHT_SCALE;
        for entry in [
            &mut self.pawns[side][keys.pawns],
            &mut self.material[side][keys.material],
        ] {
            let new = i32::from(*entry) + step;
            *entry = new.clamp(-CORRECTION_LIMIT, CORRECTION_LIMIT) as i16;
        }
    }
}

/// Whether a finished node's result says something about its static eval: not in check,
/// decided by a quiet move (a capture's gain is not the eval's error), no mate or
/// tablebase score, and a bound that points away from the eval (a fail-high below the eval
/// or a fail-low above it says nothing about how wrong the eval is).
#[inline]
pub fn worth_learning(
    pos: &Chess,
    best_move: Option<shakmaty::Move>,
    best_score: i32,
    static_eval: i32,
    failed_high: bool,
    failed_low: bool,
) -> bool {
    !pos.is_check()
        && best_move.is_none_or(|m| !m.is_capture() && m.promotion().is_none())
        && best_score.abs() < TB_WIN_BOUND
        && !(failed_high && best_score <= static_eval)
        && !(failed_low && best_score >= static_eval)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::position::Position as EnginePosition;

    fn board(fen: &str) -> Chess {
        EnginePosition::from_fen(fen, false)
            .unwrap()
            .board()
            .clone()
    }

    #[test]
    fn learns_toward_the_search_score_and_stays_bounded() {
        let pos = board("4k3/pp6/8/8/8/8/PPP5/4K3 w - - 0 1");
        let keys = CorrectionKeys::of(pos.board());
        let mut history = CorrectionHistory::default();
        assert_eq!(history.corrected(Color::White, keys, 50), 50);
        for _ in 0..200 {
            let gap = 120 - history.corrected(Color::White, keys, 0);
            history.update(Color::White, keys, 12, gap);
        }
        let learnt = history.corrected(Color::White, keys, 0);
        assert!(
            learnt > 0 && learnt <= CORRECTION_LIMIT / CORRECTION_GRAIN,
            "{learnt}"
        );
        // The other side to move has its own entries.
        assert_eq!(history.corrected(Color::Black, keys, 0), 0);
        // Never a mate score.
        assert!(history.corrected(Color::White, keys, TB_WIN_BOUND + 50) < TB_WIN_BOUND);
        history.clear();
        assert_eq!(history.corrected(Color::White, keys, 0), 0);
    }

    #[test]
    fn keys_follow_pawns_and_material() {
        let a = board("4k3/pp6/8/8/8/8/PPP5/4K3 w - - 0 1");
        let moved_king = board("3k4/pp6/8/8/8/8/PPP5/4K3 w - - 0 1");
        let moved_pawn = board("4k3/p7/1p6/8/8/8/PPP5/4K3 w - - 0 1");
        let ka = CorrectionKeys::of(a.board());
        assert_eq!(ka, CorrectionKeys::of(moved_king.board()));
        let kp = CorrectionKeys::of(moved_pawn.board());
        assert_ne!(ka.pawns, kp.pawns);
        assert_eq!(ka.material, kp.material);
    }

    #[test]
    fn learns_only_from_informative_results() {
        let quiet = board("4k3/pp6/8/8/8/8/PPP5/4K3 w - - 0 1");
        let check = board("4k3/pp6/8/8/8/8/PPP5/r3K3 w - - 0 1");
        assert!(worth_learning(&quiet, None, 40, 10, false, false));
        assert!(!worth_learning(&check, None, 40, 10, false, false));
        assert!(!worth_learning(&quiet, None, 5, 10, true, false));
        assert!(worth_learning(&quiet, None, 40, 10, true, false));
        assert!(!worth_learning(&quiet, None, 40, 10, false, true));
        assert!(!worth_learning(&quiet, None, MATE - 3, 10, false, false));
        let exchange = board("4k3/8/8/3p4/4P3/8/8/4K3 w - - 0 1");
        let capture = exchange.legal_moves().into_iter().find(|m| m.is_capture());
        assert!(!worth_learning(&exchange, capture, 40, 10, false, false));
        let push = exchange
            .legal_moves()
            .into_iter()
            .find(|m| m.role() == Role::Pawn && !m.is_capture());
        assert!(worth_learning(&exchange, push, 40, 10, false, false));
    }
}
