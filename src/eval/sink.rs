//! What the evaluation terms report to: the [`Sink`] trait, and what the pawn-structure
//! terms hand to the rest of the evaluation.

use shakmaty::{Bitboard, Color};

/// What the rest of the evaluation needs from the pawn structure.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PawnInfo {
    /// Passed pawns, indexed by `Color as usize`.
    pub passed: [Bitboard; 2],
}

/// Receives every term of the evaluation as "`count` times weight `index`, for `us`".
pub trait Sink: Sized {
    fn add(&mut self, us: Color, index: usize, count: i32);

    /// The pawn-structure terms (`pawns::structure`). The search's sink caches them by the
    /// pawn placement; the others compute them every time.
    fn pawn_structure(&mut self, pawns: [Bitboard; 2]) -> PawnInfo;
}
