//! Legal generation of move subsets, which shakmaty does not offer (its `capture_moves`
//! filters the full legal list): captures alone for quiescence search and the capture
//! stage of the staged picker, the quiet moves later and only if no capture or killer
//! cut the node off first. Positions in check are left to shakmaty's evasion generator.
//!
//! Each list comes out in the order shakmaty's `legal_moves` gives those moves, so the
//! search picks the same move among equally scored ones and its node counts do not change.

use shakmaty::{
    attacks, Bitboard, CastlingSide, Chess, Color, File, Move, MoveList, Position, Role, Square,
};

const PROMOTIONS: [Role; 4] = [Role::Queen, Role::Rook, Role::Bishop, Role::Knight];

/// What legality needs to know of a position not in check: a move is legal unless it moves
/// a pinned piece off its pin line or the king onto an attacked square.
struct Legality<'a> {
    board: &'a Chess,
    us: Color,
    king: Square,
    pinned: Bitboard,
}

impl Legality<'_> {
    fn new(board: &Chess) -> Legality<'_> {
        debug_assert!(!board.is_check());
        let us = board.turn();
        let king = board
            .board()
            .king_of(us)
            .expect("standard chess has a king of each colour");
        Legality {
            board,
            us,
            king,
            pinned: pinned_pieces(board, king),
        }
    }

    #[inline]
    fn allows(&self, from: Square, to: Square) -> bool {
        !self.pinned.contains(from) || attacks::aligned(from, to, self.king)
    }

    /// Legal non-pawn, non-king moves onto `targets`, by role then square, as shakmaty.
    fn piece_moves(&self, targets: Bitboard, moves: &mut MoveList) {
        let position = self.board.board();
        for role in [Role::Knight, Role::Bishop, Role::Rook, Role::Queen] {
            for from in self.board.our(role) {
                let piece_targets = attacks::attacks(from, role.of(self.us), position.occupied());
                for to in piece_targets & targets {
                    if self.allows(from, to) {
                        moves.push(normal(role, from, to, position.role_at(to), None));
                    }
                }
            }
        }
    }

    /// King moves onto `targets` that do not step into an attack. Not being in check, the
    /// king cannot uncover an attack on its new square by leaving the old one.
    fn king_moves(&self, targets: Bitboard, moves: &mut MoveList) {
        let position = self.board.board();
        for to in attacks::king_attacks(self.king) & targets {
            if position
                .attacks_to(to, !self.us, position.occupied())
                .is_empty()
            {
                moves.push(normal(
                    Role::King,
                    self.king,
                    to,
                    position.role_at(to),
                    None,
                ));
            }
        }
    }

    /// Pawn moves by `offset` landing on `targets` (ordinary moves, then promotions, as
    /// shakmaty lists them), all four promotion pieces or only the queen.
    fn pawn_moves(
        &self,
        offset: i32,
        targets: Bitboard,
        promotions: &[Role],
        moves: &mut MoveList,
    ) {
        let position = self.board.board();
        let landing = (targets & !Bitboard::BACKRANKS)
            .into_iter()
            .chain(targets & Bitboard::BACKRANKS);
        for to in landing {
            let from = Square::new((i32::from(to) - offset) as u32);
            if !self.allows(from, to) {
                continue;
            }
            let capture = position.role_at(to);
            if Bitboard::BACKRANKS.contains(to) {
                for &promotion in promotions {
                    moves.push(normal(Role::Pawn, from, to, capture, Some(promotion)));
                }
            } else {
                moves.push(normal(Role::Pawn, from, to, capture, None));
            }
        }
    }

    /// Pawn captures toward the a-file, then toward the h-file, as shakmaty orders them.
    fn pawn_captures(&self, moves: &mut MoveList) {
        let pawns = self.board.our(Role::Pawn);
        let them = self.board.them();
        let (west, east) = self.us.fold_wb((7, 9), (-9, -7));
        for (offset, edge) in [(west, File::A), (east, File::H)] {
            let targets = (pawns & !Bitboard::from(edge)).shift(offset) & them;
            self.pawn_moves(offset, targets, &PROMOTIONS, moves);
        }
    }

    fn captures(&self, moves: &mut MoveList) {
        if self.board.maybe_ep_square().is_some() {
            moves.extend(self.board.en_passant_moves());
        }
        self.pawn_captures(moves);
        self.piece_moves(self.board.them(), moves);
        self.king_moves(self.board.them(), moves);
    }

    fn single_push_offset(&self) -> i32 {
        push_offset(self.us)
    }
}

/// The legal captures of `board` (not in check), every promotion piece for a capturing
/// promotion, appended to `moves` in shakmaty's order.
pub fn captures(board: &Chess, moves: &mut MoveList) {
    Legality::new(board).captures(moves);
}

/// Quiescence moves of `board` (not in check): its captures, then its quiet queen
/// promotions (under-promotions almost never change a score).
pub fn tactical_moves(board: &Chess, moves: &mut MoveList) {
    let legality = Legality::new(board);
    legality.captures(moves);
    let push = legality.single_push_offset();
    let targets =
        board.our(Role::Pawn).shift(push) & !board.board().occupied() & Bitboard::BACKRANKS;
    legality.pawn_moves(push, targets, &[Role::Queen], moves);
}

/// The legal non-captures of `board` (not in check), promotions and castling included,
/// appended to `moves` in shakmaty's order.
pub fn quiets(board: &Chess, moves: &mut MoveList) {
    let legality = Legality::new(board);
    let empty = !board.board().occupied();
    let push = legality.single_push_offset();
    let single = board.our(Role::Pawn).shift(push) & empty;
    legality.pawn_moves(push, single, &PROMOTIONS, moves);
    let double = single.shift(push)
        & empty
        & board.turn().fold_wb(
            Bitboard::from_rank(shakmaty::Rank::Fourth),
            Bitboard::from_rank(shakmaty::Rank::Fifth),
        );
    legality.pawn_moves(2 * push, double, &PROMOTIONS, moves);
    legality.piece_moves(empty, moves);
    legality.king_moves(empty, moves);
    // shakmaty returns castling moves as a whole move list (copied twice on the way):
    // ask only for a side that still has the right.
    for side in [CastlingSide::KingSide, CastlingSide::QueenSide] {
        if board.castles().has(board.turn(), side) {
            moves.extend(board.castling_moves(side));
        }
    }
}

/// Whether `m` is a legal move of `board`, as `board.is_legal(m)` decides but without
/// generating candidate lists: the search asks it of every TT move, killer and
/// counter-move, most of them quiet moves of positions not in check. Moves of positions
/// in check, en passant and castling go to shakmaty.
pub fn is_legal(board: &Chess, m: Move) -> bool {
    let Move::Normal {
        role,
        from,
        capture,
        to,
        promotion,
    } = m
    else {
        return board.is_legal(m);
    };
    if board.is_check() {
        return board.is_legal(m);
    }
    let us = board.turn();
    let position = board.board();
    if position.piece_at(from) != Some(role.of(us))
        || board.us().contains(to)
        || position.role_at(to) != capture
        || capture == Some(Role::King)
    {
        return false;
    }
    let last_rank = role == Role::Pawn && Bitboard::BACKRANKS.contains(to);
    let promotion_ok = match promotion {
        None => !last_rank,
        Some(piece) => last_rank && !matches!(piece, Role::Pawn | Role::King),
    };
    if !promotion_ok {
        return false;
    }
    let occupied = position.occupied();
    let reachable = match role {
        Role::Pawn => {
            let push = push_offset(us);
            if capture.is_some() {
                attacks::pawn_attacks(us, from).contains(to)
            } else if i32::from(to) - i32::from(from) == push {
                true
            } else {
                let start = us.fold_wb(shakmaty::Rank::Second, shakmaty::Rank::Seventh);
                let middle = Square::new((i32::from(from) + push) as u32);
                from.rank() == start
                    && i32::from(to) - i32::from(from) == 2 * push
                    && !occupied.contains(middle)
            }
        }
        Role::King => {
            return attacks::king_attacks(from).contains(to)
                && position.attacks_to(to, !us, occupied).is_empty();
        }
        _ => attacks::attacks(from, role.of(us), occupied).contains(to),
    };
    reachable && Legality::new(board).allows(from, to)
}

/// Whether the legal move `m` of `board` checks the opponent: the moved (or promoted)
/// piece attacks their king from its new square, or it uncovers a slider of ours. Asked
/// before the move is made, so that a move pruned for not giving check costs no
/// `make_move`. En passant and castling, which move a second piece, are played out.
pub fn gives_check(board: &Chess, m: Move) -> bool {
    let Move::Normal {
        role,
        from,
        to,
        promotion,
        ..
    } = m
    else {
        let mut after = board.clone();
        after.play_unchecked(m);
        return after.is_check();
    };
    let position = board.board();
    let us = board.turn();
    let Some(king) = position.king_of(!us) else {
        return false;
    };
    let occupied = (position.occupied() & !Bitboard::from(from)) | Bitboard::from(to);
    let piece = promotion.unwrap_or(role).of(us);
    if attacks::attacks(to, piece, occupied).contains(king) {
        return true;
    }
    // The moved piece was found above; a discovered check comes from a slider that stayed.
    let ours = board.us() & !Bitboard::from(from);
    let diagonal = position.bishops_and_queens() & ours;
    let straight = position.rooks_and_queens() & ours;
    (attacks::bishop_attacks(king, occupied) & diagonal).any()
        || (attacks::rook_attacks(king, occupied) & straight).any()
}

/// Square-index step of a single pawn push for `us`.
fn push_offset(us: Color) -> i32 {
    us.fold_wb(8, -8)
}

fn normal(
    role: Role,
    from: Square,
    to: Square,
    capture: Option<Role>,
    promotion: Option<Role>,
) -> Move {
    Move::Normal {
        role,
        from,
        capture,
        to,
        promotion,
    }
}

/// Pieces of the side to move that alone stand between their king and an enemy slider:
/// such a piece may only move along that line.
fn pinned_pieces(board: &Chess, king: Square) -> Bitboard {
    let position = board.board();
    let snipers = (attacks::rook_attacks(king, Bitboard::EMPTY) & position.rooks_and_queens())
        | (attacks::bishop_attacks(king, Bitboard::EMPTY) & position.bishops_and_queens());
    let mut pinned = Bitboard::EMPTY;
    for sniper in snipers & board.them() {
        let between = attacks::between(king, sniper) & position.occupied();
        if !between.more_than_one() {
            pinned |= between;
        }
    }
    pinned & board.us()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::BENCH_FENS;
    use crate::position::Position as EnginePosition;
    use rand::rngs::StdRng;
    use rand::{Rng, SeedableRng};

    /// Each generator against shakmaty's legal list, filtered, in its order.
    fn check(board: &Chess) {
        let all = board.legal_moves();
        let legal_captures: Vec<Move> = all.iter().copied().filter(|m| m.is_capture()).collect();
        let legal_quiets: Vec<Move> = all.iter().copied().filter(|m| !m.is_capture()).collect();
        let queen_pushes = legal_quiets
            .iter()
            .copied()
            .filter(|m| m.promotion() == Some(Role::Queen));
        let legal_tactical: Vec<Move> =
            legal_captures.iter().copied().chain(queen_pushes).collect();
        let fen = shakmaty::fen::Fen::from_position(board, shakmaty::EnPassantMode::Legal);
        for (generator, expected) in [
            (captures as fn(&Chess, &mut MoveList), legal_captures),
            (quiets, legal_quiets),
            (tactical_moves, legal_tactical),
        ] {
            let mut moves = MoveList::new();
            generator(board, &mut moves);
            assert_eq!(moves.to_vec(), expected, "{fen}");
        }
    }

    /// Random games from every bench position, checking every position not in check:
    /// pins, en passant (legal and illegal), promotions and king captures all come up.
    #[test]
    fn tactical_moves_equal_the_filtered_legal_list_in_order() {
        let mut rng = StdRng::seed_from_u64(5);
        let mut checked = 0;
        for fen in BENCH_FENS {
            for _ in 0..20 {
                let mut board = EnginePosition::from_fen(fen, false)
                    .unwrap()
                    .board()
                    .clone();
                for _ in 0..80 {
                    if !board.is_check() {
                        check(&board);
                        checked += 1;
                    }
                    let moves = board.legal_moves();
                    if moves.is_empty() {
                        break;
                    }
                    // Prefer captures and promotions half the time, to reach endgames.
                    let tactical: Vec<Move> = moves
                        .iter()
                        .copied()
                        .filter(|m| m.is_capture() || m.is_promotion())
                        .collect();
                    let m = if !tactical.is_empty() && rng.random_bool(0.5) {
                        tactical[rng.random_range(0..tactical.len())]
                    } else {
                        moves[rng.random_range(0..moves.len())]
                    };
                    board.play_unchecked(m);
                }
            }
        }
        assert!(checked > 50_000, "only {checked} positions checked");
    }

    /// `is_legal` agrees with shakmaty's on every move of nearby positions (many of them
    /// legal here, many not) and on mangled ones: wrong piece, capture field or promotion.
    #[test]
    fn is_legal_agrees_with_shakmaty() {
        let mut rng = StdRng::seed_from_u64(8);
        let mut checked = 0;
        for fen in BENCH_FENS {
            let mut board = EnginePosition::from_fen(fen, false)
                .unwrap()
                .board()
                .clone();
            let mut earlier: Vec<Move> = Vec::new();
            for _ in 0..60 {
                let moves = board.legal_moves();
                if moves.is_empty() {
                    break;
                }
                let mut candidates: Vec<Move> = moves.iter().copied().collect();
                candidates.extend(earlier.iter().copied());
                for &m in moves.iter() {
                    if let Move::Normal {
                        role,
                        from,
                        capture,
                        to,
                        promotion,
                    } = m
                    {
                        let other_role = Role::ALL[rng.random_range(0..6)];
                        candidates.push(normal(other_role, from, to, capture, promotion));
                        candidates.push(normal(role, from, to, None, promotion));
                        candidates.push(normal(role, from, to, Some(Role::Knight), promotion));
                        candidates.push(normal(role, from, to, capture, Some(Role::Queen)));
                        candidates.push(normal(role, to, from, None, None));
                    }
                }
                for &m in &candidates {
                    assert_eq!(
                        is_legal(&board, m),
                        board.is_legal(m),
                        "{m:?} in {}",
                        shakmaty::fen::Fen::from_position(&board, shakmaty::EnPassantMode::Legal)
                    );
                    checked += 1;
                }
                earlier = moves.iter().copied().collect();
                board.play_unchecked(moves[rng.random_range(0..moves.len())]);
            }
        }
        assert!(checked > 100_000, "only {checked} moves checked");
    }

    /// `gives_check` agrees with making the move on every legal move along random games
    /// from the bench positions: direct, discovered and double checks, promotions, en
    /// passant and castling all come up.
    #[test]
    fn gives_check_agrees_with_making_the_move() {
        let mut rng = StdRng::seed_from_u64(11);
        let (mut checked, mut checks) = (0, 0);
        for fen in BENCH_FENS {
            for _ in 0..10 {
                let mut board = EnginePosition::from_fen(fen, false)
                    .unwrap()
                    .board()
                    .clone();
                for _ in 0..80 {
                    let moves = board.legal_moves();
                    if moves.is_empty() {
                        break;
                    }
                    for &m in moves.iter() {
                        let mut after = board.clone();
                        after.play_unchecked(m);
                        assert_eq!(
                            gives_check(&board, m),
                            after.is_check(),
                            "{m:?} in {}",
                            shakmaty::fen::Fen::from_position(
                                &board,
                                shakmaty::EnPassantMode::Legal
                            )
                        );
                        checked += 1;
                        checks += usize::from(after.is_check());
                    }
                    board.play_unchecked(moves[rng.random_range(0..moves.len())]);
                }
            }
        }
        assert!(
            checked > 100_000 && checks > 2_000,
            "{checked} moves, {checks} checks"
        );
    }

    #[test]
    fn pins_en_passant_and_promotions() {
        for fen in [
            // The e5 pawn is pinned on the rank: en passant would expose the king.
            "8/8/8/K2pP2q/8/8/8/7k w - d6 0 2",
            // The pinned knight has no captures; the pinned bishop captures along its pin only.
            "4r2k/8/3p1p2/b7/4N3/2B5/8/4K3 w - - 0 1",
            // Capturing promotions on both sides, a blocked push, castling through attack.
            "r1n1k3/1P6/8/8/8/8/6p1/4K2R b K - 0 1",
            "1n2k3/P1P5/8/8/8/8/8/4K3 w - - 0 1",
            "r3k2r/8/b7/8/8/8/8/R3K2R w KQkq - 0 1",
            // A pinned pawn may push along its file only, the double step included.
            "4k3/4r3/8/8/8/8/4P3/4K3 w - - 0 1",
        ] {
            let board = EnginePosition::from_fen(fen, false)
                .unwrap()
                .board()
                .clone();
            assert!(!board.is_check(), "{fen}");
            check(&board);
            for m in board.legal_moves() {
                assert!(is_legal(&board, m), "{m:?} in {fen}");
            }
        }
    }
}
