//! Static evaluation, in centipawns from the side to move's point of view.
//!
//! Every term is computed for White and for Black separately as a middlegame/endgame pair
//! and the pairs are blended by the game phase (non-pawn material). White's total minus
//! Black's total, negated when Black is to move, gives the score; this makes the
//! evaluation antisymmetric by construction (the mirrored position scores the negation).

mod bitboards;
mod layout;
mod pawns;
mod sink;
mod tapered;
mod terms;
mod weights;

pub use layout::{block_of, Block, Term, BLOCKS, NUM_WEIGHTS, TERMS};
pub use tapered::Score;
pub use weights::WEIGHTS;

use shakmaty::{Bitboard, Board, Chess, Color, Position, Role};

use sink::{PawnInfo, Sink};

/// Per-term, per-colour scores, used by the `eval` command.
#[derive(Clone, Debug, Default)]
pub struct Breakdown {
    /// `[term][0 = White, 1 = Black]`.
    pub terms: [[Score; 2]; TERMS.len()],
    pub phase: i32,
    /// Material scale (out of `FULL_SCALE`) for the side the score favours.
    pub scale: i32,
}

/// Full-strength phase: the non-pawn material of the starting position.
pub const MAX_PHASE: i32 = 24;
/// Endgame scale of a position the stronger side can win as its material says.
pub const FULL_SCALE: i32 = 64;

/// The static evaluation of `board` for the side to move.
#[inline]
pub fn evaluate(board: &Chess) -> i32 {
    let mut sink = ScoreSink::default();
    let phase = terms::collect(board, &mut sink);
    let white = finish(sink.white_minus_black(), phase, board);
    match board.turn() {
        Color::White => white,
        Color::Black => -white,
    }
}

/// White's score from the White-minus-Black pair: tapered by phase, scaled for drawish
/// material, damped by the fifty-move counter.
fn finish(score: Score, phase: i32, board: &Chess) -> i32 {
    let scale = endgame_scale(board.board(), stronger_side(score, phase));
    damp_for_fifty_moves(taper(score, phase, scale), board.halfmoves())
}

/// The side the unscaled tapered score favours (White on a tie; the scale of a zero score
/// does not matter).
#[inline]
pub fn stronger_side(score: Score, phase: i32) -> Color {
    if taper(score, phase, FULL_SCALE) >= 0 {
        Color::White
    } else {
        Color::Black
    }
}

/// Evaluation with every term broken out per colour.
pub fn breakdown(board: &Chess) -> Breakdown {
    let mut sink = BreakdownSink::default();
    let phase = terms::collect(board, &mut sink);
    let mut total = Score::default();
    for [w, b] in sink.out.terms {
        total += w - b;
    }
    sink.out.phase = phase;
    sink.out.scale = endgame_scale(board.board(), stronger_side(total, phase));
    sink.out
}

/// Blends middlegame and endgame by phase, then applies the material scale (out of
/// `FULL_SCALE`). The scale applies to the whole score: the endings it recognises have
/// almost no phase left, and a lone minor piece must score a dead draw, not 1/24 of its
/// middlegame value.
#[inline]
pub fn taper(score: Score, phase: i32, scale: i32) -> i32 {
    let phase = phase.clamp(0, MAX_PHASE);
    (score.mg * phase + score.eg * (MAX_PHASE - phase)) * scale / (MAX_PHASE * FULL_SCALE)
}

/// Scale the score toward zero as the fifty-move counter approaches 100: a position that
/// cannot make progress is worth less than its material says.
#[inline]
pub fn damp_for_fifty_moves(score: i32, halfmoves: u32) -> i32 {
    score * fifty_move_factor(halfmoves) / 200
}

#[inline]
pub fn fifty_move_factor(halfmoves: u32) -> i32 {
    200 - halfmoves.min(100) as i32
}

/// How much of its endgame advantage `strong` can realise, out of `FULL_SCALE`: material
/// that cannot mate, and the classic drawish endings.
pub fn endgame_scale(board: &Board, strong: Color) -> i32 {
    let weak = !strong;
    let count = |c: Color, role: Role| (board.by_color(c) & board.by_role(role)).count() as i32;
    let pieces = |c: Color| {
        3 * (count(c, Role::Knight) + count(c, Role::Bishop))
            + 5 * count(c, Role::Rook)
            + 9 * count(c, Role::Queen)
    };
    let strong_pawns = count(strong, Role::Pawn);
    // Every case below needs a pawnless stronger side or at most a rook each.
    if strong_pawns > 0 && (board.queens() | board.knights()).any() {
        return FULL_SCALE;
    }
    let (strong_pieces, weak_pieces) = (pieces(strong), pieces(weak));
    if strong_pawns == 0 {
        // A lone minor piece cannot mate; nor can two knights against a bare king.
        if strong_pieces <= 3 {
            return 0;
        }
        let two_knights = strong_pieces == 6 && count(strong, Role::Knight) == 2;
        if two_knights && weak_pieces == 0 && count(weak, Role::Pawn) == 0 {
            return 0;
        }
        // Up only a minor's worth without pawns (KRvKB, KRvKN, KQvKR+minor...): mostly drawn.
        if strong_pieces - weak_pieces <= 3 {
            return 16;
        }
    }
    let only = |role: Role| {
        Color::ALL.iter().all(|&c| {
            [Role::Knight, Role::Bishop, Role::Rook, Role::Queen]
                .iter()
                .all(|&r| count(c, r) == i32::from(r == role))
        })
    };
    if only(Role::Bishop) {
        let bishops = board.bishops();
        let opposite = (bishops & Bitboard::DARK_SQUARES).count() == 1;
        if opposite {
            return 32;
        }
    }
    if only(Role::Rook) && strong_pawns - count(weak, Role::Pawn) <= 1 {
        let pawns = board.pawns();
        let queenside = Bitboard(0x0f0f_0f0f_0f0f_0f0f);
        if (pawns & queenside).is_empty() || (pawns & !queenside).is_empty() {
            return 48;
        }
    }
    FULL_SCALE
}

/// Sums the weights: the search's sink, with pawn structure cached.
#[derive(Default)]
struct ScoreSink {
    /// Each colour's total, indexed by `Color as usize` (no branch per term).
    totals: [Score; 2],
}

impl ScoreSink {
    #[inline]
    fn white_minus_black(&self) -> Score {
        self.totals[Color::White as usize] - self.totals[Color::Black as usize]
    }
}

impl Sink for ScoreSink {
    #[inline]
    fn add(&mut self, us: Color, index: usize, count: i32) {
        self.totals[us as usize] += WEIGHTS[index] * count;
    }

    fn pawn_structure(&mut self, pawns: [Bitboard; 2]) -> PawnInfo {
        let (score, info) = pawns::cached(pawns, || {
            let mut sink = ScoreSink::default();
            let info = pawns::structure(pawns, &mut sink);
            (sink.white_minus_black(), info)
        });
        self.totals[Color::White as usize] += score;
        info
    }
}

/// Sorts the weighted terms into the `eval` table.
#[derive(Default)]
struct BreakdownSink {
    out: Breakdown,
}

impl Sink for BreakdownSink {
    fn add(&mut self, us: Color, index: usize, count: i32) {
        let term = block_of(index).term as usize;
        let column = usize::from(us == Color::Black);
        self.out.terms[term][column] += WEIGHTS[index] * count;
    }

    fn pawn_structure(&mut self, pawns: [Bitboard; 2]) -> PawnInfo {
        pawns::structure(pawns, self)
    }
}

/// A position as the tuner sees it: the evaluation is
/// `damp · taper(Σ coefficient · weight)` with everything but the weights fixed.
#[derive(Clone, Debug, PartialEq)]
pub struct Trace {
    /// (weight index, White's count minus Black's), only non-zero ones, sorted by index.
    pub coefficients: Vec<(u16, i16)>,
    pub phase: i32,
    /// Material scale when White / Black is the stronger side.
    pub scale: [i32; 2],
    /// `fifty_move_factor` of the position (out of 200).
    pub fifty_move_factor: i32,
}

struct TraceSink {
    counts: Vec<i32>,
}

impl Sink for TraceSink {
    fn add(&mut self, us: Color, index: usize, count: i32) {
        match us {
            Color::White => self.counts[index] += count,
            Color::Black => self.counts[index] -= count,
        }
    }

    fn pawn_structure(&mut self, pawns: [Bitboard; 2]) -> PawnInfo {
        pawns::structure(pawns, self)
    }
}

/// The tuner's view of `board`.
pub fn trace(board: &Chess) -> Trace {
    let mut sink = TraceSink {
        counts: vec![0; NUM_WEIGHTS],
    };
    let phase = terms::collect(board, &mut sink);
    let coefficients = sink
        .counts
        .iter()
        .enumerate()
        .filter(|(_, &c)| c != 0)
        .map(|(i, &c)| (i as u16, c as i16))
        .collect();
    Trace {
        coefficients,
        phase,
        scale: [
            endgame_scale(board.board(), Color::White),
            endgame_scale(board.board(), Color::Black),
        ],
        fifty_move_factor: fifty_move_factor(board.halfmoves()),
    }
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
        let expected = damp_for_fifty_moves(taper(sum, br.phase, br.scale), 1);
        assert_eq!(evaluate(&b), expected);
    }
}
