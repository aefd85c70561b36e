//! The evaluation terms, each computed for one colour from that colour's point of view.

use std::ops::{Add, AddAssign, Mul, Neg, Sub, SubAssign};

use shakmaty::attacks;
use shakmaty::{Bitboard, Board, Chess, Color, File, Position, Role, Square};

use super::pst::{MATERIAL_EG, MATERIAL_MG, PST_EG, PST_MG};
use super::weights::*;
use super::{Breakdown, Term};

/// A middlegame/endgame score pair.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Score {
    pub mg: i32,
    pub eg: i32,
}

impl Add for Score {
    type Output = Score;
    fn add(self, o: Score) -> Score {
        Score {
            mg: self.mg + o.mg,
            eg: self.eg + o.eg,
        }
    }
}
impl Sub for Score {
    type Output = Score;
    fn sub(self, o: Score) -> Score {
        Score {
            mg: self.mg - o.mg,
            eg: self.eg - o.eg,
        }
    }
}
impl Neg for Score {
    type Output = Score;
    fn neg(self) -> Score {
        Score {
            mg: -self.mg,
            eg: -self.eg,
        }
    }
}
impl AddAssign for Score {
    fn add_assign(&mut self, o: Score) {
        *self = *self + o;
    }
}
impl SubAssign for Score {
    fn sub_assign(&mut self, o: Score) {
        *self = *self - o;
    }
}
impl Mul<i32> for Score {
    type Output = Score;
    fn mul(self, k: i32) -> Score {
        Score {
            mg: self.mg * k,
            eg: self.eg * k,
        }
    }
}

/// The square as seen from `color`'s side of the board (rank 1 is that colour's back rank).
#[inline]
fn relative(sq: Square, color: Color) -> usize {
    match color {
        Color::White => sq as usize,
        Color::Black => sq as usize ^ 56,
    }
}

#[inline]
fn relative_rank(sq: Square, color: Color) -> usize {
    relative(sq, color) / 8
}

fn file_mask(file: File) -> Bitboard {
    Bitboard::from(file)
}

fn adjacent_files(file: File) -> Bitboard {
    let mut bb = Bitboard::EMPTY;
    if let Some(f) = file.offset(-1) {
        bb |= file_mask(f);
    }
    if let Some(f) = file.offset(1) {
        bb |= file_mask(f);
    }
    bb
}

/// Squares strictly in front of `sq` from `color`'s side, on its file and both neighbours.
fn front_span(sq: Square, color: Color) -> Bitboard {
    let files = file_mask(sq.file()) | adjacent_files(sq.file());
    let rank = sq.rank() as u32;
    let ahead = match color {
        Color::White => {
            if rank == 7 {
                Bitboard::EMPTY
            } else {
                Bitboard(!0u64 << (8 * (rank + 1)))
            }
        }
        Color::Black => Bitboard((1u64 << (8 * rank)) - 1),
    };
    files & ahead
}

fn pawn_attacks_of(pawns: Bitboard, color: Color) -> Bitboard {
    let mut bb = Bitboard::EMPTY;
    for sq in pawns {
        bb |= attacks::pawn_attacks(color, sq);
    }
    bb
}

/// Per-colour accumulator that also records a breakdown when asked.
struct Acc<'a> {
    total: Score,
    breakdown: Option<&'a mut Breakdown>,
    color: Color,
}

impl Acc<'_> {
    #[inline]
    fn add(&mut self, term: Term, s: Score) {
        self.total += s;
        if let Some(b) = self.breakdown.as_deref_mut() {
            let column = usize::from(self.color == Color::Black);
            b.terms[term as usize][column] += s;
        }
    }
}

/// White's score minus Black's score, and the game phase.
pub fn total(pos: &Chess, mut breakdown: Option<&mut Breakdown>) -> (Score, i32) {
    let board = pos.board();
    let mut phase = 0;
    for role in [Role::Knight, Role::Bishop, Role::Rook, Role::Queen] {
        phase += PHASE_WEIGHT[role as usize - 1] * board.by_role(role).count() as i32;
    }
    let white = side(board, Color::White, breakdown.as_deref_mut());
    let black = side(board, Color::Black, breakdown);
    (white - black, phase)
}

fn side(board: &Board, us: Color, breakdown: Option<&mut Breakdown>) -> Score {
    let mut acc = Acc {
        total: Score::default(),
        breakdown,
        color: us,
    };
    let them = !us;
    let ours = board.by_color(us);
    let occupied = board.occupied();
    let our_pawns = board.pawns() & ours;
    let their_pawns = board.pawns() & board.by_color(them);
    let their_pawn_attacks = pawn_attacks_of(their_pawns, them);
    let their_king = board.king_of(them);
    let king_zone = their_king.map_or(Bitboard::EMPTY, attacks::king_attacks);
    let mut king_attack_units = 0;
    let mut king_attackers = 0;

    let mut material = Score::default();
    let mut psq = Score::default();
    let mut mobility = Score::default();
    for sq in ours {
        let Some(role) = board.role_at(sq) else {
            continue;
        };
        let r = role as usize - 1;
        material += Score {
            mg: i32::from(MATERIAL_MG[r]),
            eg: i32::from(MATERIAL_EG[r]),
        };
        let rel = relative(sq, us);
        psq += Score {
            mg: i32::from(PST_MG[r][rel]),
            eg: i32::from(PST_EG[r][rel]),
        };
        let reach = match role {
            Role::Knight => attacks::knight_attacks(sq),
            Role::Bishop => attacks::bishop_attacks(sq, occupied),
            Role::Rook => attacks::rook_attacks(sq, occupied),
            Role::Queen => attacks::queen_attacks(sq, occupied),
            Role::Pawn | Role::King => continue,
        };
        let safe = (reach & !ours & !their_pawn_attacks).count() as i32;
        mobility += MOBILITY_PER_SQUARE[r] * (safe - MOBILITY_BASELINE[r]);
        if (reach & king_zone).any() {
            king_attackers += 1;
            king_attack_units += KING_ATTACK_WEIGHT[r] * (reach & king_zone).count() as i32;
        }
    }
    acc.add(Term::Material, material);
    acc.add(Term::PieceSquare, psq);
    if (board.bishops() & ours).count() >= 2 {
        acc.add(Term::BishopPair, BISHOP_PAIR);
    }
    acc.add(Term::Mobility, mobility);

    let (structure, passed) = pawn_terms(our_pawns, their_pawns, us);
    acc.add(Term::Pawns, structure);
    acc.add(Term::PassedPawns, passed);

    // Our attack on their king: a lone attacker is rarely dangerous, so it only counts from
    // two attackers on, and grows with the square of the weight.
    let mut king = shelter(board, us, our_pawns);
    if king_attackers >= 2 {
        let units = king_attack_units.min(40);
        king += Score {
            mg: units * units / KING_ATTACK_SCALE,
            eg: 0,
        };
    }
    acc.add(Term::KingSafety, king);

    let mut rooks = Score::default();
    for sq in board.rooks() & ours {
        let file = file_mask(sq.file());
        if (file & board.pawns()).is_empty() {
            rooks += ROOK_OPEN_FILE;
        } else if (file & our_pawns).is_empty() {
            rooks += ROOK_SEMI_OPEN_FILE;
        }
    }
    acc.add(Term::Rooks, rooks);
    acc.total
}

/// (doubled + isolated, passed) pawn scores for `us`.
fn pawn_terms(our_pawns: Bitboard, their_pawns: Bitboard, us: Color) -> (Score, Score) {
    let mut structure = Score::default();
    let mut passed = Score::default();
    for sq in our_pawns {
        let file = sq.file();
        if (adjacent_files(file) & our_pawns).is_empty() {
            structure += ISOLATED_PAWN;
        }
        // Count a doubled pawn once: for the pawn with another of ours in front of it.
        let in_front = front_span(sq, us) & file_mask(file);
        if (in_front & our_pawns).any() {
            structure += DOUBLED_PAWN;
        } else if (front_span(sq, us) & their_pawns).is_empty() {
            passed += PASSED_PAWN[relative_rank(sq, us)];
        }
    }
    (structure, passed)
}

/// Pawn shelter in front of our king, on its file and the two next to it.
fn shelter(board: &Board, us: Color, our_pawns: Bitboard) -> Score {
    let Some(king) = board.king_of(us) else {
        return Score::default();
    };
    let mut score = Score::default();
    let files = file_mask(king.file()) | adjacent_files(king.file());
    let king_rank = relative_rank(king, us);
    for sq in our_pawns & files {
        match relative_rank(sq, us).checked_sub(king_rank) {
            Some(1) => score += SHELTER_NEAR,
            Some(2) => score += SHELTER_FAR,
            _ => {}
        }
    }
    score
}
