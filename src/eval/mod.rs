//! Static evaluation, in centipawns from the side to move's point of view.
//!
//! Every term is computed for White and for Black separately as a middlegame/endgame pair
//! and the pairs are blended by the game phase (non-pawn material). White's total minus
//! Black's total, negated when Black is to move, gives the score; this makes the
//! evaluation antisymmetric by construction (the mirrored position scores the negation).

pub mod pst;
mod terms;
mod weights;

pub use terms::Score;

use shakmaty::{Chess, Color, Position};

/// Evaluation terms, one per row of the `eval` command's table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Term {
    Material,
    PieceSquare,
    BishopPair,
    Mobility,
    Pawns,
    PassedPawns,
    KingSafety,
    Rooks,
}

pub const TERMS: [Term; 8] = [
    Term::Material,
    Term::PieceSquare,
    Term::BishopPair,
    Term::Mobility,
    Term::Pawns,
    Term::PassedPawns,
    Term::KingSafety,
    Term::Rooks,
];

impl Term {
    pub fn name(self) -> &'static str {
        match self {
            Term::Material => "Material",
            Term::PieceSquare => "Piece-square",
            Term::BishopPair => "Bishop pair",
            Term::Mobility => "Mobility",
            Term::Pawns => "Pawn structure",
            Term::PassedPawns => "Passed pawns",
            Term::KingSafety => "King safety",
            Term::Rooks => "Rook files",
        }
    }
}

/// Per-term, per-colour scores, used by the `eval` command.
#[derive(Clone, Debug, Default)]
pub struct Breakdown {
    pub terms: [[Score; 2]; TERMS.len()],
    pub phase: i32,
}

/// Full-strength phase: the non-pawn material of the starting position.
pub const MAX_PHASE: i32 = 24;

/// The static evaluation of `board` for the side to move.
#[inline]
pub fn evaluate(board: &Chess) -> i32 {
    let (white_minus_black, phase) = terms::total(board, None);
    let score = damp_for_fifty_moves(taper(white_minus_black, phase), board.halfmoves());
    let from_mover = match board.turn() {
        Color::White => score,
        Color::Black => -score,
    };
    from_mover + weights::TEMPO
}

/// Evaluation with every term broken out per colour.
pub fn breakdown(board: &Chess) -> Breakdown {
    let mut out = Breakdown::default();
    let (_, phase) = terms::total(board, Some(&mut out));
    out.phase = phase;
    out
}

#[inline]
pub fn taper(score: Score, phase: i32) -> i32 {
    let phase = phase.clamp(0, MAX_PHASE);
    (score.mg * phase + score.eg * (MAX_PHASE - phase)) / MAX_PHASE
}

/// Scale the score toward zero as the fifty-move counter approaches 100: a position that
/// cannot make progress is worth less than its material says.
#[inline]
fn damp_for_fifty_moves(score: i32, halfmoves: u32) -> i32 {
    let halfmoves = halfmoves.min(100) as i32;
    score * (200 - halfmoves) / 200
}

pub fn tempo() -> i32 {
    weights::TEMPO
}

#[cfg(test)]
mod tests {
    use super::*;
    use shakmaty::fen::Fen;
    use shakmaty::CastlingMode;

    fn board(fen: &str) -> Chess {
        fen.parse::<Fen>()
            .unwrap()
            .into_position(CastlingMode::Standard)
            .unwrap()
    }

    #[test]
    fn start_position_is_near_balanced() {
        let score = evaluate(&Chess::default());
        assert!((0..=40).contains(&score), "start position scores {score}");
    }

    #[test]
    fn queen_up_scores_above_700() {
        let b = board("rnb1kbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1");
        assert!(evaluate(&b) > 700, "queen up scores {}", evaluate(&b));
        let b = board("rnb1kbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR b KQkq - 0 1");
        assert!(evaluate(&b) < -700);
    }

    #[test]
    fn breakdown_sums_to_evaluation() {
        let b = board("r1bqk2r/pppp1ppp/2n2n2/2b1p3/2B1P3/3P1N2/PPP2PPP/RNBQK2R w KQkq - 1 5");
        let br = breakdown(&b);
        let mut sum = Score::default();
        for row in br.terms {
            sum += row[0] - row[1];
        }
        let expected = damp_for_fifty_moves(taper(sum, br.phase), 1) + tempo();
        assert_eq!(evaluate(&b), expected);
    }
}
