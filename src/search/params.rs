//! Every search constant in one place, with its unit.
//!
//! The pruning and reduction margins are `tunable!` parameters (src/tunable.rs): constants
//! in a normal build; in a build with the `spsa` feature each is also a UCI option of the
//! same name, so a tuner (tools/spsa.py) can set them between games.

use crate::tunable::tunable;

/// Deepest iterative-deepening iteration.
pub const MAX_DEPTH: i32 = 100;

/// A tablebase result is exact whatever the depth: stored this many plies deeper than the
/// node so ordinary entries do not replace it.
pub const TB_DEPTH_BONUS: i32 = 6;

/// Aspiration windows start at this depth, ASPIRATION_INITIAL_WINDOW wide (cp), and grow by
/// this factor on a miss; once wider than ASPIRATION_MAX_WINDOW (cp) the search gives up on
/// a window and opens it fully, as a score that far off is better found in one search.
pub const ASPIRATION_MIN_DEPTH: i32 = 4;
pub const ASPIRATION_GROWTH: i32 = 2;
pub const ASPIRATION_MAX_WINDOW: i32 = 1000;

/// Move-ordering histories (search/history.rs) hold values within +-HISTORY_MAX. A cutoff
/// at depth d moves an entry by HISTORY_BONUS_PER_DEPTH_SQUARED * d^2 +
/// HISTORY_BONUS_PER_DEPTH * d, at most HISTORY_BONUS_MAX: deeper cutoffs say more, and no
/// single one moves an entry by more than an eighth of the range.
pub const HISTORY_MAX: i32 = 16_384;
pub const HISTORY_BONUS_PER_DEPTH_SQUARED: i32 = 16;
pub const HISTORY_BONUS_PER_DEPTH: i32 = 32;
pub const HISTORY_BONUS_MAX: i32 = HISTORY_MAX / 8;

/// Null-move pruning from this depth on (R: NMP_BASE_REDUCTION and the terms after it).
pub const NMP_MIN_DEPTH: i32 = 3;
/// From this depth a null-move cutoff is verified by a reduced normal search, so deep
/// zugzwangs are not pruned blindly.
pub const NMP_VERIFICATION_DEPTH: i32 = 12;

/// Late move reductions: reduction = LMR_BASE_CENTI / 100 + ln(depth) * ln(move number) /
/// (LMR_DIVISOR_CENTI / 100), for quiet moves from this depth on, after this many moves
/// (more at PV nodes).
pub const LMR_MIN_DEPTH: i32 = 3;
pub const LMR_MIN_MOVES: usize = 2;
pub const LMR_MIN_MOVES_PV: usize = 4;

/// Nodes the TT flags as having been on a principal variation are reduced this many plies
/// less, as PV nodes are: their moves are the likeliest to matter.
pub const LMR_TT_PV_PLIES: i32 = 1;

/// `LMR_TABLE[depth][move number]`, both capped at 63.
pub static LMR_TABLE: std::sync::LazyLock<[[i32; 64]; 64]> = std::sync::LazyLock::new(|| {
    let mut table = [[0; 64]; 64];
    for (depth, row) in table.iter_mut().enumerate() {
        for (moves, r) in row.iter_mut().enumerate() {
            *r = lmr_formula(depth, moves);
        }
    }
    table
});

fn lmr_formula(depth: usize, moves: usize) -> i32 {
    if depth == 0 || moves == 0 {
        return 0;
    }
    let base = f64::from(LMR_BASE_CENTI.get()) / 100.0;
    let divisor = f64::from(LMR_DIVISOR_CENTI.get()) / 100.0;
    (base + (depth as f64).ln() * (moves as f64).ln() / divisor) as i32
}

/// The late move reduction at `depth` for move number `moves` (both capped at 63): the
/// table's entry. An `spsa` build computes it from the parameters of the moment instead, as a
/// tuner changes them after the table is built.
#[inline(always)]
pub fn lmr_reduction(depth: usize, moves: usize) -> i32 {
    #[cfg(feature = "spsa")]
    return lmr_formula(depth.min(63), moves.min(63));
    #[cfg(not(feature = "spsa"))]
    LMR_TABLE[depth.min(63)][moves.min(63)]
}

/// Late move pruning up to this depth (the move limit: LMP_BASE).
pub const LMP_MAX_DEPTH: i32 = 6;

/// Futility pruning of quiet moves up to this depth (margins: FUTILITY_BASE, _PER_DEPTH).
pub const FUTILITY_MAX_DEPTH: i32 = 6;

/// SEE pruning up to this depth (thresholds: SEE_PRUNE_QUIET_PER_DEPTH, _CAPTURE_PER_DEPTH).
pub const SEE_PRUNE_MAX_DEPTH: i32 = 8;

/// Singular extensions: from SE_MIN_DEPTH, when the TT entry is at most SE_TT_DEPTH_MARGIN
/// plies shallower than the node and not an upper bound, the other moves are searched at
/// half depth against the TT score minus SE_MARGIN_PER_DEPTH cp per ply.
pub const SE_MIN_DEPTH: i32 = 8;
pub const SE_TT_DEPTH_MARGIN: i32 = 3;
/// Check extension: a check is extended when it is a discovered check or its move wins at
/// least this much by exchange (cp); a checking piece that simply hangs gets no extra ply.
pub const CHECK_EXTENSION_SEE_THRESHOLD: i32 = 0;

/// Correction history (search/correction.rs). A table keyed by part of the board has
/// 2^CORRECTION_TABLE_BITS entries per side to move (64 KB); the continuation table one
/// per pair of (piece, to-square) of the last two moves (768^2 entries, 1.1 MB). Entries are
/// in 1/CORRECTION_GRAIN cp, each within +-CORRECTION_LIMIT (64 cp). After a node of depth d
/// each of its entries becomes a weighted average of its old value and the node's error
/// (search score - corrected eval, counted up to CORRECTION_MAX_GAP cp), the error weighing
/// min(d + 1, CORRECTION_MAX_WEIGHT) / CORRECTION_WEIGHT_SCALE: old values fade, deeper
/// (more trustworthy) results count more.
pub const CORRECTION_TABLE_BITS: u32 = 14;
pub const CORRECTION_GRAIN: i32 = 256;
pub const CORRECTION_LIMIT: i32 = 64 * CORRECTION_GRAIN;
pub const CORRECTION_WEIGHT_SCALE: i32 = 256;
pub const CORRECTION_MAX_WEIGHT: i32 = 16;
pub const CORRECTION_MAX_GAP: i32 = 256;
/// The correction of the static eval is the sum over the tables in use of entry * weight /
/// CORRECTION_WEIGHT_ONE (the weights are the `*_CORRECTION_WEIGHT` tunables below).
pub const CORRECTION_WEIGHT_ONE: i32 = 128;

// The margins and reductions a tuner may move (`spsa` builds: UCI options of these names).
// Ranges are wide enough for SPSA and narrow enough that no value breaks the search.
tunable! {
    /// Aspiration window half-width at ASPIRATION_MIN_DEPTH (cp).
    ASPIRATION_INITIAL_WINDOW = 25, 8, 80;
    /// Null-move reduction R = NMP_BASE_REDUCTION + depth / NMP_DEPTH_DIVISOR
    /// + min((eval - beta) / NMP_EVAL_DIVISOR, NMP_MAX_EVAL_REDUCTION).
    NMP_BASE_REDUCTION = 3, 1, 6;
    NMP_DEPTH_DIVISOR = 4, 2, 10;
    NMP_EVAL_DIVISOR = 200, 80, 500;
    NMP_MAX_EVAL_REDUCTION = 3, 1, 6;
    /// Reverse futility pruning: at non-PV nodes up to this depth, an eval
    /// RFP_MARGIN_PER_DEPTH cp per ply (one ply less when improving) above beta cuts.
    RFP_MAX_DEPTH = 7, 3, 12;
    RFP_MARGIN_PER_DEPTH = 80, 30, 200;
    /// The late move reduction formula's constant and divisor, in hundredths.
    LMR_BASE_CENTI = 75, 0, 200;
    LMR_DIVISOR_CENTI = 225, 120, 400;
    /// Quiet moves with good history are reduced less: one ply less per this much history.
    LMR_HISTORY_DIVISOR = 8192, 2048, 32768;
    /// Late captures and promotions are reduced LMR_NOISY_DISCOUNT plies less than the
    /// table's quiet move, and one ply less per LMR_CAPTURE_HISTORY_DIVISOR of capture
    /// history (more with bad history); not at all if SEE says they win at least
    /// LMR_NOISY_SEE_KEEP cp.
    LMR_NOISY_DISCOUNT = 2, 0, 4;
    LMR_CAPTURE_HISTORY_DIVISOR = 4096, 1024, 16384;
    LMR_NOISY_SEE_KEEP = 200, 0, 900;
    /// After a reduced search beats alpha, the full-depth re-search goes a ply deeper if
    /// it beat the best score so far by more than LMR_DEEPER_BASE + LMR_DEEPER_PER_DEPTH
    /// * (full depth) cp, a ply shallower if by less than LMR_SHALLOWER_MARGIN cp.
    LMR_DEEPER_BASE = 40, 0, 150;
    LMR_DEEPER_PER_DEPTH = 2, 0, 10;
    LMR_SHALLOWER_MARGIN = 10, 0, 50;
    /// Late move pruning: quiets beyond LMP_BASE + depth^2 moves (half when not improving).
    LMP_BASE = 3, 0, 10;
    /// Futility pruning: a quiet move whose eval + FUTILITY_BASE + FUTILITY_PER_DEPTH * depth
    /// is still <= alpha is skipped.
    FUTILITY_BASE = 100, 0, 300;
    FUTILITY_PER_DEPTH = 100, 30, 250;
    /// SEE pruning: quiets must not lose more than -SEE_PRUNE_QUIET_PER_DEPTH * depth,
    /// captures more than -SEE_PRUNE_CAPTURE_PER_DEPTH * depth^2 (cp).
    SEE_PRUNE_QUIET_PER_DEPTH = -60, -200, -10;
    SEE_PRUNE_CAPTURE_PER_DEPTH = -25, -100, -5;
    /// Delta pruning in quiescence: a capture whose victim plus this margin cannot lift the
    /// stand-pat score to alpha is skipped.
    DELTA_MARGIN = 200, 50, 500;
    /// Singular extension margin (cp per ply of depth below the TT score).
    SE_MARGIN_PER_DEPTH = 2, 0, 8;
    /// What each correction table counts for, in 1/CORRECTION_WEIGHT_ONE of its entry:
    /// the pawn-structure and piece-count tables, each colour's non-pawn table (the same
    /// weight for both), the minor-piece (knights, bishops, kings) and major-piece (rooks,
    /// queens, kings) tables, and the continuation table (the last two moves). Every table
    /// learns what the others leave uncorrected, so the weights may add up to more than one.
    PAWN_CORRECTION_WEIGHT = 128, 0, 384;
    MATERIAL_CORRECTION_WEIGHT = 64, 0, 384;
    NON_PAWN_CORRECTION_WEIGHT = 128, 0, 384;
    MINOR_CORRECTION_WEIGHT = 96, 0, 384;
    MAJOR_CORRECTION_WEIGHT = 96, 0, 384;
    CONTINUATION_CORRECTION_WEIGHT = 128, 0, 384;
    /// A singular TT move is extended two plies when the other moves fail this far (cp)
    /// below the singular beta, at non-PV nodes, and three plies when they fail
    /// SE_TRIPLE_MARGIN below it and the TT move is quiet.
    SE_DOUBLE_MARGIN = 20, 0, 80;
    SE_TRIPLE_MARGIN = 100, 30, 250;
    /// Double and triple extensions happen at most this many times along one line from the
    /// root, so a line of singular moves cannot grow the search without bound (published
    /// engines allow 5 to 12; the low end here, as a won, forcing position can still cost
    /// several times the nodes of a search with single extensions only at depth 20).
    SE_MAX_MULTI_EXTENSIONS = 6, 0, 16;
    /// Negative extension: plies taken off a TT move that is not singular while its TT
    /// score is at least beta (another move likely holds beta too), or else at an expected
    /// cut node (SE_CUT_NODE_NEGATIVE_EXTENSION).
    SE_NEGATIVE_EXTENSION = 1, 0, 3;
    SE_CUT_NODE_NEGATIVE_EXTENSION = 1, 0, 2;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tunable_defaults_are_inside_their_ranges_and_names_unique() {
        crate::tunable::check_list(TUNABLE);
        assert_eq!(RFP_MARGIN_PER_DEPTH.name, "RFP_MARGIN_PER_DEPTH");
    }

    /// Reductions worked out from the documented formula with the defaults, 0.75 + ln(depth)
    /// ln(moves) / 2.25 rounded down (e.g. depth 10, move 20: 0.75 + 2.3026 * 2.9957 / 2.25 =
    /// 3.82, so 3 plies), not by the code under test. (27, 36) comes to 5.9992 and (2, 58) to
    /// 2.0009: a change of either constant by a thousandth, or rounding instead of
    /// truncating, moves one of them.
    #[test]
    fn lmr_table_holds_the_documented_reductions() {
        let _defaults = crate::tunable::test_lock();
        for (depth, moves, plies) in [
            (0, 10, 0),
            (10, 0, 0),
            (1, 63, 0),
            (2, 2, 0),
            (3, 3, 1),
            (3, 8, 1),
            (5, 5, 1),
            (6, 12, 2),
            (8, 8, 2),
            (10, 20, 3),
            (12, 30, 4),
            (20, 40, 5),
            (2, 58, 2),
            (27, 36, 5),
            (63, 63, 8),
        ] {
            assert_eq!(
                lmr_reduction(depth, moves),
                plies,
                "depth {depth}, move {moves}"
            );
            assert_eq!(
                LMR_TABLE[depth][moves], plies,
                "depth {depth}, move {moves}"
            );
        }
        // Depth and move number are capped at 63.
        assert_eq!(lmr_reduction(200, 300), 8);
        // Deeper and later never reduces less.
        for depth in 1..64 {
            for moves in 1..64 {
                let r = LMR_TABLE[depth][moves];
                assert!(r >= LMR_TABLE[depth - 1][moves] && r >= LMR_TABLE[depth][moves - 1]);
            }
        }
    }

    #[cfg(feature = "spsa")]
    #[test]
    fn spsa_builds_set_values_within_range_only() {
        let p = &SE_MARGIN_PER_DEPTH;
        let _others_wait = crate::tunable::test_lock();
        assert!(p.set(p.max + 1).is_err());
        assert_eq!(p.get(), p.default);
        p.set(p.max).unwrap();
        assert_eq!(p.get(), p.max);
        p.set(p.default).unwrap();
    }
}
