//! The evaluation terms. Each term reports `(colour, weight index, count)` to a [`Sink`];
//! the sink decides what that means: sum the weights (search), sort them into the `eval`
//! table, or record the counts as coefficients (the Texel tuner). Every term is computed
//! from its colour's own side of the board, so a colour-flipped position reports the same
//! counts for the other colour and the evaluation stays antisymmetric.

use shakmaty::attacks;
use shakmaty::{Bitboard, Board, Chess, Color, Position, Rank, Role, Square};

use super::bitboards::*;
use super::layout::*;
use super::sink::{PawnInfo, Sink};

/// Attack units a piece of each role adds when it hits the enemy king zone, and per safe
/// check. These shape the king-danger curve; the weights that turn it into centipawns are
/// tuned.
const KING_ATTACK_UNIT: [i32; 6] = [0, 2, 2, 3, 5, 0];
const SAFE_CHECK_UNIT: i32 = 3;
const MAX_KING_ATTACK_UNITS: i32 = 50;
/// Divisor of units² so its weight is a sensible integer.
pub const KING_ATTACK_SQUARE_DIVISOR: i32 = 16;

/// Phase weight of each role: the sum over the start position is `MAX_PHASE`.
pub const PHASE_WEIGHT: [i32; 6] = [0, 1, 1, 2, 4, 0];

fn reach(role: Role, sq: Square, occupied: Bitboard) -> Bitboard {
    match role {
        Role::Pawn => Bitboard::EMPTY,
        Role::Knight => attacks::knight_attacks(sq),
        Role::Bishop => attacks::bishop_attacks(sq, occupied),
        Role::Rook => attacks::rook_attacks(sq, occupied),
        Role::Queen => attacks::queen_attacks(sq, occupied),
        Role::King => attacks::king_attacks(sq),
    }
}

/// What one colour attacks, and each of its pieces' reach (computed once, used by the
/// mobility, king-attack and threat terms).
struct Attacks {
    by_role: [Bitboard; 6],
    all: Bitboard,
    /// Everything but the king's own attacks: what truly defends a square.
    without_king: Bitboard,
    /// Knights, bishops, rooks and queens with the squares they reach.
    pieces: [(Square, Role, Bitboard); 16],
    piece_count: usize,
}

impl Attacks {
    fn pieces(&self) -> &[(Square, Role, Bitboard)] {
        &self.pieces[..self.piece_count]
    }
}

impl Attacks {
    const EMPTY: Attacks = Attacks {
        by_role: [Bitboard::EMPTY; 6],
        all: Bitboard::EMPTY,
        without_king: Bitboard::EMPTY,
        pieces: [(Square::A1, Role::Pawn, Bitboard::EMPTY); 16],
        piece_count: 0,
    };
}

/// Fills `out` (which starts as `Attacks::EMPTY`) in place: the struct is large enough
/// that returning it by value costs a copy per evaluation.
fn attacks_of(board: &Board, color: Color, out: &mut Attacks) {
    let ours = board.by_color(color);
    let occupied = board.occupied();
    out.by_role[0] = pawn_attacks(board.pawns() & ours, color);
    for role in [Role::Knight, Role::Bishop, Role::Rook, Role::Queen] {
        for sq in board.by_role(role) & ours {
            let reach = reach(role, sq, occupied);
            out.by_role[role as usize - 1] |= reach;
            // More than 16 pieces is impossible in a legal position; the evaluation of a
            // constructed board with more just leaves the extra ones out of these terms.
            if out.piece_count < out.pieces.len() {
                out.pieces[out.piece_count] = (sq, role, reach);
                out.piece_count += 1;
            }
        }
    }
    out.by_role[5] = board
        .king_of(color)
        .map_or(Bitboard::EMPTY, attacks::king_attacks);
    for bb in &out.by_role[..5] {
        out.without_king |= *bb;
    }
    out.all = out.without_king | out.by_role[5];
}

/// Everything a colour's terms need to know about the whole position.
struct Context<'a> {
    board: &'a Board,
    turn: Color,
    attacks: [Attacks; 2],
    pawns: PawnInfo,
}

impl Context<'_> {
    fn attacks(&self, color: Color) -> &Attacks {
        &self.attacks[color as usize]
    }
}

/// Reports every term of `pos` to `sink` and returns the game phase (non-pawn material).
pub fn collect<S: Sink>(pos: &Chess, sink: &mut S) -> i32 {
    let board = pos.board();
    let mut phase = 0;
    for role in [Role::Knight, Role::Bishop, Role::Rook, Role::Queen] {
        phase += PHASE_WEIGHT[role as usize - 1] * board.by_role(role).count() as i32;
    }
    // Per-colour arrays are indexed by `Color as usize` (0 = Black, 1 = White).
    let pawns = [Color::Black, Color::White].map(|c| board.pawns() & board.by_color(c));
    let pawn_info = sink.pawn_structure(pawns);
    let mut ctx = Context {
        board,
        turn: pos.turn(),
        attacks: [Attacks::EMPTY, Attacks::EMPTY],
        pawns: pawn_info,
    };
    for color in [Color::Black, Color::White] {
        attacks_of(board, color, &mut ctx.attacks[color as usize]);
    }
    for us in Color::ALL {
        pieces(&ctx, us, sink);
        king_attack(&ctx, us, sink);
        king_shelter(&ctx, us, sink);
        threats(&ctx, us, sink);
        passed_pawns(&ctx, us, sink);
    }
    sink.add(pos.turn(), TEMPO, 1);
    phase
}

/// Material, piece-square, mobility and the piece-placement terms.
fn pieces<S: Sink>(ctx: &Context, us: Color, sink: &mut S) {
    let board = ctx.board;
    let them = !us;
    let ours = board.by_color(us);
    let occupied = board.occupied();
    let our_pawns = board.pawns() & ours;
    let their_pawns = board.pawns() & board.by_color(them);
    let their_pawn_attacks = ctx.attacks(them).by_role[0];
    let our_pawn_attacks = ctx.attacks(us).by_role[0];
    let blocked_pawns = our_pawns & forward(occupied, them);
    let low_pawns = our_pawns & relative_ranks(us, 1, 2);
    let mobility_area = !(their_pawn_attacks
        | blocked_pawns
        | low_pawns
        | (board.kings() & ours)
        | (board.queens() & ours));
    let their_king = board.king_of(them);
    let king_cut_off = their_king.is_some_and(|k| relative_rank(k, us) == 7);
    let pawns_on_seventh = (their_pawns & relative_ranks(us, 6, 6)).any();

    for role in Role::ALL {
        let r = role as usize - 1;
        let of_role = board.by_role(role) & ours;
        if of_role.any() {
            sink.add(us, MATERIAL + r, of_role.count() as i32);
        }
        for sq in of_role {
            sink.add(us, PST + r * 64 + relative(sq, us), 1);
        }
    }
    for &(sq, role, reach) in ctx.attacks(us).pieces() {
        let (mobility_block, mobility_len) = match role {
            Role::Knight => (MOBILITY_KNIGHT, MOBILITY_BISHOP - MOBILITY_KNIGHT),
            Role::Bishop => (MOBILITY_BISHOP, MOBILITY_ROOK - MOBILITY_BISHOP),
            Role::Rook => (MOBILITY_ROOK, MOBILITY_QUEEN - MOBILITY_ROOK),
            _ => (MOBILITY_QUEEN, BISHOP_PAIR - MOBILITY_QUEEN),
        };
        let safe = (reach & mobility_area).count();
        sink.add(us, mobility_block + safe.min(mobility_len - 1), 1);

        let rank = relative_rank(sq, us);
        match role {
            Role::Knight | Role::Bishop => {
                let is_outpost = (3..=5).contains(&rank)
                    && our_pawn_attacks.contains(sq)
                    && (front_span(sq, us) & !file_mask(sq.file()) & their_pawns).is_empty();
                if is_outpost {
                    let block = if role == Role::Knight {
                        KNIGHT_OUTPOST
                    } else {
                        BISHOP_OUTPOST
                    };
                    sink.add(us, block, 1);
                }
                if (forward(Bitboard::from(sq), us) & our_pawns).any() {
                    sink.add(us, MINOR_BEHIND_PAWN, 1);
                }
                if role == Role::Bishop {
                    let colour = if sq.is_dark() {
                        Bitboard::DARK_SQUARES
                    } else {
                        Bitboard::LIGHT_SQUARES
                    };
                    sink.add(us, BAD_BISHOP_PAWN, (our_pawns & colour).count() as i32);
                }
            }
            _ => {
                let file = file_mask(sq.file());
                let (open, semi_open) = if role == Role::Rook {
                    (ROOK_OPEN_FILE, ROOK_SEMI_OPEN_FILE)
                } else {
                    (QUEEN_OPEN_FILE, QUEEN_SEMI_OPEN_FILE)
                };
                if (file & board.pawns()).is_empty() {
                    sink.add(us, open, 1);
                } else if (file & our_pawns).is_empty() {
                    sink.add(us, semi_open, 1);
                }
                if rank == 6 && (king_cut_off || pawns_on_seventh) {
                    sink.add(us, ROOK_ON_SEVENTH, 1);
                }
            }
        }
    }
    if (board.bishops() & ours).count() >= 2 {
        sink.add(us, BISHOP_PAIR, 1);
    }
}

/// Ranks `from..=to` (0 = rank 1) from `color`'s side.
fn relative_ranks(color: Color, from: u32, to: u32) -> Bitboard {
    let mut bb = Bitboard::EMPTY;
    for r in from..=to {
        let rank = match color {
            Color::White => r,
            Color::Black => 7 - r,
        };
        bb |= Bitboard::from(Rank::new(rank));
    }
    bb
}

/// Our attack on their king.
fn king_attack<S: Sink>(ctx: &Context, us: Color, sink: &mut S) {
    let board = ctx.board;
    let them = !us;
    let Some(their_king) = board.king_of(them) else {
        return;
    };
    let ours = board.by_color(us);
    let occupied = board.occupied();
    let zone = attacks::king_attacks(their_king) | Bitboard::from(their_king);
    let our_attacks = ctx.attacks(us);
    let their_attacks = ctx.attacks(them);

    let mut attackers = [0; 6];
    for &(_, role, reach) in our_attacks.pieces() {
        if (reach & zone).any() {
            attackers[role as usize - 1] += 1;
        }
    }
    let mut units = 0;
    for (r, &n) in attackers.iter().enumerate() {
        if n > 0 {
            sink.add(us, KING_ATTACKERS + r, n);
            units += KING_ATTACK_UNIT[r] * n;
        }
    }

    let safe = !their_attacks.all & !ours;
    let diagonal = attacks::bishop_attacks(their_king, occupied);
    let straight = attacks::rook_attacks(their_king, occupied);
    let checks = [
        (Role::Knight, attacks::knight_attacks(their_king)),
        (Role::Bishop, diagonal),
        (Role::Rook, straight),
        (Role::Queen, diagonal | straight),
    ];
    for (role, from) in checks {
        let r = role as usize - 1;
        let n = (from & our_attacks.by_role[r] & safe).count() as i32;
        if n > 0 {
            sink.add(us, KING_SAFE_CHECKS + r, n);
            units += SAFE_CHECK_UNIT * n;
        }
    }

    let weak = (zone & our_attacks.all & !their_attacks.without_king).count() as i32;
    if weak > 0 {
        sink.add(us, KING_WEAK_SQUARES, weak);
        units += weak;
    }
    if units > 0 {
        let units = units.min(MAX_KING_ATTACK_UNITS);
        sink.add(us, KING_ATTACK_UNITS, units);
        sink.add(
            us,
            KING_ATTACK_UNITS_SQUARED,
            units * units / KING_ATTACK_SQUARE_DIVISOR,
        );
    }
}

/// Pawns in front of our king and enemy pawns storming it.
fn king_shelter<S: Sink>(ctx: &Context, us: Color, sink: &mut S) {
    let board = ctx.board;
    let Some(king) = board.king_of(us) else {
        return;
    };
    let our_pawns = board.pawns() & board.by_color(us);
    let their_pawns = board.pawns() & board.by_color(!us);
    let in_front = ranks_ahead(king.rank(), us);
    let king_file = king.file();
    for file in [king_file.offset(-1), Some(king_file), king_file.offset(1)]
        .into_iter()
        .flatten()
    {
        let mask = file_mask(file);
        let shelter = nearest_rank(our_pawns & mask & in_front, us);
        let block = if file == king_file {
            SHELTER_KING_FILE
        } else {
            SHELTER_SIDE_FILE
        };
        sink.add(us, block + shelter, 1);
        let storm = nearest_rank(their_pawns & mask, us);
        sink.add(us, PAWN_STORM + storm, 1);
    }
    let king_file_mask = file_mask(king_file);
    if (king_file_mask & board.pawns()).is_empty() {
        sink.add(us, KING_OPEN_FILE, 1);
    } else if (king_file_mask & our_pawns).is_empty() {
        sink.add(us, KING_SEMI_OPEN_FILE, 1);
    }
}

/// Relative rank (from `us`'s side) of the pawn in `pawns` closest to our back rank, or 0.
fn nearest_rank(pawns: Bitboard, us: Color) -> usize {
    let sq = match us {
        Color::White => pawns.first(),
        Color::Black => pawns.last(),
    };
    sq.map_or(0, |sq| relative_rank(sq, us))
}

/// Our attacks on their pieces.
fn threats<S: Sink>(ctx: &Context, us: Color, sink: &mut S) {
    let board = ctx.board;
    let them = !us;
    let theirs = board.by_color(them);
    let targets = theirs & !board.kings();
    let their_pawns = theirs & board.pawns();
    let our_attacks = ctx.attacks(us);
    let their_attacks = ctx.attacks(them);

    let minor = our_attacks.by_role[Role::Knight as usize - 1]
        | our_attacks.by_role[Role::Bishop as usize - 1];
    let rook = our_attacks.by_role[Role::Rook as usize - 1];
    for role in [
        Role::Pawn,
        Role::Knight,
        Role::Bishop,
        Role::Rook,
        Role::Queen,
    ] {
        let victims = targets & board.by_role(role);
        if victims.is_empty() {
            continue;
        }
        let r = role as usize - 1;
        let by_pawn = if role == Role::Pawn {
            0
        } else {
            (victims & our_attacks.by_role[0]).count() as i32
        };
        for (block, n) in [
            (THREAT_BY_PAWN, by_pawn),
            (THREAT_BY_MINOR, (victims & minor).count() as i32),
            (THREAT_BY_ROOK, (victims & rook).count() as i32),
        ] {
            if n > 0 {
                sink.add(us, block + r, n);
            }
        }
    }
    let hanging = (targets & our_attacks.all & !their_attacks.all).count() as i32;
    if hanging > 0 {
        sink.add(us, HANGING, hanging);
    }

    let our_pawns = board.pawns() & board.by_color(us);
    let pushes = forward(our_pawns, us) & !board.occupied();
    let safe_pushes = pushes & !their_attacks.by_role[0] & (our_attacks.all | !their_attacks.all);
    let threatened = pawn_attacks(safe_pushes, us) & targets & !their_pawns;
    if threatened.any() {
        sink.add(us, PAWN_PUSH_THREAT, threatened.count() as i32);
    }
}

/// Passed-pawn terms that depend on more than pawns (so they are not cached).
fn passed_pawns<S: Sink>(ctx: &Context, us: Color, sink: &mut S) {
    let board = ctx.board;
    let them = !us;
    let occupied = board.occupied();
    let our_king = board.king_of(us);
    let their_king = board.king_of(them);
    let they_have_pieces = (board.by_color(them) & !board.pawns() & !board.kings()).any();
    for sq in ctx.pawns.passed[us as usize] {
        let rank = relative_rank(sq, us);
        let path = file_ahead(sq, us);
        let Some(stop) = forward(Bitboard::from(sq), us).first() else {
            continue;
        };
        let free = (path & occupied).is_empty();
        if free {
            sink.add(us, PASSED_FREE_PATH + rank, 1);
        }
        if occupied.contains(stop) {
            sink.add(us, PASSED_BLOCKED + rank, 1);
        }
        let advance = rank.saturating_sub(2) as i32;
        if advance > 0 {
            if let Some(k) = our_king {
                sink.add(
                    us,
                    PASSED_OWN_KING_DISTANCE,
                    k.distance(stop) as i32 * advance,
                );
            }
            if let Some(k) = their_king {
                sink.add(
                    us,
                    PASSED_THEIR_KING_DISTANCE,
                    k.distance(stop) as i32 * advance,
                );
            }
        }
        if !they_have_pieces && free {
            if let Some(k) = their_king {
                let promotion = path.last_for(us).unwrap_or(stop);
                let moves_to_queen = (7 - rank as i32) - i32::from(rank == 1);
                let king_moves = k.distance(promotion) as i32 - i32::from(ctx.turn == them);
                if king_moves > moves_to_queen {
                    sink.add(us, UNSTOPPABLE_PASSER, 1);
                }
            }
        }
    }
}

/// The square of a file segment furthest toward `color`'s promotion rank.
trait LastFor {
    fn last_for(self, color: Color) -> Option<Square>;
}

impl LastFor for Bitboard {
    fn last_for(self, color: Color) -> Option<Square> {
        match color {
            Color::White => self.last(),
            Color::Black => self.first(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_ranks_counts_from_the_colours_side() {
        assert_eq!(
            relative_ranks(Color::Black, 1, 2),
            Bitboard(0x00ff_ff00_0000_0000)
        );
    }
}
