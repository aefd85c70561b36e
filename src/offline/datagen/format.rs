//! The training record: one position, its search score and the game's result in 32 bytes.
//!
//! ```text
//! bytes 0..8    occupancy: u64, bit i set if square i holds a piece (a1 = 0, b1 = 1, ..., h8 = 63)
//! bytes 8..24   pieces: 32 nibbles, one per set bit of occupancy in ascending square order;
//!               the first piece is the low nibble of byte 8, the second its high nibble, ...;
//!               nibble = colour * 8 + role, colour 0 White / 1 Black, role 0 pawn 1 knight
//!               2 bishop 3 rook 4 queen 5 king; unused nibbles are 0
//! bytes 24..26  score: i16, the search score in centipawns from White's view
//! byte  26      result: 0 = Black won, 1 = draw, 2 = White won
//! byte  27      side to move: 0 = White, 1 = Black
//! byte  28      halfmove clock (saturating at 255)
//! bytes 29..31  fullmove number: u16
//! byte  31      0 (reserved)
//! ```
//!
//! All integers are little-endian. Castling rights and en passant squares are not kept: the
//! evaluation does not use them. A file is a plain concatenation of records.

use shakmaty::{Bitboard, Board, Color, Piece, Position as _, Role, Square};

pub const RECORD_BYTES: usize = 32;

/// The game's result from White's view, as stored in byte 26.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GameResult {
    BlackWin = 0,
    Draw = 1,
    WhiteWin = 2,
}

impl GameResult {
    pub fn from_byte(b: u8) -> Option<GameResult> {
        match b {
            0 => Some(GameResult::BlackWin),
            1 => Some(GameResult::Draw),
            2 => Some(GameResult::WhiteWin),
            _ => None,
        }
    }

    /// A win for `winner`.
    pub fn win_for(winner: Color) -> GameResult {
        match winner {
            Color::White => GameResult::WhiteWin,
            Color::Black => GameResult::BlackWin,
        }
    }
}

/// A decoded record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TrainingPosition {
    pub board: Board,
    pub turn: Color,
    /// Centipawns, White's view.
    pub score: i16,
    pub result: GameResult,
    pub halfmoves: u8,
    pub fullmoves: u16,
}

/// The nibble that stands for `piece`: `colour * 8 + role`.
pub fn nibble(piece: Piece) -> u8 {
    (piece.color.is_black() as u8) * 8 + (piece.role as u8 - 1)
}

/// The piece a nibble stands for; `None` for roles 6 and 7.
pub fn piece_of(nibble: u8) -> Option<Piece> {
    let color = if nibble & 8 == 0 {
        Color::White
    } else {
        Color::Black
    };
    let role = Role::try_from(u32::from(nibble & 7) + 1).ok()?;
    Some(Piece { color, role })
}

/// Packs `pos` with its score (White's view, centipawns) and the game's result.
pub fn pack(pos: &shakmaty::Chess, score_white: i16, result: GameResult) -> [u8; RECORD_BYTES] {
    let board = pos.board();
    let mut out = [0u8; RECORD_BYTES];
    let occupied = board.occupied();
    out[0..8].copy_from_slice(&u64::from(occupied).to_le_bytes());
    for (i, square) in occupied.into_iter().enumerate() {
        let piece = board.piece_at(square).expect("occupied square has a piece");
        out[8 + i / 2] |= nibble(piece) << (4 * (i % 2));
    }
    out[24..26].copy_from_slice(&score_white.to_le_bytes());
    out[26] = result as u8;
    out[27] = pos.turn().is_black() as u8;
    out[28] = pos.halfmoves().min(255) as u8;
    out[29..31].copy_from_slice(&(u32::from(pos.fullmoves()).min(65535) as u16).to_le_bytes());
    out
}

/// Decodes a record; `None` if it cannot be one (more than 32 pieces, a bad nibble or result).
pub fn unpack(record: &[u8; RECORD_BYTES]) -> Option<TrainingPosition> {
    let occupied = Bitboard(u64::from_le_bytes(record[0..8].try_into().ok()?));
    if occupied.count() > 32 {
        return None;
    }
    let mut board = Board::empty();
    for (i, square) in occupied.into_iter().enumerate() {
        let bits = (record[8 + i / 2] >> (4 * (i % 2))) & 0xf;
        board.set_piece_at(square, piece_of(bits)?);
    }
    Some(TrainingPosition {
        board,
        turn: if record[27] == 0 {
            Color::White
        } else {
            Color::Black
        },
        score: i16::from_le_bytes([record[24], record[25]]),
        result: GameResult::from_byte(record[26])?,
        halfmoves: record[28],
        fullmoves: u16::from_le_bytes([record[29], record[30]]),
    })
}

/// Every square with a piece, for callers that want (square, piece) pairs without a board.
pub fn pieces(record: &[u8; RECORD_BYTES]) -> impl Iterator<Item = (Square, u8)> + '_ {
    let occupied = Bitboard(u64::from_le_bytes(
        record[0..8].try_into().expect("8 bytes"),
    ));
    occupied
        .into_iter()
        .enumerate()
        .map(move |(i, sq)| (sq, (record[8 + i / 2] >> (4 * (i % 2))) & 0xf))
}

#[cfg(test)]
mod tests {
    use super::*;
    use shakmaty::fen::Fen;
    use shakmaty::{CastlingMode, Chess};

    fn chess(fen: &str) -> Chess {
        fen.parse::<Fen>()
            .unwrap()
            .into_position(CastlingMode::Standard)
            .unwrap()
    }

    #[test]
    fn records_round_trip() {
        let cases = [
            (
                "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
                12,
                GameResult::Draw,
            ),
            (
                "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R b KQkq - 3 17",
                -250,
                GameResult::BlackWin,
            ),
            (
                "8/8/8/4k3/8/8/3PK3/8 w - - 41 90",
                310,
                GameResult::WhiteWin,
            ),
            ("4k3/8/8/8/8/8/8/4K3 b - - 99 300", 0, GameResult::Draw),
        ];
        for (fen, score, result) in cases {
            let pos = chess(fen);
            let record = pack(&pos, score, result);
            assert_eq!(record.len(), RECORD_BYTES);
            let back = unpack(&record).unwrap();
            assert_eq!(&back.board, pos.board(), "{fen}");
            assert_eq!(back.turn, pos.turn());
            assert_eq!(back.score, score);
            assert_eq!(back.result, result);
            assert_eq!(u32::from(back.halfmoves), pos.halfmoves());
            assert_eq!(u32::from(back.fullmoves), u32::from(pos.fullmoves()));
            assert_eq!(record[31], 0);
            let listed: Vec<_> = pieces(&record).collect();
            assert_eq!(listed.len(), pos.board().occupied().count());
            for (sq, bits) in listed {
                assert_eq!(piece_of(bits), pos.board().piece_at(sq));
            }
        }
    }

    #[test]
    fn bad_records_are_refused() {
        let mut record = pack(&Chess::default(), 0, GameResult::Draw);
        record[26] = 3;
        assert!(unpack(&record).is_none());
        let mut record = pack(&Chess::default(), 0, GameResult::Draw);
        record[8] = 0x07; // role 7 does not exist
        assert!(unpack(&record).is_none());
        let mut record = [0u8; RECORD_BYTES];
        record[0..8].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(unpack(&record).is_none());
    }
}
