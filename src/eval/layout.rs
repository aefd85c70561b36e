//! Where each evaluation weight lives in the flat weight vector.
//!
//! Every term of the evaluation is a weight (a middlegame/endgame pair) times a count the
//! position supplies, so the evaluation is linear in the weights. That is what lets the
//! Texel tuner fit all of them at once by gradient descent: the count ("coefficient") of a
//! weight in a position is exactly the derivative of the score by that weight. Each block
//! below is a named run of weights; `WEIGHTS` in `weights.rs` holds their values in this
//! order, and the tuner writes that file back in the same order.

/// Evaluation terms, one per row of the `eval` command's table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Term {
    Material,
    PieceSquare,
    Mobility,
    Pieces,
    Pawns,
    PassedPawns,
    KingSafety,
    Threats,
    Tempo,
}

pub const TERMS: [Term; 9] = [
    Term::Material,
    Term::PieceSquare,
    Term::Mobility,
    Term::Pieces,
    Term::Pawns,
    Term::PassedPawns,
    Term::KingSafety,
    Term::Threats,
    Term::Tempo,
];

impl Term {
    pub fn name(self) -> &'static str {
        match self {
            Term::Material => "Material",
            Term::PieceSquare => "Piece-square",
            Term::Mobility => "Mobility",
            Term::Pieces => "Pieces",
            Term::Pawns => "Pawn structure",
            Term::PassedPawns => "Passed pawns",
            Term::KingSafety => "King safety",
            Term::Threats => "Threats",
            Term::Tempo => "Tempo",
        }
    }
}

/// A named run of consecutive weights, and the `eval` table row it is shown in.
#[derive(Clone, Copy, Debug)]
pub struct Block {
    pub name: &'static str,
    pub start: usize,
    pub len: usize,
    pub term: Term,
}

macro_rules! layout {
    ($($name:ident [$len:expr] $term:ident),* $(,)?) => {
        layout!(@offsets 0usize; $($name [$len]),*);
        /// Every block, in weight-vector order.
        pub const BLOCKS: &[Block] = &[
            $(Block { name: stringify!($name), start: $name, len: $len, term: Term::$term }),*
        ];
    };
    (@offsets $at:expr; ) => {
        /// Length of the weight vector.
        pub const NUM_WEIGHTS: usize = $at;
    };
    (@offsets $at:expr; $name:ident [$len:expr] $(, $rest:ident [$rest_len:expr])*) => {
        pub const $name: usize = $at;
        layout!(@offsets $name + $len; $($rest [$rest_len]),*);
    };
}

layout! {
    // Material by role (pawn .. queen; the king's slot stays zero).
    MATERIAL[6] Material,
    // Piece-square tables, [role][square from the owner's side], a1 = 0.
    PST[6 * 64] PieceSquare,
    // Mobility by the number of safe squares a piece reaches.
    MOBILITY_KNIGHT[9] Mobility,
    MOBILITY_BISHOP[14] Mobility,
    MOBILITY_ROOK[15] Mobility,
    MOBILITY_QUEEN[28] Mobility,
    BISHOP_PAIR[1] Pieces,
    ROOK_OPEN_FILE[1] Pieces,
    ROOK_SEMI_OPEN_FILE[1] Pieces,
    QUEEN_OPEN_FILE[1] Pieces,
    QUEEN_SEMI_OPEN_FILE[1] Pieces,
    // Rook or queen on the seventh rank while the enemy king is on the eighth or enemy
    // pawns are on the seventh.
    ROOK_ON_SEVENTH[1] Pieces,
    // A minor piece on ranks 4-6 defended by a pawn and out of reach of enemy pawns.
    KNIGHT_OUTPOST[1] Pieces,
    BISHOP_OUTPOST[1] Pieces,
    // A minor piece with its own pawn right in front of it.
    MINOR_BEHIND_PAWN[1] Pieces,
    // Per own pawn on the bishop's square colour.
    BAD_BISHOP_PAWN[1] Pieces,
    DOUBLED_PAWN[1] Pawns,
    ISOLATED_PAWN[1] Pawns,
    BACKWARD_PAWN[1] Pawns,
    // By relative rank.
    PHALANX_PAWN[8] Pawns,
    SUPPORTED_PAWN[8] Pawns,
    CANDIDATE_PASSER[8] Pawns,
    PASSED_PAWN[8] PassedPawns,
    PASSED_FREE_PATH[8] PassedPawns,
    PASSED_BLOCKED[8] PassedPawns,
    // Per square of king distance to the passer's stop square, times (rank - 2).
    PASSED_OWN_KING_DISTANCE[1] PassedPawns,
    PASSED_THEIR_KING_DISTANCE[1] PassedPawns,
    // A passer the lone enemy king cannot catch (rule of the square, pawn endings).
    UNSTOPPABLE_PASSER[1] PassedPawns,
    // Attacks on the enemy king zone: attackers by role, then the attack units, linear and
    // squared (the danger grows faster than the number of attackers).
    KING_ATTACKERS[6] KingSafety,
    KING_ATTACK_UNITS[1] KingSafety,
    KING_ATTACK_UNITS_SQUARED[1] KingSafety,
    // Squares from which a piece of the role could check the enemy king safely.
    KING_SAFE_CHECKS[6] KingSafety,
    // Squares next to the enemy king we attack and only the king defends.
    KING_WEAK_SQUARES[1] KingSafety,
    // Own king's pawn shelter: relative rank of the nearest own pawn in front of the king
    // on its file / on a neighbouring file (0 = none).
    SHELTER_KING_FILE[8] KingSafety,
    SHELTER_SIDE_FILE[8] KingSafety,
    // Enemy pawn storm: relative rank of the most advanced enemy pawn on those files.
    PAWN_STORM[8] KingSafety,
    KING_OPEN_FILE[1] KingSafety,
    KING_SEMI_OPEN_FILE[1] KingSafety,
    // Enemy pieces attacked, by the attacker's kind and the victim's role.
    THREAT_BY_PAWN[6] Threats,
    THREAT_BY_MINOR[6] Threats,
    THREAT_BY_ROOK[6] Threats,
    // Enemy pieces (not the king) we attack and they do not defend.
    HANGING[1] Threats,
    // Safe pawn pushes that would attack an enemy piece.
    PAWN_PUSH_THREAT[1] Threats,
    TEMPO[1] Tempo,
}

/// The block a weight index belongs to.
pub fn block_of(index: usize) -> &'static Block {
    BLOCKS
        .iter()
        .find(|b| (b.start..b.start + b.len).contains(&index))
        .expect("weight index out of range")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_tile_the_vector() {
        let mut at = 0;
        for b in BLOCKS {
            assert_eq!(b.start, at, "{} does not follow its predecessor", b.name);
            at += b.len;
        }
        assert_eq!(at, NUM_WEIGHTS);
        assert_eq!(block_of(PST + 70).name, "PST");
        assert_eq!(block_of(TEMPO).name, "TEMPO");
    }
}
