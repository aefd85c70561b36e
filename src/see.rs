//! Static exchange evaluation: does a capture sequence on one square, each side always
//! recapturing with its least valuable attacker and free to stop, gain at least a threshold?
//!
//! Works on shakmaty's attack tables. Sliders behind a piece that has just captured (x-rays)
//! join in as the square's attackers are recomputed through the thinned occupancy. Pins are
//! ignored, as usual: SEE is a fast estimate for ordering and pruning, not a proof.

use shakmaty::attacks::{bishop_attacks, rook_attacks};
use shakmaty::{Bitboard, Board, Chess, Color, Move, Position, Role, Square};

use crate::score::piece_value as value;

/// The least valuable of `attackers` (which are all one colour's), with its role.
#[inline]
fn least_valuable(board: &Board, attackers: Bitboard) -> Option<(Square, Role)> {
    for role in Role::ALL {
        if let Some(sq) = (attackers & board.by_role(role)).first() {
            return Some((sq, role));
        }
    }
    None
}

/// True when playing `m` wins at least `threshold` centipawns by exchange on its target.
pub fn see_at_least(pos: &Chess, m: Move, threshold: i32) -> bool {
    let (from, to) = match m {
        Move::Normal { from, to, .. } | Move::EnPassant { from, to } => (from, to),
        // Castling never loses material by exchange on a square.
        Move::Castle { .. } | Move::Put { .. } => return threshold <= 0,
    };
    let board = pos.board();
    let captured = m.capture().map_or(0, value);
    let promotion_gain = m.promotion().map_or(0, |r| value(r) - value(Role::Pawn));
    // `margin` is what the side that just captured is ahead of its target by, seen from
    // the side about to recapture: it flips sign and absorbs each capture's value.
    let mut margin = captured + promotion_gain - threshold;
    if margin < 0 {
        // Even if nobody recaptures, the move does not reach the threshold.
        return false;
    }
    let on_square = m.promotion().unwrap_or(m.role());
    margin = value(on_square) - margin;
    if margin <= 0 {
        // Even losing the capturing piece keeps us at the threshold.
        return true;
    }

    let mut occupied = board.occupied() ^ Bitboard::from(from) ^ Bitboard::from(to);
    if let Move::EnPassant { .. } = m {
        occupied ^= Bitboard::from(Square::from_coords(to.file(), from.rank()));
    }
    let diagonal = board.bishops() | board.queens();
    let straight = board.rooks() | board.queens();
    let mut attackers =
        board.attacks_to(to, Color::White, occupied) | board.attacks_to(to, Color::Black, occupied);

    let mut side = pos.turn();
    // Whether the mover reaches the threshold if the exchange stopped now.
    let mut mover_wins = true;
    loop {
        side = !side;
        attackers &= occupied;
        let Some((sq, role)) = least_valuable(board, attackers & board.by_color(side)) else {
            break;
        };
        // Assume `side` recaptures; the result flips unless the other side answers.
        mover_wins = !mover_wins;
        if role == Role::King {
            // A king may only recapture if nothing defends the square any more.
            let defended = (attackers & board.by_color(!side)).any();
            return if defended { !mover_wins } else { mover_wins };
        }
        margin = value(role) - margin;
        // `side` need not go on: if even losing this piece keeps its gain, it is decided.
        if margin < i32::from(mover_wins) {
            break;
        }
        occupied ^= Bitboard::from(sq);
        if matches!(role, Role::Pawn | Role::Bishop | Role::Queen) {
            attackers |= bishop_attacks(to, occupied) & diagonal;
        }
        if matches!(role, Role::Rook | Role::Queen) {
            attackers |= rook_attacks(to, occupied) & straight;
        }
    }
    mover_wins
}

#[cfg(test)]
mod tests {
    use super::*;
    use shakmaty::fen::Fen;
    use shakmaty::uci::UciMove;
    use shakmaty::CastlingMode;

    fn check(fen: &str, uci: &str, threshold: i32) -> bool {
        let pos: Chess = fen
            .parse::<Fen>()
            .unwrap()
            .into_position(CastlingMode::Standard)
            .unwrap();
        let m = uci.parse::<UciMove>().unwrap().to_move(&pos).unwrap();
        see_at_least(&pos, m, threshold)
    }

    #[test]
    fn free_pawn_is_a_gain() {
        // Rook takes an undefended pawn.
        let fen = "1k1r4/1pp4p/p7/4p3/8/P5P1/1PP4P/2K1R3 w - - 0 1";
        assert!(check(fen, "e1e5", 0));
        assert!(check(fen, "e1e5", 100));
        assert!(!check(fen, "e1e5", 101));
    }

    #[test]
    fn defended_pawn_costs_the_knight() {
        // Knight takes a pawn defended by a pawn: loses about 220.
        let fen = "1k1r3q/1ppn3p/p4b2/4p3/8/P2N2P1/1PP1R1BP/2K1Q3 w - - 0 1";
        assert!(!check(fen, "d3e5", 0));
        assert!(check(fen, "d3e5", -300));
    }

    #[test]
    fn xray_recapture_counts() {
        // Rxd5 pxd5?? no: doubled rooks take a pawn defended once by a rook, backed by x-ray.
        let fen = "3r2k1/8/8/3p4/8/8/3R4/3R2K1 w - - 0 1";
        // d2xd5 Rxd5 Rxd5: white wins a pawn and the exchange balance is +100.
        assert!(check(fen, "d2d5", 100));
        assert!(!check(fen, "d2d5", 101));
    }

    #[test]
    fn quiet_move_to_attacked_square_loses() {
        // Queen steps to a square attacked by a pawn.
        let fen = "4k3/8/3p4/8/8/8/8/2Q1K3 w - - 0 1";
        assert!(!check(fen, "c1c5", 0));
        assert!(check(fen, "c1c4", 0));
    }

    #[test]
    fn king_cannot_recapture_into_defence() {
        // Rook takes a pawn next to the enemy king, defended by the king but protected by
        // our bishop: the king may not recapture.
        let fen = "6k1/5p2/8/3B4/8/8/8/5RK1 w - - 0 1";
        assert!(check(fen, "f1f7", 100));
    }
}
