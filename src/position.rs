//! The engine's view of a game: shakmaty's `Chess` board plus an incrementally kept
//! Zobrist key (and keys of parts of the board, for the correction history) and the key
//! history needed for repetition detection.
//!
//! Moves are made copy-make: every ply pushes a fresh copy of the board, so unmaking a
//! move is a pop and can never leave a board half restored.

use shakmaty::fen::Fen;
use shakmaty::uci::UciMove;
use shakmaty::zobrist::{Zobrist64, ZobristValue};
use shakmaty::{
    Board, CastlingMode, CastlingSide, Chess, Color, EnPassantMode, File, Move, MoveList, Piece,
    Position as _, Role, Square,
};

/// One ply of history: the board, its key and the move that led to it.
#[derive(Clone)]
struct Ply {
    board: Chess,
    key: u64,
    /// The move that produced this board (`None` at the root of the game or after a null move).
    last_move: Option<Move>,
    /// Plies since the last null move: a repetition never reaches across a null move,
    /// since the positions before it were not really reached by alternating moves.
    plies_since_null: usize,
    /// The en passant part of `key` (0 when there is no legal en passant capture).
    ep_key: u64,
    piece_keys: PieceKeys,
}

/// Zobrist keys of parts of the board, each the XOR of the full key's piece-square values
/// over some of the pieces, kept incrementally like the full key. The correction history
/// indexes its tables by them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PieceKeys {
    pub pawns: u64,
    /// Each colour's pieces other than pawns (the king included), by `Color as usize`.
    pub non_pawn: [u64; 2],
    /// Knights, bishops and kings of both colours.
    pub minor: u64,
    /// Rooks, queens and kings of both colours.
    pub major: u64,
    /// The piece counts (see `MaterialCounts`), kept alongside the keys for the correction
    /// history's material table.
    pub material: MaterialCounts,
}

/// The count of each colour's pawns, knights, bishops, rooks and queens, a nibble each:
/// pawns in the top byte, then knights, bishops, rooks, queens in the lowest; in each byte
/// white's count above black's. A legal position has at most ten of a kind per colour
/// (shakmaty rejects more material than promotions can make), so no nibble overflows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MaterialCounts(pub u64);

impl MaterialCounts {
    pub fn from_scratch(board: &Board) -> MaterialCounts {
        let mut counts = MaterialCounts::default();
        for (_, piece) in board.clone() {
            counts.add(piece.color, piece.role);
        }
        counts
    }

    /// The one of `color`'s `role` (kings are not counted).
    #[inline]
    fn unit(color: Color, role: Role) -> u64 {
        let byte = match role {
            Role::King => return 0,
            _ => Role::Queen as u64 - role as u64,
        };
        1 << (8 * byte + 4 * u64::from(color == Color::White))
    }

    #[inline]
    fn add(&mut self, color: Color, role: Role) {
        self.0 += MaterialCounts::unit(color, role);
    }

    #[inline]
    fn remove(&mut self, color: Color, role: Role) {
        self.0 -= MaterialCounts::unit(color, role);
    }
}

impl PieceKeys {
    pub fn from_scratch(board: &Board) -> PieceKeys {
        let mut keys = PieceKeys::default();
        for (square, piece) in board.clone() {
            keys.toggle(square, piece.color, piece.role);
        }
        keys.material = MaterialCounts::from_scratch(board);
        keys
    }

    /// Puts a piece on `square` or takes it off.
    #[inline]
    fn toggle(&mut self, square: Square, color: Color, role: Role) {
        let value = piece_key(square, color, role);
        if role == Role::Pawn {
            self.pawns ^= value;
            return;
        }
        self.non_pawn[color as usize] ^= value;
        if matches!(role, Role::Knight | Role::Bishop | Role::King) {
            self.minor ^= value;
        }
        if matches!(role, Role::Rook | Role::Queen | Role::King) {
            self.major ^= value;
        }
    }
}

pub struct Position {
    plies: Vec<Ply>,
    castling_mode: CastlingMode,
}

impl Clone for Position {
    fn clone(&self) -> Position {
        Position {
            plies: self.plies.clone(),
            castling_mode: self.castling_mode,
        }
    }

    /// Reuses `self`'s ply buffer: a helper thread copies every search's root this way
    /// without allocating (docs/reliability.md: memory calls from idle-priority threads).
    fn clone_from(&mut self, source: &Position) {
        self.plies.clone_from(&source.plies);
        self.castling_mode = source.castling_mode;
    }
}

/// Why a `position` command could not be applied in full.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PositionError {
    BadFen(String),
    BadMove { index: usize, text: String },
}

impl std::fmt::Display for PositionError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PositionError::BadFen(why) => write!(f, "invalid FEN: {why}"),
            PositionError::BadMove { index, text } => {
                write!(f, "illegal or unparsable move {} ('{text}')", index + 1)
            }
        }
    }
}

pub fn key_from_scratch(board: &Chess) -> u64 {
    board.zobrist_hash::<Zobrist64>(EnPassantMode::Legal).0
}

#[inline]
fn z(v: Zobrist64) -> u64 {
    v.0
}

#[inline]
fn piece_key(square: Square, color: Color, role: Role) -> u64 {
    z(Zobrist64::zobrist_for_piece(square, Piece { color, role }))
}

/// The en passant part of the key: only a capture that is really legal counts, as in
/// shakmaty's `EnPassantMode::Legal`, so transpositions with a useless double push match.
#[inline]
fn ep_key(board: &Chess) -> u64 {
    board
        .ep_square(EnPassantMode::Legal)
        .map_or(0, |sq| z(Zobrist64::zobrist_for_en_passant_file(sq.file())))
}

fn castling_key(board: &Chess) -> u64 {
    let castles = board.castles();
    let mut key = 0;
    for color in Color::ALL {
        for side in CastlingSide::ALL {
            if castles.has(color, side) {
                key ^= z(Zobrist64::zobrist_for_castling_right(color, side));
            }
        }
    }
    key
}

/// The key of `after` (the result of playing `m` on `before`, whose key is `key` with en
/// passant part `before_ep`), from the squares the move changes, and its en passant part;
/// `piece_keys` (`before`'s) become `after`'s. Equal to `key_from_scratch(after)` and
/// `PieceKeys::from_scratch`; the perft key walk test checks that at every node.
#[inline]
fn updated_key(
    before: &Chess,
    after: &Chess,
    mut key: u64,
    before_ep: u64,
    m: Move,
    piece_keys: &mut PieceKeys,
) -> (u64, u64) {
    let us = before.turn();
    key ^= z(Zobrist64::zobrist_for_white_turn());
    let mut toggle = |square: Square, color: Color, role: Role| {
        key ^= piece_key(square, color, role);
        piece_keys.toggle(square, color, role);
    };
    match m {
        Move::Normal {
            role,
            from,
            capture,
            to,
            promotion,
        } => {
            toggle(from, us, role);
            toggle(to, us, promotion.unwrap_or(role));
            if let Some(captured) = capture {
                toggle(to, !us, captured);
                piece_keys.material.remove(!us, captured);
            }
            if let Some(promoted) = promotion {
                piece_keys.material.remove(us, Role::Pawn);
                piece_keys.material.add(us, promoted);
            }
        }
        Move::EnPassant { from, to } => {
            toggle(from, us, Role::Pawn);
            toggle(to, us, Role::Pawn);
            toggle(Square::from_coords(to.file(), from.rank()), !us, Role::Pawn);
            piece_keys.material.remove(!us, Role::Pawn);
        }
        Move::Castle { king, rook } => {
            let rank = king.rank();
            let (king_file, rook_file) = if king.file() < rook.file() {
                (File::G, File::F)
            } else {
                (File::C, File::D)
            };
            toggle(king, us, Role::King);
            toggle(rook, us, Role::Rook);
            toggle(Square::from_coords(king_file, rank), us, Role::King);
            toggle(Square::from_coords(rook_file, rank), us, Role::Rook);
        }
        Move::Put { .. } => {
            *piece_keys = PieceKeys::from_scratch(after.board());
            return (key_from_scratch(after), ep_key(after));
        }
    }
    // Castling rights only change when a king or rook moves or a rook is captured.
    if before.castles().castling_rights() != after.castles().castling_rights() {
        key ^= castling_key(before) ^ castling_key(after);
    }
    // An en passant square exists only right after a double push, and lasts one ply.
    let after_ep = if after.maybe_ep_square().is_some() {
        ep_key(after)
    } else {
        0
    };
    (key ^ before_ep ^ after_ep, after_ep)
}

impl Default for Position {
    fn default() -> Self {
        Position::from_board(Chess::default(), CastlingMode::Standard)
    }
}

impl Position {
    pub fn from_board(board: Chess, castling_mode: CastlingMode) -> Position {
        let key = key_from_scratch(&board);
        let ep_key = ep_key(&board);
        let piece_keys = PieceKeys::from_scratch(board.board());
        let mut plies = Vec::with_capacity(512);
        plies.push(Ply {
            board,
            key,
            last_move: None,
            plies_since_null: usize::MAX / 2,
            ep_key,
            piece_keys,
        });
        Position {
            plies,
            castling_mode,
        }
    }

    /// Parses a FEN. With `chess960` the castling rights may name any rook file (Shredder-FEN
    /// or X-FEN); otherwise shakmaty's standard rules apply.
    pub fn from_fen(fen: &str, chess960: bool) -> Result<Position, PositionError> {
        let parsed: Fen = fen
            .trim()
            .parse()
            .map_err(|e| PositionError::BadFen(format!("{e}")))?;
        let mode = if chess960 {
            CastlingMode::Chess960
        } else {
            CastlingMode::Standard
        };
        let board: Chess = parsed
            .into_position(mode)
            .map_err(|e| PositionError::BadFen(format!("{e}")))?;
        Ok(Position::from_board(board, mode))
    }

    /// Plays a list of UCI moves, stopping at the first one that is not legal. On error the
    /// position holds every move before the bad one.
    pub fn play_uci_moves<'a>(
        &mut self,
        moves: impl IntoIterator<Item = &'a str>,
    ) -> Result<(), PositionError> {
        for (index, text) in moves.into_iter().enumerate() {
            match self.parse_uci_move(text) {
                Some(m) => {
                    self.make_move(m);
                    // The game history is not searched through, but a long `moves` list would
                    // otherwise keep every board; keep only what repetition detection needs.
                    self.trim_history();
                }
                None => {
                    return Err(PositionError::BadMove {
                        index,
                        text: text.chars().take(16).collect(),
                    })
                }
            }
        }
        Ok(())
    }

    pub fn parse_uci_move(&self, text: &str) -> Option<Move> {
        let uci: UciMove = text.parse().ok()?;
        let m = uci.to_move(self.board()).ok()?;
        // shakmaty accepts king-to-rook castling in standard mode too; that is harmless.
        Some(m)
    }

    pub fn to_uci(&self, m: Move) -> String {
        m.to_uci(self.castling_mode).to_string()
    }

    pub fn castling_mode(&self) -> CastlingMode {
        self.castling_mode
    }

    #[inline]
    pub fn board(&self) -> &Chess {
        &self.plies.last().expect("position always has a ply").board
    }

    #[inline]
    pub fn key(&self) -> u64 {
        self.plies.last().expect("position always has a ply").key
    }

    /// The keys of parts of the board (pawns, each colour's other pieces, minor and major
    /// pieces).
    #[inline]
    pub fn piece_keys(&self) -> PieceKeys {
        self.plies
            .last()
            .expect("position always has a ply")
            .piece_keys
    }

    #[inline]
    pub fn turn(&self) -> Color {
        self.board().turn()
    }

    #[inline]
    pub fn in_check(&self) -> bool {
        self.board().is_check()
    }

    pub fn legal_moves(&self) -> MoveList {
        self.board().legal_moves()
    }

    /// The move that led to the current board, if any.
    pub fn last_move(&self) -> Option<Move> {
        self.plies.last().and_then(|p| p.last_move)
    }

    /// The move played `back` plies ago (1 = the last move), if it was a real move.
    pub fn recent_move(&self, back: usize) -> Option<Move> {
        let n = self.plies.len();
        if back == 0 || back > n {
            return None;
        }
        self.plies[n - back].last_move
    }

    /// The board `back` plies before the current one (0 = the current board) and its
    /// Zobrist key, while the history still holds it.
    #[inline]
    pub fn board_back(&self, back: usize) -> Option<(&Chess, u64)> {
        let index = self.plies.len().checked_sub(1)?.checked_sub(back)?;
        let ply = &self.plies[index];
        Some((&ply.board, ply.key))
    }

    /// True when the current board was reached by a null move.
    pub fn after_null_move(&self) -> bool {
        self.plies.last().is_some_and(|p| p.plies_since_null == 0)
    }

    /// True when the side to move has a piece other than pawns and king: without one,
    /// zugzwang is common and passing (null move) is not a safe bound.
    pub fn has_non_pawn_material(&self) -> bool {
        let board = self.board().board();
        let ours = board.by_color(self.turn());
        (ours & !board.pawns() & !board.kings()).any()
    }

    /// Number of plies stored (game history kept for repetitions plus the search path).
    pub fn ply_count(&self) -> usize {
        self.plies.len()
    }

    /// Plays a legal move, updating the Zobrist key incrementally.
    #[inline]
    pub fn make_move(&mut self, m: Move) {
        // Copy the ply in place and play on the copy: the board is written once.
        let n = self.plies.len();
        self.plies.push(self.plies[n - 1].clone());
        let (older, newest) = self.plies.split_at_mut(n);
        let (before, after) = (&older[n - 1], &mut newest[0]);
        after.board.play_unchecked(m);
        let (key, ep_key) = updated_key(
            &before.board,
            &after.board,
            before.key,
            before.ep_key,
            m,
            &mut after.piece_keys,
        );
        after.key = key;
        after.ep_key = ep_key;
        after.last_move = Some(m);
        after.plies_since_null = before.plies_since_null + 1;
    }

    /// Passes the turn. Only valid when the side to move is not in check.
    pub fn make_null_move(&mut self) -> bool {
        let current = self.plies.last().expect("position always has a ply");
        let Ok(board) = current.board.clone().swap_turn() else {
            return false;
        };
        let key = key_from_scratch(&board);
        let ep_key = ep_key(&board);
        let piece_keys = current.piece_keys;
        self.plies.push(Ply {
            board,
            key,
            last_move: None,
            plies_since_null: 0,
            ep_key,
            piece_keys,
        });
        true
    }

    #[inline]
    pub fn unmake_move(&mut self) {
        debug_assert!(self.plies.len() > 1);
        self.plies.pop();
    }

    /// True when the current position already occurred since the last irreversible move.
    /// A single earlier occurrence counts: the side that repeats could repeat again, so the
    /// position is scored as a draw (the usual engine convention).
    pub fn is_repetition(&self) -> bool {
        let n = self.plies.len();
        let key = self.key();
        let last = self.plies.last().expect("position always has a ply");
        let reversible = (last.board.halfmoves() as usize).min(last.plies_since_null);
        let limit = reversible.min(n - 1);
        let mut back = 4;
        while back <= limit {
            if self.plies[n - 1 - back].key == key {
                return true;
            }
            back += 2;
        }
        false
    }

    /// Draw by the fifty-move rule (a checkmate on the hundredth ply still wins; the caller
    /// checks for mate first).
    pub fn is_fifty_move_draw(&self) -> bool {
        self.board().halfmoves() >= 100
    }

    pub fn is_insufficient_material(&self) -> bool {
        self.board().is_insufficient_material()
    }

    pub fn fen(&self) -> String {
        Fen::from_position(self.board(), EnPassantMode::Legal).to_string()
    }

    /// Drops boards that can no longer matter for repetitions (before the last irreversible
    /// move), keeping the current board as the new root.
    fn trim_history(&mut self) {
        let reversible = self.board().halfmoves() as usize;
        let keep = reversible + 1;
        if self.plies.len() > keep + 64 {
            let drop = self.plies.len() - keep;
            self.plies.drain(..drop);
        }
    }

    /// Makes the current board the only ply: used by tests and tools that want a fresh root.
    pub fn without_history(&self) -> Position {
        Position::from_board(self.board().clone(), self.castling_mode)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repetition_after_knight_shuffle() {
        let mut pos = Position::default();
        pos.play_uci_moves(["g1f3", "g8f6", "f3g1", "f6g8"])
            .unwrap();
        assert!(pos.is_repetition());
    }

    #[test]
    fn bad_move_keeps_prefix() {
        let mut pos = Position::default();
        let err = pos.play_uci_moves(["e2e4", "e7e5", "e1e3"]).unwrap_err();
        assert_eq!(
            err,
            PositionError::BadMove {
                index: 2,
                text: "e1e3".into()
            }
        );
        assert_eq!(
            pos.fen(),
            "rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2"
        );
    }

    #[test]
    fn incremental_key_matches_scratch() {
        let mut pos = Position::default();
        pos.play_uci_moves(["e2e4", "d7d5", "e4d5", "c7c5", "d5c6", "g8f6", "e1e2"])
            .unwrap();
        assert_eq!(pos.key(), key_from_scratch(pos.board()));
    }

    /// Along random games (castling, en passant and promotions included), the piece keys
    /// kept move by move are those computed from the board, and each holds exactly its
    /// pieces.
    #[test]
    fn incremental_piece_keys_match_scratch_along_random_games() {
        use rand::rngs::StdRng;
        use rand::{Rng, SeedableRng};
        let mut rng = StdRng::seed_from_u64(7);
        let (mut castles, mut en_passants, mut promotions) = (0, 0, 0);
        for game in 0..400 {
            let mut pos = if game % 2 == 0 {
                Position::default()
            } else {
                Position::from_fen("r3k2r/1P4p1/8/3pP3/8/8/6p1/R3K2R w KQkq d6 0 1", false).unwrap()
            };
            for _ in 0..200 {
                let moves = pos.legal_moves();
                if moves.is_empty() {
                    break;
                }
                let m = moves[rng.random_range(0..moves.len())];
                castles += u32::from(m.is_castle());
                en_passants += u32::from(m.is_en_passant());
                promotions += u32::from(m.is_promotion());
                pos.make_move(m);
                let scratch = PieceKeys::from_scratch(pos.board().board());
                assert_eq!(pos.piece_keys(), scratch, "{}", pos.fen());
                if rng.random_range(0..8) == 0 && pos.make_null_move() {
                    assert_eq!(pos.piece_keys(), scratch);
                    pos.unmake_move();
                }
            }
        }
        assert!(castles > 0 && en_passants > 0 && promotions > 0);
        // Each key holds its own pieces: a lone white knight is in White's non-pawn key and
        // the minor key, not in the major key.
        let board = Position::from_fen("4k3/8/8/8/8/8/8/1N2K3 w - - 0 1", false).unwrap();
        let kings = Position::from_fen("4k3/8/8/8/8/8/8/4K3 w - - 0 1", false).unwrap();
        let (a, b) = (board.piece_keys(), kings.piece_keys());
        let knight = piece_key(Square::B1, Color::White, Role::Knight);
        assert_eq!(
            a.non_pawn[Color::White as usize],
            b.non_pawn[Color::White as usize] ^ knight
        );
        assert_eq!(a.minor, b.minor ^ knight);
        assert_eq!(
            (a.major, a.pawns, a.non_pawn[Color::Black as usize]),
            (b.major, b.pawns, b.non_pawn[Color::Black as usize])
        );
    }

    #[test]
    fn board_back_walks_the_history() {
        let mut pos = Position::default();
        let start_key = pos.key();
        pos.play_uci_moves(["e2e4"]).unwrap();
        assert!(pos.make_null_move());
        let (now, key) = pos.board_back(0).unwrap();
        assert_eq!((now.turn(), key), (Color::White, pos.key()));
        let (before_null, _) = pos.board_back(1).unwrap();
        assert_eq!(before_null.board(), now.board());
        assert_eq!(before_null.turn(), Color::Black);
        let (start, key) = pos.board_back(2).unwrap();
        assert_eq!((start, key), (&Chess::default(), start_key));
        assert!(pos.board_back(3).is_none());
        assert!(pos.board_back(usize::MAX).is_none());
    }

    #[test]
    fn rejects_bad_fens() {
        for fen in [
            "",
            "garbage",
            "8/8/8/8/8/8/8/8 w - - 0 1",
            "4k3/8/8/8/8/8/8/4K2R b - - 0 1 extra junk",
        ] {
            let _ = Position::from_fen(fen, false);
        }
        assert!(Position::from_fen("8/8/8/8/8/8/8/8 w - - 0 1", false).is_err());
        // Side not to move is in check.
        assert!(Position::from_fen("4k3/4R3/8/8/8/8/8/4K3 w - - 0 1", false).is_err());
    }
}
