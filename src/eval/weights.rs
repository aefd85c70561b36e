//! Evaluation weights (hand-set for v1; the tuner will replace them). Pairs are
//! (middlegame, endgame) in centipawns.

use super::terms::Score;

const fn s(mg: i32, eg: i32) -> Score {
    Score { mg, eg }
}

/// Bonus for the side to move.
pub const TEMPO: i32 = 10;

pub const BISHOP_PAIR: Score = s(30, 50);

/// Per safe square attacked beyond a typical count, indexed by role (pawn and king unused).
pub const MOBILITY_PER_SQUARE: [Score; 6] = [s(0, 0), s(4, 4), s(5, 5), s(2, 4), s(1, 2), s(0, 0)];
/// The "typical" number of safe squares per role: mobility is scored relative to it so the
/// term stays small on average and does not double-count material.
pub const MOBILITY_BASELINE: [i32; 6] = [0, 4, 6, 6, 12, 0];

pub const DOUBLED_PAWN: Score = s(-10, -20);
pub const ISOLATED_PAWN: Score = s(-10, -12);
/// Passed pawn bonus by rank from the pawn's own side (index 0 = rank 1).
pub const PASSED_PAWN: [Score; 8] = [
    s(0, 0),
    s(2, 8),
    s(4, 12),
    s(8, 20),
    s(18, 40),
    s(35, 75),
    s(60, 120),
    s(0, 0),
];

/// Own pawns shielding a castled king, one and two ranks in front of it.
pub const SHELTER_NEAR: Score = s(14, 0);
pub const SHELTER_FAR: Score = s(7, 0);
/// Per enemy piece attacking squares next to the king, by role; squared and scaled below.
pub const KING_ATTACK_WEIGHT: [i32; 6] = [0, 2, 2, 3, 5, 0];
pub const KING_ATTACK_SCALE: i32 = 4;

pub const ROOK_OPEN_FILE: Score = s(25, 10);
pub const ROOK_SEMI_OPEN_FILE: Score = s(12, 6);

/// Phase weight of each role: the sum over the start position is `MAX_PHASE`.
pub const PHASE_WEIGHT: [i32; 6] = [0, 1, 1, 2, 4, 0];
