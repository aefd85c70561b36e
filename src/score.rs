//! Score units and piece values: the bottom of the crate, imported by the search, the
//! evaluation's users, the UCI output and the offline tools, importing nothing.

use shakmaty::Role;

/// Deepest ply the search reaches (its stack holds this many frames); mate and tablebase
/// scores count plies from the root up to it.
pub const MAX_PLY: usize = 128;

/// Scores are centipawns; a mate in `n` plies scores `MATE - n`.
pub const MATE: i32 = 32_000;
/// Scores beyond this magnitude are mate scores.
pub const MATE_BOUND: i32 = MATE - MAX_PLY as i32;
/// Beyond every score: the initial window of a search.
pub const INFINITY: i32 = MATE + 1;
pub const DRAW: i32 = 0;

/// A tablebase win `ply` plies from the root scores `TB_WIN - ply`: below every mate score,
/// above every evaluation. Scores beyond TB_WIN_BOUND are tablebase wins or mates, and like
/// mates they are stored in the TT relative to the node.
pub const TB_WIN: i32 = MATE_BOUND - 1 - MAX_PLY as i32;
pub const TB_WIN_BOUND: i32 = TB_WIN - MAX_PLY as i32;

/// Material values in centipawns, indexed by `Role as usize` (index 0 unused), for move
/// ordering (MVV-LVA), static exchange evaluation and delta pruning. The king's value only
/// has to exceed anything an exchange on one square can win: SEE charges it when a king
/// captures into a defended square, and with captures (at most a queen, 900) plus the
/// widest SEE threshold a tuner may set (-6,400 cp, SEE_PRUNE_CAPTURE_PER_DEPTH x 8^2)
/// that gain stays below 8,200. In MVV-LVA it ranks the king last among attackers.
pub const PIECE_VALUE: [i32; 7] = [0, 100, 320, 330, 500, 900, 10_000];

#[inline]
pub fn piece_value(role: Role) -> i32 {
    PIECE_VALUE[role as usize]
}

// The score bands are ordered: evaluations, then tablebase wins, then mates. Checked by the
// compiler in every build (a test body would only report a pass that could never fail).
const _: () = assert!(DRAW < TB_WIN_BOUND && TB_WIN_BOUND < TB_WIN && TB_WIN < MATE_BOUND);
const _: () = assert!(MATE_BOUND < MATE && MATE < INFINITY);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn piece_values_rise_with_the_role() {
        for pair in Role::ALL.windows(2) {
            assert!(piece_value(pair[0]) < piece_value(pair[1]), "{pair:?}");
        }
    }
}
