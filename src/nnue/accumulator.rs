//! Accumulators: the first layer's sums for both perspectives, refreshed from a board or
//! updated from the parent board's accumulators by the pieces that changed, and the
//! per-ply stack the search keeps them in.
//!
//! The rows are added and subtracted by the kernels of `simd.rs`: packed 16-bit additions,
//! 8 lanes at a time with SSE2, 16 with AVX2 where the CPU has it. i16 arithmetic wraps:
//! intermediate sums may leave the i16 range, but the final value of a legal position never
//! does (see `MAX_FEATURE_BIAS`), and wrapping arithmetic is exact modulo 2^16, so the
//! result is the true sum.

use shakmaty::{Board, ByColor, CastlingSide, Color, Move, Piece, Position as _, Role, Square};

#[cfg(target_arch = "x86_64")]
use super::simd::Avx2;
use super::simd::{Block, Kernels, Portable, Simd};
use super::{Network, HIDDEN_STEP};
use crate::position::Position;

/// The first layer's output for both perspectives of one board: H values each, in blocks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Accumulator {
    values: ByColor<Box<[Block]>>,
}

/// Pieces that appear or disappear between two consecutive boards: at most two of each
/// (castling moves a king and a rook; a capture removes the captured piece and the mover's
/// old square). Boards further apart overflow it and are refreshed instead.
const MAX_CHANGES: usize = 2;

struct PieceChanges {
    added: [(Piece, Square); MAX_CHANGES],
    added_len: usize,
    removed: [(Piece, Square); MAX_CHANGES],
    removed_len: usize,
}

impl PieceChanges {
    #[inline]
    fn none() -> PieceChanges {
        let placeholder = (
            Piece {
                color: Color::White,
                role: Role::Pawn,
            },
            Square::A1,
        );
        PieceChanges {
            added: [placeholder; MAX_CHANGES],
            added_len: 0,
            removed: [placeholder; MAX_CHANGES],
            removed_len: 0,
        }
    }

    /// The pieces of `child` not on `parent` (added) and of `parent` not on `child`
    /// (removed), found square by square, so captures, castling, en passant and promotions
    /// need no special case; `None` when there are more than `MAX_CHANGES`.
    fn between(parent: &Board, child: &Board) -> Option<PieceChanges> {
        let mut changes = PieceChanges::none();
        // Only the squares whose piece changed: a move touches two to four of them, so
        // looking the pieces up there is cheaper than comparing all twelve piece sets.
        let mut changed = (parent.white() ^ child.white()) | (parent.black() ^ child.black());
        for role in Role::ALL {
            changed |= parent.by_role(role) ^ child.by_role(role);
        }
        for square in changed {
            if let Some(piece) = parent.piece_at(square) {
                changes.push_removed(piece, square)?;
            }
            if let Some(piece) = child.piece_at(square) {
                changes.push_added(piece, square)?;
            }
        }
        Some(changes)
    }

    /// The changes `m` (`None`: a null move) makes when played by `us`, read off the move
    /// instead of found by comparing the boards; the same pieces as `between`, maybe in
    /// another order, which the sums do not see. A piece drop, which standard chess never
    /// plays, is left to `between`.
    #[inline]
    fn of_move(us: Color, m: Option<Move>) -> Option<PieceChanges> {
        let mut changes = PieceChanges::none();
        let ours = |role| Piece { color: us, role };
        let theirs = |role| Piece { color: !us, role };
        match m {
            None => {}
            Some(Move::Normal {
                role,
                from,
                capture,
                to,
                promotion,
            }) => {
                changes.push_removed(ours(role), from)?;
                changes.push_added(ours(promotion.unwrap_or(role)), to)?;
                if let Some(captured) = capture {
                    changes.push_removed(theirs(captured), to)?;
                }
            }
            Some(Move::EnPassant { from, to }) => {
                changes.push_removed(ours(Role::Pawn), from)?;
                changes.push_added(ours(Role::Pawn), to)?;
                let victim = Square::from_coords(to.file(), from.rank());
                changes.push_removed(theirs(Role::Pawn), victim)?;
            }
            Some(Move::Castle { king, rook }) => {
                let side = CastlingSide::from_king_side(king < rook);
                changes.push_removed(ours(Role::King), king)?;
                changes.push_removed(ours(Role::Rook), rook)?;
                changes.push_added(ours(Role::King), side.king_to(us))?;
                changes.push_added(ours(Role::Rook), side.rook_to(us))?;
            }
            Some(Move::Put { .. }) => return None,
        }
        Some(changes)
    }

    #[inline]
    fn push_added(&mut self, piece: Piece, square: Square) -> Option<()> {
        *self.added.get_mut(self.added_len)? = (piece, square);
        self.added_len += 1;
        Some(())
    }

    #[inline]
    fn push_removed(&mut self, piece: Piece, square: Square) -> Option<()> {
        *self.removed.get_mut(self.removed_len)? = (piece, square);
        self.removed_len += 1;
        Some(())
    }
}

impl Accumulator {
    /// An accumulator of the right size for `network`, holding zeros (no board yet).
    pub fn zeroed(network: &Network) -> Accumulator {
        let zeros = vec![Block::default(); network.hidden_size() / HIDDEN_STEP].into_boxed_slice();
        Accumulator {
            values: ByColor {
                white: zeros.clone(),
                black: zeros,
            },
        }
    }

    pub fn from_board(network: &Network, board: &Board) -> Accumulator {
        let mut accumulator = Accumulator::zeroed(network);
        accumulator.refresh(network, board);
        accumulator
    }

    /// The H values of `perspective`, in blocks.
    #[inline]
    pub(super) fn values(&self, perspective: Color) -> &[Block] {
        &self.values[perspective]
    }

    /// Recomputes both perspectives from scratch: biases plus the rows of every piece.
    pub fn refresh(&mut self, network: &Network, board: &Board) {
        match network.simd() {
            Simd::Portable => self.refresh_with(Portable, network, board),
            // SAFETY: an `Avx2` exists, so the CPU has AVX2, the one feature the callee needs.
            #[cfg(target_arch = "x86_64")]
            Simd::Avx2(avx2) => unsafe { self.refresh_avx2(avx2, network, board) },
        }
    }

    /// The generic body compiled with AVX2 enabled, so the AVX2 kernels inline into it.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    fn refresh_avx2(&mut self, avx2: Avx2, network: &Network, board: &Board) {
        self.refresh_with(avx2, network, board);
    }

    #[inline(always)]
    fn refresh_with(&mut self, kernels: impl Kernels, network: &Network, board: &Board) {
        for perspective in Color::ALL {
            self.refresh_perspective(kernels, network, board, perspective);
        }
    }

    /// Recomputes one perspective from scratch.
    #[inline(always)]
    fn refresh_perspective(
        &mut self,
        kernels: impl Kernels,
        network: &Network,
        board: &Board,
        perspective: Color,
    ) {
        debug_assert_eq!(self.values.white.len() * HIDDEN_STEP, network.hidden_size());
        let view = network.king_buckets().view_of(perspective, board);
        let values = &mut self.values[perspective];
        values.copy_from_slice(network.feature_biases());
        for (square, piece) in board {
            kernels.add_sub_assign(values, [network.feature_row(view.index(piece, square))], []);
        }
    }

    /// Sets `self` to the accumulator of `child`, given `parent`, the accumulator of
    /// `parent_board`. Any two boards work; boards one move apart (or a null move, which
    /// changes nothing) take the fast path, others a refresh.
    pub fn update_from(
        &mut self,
        network: &Network,
        parent: &Accumulator,
        parent_board: &Board,
        child_board: &Board,
    ) {
        match network.simd() {
            Simd::Portable => {
                self.update_from_with(Portable, network, parent, parent_board, child_board)
            }
            // SAFETY: an `Avx2` exists, so the CPU has AVX2, the one feature the callee needs.
            #[cfg(target_arch = "x86_64")]
            Simd::Avx2(avx2) => unsafe {
                self.update_from_avx2(avx2, network, parent, parent_board, child_board)
            },
        }
    }

    /// The generic body compiled with AVX2 enabled, so the AVX2 kernels inline into it.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    fn update_from_avx2(
        &mut self,
        avx2: Avx2,
        network: &Network,
        parent: &Accumulator,
        parent_board: &Board,
        child_board: &Board,
    ) {
        self.update_from_with(avx2, network, parent, parent_board, child_board);
    }

    #[inline(always)]
    fn update_from_with(
        &mut self,
        kernels: impl Kernels,
        network: &Network,
        parent: &Accumulator,
        parent_board: &Board,
        child_board: &Board,
    ) {
        let changes = PieceChanges::between(parent_board, child_board);
        self.apply_changes(
            kernels,
            network,
            parent,
            (parent_board, child_board),
            changes,
        );
    }

    /// `update_from_with` given the pieces that changed (`None`: too many, refresh).
    #[inline(always)]
    fn apply_changes(
        &mut self,
        kernels: impl Kernels,
        network: &Network,
        parent: &Accumulator,
        (parent_board, child_board): (&Board, &Board),
        changes: Option<PieceChanges>,
    ) {
        let Some(changes) = changes else {
            self.refresh_with(kernels, network, child_board);
            return;
        };
        let added = &changes.added[..changes.added_len];
        let removed = &changes.removed[..changes.removed_len];
        let kings = network.king_buckets();
        for perspective in Color::ALL {
            let view = kings.view_of(perspective, child_board);
            // A king move into another bucket or across the mirror line changes the index
            // of every piece this perspective sees: rebuild it.
            if view != kings.view_of(perspective, parent_board) {
                self.refresh_perspective(kernels, network, child_board, perspective);
                continue;
            }
            let row =
                |&(piece, square): &(Piece, Square)| network.feature_row(view.index(piece, square));
            let (out, parent) = (&mut self.values[perspective], &parent.values[perspective]);
            match (added, removed) {
                ([], []) => out.copy_from_slice(parent),
                // A quiet move or a promotion.
                ([a], [r]) => kernels.add_sub_rows(out, parent, [row(a)], [row(r)]),
                // A capture, en passant or a capturing promotion.
                ([a], [r1, r2]) => kernels.add_sub_rows(out, parent, [row(a)], [row(r1), row(r2)]),
                // Castling.
                ([a1, a2], [r1, r2]) => {
                    kernels.add_sub_rows(out, parent, [row(a1), row(a2)], [row(r1), row(r2)])
                }
                _ => {
                    out.copy_from_slice(parent);
                    added
                        .iter()
                        .for_each(|a| kernels.add_sub_assign(out, [row(a)], []));
                    removed
                        .iter()
                        .for_each(|r| kernels.add_sub_assign(out, [], [row(r)]));
                }
            }
        }
    }
}

/// One search ply's accumulator and the Zobrist key of the board it describes (`None`
/// until first filled).
#[derive(Clone, Debug)]
struct Entry {
    key: Option<u64>,
    accumulator: Accumulator,
}

/// Accumulators along the search path, one per ply from the root (ply 0).
///
/// An entry is trusted for a board when its key equals that board's Zobrist key: a 64-bit
/// key match between two different boards at the same ply of one search is as unlikely as
/// the transposition table collisions the search already lives with. So `evaluate` needs
/// no notice of makes and unmakes: it finds the nearest ply at or below the current one
/// whose entry matches the position's board there, and brings the entries above it up to
/// date by incremental updates, board to board. A ply reached again down another branch
/// fails the key check and is rebuilt from its parent; a null move is an update with no
/// piece changes; a transposition to the same board at the same ply is reused as it is.
#[derive(Clone, Debug, Default)]
pub struct AccumulatorStack {
    entries: Vec<Entry>,
    /// The checksum of the network the entries were computed with.
    network: Option<u64>,
}

impl AccumulatorStack {
    pub fn new() -> AccumulatorStack {
        AccumulatorStack::default()
    }

    /// Starts a search from `root` (its Zobrist key `root_key`) at ply 0.
    pub fn reset(&mut self, network: &Network, root: &Board, root_key: u64) {
        self.use_network(network, 0);
        let root_entry = &mut self.entries[0];
        root_entry.accumulator.refresh(network, root);
        root_entry.key = Some(root_key);
    }

    /// The evaluation in centipawns, for the side to move, of `position`'s current board,
    /// which the search reached at `ply` (ply 0 being the board given to `reset`, and each
    /// ply one make or null move). Correct whatever was evaluated before: at worst it
    /// refreshes from the oldest board it can see.
    pub fn evaluate(&mut self, network: &Network, position: &Position, ply: usize) -> i32 {
        // The level is matched here, once an evaluation, so that the updates and the output
        // layer below are compiled, and inlined, for it.
        match network.simd() {
            Simd::Portable => self.evaluate_with(Portable, network, position, ply),
            // SAFETY: an `Avx2` exists, so the CPU has AVX2, the one feature the callee needs.
            #[cfg(target_arch = "x86_64")]
            Simd::Avx2(avx2) => unsafe { self.evaluate_avx2(avx2, network, position, ply) },
        }
    }

    /// The generic body compiled with AVX2 enabled, so the AVX2 kernels inline into it.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    fn evaluate_avx2(
        &mut self,
        avx2: Avx2,
        network: &Network,
        position: &Position,
        ply: usize,
    ) -> i32 {
        self.evaluate_with(avx2, network, position, ply)
    }

    #[inline(always)]
    fn evaluate_with(
        &mut self,
        kernels: impl Kernels,
        network: &Network,
        position: &Position,
        ply: usize,
    ) -> i32 {
        self.bring_up_to_date(kernels, network, position, ply);
        network.output_with(
            kernels,
            &self.entries[ply].accumulator,
            position.turn(),
            position.board().board().occupied().count(),
        )
    }

    /// Makes `entries` hold accumulators of `network`'s size for plies 0..=ply, dropping
    /// them all when they were computed by another network.
    fn use_network(&mut self, network: &Network, ply: usize) {
        if self.network != Some(network.checksum()) {
            self.entries.clear();
            self.network = Some(network.checksum());
        }
        while self.entries.len() <= ply {
            self.entries.push(Entry {
                key: None,
                accumulator: Accumulator::zeroed(network),
            });
        }
    }

    #[inline(always)]
    fn bring_up_to_date(
        &mut self,
        kernels: impl Kernels,
        network: &Network,
        position: &Position,
        ply: usize,
    ) {
        self.use_network(network, ply);
        // The boards the position holds reach back `deepest_back` plies from the current one.
        let deepest_back = ply.min(position.ply_count() - 1);
        let matches = |entry: &Entry, back: usize| {
            entry.key.is_some() && entry.key == position.board_back(back).map(|(_, key)| key)
        };
        let mut base = ply;
        while !matches(&self.entries[base], ply - base) {
            if ply - base == deepest_back {
                let (board, key) = position
                    .board_back(deepest_back)
                    .expect("deepest_back is within the position's history");
                let entry = &mut self.entries[base];
                entry
                    .accumulator
                    .refresh_with(kernels, network, board.board());
                entry.key = Some(key);
                break;
            }
            base -= 1;
        }
        for child in base + 1..=ply {
            let (below, above) = self.entries.split_at_mut(child);
            let (parent_board, _) = position
                .board_back(ply - child + 1)
                .expect("the parent is within the position's history");
            let (child_board, child_key) = position
                .board_back(ply - child)
                .expect("the child is within the position's history");
            // The move that made the child board (`None`: a null move) says what changed.
            let played = position.recent_move(ply - child + 1);
            let changes = PieceChanges::of_move(parent_board.turn(), played)
                .or_else(|| PieceChanges::between(parent_board.board(), child_board.board()));
            let entry = &mut above[0];
            entry.accumulator.apply_changes(
                kernels,
                network,
                &below[child - 1].accumulator,
                (parent_board.board(), child_board.board()),
                changes,
            );
            entry.key = Some(child_key);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nnue::FloatNetwork;
    use rand::rngs::StdRng;
    use rand::{Rng, SeedableRng};
    use shakmaty::Chess;

    fn network() -> Network {
        FloatNetwork::random(32, 21).quantize()
    }

    /// Nets with king buckets, mirrored or not: a king move may change a perspective's
    /// bucket or mirroring.
    fn king_bucketed_networks() -> Vec<Network> {
        let mut table = [0u8; 64];
        for (square, bucket) in table.iter_mut().enumerate() {
            *bucket = (square % 8 / 2 + square / 8 % 2) as u8;
        }
        let unmirrored = crate::nnue::KingBuckets::new(table, 5, false).unwrap();
        vec![
            FloatNetwork::random_with(32, 2, crate::nnue::KingBuckets::named("m4").unwrap(), 23)
                .quantize(),
            FloatNetwork::random_with(32, 1, unmirrored, 24).quantize(),
        ]
    }

    /// `network` running each kernel level this CPU has (portable first), so that the tests
    /// below run the AVX2 path and the portable (SSE2) one on a CPU with AVX2.
    fn at_every_level(network: &Network) -> Vec<Network> {
        Simd::available()
            .into_iter()
            .map(|level| network.clone().with_simd(level))
            .collect()
    }

    /// Incremental updates equal a refresh, at every level, and every level's refresh equals
    /// the portable one.
    #[test]
    fn update_equals_refresh_along_random_games() {
        for network in std::iter::once(network()).chain(king_bucketed_networks()) {
            for at_level in at_every_level(&network) {
                update_equals_refresh_along_random_games_with(&at_level);
            }
        }
    }

    fn update_equals_refresh_along_random_games_with(network: &Network) {
        let portable = network.clone().with_simd(Simd::Portable);
        let mut rng = StdRng::seed_from_u64(17);
        for _ in 0..20 {
            let mut board = Chess::default();
            let mut accumulator = Accumulator::from_board(network, board.board());
            for _ in 0..200 {
                let moves = board.legal_moves();
                if moves.is_empty() {
                    break;
                }
                let parent = board.clone();
                board.play_unchecked(moves[rng.random_range(0..moves.len())]);
                let mut child = Accumulator::zeroed(network);
                child.update_from(network, &accumulator, parent.board(), board.board());
                assert_eq!(child, Accumulator::from_board(network, board.board()));
                assert_eq!(child, Accumulator::from_board(&portable, board.board()));
                accumulator = child;
            }
        }
    }

    /// The pieces a move changes, read off the move (the search's updates), are those
    /// found by comparing the boards, along random games from positions with castling,
    /// en passant and promotions to play, and for a null move none.
    #[test]
    fn changes_read_off_the_move_are_those_between_the_boards() {
        let sorted = |changes: &PieceChanges| {
            let mut added = changes.added[..changes.added_len].to_vec();
            let mut removed = changes.removed[..changes.removed_len].to_vec();
            added.sort_by_key(|&(piece, square)| (piece.color as u8, piece.role, square));
            removed.sort_by_key(|&(piece, square)| (piece.color as u8, piece.role, square));
            (added, removed)
        };
        let mut rng = StdRng::seed_from_u64(67);
        let mut kinds = [0; 4];
        for fen in [
            "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
            "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1",
            "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
            "rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3",
        ] {
            for _ in 0..10 {
                let mut board: Chess = fen
                    .parse::<shakmaty::fen::Fen>()
                    .unwrap()
                    .into_position(shakmaty::CastlingMode::Standard)
                    .unwrap();
                for _ in 0..40 {
                    let moves = board.legal_moves();
                    for &m in &moves {
                        let mut child = board.clone();
                        child.play_unchecked(m);
                        let by_move = PieceChanges::of_move(board.turn(), Some(m)).unwrap();
                        let by_boards =
                            PieceChanges::between(board.board(), child.board()).unwrap();
                        assert_eq!(sorted(&by_move), sorted(&by_boards), "{m:?}");
                        let kind = match m {
                            Move::Castle { .. } => 0,
                            Move::EnPassant { .. } => 1,
                            _ if m.is_promotion() => 2,
                            _ => 3,
                        };
                        kinds[kind] += 1;
                    }
                    let Some(&m) = moves.get(rng.random_range(0..moves.len().max(1))) else {
                        break;
                    };
                    board.play_unchecked(m);
                }
            }
        }
        assert!(kinds.iter().all(|&n| n > 0), "{kinds:?}");
        let null = PieceChanges::of_move(Color::White, None).unwrap();
        assert_eq!((null.added_len, null.removed_len), (0, 0));
    }

    #[test]
    fn distant_boards_fall_back_to_a_refresh() {
        let network = network();
        let start = Chess::default();
        let far: Chess = "4k3/8/8/8/8/8/8/4K2R w K - 0 1"
            .parse::<shakmaty::fen::Fen>()
            .unwrap()
            .into_position(shakmaty::CastlingMode::Standard)
            .unwrap();
        let parent = Accumulator::from_board(&network, start.board());
        let mut child = Accumulator::zeroed(&network);
        child.update_from(&network, &parent, start.board(), far.board());
        assert_eq!(child, Accumulator::from_board(&network, far.board()));
        let far_accumulator = child.clone();
        child.update_from(&network, &far_accumulator, far.board(), start.board());
        assert_eq!(child, parent);
    }

    #[test]
    fn stack_follows_makes_unmakes_and_null_moves() {
        for network in at_every_level(&network()) {
            stack_follows_makes_unmakes_and_null_moves_with(&network);
        }
    }

    fn stack_follows_makes_unmakes_and_null_moves_with(network: &Network) {
        let portable = network.clone().with_simd(Simd::Portable);
        let mut position = Position::default();
        let mut stack = AccumulatorStack::new();
        stack.reset(network, position.board().board(), position.key());
        let check = |stack: &mut AccumulatorStack, position: &Position, ply: usize| {
            assert_eq!(
                stack.evaluate(network, position, ply),
                portable.evaluate_from_scratch(position.board()),
                "at ply {ply}, {}",
                position.fen()
            );
        };
        check(&mut stack, &position, 0);
        for (first, second) in [("e2e4", "d7d5"), ("g1f3", "b8c6"), ("e2e4", "e7e5")] {
            position.make_move(position.parse_uci_move(first).unwrap());
            check(&mut stack, &position, 1);
            assert!(position.make_null_move());
            check(&mut stack, &position, 2);
            position.unmake_move();
            position.make_move(position.parse_uci_move(second).unwrap());
            // Skips ply 2 on the way: ply 3 is brought up from ply 1 in two updates.
            position.make_move(position.parse_uci_move("a2a3").unwrap());
            check(&mut stack, &position, 3);
            position.unmake_move();
            position.unmake_move();
            position.unmake_move();
        }
    }

    #[test]
    fn stack_without_reset_or_after_a_network_change_still_agrees() {
        let (first, second) = (network(), FloatNetwork::random(48, 22).quantize());
        let mut position = Position::default();
        position.play_uci_moves(["d2d4", "g8f6"]).unwrap();
        let root = position.without_history();
        let mut position = root.clone();
        position.make_move(position.parse_uci_move("c2c4").unwrap());
        let mut stack = AccumulatorStack::new();
        for network in [&first, &second, &first] {
            assert_eq!(
                stack.evaluate(network, &position, 1),
                network.evaluate_from_scratch(position.board())
            );
        }
    }

    /// The embedded net (256 hidden neurons, 8 output buckets) evaluates every position
    /// along random games from the bench positions alike at every level, through the stack
    /// (incremental updates, the search's path) and from scratch (refreshes).
    #[test]
    fn the_embedded_net_evaluates_alike_at_every_level() {
        let embedded = crate::nnue::embedded();
        let portable = (*embedded).clone().with_simd(Simd::Portable);
        let levels = at_every_level(&embedded);
        let mut stacks = vec![AccumulatorStack::new(); levels.len()];
        let mut rng = StdRng::seed_from_u64(29);
        for fen in crate::bench::BENCH_FENS {
            let mut position = Position::from_fen(fen, false).unwrap();
            for (stack, network) in stacks.iter_mut().zip(&levels) {
                stack.reset(network, position.board().board(), position.key());
            }
            for ply in 1..=12 {
                let moves = position.legal_moves();
                if moves.is_empty() {
                    break;
                }
                position.make_move(moves[rng.random_range(0..moves.len())]);
                let expected = portable.evaluate_from_scratch(position.board());
                for (stack, network) in stacks.iter_mut().zip(&levels) {
                    assert_eq!(stack.evaluate(network, &position, ply), expected, "{fen}");
                    assert_eq!(network.evaluate_from_scratch(position.board()), expected);
                }
            }
        }
    }
}
