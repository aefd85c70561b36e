//! The games file: whole self-play games, three bytes a ply.
//!
//! A game is stored as its start position, then every search the game made (the best move,
//! as an index among the legal moves, and the score) and the result. Which positions train
//! the net is decided when the file is read (`Selection`): `Selection::Quiet` is the rule the
//! 32-byte record writer applies, so a games file yields, record for record, the records the
//! record format holds for the same run, in under a sixth of the bytes (docs/datagen.md).
//!
//! ```text
//! file header, 12 bytes
//!   0..8    magic ff 42 53 4c 54 47 4d ff ("\xffBSLTGM\xff")
//!   8..12   u32 version, 1
//! each game, 19 + ceil(p / 2) + 3 n bytes (p pieces at the start, n plies)
//!   0..2    u16 n: the searches of the game, in order
//!   2       bits 0-1 result (0 Black won, 1 draw, 2 White won); bit 2 side to move (1 Black);
//!           bits 3-6 castling rights, White h1, White a1, Black h8, Black a8; bit 7 zero
//!   3       en passant: 0, or the file (1 = a .. 8 = h) of a legal en passant capture
//!   4       halfmove clock (saturating at 255)
//!   5..7    u16 fullmove number
//!   7..15   u64 occupancy, as in the record (bit i: square i, a1 = 0)
//!   15..    ceil(p / 2) bytes of piece nibbles, as in the record (an unused last nibble is 0)
//!   n plies of 3 bytes:
//!           u8 the best move's index among the position's legal moves sorted by origin
//!              square, destination square (a castling move's is its rook's square) and
//!              promotion (none, knight, bishop, rook, queen); 255: no move known (a
//!              converted record, the last ply only)
//!           i16 search score, centipawns, White's view
//!   u32     FNV-1a (32-bit) of the game's bytes before it
//! ```
//!
//! Version 2 (`Encoding::Packed`, the committed chunks of `data/`) is the same but for the
//! plies: each is the u8 move index, then the score's change from the ply before (from 0
//! for the first ply) as a zigzag LEB128 varint of one to three bytes. Consecutive scores
//! are close, so a ply takes about 2.2 bytes before compression instead of 3.
//!
//! All integers are little-endian. Ply `i + 1` is the position after ply `i`'s move. The
//! last ply's move may not have been played: the game ended on its score (a mate score, or
//! adjudication). The magic has 36 bits set, so a record file cannot start with it (a record
//! with more than 32 occupied squares is malformed). The checksum catches any change to one
//! byte (each FNV-1a step is a bijection of the running hash).

use std::fmt;
use std::io;
use std::num::NonZeroU32;
use std::path::Path;

use shakmaty::{
    Bitboard, Board, CastlingMode, Chess, Color, EnPassantMode, File, FromSetup, Move, Position,
    PositionError, Rank, Setup, Square,
};

use super::format::{self, GameResult, RECORD_BYTES};
use crate::score::MATE_BOUND;

pub const MAGIC: [u8; 8] = *b"\xffBSLTGM\xff";
pub const FILE_HEADER_BYTES: usize = 12;
/// A game's bytes before its pieces.
const GAME_HEADER_BYTES: usize = 15;
const CHECKSUM_BYTES: usize = 4;
/// A ply of `Encoding::Plain`.
pub const PLY_BYTES: usize = 3;
/// The fewest bytes a ply of `Encoding::Packed` takes: the move and a one-byte varint.
const PACKED_PLY_MIN_BYTES: usize = 2;
/// A zigzag varint of a score change (at most 2 * 65,535) takes at most three bytes.
const MAX_VARINT_BYTES: usize = 3;
/// The move byte of a ply whose move is not known.
pub const NO_MOVE: u8 = 255;
/// The rooks of the castling bits 3-6, in order.
const CASTLING_ROOKS: [Square; 4] = [Square::H1, Square::A1, Square::H8, Square::A8];

/// How a games file stores its plies; the file header's version.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Encoding {
    /// Version 1, what `basalt datagen` writes: three bytes a ply, so a game's length is
    /// known from its header and a file can be cut and resumed by byte counts.
    #[default]
    Plain = 1,
    /// Version 2: score changes as varints, for the compressed chunks that are committed.
    Packed = 2,
}

impl Encoding {
    pub fn from_version(version: u32) -> Option<Encoding> {
        match version {
            1 => Some(Encoding::Plain),
            2 => Some(Encoding::Packed),
            _ => None,
        }
    }
}

/// The 12 bytes a games file of `encoding` starts with.
pub fn file_header(encoding: Encoding) -> [u8; FILE_HEADER_BYTES] {
    let mut header = [0u8; FILE_HEADER_BYTES];
    header[..8].copy_from_slice(&MAGIC);
    header[8..].copy_from_slice(&(encoding as u32).to_le_bytes());
    header
}

/// Whether `bytes` (a file's beginning) is a games file rather than 32-byte records.
pub fn is_games_file(bytes: &[u8]) -> bool {
    bytes.starts_with(&MAGIC)
}

/// One search of a game: the move it chose and its score.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ply {
    /// `None` only for a converted record, whose move is not known.
    pub best: Option<Move>,
    /// Centipawns, White's view.
    pub score: i16,
}

/// A whole game.
#[derive(Clone, Debug)]
pub struct Game {
    pub start: Chess,
    pub plies: Vec<Ply>,
    pub result: GameResult,
}

/// Which positions of a game become training records.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Selection {
    /// What the record writer keeps: the side to move is not in check, the best move is
    /// neither a capture nor a promotion, and the score is not a mate score. A ply without
    /// a move (a converted record) was chosen when it was written, and is kept.
    #[default]
    Quiet,
    /// Every searched position.
    All,
}

impl Selection {
    pub fn keeps(self, pos: &Chess, ply: &Ply) -> bool {
        match (self, ply.best) {
            (Selection::All, _) | (Selection::Quiet, None) => true,
            (Selection::Quiet, Some(best)) => {
                !pos.is_check()
                    && !best.is_capture()
                    && !best.is_promotion()
                    && i32::from(ply.score).abs() <= MATE_BOUND
            }
        }
    }
}

/// Orders the legal moves: by origin square, destination square, promotion role. The order
/// is the format's, so it must not depend on the move generator's.
fn move_key(m: &Move) -> u32 {
    let from = m.from().map_or(0, u32::from);
    let promotion = m.promotion().map_or(0, |role| role as u32 - 1);
    from << 9 | u32::from(m.to()) << 3 | promotion
}

/// The legal moves of `pos` in the format's order: what `move_index` and `nth_move` count
/// in, without sorting the moves themselves.
#[cfg(test)]
fn sorted_moves(pos: &Chess) -> shakmaty::MoveList {
    let mut moves = pos.legal_moves();
    moves.sort_unstable_by_key(move_key);
    moves
}

/// The index of the legal move `m` among the legal moves of `pos` in the format's order:
/// the number of legal moves that come before it (keys differ between legal moves).
fn move_index(pos: &Chess, m: &Move) -> Option<usize> {
    let moves = pos.legal_moves();
    let key = move_key(m);
    moves
        .contains(m)
        .then(|| moves.iter().filter(|other| move_key(other) < key).count())
}

/// The legal move at `index` in the format's order, or the number of legal moves when there
/// are not that many. Decoding a ply is mostly this: each key carries its move's place in
/// the list in its low byte, and one selection among those integers costs a fraction of
/// sorting the moves by a key computed anew at every comparison.
fn nth_move(pos: &Chess, index: usize) -> Result<Move, usize> {
    let moves = pos.legal_moves();
    if index >= moves.len() {
        return Err(moves.len());
    }
    // A position has at most 218 legal moves, so a place fits the low byte.
    let mut keys = [0u32; 256];
    for (place, (key, m)) in keys.iter_mut().zip(&moves).enumerate() {
        *key = move_key(m) << 8 | place as u32;
    }
    let keys = &mut keys[..moves.len()];
    let (_, &mut nth, _) = keys.select_nth_unstable(index);
    Ok(moves[(nth & 0xff) as usize])
}

fn zigzag(value: i32) -> u32 {
    ((value << 1) ^ (value >> 31)) as u32
}

fn unzigzag(value: u32) -> i32 {
    (value >> 1) as i32 ^ -((value & 1) as i32)
}

fn push_varint(out: &mut Vec<u8>, mut value: u32) {
    while value >= 0x80 {
        out.push(value as u8 | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

/// The varint at the start of `bytes` and its length; `None` when it runs past the end
/// (`Some(Err)`: longer than any score change needs).
fn read_varint(bytes: &[u8]) -> Option<Result<(u32, usize), ()>> {
    let mut value = 0u32;
    for (i, &byte) in bytes.iter().enumerate() {
        if i == MAX_VARINT_BYTES {
            return Some(Err(()));
        }
        value |= u32::from(byte & 0x7f) << (7 * i);
        if byte & 0x80 == 0 {
            return Some(Ok((value, i + 1)));
        }
    }
    None
}

/// FNV-1a, 32 bits.
fn checksum(bytes: &[u8]) -> u32 {
    bytes.iter().fold(0x811c_9dc5, |hash, &b| {
        (hash ^ u32::from(b)).wrapping_mul(0x0100_0193)
    })
}

impl Game {
    /// Appends the game's bytes to `out`.
    ///
    /// Panics if a move is not legal where it is played, a ply without a move is not the
    /// last, the game has more than 65,535 plies, or the start position has castling rights
    /// on rooks off the corners (Chess960): the writers never make such games.
    pub fn encode(&self, out: &mut Vec<u8>, encoding: Encoding) {
        let begin = out.len();
        let start = &self.start;
        let plies = u16::try_from(self.plies.len()).expect("at most 65,535 plies");
        out.extend_from_slice(&plies.to_le_bytes());
        let rights = start.castles().castling_rights();
        assert!(
            (rights & !Bitboard::CORNERS).is_empty(),
            "castling rights on the corner rooks only"
        );
        let mut flags = self.result as u8 | u8::from(start.turn().is_black()) << 2;
        for (i, &rook) in CASTLING_ROOKS.iter().enumerate() {
            flags |= u8::from(rights.contains(rook)) << (3 + i);
        }
        out.push(flags);
        out.push(
            start
                .ep_square(EnPassantMode::Legal)
                .map_or(0, |square| square.file().to_u32() as u8 + 1),
        );
        out.push(start.halfmoves().min(255) as u8);
        out.extend_from_slice(&(start.fullmoves().get().min(65_535) as u16).to_le_bytes());
        let board = start.board();
        out.extend_from_slice(&board.occupied().0.to_le_bytes());
        let mut nibbles = [0u8; 16];
        for (i, square) in board.occupied().into_iter().enumerate() {
            let piece = board.piece_at(square).expect("occupied square has a piece");
            nibbles[i / 2] |= format::nibble(piece) << (4 * (i % 2));
        }
        out.extend_from_slice(&nibbles[..board.occupied().count().div_ceil(2)]);
        let mut pos = start.clone();
        let mut previous_score = 0;
        for (i, ply) in self.plies.iter().enumerate() {
            let index = match ply.best {
                Some(best) => {
                    let index = move_index(&pos, &best).expect("the move is legal");
                    pos.play_unchecked(best);
                    index as u8
                }
                None => {
                    assert_eq!(i + 1, self.plies.len(), "only the last ply lacks a move");
                    NO_MOVE
                }
            };
            out.push(index);
            match encoding {
                Encoding::Plain => out.extend_from_slice(&ply.score.to_le_bytes()),
                Encoding::Packed => {
                    push_varint(out, zigzag(i32::from(ply.score) - previous_score));
                    previous_score = i32::from(ply.score);
                }
            }
        }
        let sum = checksum(&out[begin..]);
        out.extend_from_slice(&sum.to_le_bytes());
    }

    /// The records of the positions `selection` keeps, in the game's order.
    pub fn records(&self, selection: Selection) -> Vec<[u8; RECORD_BYTES]> {
        let mut pos = self.start.clone();
        let mut records = Vec::new();
        for (i, ply) in self.plies.iter().enumerate() {
            if selection.keeps(&pos, ply) {
                records.push(format::pack(&pos, ply.score, self.result));
            }
            if let (Some(best), true) = (ply.best, i + 1 < self.plies.len()) {
                pos.play_unchecked(best);
            }
        }
        records
    }

    /// How many positions `selection` keeps: the length of `records`, without packing them.
    pub fn count(&self, selection: Selection) -> u64 {
        let mut pos = self.start.clone();
        let mut count = 0;
        for (i, ply) in self.plies.iter().enumerate() {
            count += u64::from(selection.keeps(&pos, ply));
            if let (Some(best), true) = (ply.best, i + 1 < self.plies.len()) {
                pos.play_unchecked(best);
            }
        }
        count
    }

    /// The game a record stands for: the record's position (without castling rights or en
    /// passant square: the record has none), one ply with no move and the record's score, and
    /// its result. `records` gives the record back, byte for byte; a record that would not
    /// come back (it does not decode, is not a legal position, or has bytes the record
    /// writer leaves zero set) is refused with the reason.
    pub fn of_record(record: &[u8; RECORD_BYTES]) -> Result<Game, String> {
        let decoded = format::unpack(record).ok_or("the record does not decode")?;
        let setup = Setup {
            board: decoded.board,
            turn: decoded.turn,
            halfmoves: u32::from(decoded.halfmoves),
            fullmoves: NonZeroU32::new(u32::from(decoded.fullmoves)).ok_or("fullmove number 0")?,
            ..Setup::empty()
        };
        let start = legal_position(setup).map_err(|e| format!("not a legal position: {e}"))?;
        let game = Game {
            start,
            plies: vec![Ply {
                best: None,
                score: decoded.score,
            }],
            result: decoded.result,
        };
        if game.records(Selection::Quiet) != [*record] {
            return Err("bytes the record writer leaves zero are set".into());
        }
        Ok(game)
    }
}

/// The position of `setup`, or why it is not a legal one.
fn legal_position(setup: Setup) -> Result<Chess, String> {
    // A capture en passant can give a check that looks impossible without the en passant
    // square; records do not keep it.
    Chess::from_setup(setup, CastlingMode::Standard)
        .or_else(PositionError::ignore_impossible_check)
        .map_err(|e| e.to_string())
}

/// What is wrong with a games file at some byte.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Problem {
    /// The file does not start with the magic.
    NotGamesFile,
    UnknownVersion(u32),
    /// The file ends inside a game, which needs `needed` bytes from its start.
    Truncated {
        needed: usize,
        left: usize,
    },
    /// The game's bytes do not match its checksum.
    Checksum,
    /// A header field holds a value the format does not allow.
    BadHeader(&'static str),
    /// The start position is not a legal position.
    BadPosition(String),
    /// A packed score change that is too long or leaves the range of a score.
    BadScore {
        ply: usize,
    },
    /// A move index beyond the legal moves, or a missing move before the last ply.
    BadMove {
        ply: usize,
        index: u8,
        legal: usize,
    },
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            Problem::NotGamesFile => write!(f, "not a games file (no magic)"),
            Problem::UnknownVersion(v) => {
                write!(
                    f,
                    "games file version {v}; this build reads versions 1 and 2"
                )
            }
            Problem::Truncated { needed, left } => write!(
                f,
                "truncated: the game needs at least {needed} bytes, {left} are left (a \
                 half-written game, or a damaged length)"
            ),
            Problem::BadScore { ply } => write!(
                f,
                "bad score at ply {ply}: its varint is too long or leaves the 16-bit range"
            ),
            Problem::Checksum => write!(f, "damaged: the game's checksum does not match"),
            Problem::BadHeader(what) => write!(f, "bad game header: {what}"),
            Problem::BadPosition(what) => write!(f, "bad start position: {what}"),
            Problem::BadMove { ply, index, legal } => write!(
                f,
                "bad move at ply {ply}: index {index}, and the position has {legal} legal moves"
            ),
        }
    }
}

/// A problem, the byte of the file it is at, and the game (from 1) that holds it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Damage {
    pub offset: usize,
    pub game: u64,
    pub problem: Problem,
}

impl fmt::Display for Damage {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        if self.game == 0 {
            write!(f, "byte {}: {}", self.offset, self.problem)
        } else {
            write!(
                f,
                "byte {} (game {}): {}",
                self.offset, self.game, self.problem
            )
        }
    }
}

impl Damage {
    /// The error of reading the file at `path`.
    pub fn in_file(&self, path: &Path) -> io::Error {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("{}: {self}", path.display()),
        )
    }
}

fn truncated<T>(bytes: &[u8], needed: usize) -> Result<T, (usize, Problem)> {
    let left = bytes.len();
    Err((0, Problem::Truncated { needed, left }))
}

/// A ply as stored: its offset in the game, move index and score.
struct StoredPly {
    at: usize,
    index: u8,
    score: i16,
}

/// The game's stored plies, which start at `plies_at`, and the game's length with its
/// checksum.
fn stored_plies(
    bytes: &[u8],
    plies_at: usize,
    plies: usize,
    encoding: Encoding,
) -> Result<(Vec<StoredPly>, usize), (usize, Problem)> {
    let mut stored = Vec::with_capacity(plies);
    if encoding == Encoding::Plain {
        let len = plies_at + plies * PLY_BYTES + CHECKSUM_BYTES;
        if bytes.len() < len {
            return truncated(bytes, len);
        }
        for at in (plies_at..).step_by(PLY_BYTES).take(plies) {
            let score = i16::from_le_bytes([bytes[at + 1], bytes[at + 2]]);
            stored.push(StoredPly {
                at,
                index: bytes[at],
                score,
            });
        }
        return Ok((stored, len));
    }
    let (mut at, mut score) = (plies_at, 0i32);
    for ply in 0..plies {
        let fewest = at + (plies - ply) * PACKED_PLY_MIN_BYTES + CHECKSUM_BYTES;
        if bytes.len() < fewest {
            return truncated(bytes, fewest);
        }
        let bad_score = (at + 1, Problem::BadScore { ply });
        let (change, len) = match read_varint(&bytes[at + 1..]) {
            None => return truncated(bytes, bytes.len() + 1),
            Some(varint) => varint.map_err(|()| bad_score.clone())?,
        };
        score += unzigzag(change);
        let score = i16::try_from(score).map_err(|_| bad_score)?;
        stored.push(StoredPly {
            at,
            index: bytes[at],
            score,
        });
        at += 1 + len;
    }
    let len = at + CHECKSUM_BYTES;
    if bytes.len() < len {
        return truncated(bytes, len);
    }
    Ok((stored, len))
}

/// Decodes the game at the start of `bytes`, stored with `encoding`; returns it and its
/// length, or the problem and its offset in `bytes`.
pub fn decode(bytes: &[u8], encoding: Encoding) -> Result<(Game, usize), (usize, Problem)> {
    if bytes.len() < GAME_HEADER_BYTES {
        return truncated(bytes, GAME_HEADER_BYTES);
    }
    let plies = usize::from(u16::from_le_bytes([bytes[0], bytes[1]]));
    let occupied = Bitboard(u64::from_le_bytes(
        bytes[7..15].try_into().expect("8 bytes"),
    ));
    let pieces = occupied.count();
    if pieces > 32 {
        return Err((7, Problem::BadHeader("more than 32 occupied squares")));
    }
    let plies_at = GAME_HEADER_BYTES + pieces.div_ceil(2);
    let (stored_plies, len) = stored_plies(bytes, plies_at, plies, encoding)?;
    let stored = u32::from_le_bytes(bytes[len - 4..len].try_into().expect("4 bytes"));
    if checksum(&bytes[..len - 4]) != stored {
        return Err((0, Problem::Checksum));
    }

    let flags = bytes[2];
    if flags & 0x80 != 0 {
        return Err((2, Problem::BadHeader("bit 7 of the flags is set")));
    }
    let result = GameResult::from_byte(flags & 3).ok_or((2, Problem::BadHeader("result 3")))?;
    let turn = if flags & 4 == 0 {
        Color::White
    } else {
        Color::Black
    };
    let castling_rights = CASTLING_ROOKS
        .iter()
        .enumerate()
        .filter(|&(i, _)| flags & (8 << i) != 0)
        .fold(Bitboard::EMPTY, |rights, (_, &rook)| rights | rook);
    let ep_square = match bytes[3] {
        0 => None,
        file @ 1..=8 => Some(Square::from_coords(
            File::new(u32::from(file) - 1),
            if turn == Color::White {
                Rank::Sixth
            } else {
                Rank::Third
            },
        )),
        _ => return Err((3, Problem::BadHeader("en passant file beyond 8"))),
    };
    let fullmoves = NonZeroU32::new(u32::from(u16::from_le_bytes([bytes[5], bytes[6]])))
        .ok_or((5, Problem::BadHeader("fullmove number 0")))?;
    let mut board = Board::empty();
    for (i, square) in occupied.into_iter().enumerate() {
        let at = GAME_HEADER_BYTES + i / 2;
        let piece = format::piece_of((bytes[at] >> (4 * (i % 2))) & 0xf)
            .ok_or((at, Problem::BadHeader("a piece nibble names no piece")))?;
        board.set_piece_at(square, piece);
    }
    if pieces % 2 == 1 && bytes[plies_at - 1] >> 4 != 0 {
        return Err((
            plies_at - 1,
            Problem::BadHeader("the unused last nibble is not 0"),
        ));
    }
    let setup = Setup {
        board,
        turn,
        castling_rights,
        ep_square,
        halfmoves: u32::from(bytes[4]),
        fullmoves,
        ..Setup::empty()
    };
    let start = legal_position(setup).map_err(|e| (0, Problem::BadPosition(e)))?;
    if ep_square.is_some() && start.ep_square(EnPassantMode::Legal) != ep_square {
        return Err((3, Problem::BadHeader("no legal en passant capture")));
    }

    let mut game = Game {
        start,
        plies: Vec::with_capacity(plies),
        result,
    };
    let mut pos = game.start.clone();
    for (ply, &StoredPly { at, index, score }) in stored_plies.iter().enumerate() {
        let best = if index == NO_MOVE && ply + 1 == plies {
            None
        } else {
            let best = nth_move(&pos, usize::from(index))
                .map_err(|legal| (at, Problem::BadMove { ply, index, legal }))?;
            if ply + 1 < plies {
                pos.play_unchecked(best);
            }
            Some(best)
        };
        game.plies.push(Ply { best, score });
    }
    Ok((game, len))
}

/// The games of a games file's bytes, in order, each with its offset. The first problem
/// ends the iteration, after the games before it.
pub fn read(bytes: &[u8]) -> Games<'_> {
    Games {
        bytes,
        encoding: Encoding::Plain,
        offset: 0,
        games: 0,
        done: false,
    }
}

pub struct Games<'a> {
    bytes: &'a [u8],
    /// The file header's, once read.
    encoding: Encoding,
    offset: usize,
    /// Games read so far.
    games: u64,
    done: bool,
}

impl Iterator for Games<'_> {
    type Item = Result<(usize, Game), Damage>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let damage = |offset, game, problem| {
            Some(Err(Damage {
                offset,
                game,
                problem,
            }))
        };
        if self.offset == 0 {
            self.done = true;
            if !is_games_file(self.bytes) {
                return damage(0, 0, Problem::NotGamesFile);
            }
            if self.bytes.len() < FILE_HEADER_BYTES {
                let left = self.bytes.len();
                let needed = FILE_HEADER_BYTES;
                return damage(0, 0, Problem::Truncated { needed, left });
            }
            let version = u32::from_le_bytes(self.bytes[8..12].try_into().expect("4 bytes"));
            match Encoding::from_version(version) {
                Some(encoding) => self.encoding = encoding,
                None => return damage(8, 0, Problem::UnknownVersion(version)),
            }
            self.offset = FILE_HEADER_BYTES;
            self.done = false;
        }
        if self.offset == self.bytes.len() {
            self.done = true;
            return None;
        }
        let at = self.offset;
        match decode(&self.bytes[at..], self.encoding) {
            Ok((game, len)) => {
                self.offset += len;
                self.games += 1;
                Some(Ok((at, game)))
            }
            Err((offset, problem)) => {
                self.done = true;
                damage(at + offset, self.games + 1, problem)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::StdRng;
    use rand::seq::IndexedRandom;
    use rand::{Rng, SeedableRng};
    use shakmaty::fen::Fen;
    use shakmaty::uci::UciMove;
    use shakmaty::Role;

    fn chess(fen: &str) -> Chess {
        fen.parse::<Fen>()
            .unwrap()
            .into_position(CastlingMode::Standard)
            .unwrap()
    }

    fn fen(pos: &Chess) -> String {
        Fen::from_position(pos, EnPassantMode::Legal).to_string()
    }

    /// A random game from `start`: random legal moves (promotions, castling and en passant
    /// included when they come up) with random scores, the last move sometimes unplayed.
    fn random_game(start: &Chess, rng: &mut StdRng, most: usize) -> Game {
        let mut pos = start.clone();
        let mut plies = Vec::new();
        for _ in 0..rng.random_range(0..=most) {
            let moves = pos.legal_moves();
            let Some(&m) = moves.choose(rng) else {
                break;
            };
            plies.push(Ply {
                best: Some(m),
                score: rng.random(),
            });
            pos.play_unchecked(m);
        }
        let result = GameResult::from_byte(rng.random_range(0..3)).unwrap();
        Game {
            start: start.clone(),
            plies,
            result,
        }
    }

    const STARTS: [&str; 5] = [
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
        "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w Kq - 3 17",
        // Black to move with an en passant capture, and one with two pieces.
        "rnbqkbnr/ppp1pppp/8/8/2Pp4/4P3/PP1P1PPP/RNBQKBNR b KQkq c3 0 3",
        "8/8/8/4k3/8/8/3PK3/8 w - - 41 90",
        // Promotions one move away, both sides.
        "8/1P4k1/8/8/8/8/5Kp1/8 w - - 0 60",
    ];

    fn assert_same_game(a: &Game, b: &Game) {
        assert_eq!(fen(&a.start), fen(&b.start));
        assert_eq!(a.start.halfmoves(), b.start.halfmoves());
        assert_eq!(a.plies, b.plies);
        assert_eq!(a.result, b.result);
    }

    const ENCODINGS: [Encoding; 2] = [Encoding::Plain, Encoding::Packed];

    #[test]
    fn games_round_trip_every_ply() {
        for encoding in ENCODINGS {
            games_round_trip(encoding);
        }
    }

    fn games_round_trip(encoding: Encoding) {
        let mut rng = StdRng::seed_from_u64(3);
        let mut file = file_header(encoding).to_vec();
        let mut written = Vec::new();
        for start in STARTS.iter().cycle().take(40) {
            let game = random_game(&chess(start), &mut rng, 150);
            let before = file.len();
            game.encode(&mut file, encoding);
            let pieces = game.start.board().occupied().count();
            let plies = game.plies.len();
            let fixed = 19 + pieces.div_ceil(2);
            match encoding {
                Encoding::Plain => assert_eq!(file.len() - before, fixed + 3 * plies),
                Encoding::Packed => {
                    assert!((fixed + 2 * plies..=fixed + 4 * plies).contains(&(file.len() - before)))
                }
            }
            written.push((before, game));
        }
        let read: Vec<_> = read(&file).map(Result::unwrap).collect();
        assert_eq!(read.len(), written.len());
        for ((offset, game), (at, back)) in written.iter().zip(&read) {
            assert_eq!(offset, at);
            assert_same_game(game, back);
        }
        // Promotions, castling and en passant all came up.
        let moves: Vec<Move> = written
            .iter()
            .flat_map(|(_, g)| g.plies.iter().filter_map(|p| p.best))
            .collect();
        assert!(moves.iter().any(|m| m.is_promotion()));
        assert!(moves.iter().any(|m| m.is_castle()));
        assert!(moves.iter().any(|m| m.is_en_passant()));
    }

    #[test]
    fn move_indices_follow_the_squares() {
        // From the start position: b1a3 comes first (b1 is the lowest origin with a
        // move, a3 its lowest destination), g1h3 last but the pawns' (a2a3 ... h2h4).
        let moves = sorted_moves(&Chess::default());
        let uci: Vec<String> = moves
            .iter()
            .map(|m| m.to_uci(CastlingMode::Standard).to_string())
            .collect();
        assert_eq!(&uci[..4], ["b1a3", "b1c3", "g1f3", "g1h3"]);
        assert_eq!(&uci[4..6], ["a2a3", "a2a4"]);
        // Promotions of one pawn to one square: knight, bishop, rook, queen.
        let promotions: Vec<Option<Role>> = sorted_moves(&chess(STARTS[4]))
            .iter()
            .filter(|m| m.from() == Some(Square::B7))
            .map(|m| m.promotion())
            .collect();
        assert_eq!(
            promotions,
            [Role::Knight, Role::Bishop, Role::Rook, Role::Queen].map(Some)
        );
    }

    /// Both directions of the move index agree with the legal moves sorted by their keys,
    /// in positions with castling, en passant, promotions and few or many moves.
    #[test]
    fn move_index_and_nth_move_count_in_the_sorted_order() {
        let mut positions: Vec<Chess> = STARTS.iter().map(|fen| chess(fen)).collect();
        positions.push(chess(
            "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
        ));
        positions.push(chess(
            "R6R/3Q4/1Q4Q1/4Q3/2Q4Q/Q4Q2/pp1Q4/kBNN1KB1 w - - 0 1",
        ));
        // The most legal moves a position is known to have.
        assert_eq!(positions[6].legal_moves().len(), 218);
        for pos in &positions {
            let sorted = sorted_moves(pos);
            assert!(!sorted.is_empty());
            for (index, m) in sorted.iter().enumerate() {
                assert_eq!(move_index(pos, m), Some(index));
                assert_eq!(nth_move(pos, index), Ok(*m));
            }
            assert_eq!(nth_move(pos, sorted.len()), Err(sorted.len()));
            assert_eq!(nth_move(pos, usize::from(NO_MOVE)), Err(sorted.len()));
        }
        let illegal = sorted_moves(&chess(STARTS[0]))[0];
        assert_eq!(move_index(&positions[5], &illegal), None);
    }

    #[test]
    fn a_record_file_cannot_start_with_the_magic() {
        assert!(MAGIC.iter().map(|b| b.count_ones()).sum::<u32>() > 32);
        let mut record = [0u8; RECORD_BYTES];
        record[..8].copy_from_slice(&MAGIC);
        assert!(format::unpack(&record).is_none());
    }

    #[test]
    fn selection_quiet_is_the_record_writers_rule() {
        let start = chess("4k3/1P6/8/4p3/8/5N2/8/4K2R w K - 0 1");
        let after = |moves: &[&str]| {
            let mut pos = start.clone();
            for m in moves {
                let m = m.parse::<UciMove>().unwrap().to_move(&pos).unwrap();
                pos.play_unchecked(m);
            }
            pos
        };
        // Castling (kept), a king move (kept), Nxe5+ (a capture), Ke6 (out of check),
        // b8=Q (a promotion, with a mate score), Kd5 (kept).
        let line = ["e1g1", "e8d7", "f3e5", "d7e6", "b7b8q", "e6d5"];
        let scores = [30, -40, 300, 310, MATE_BOUND as i16 + 1, 900];
        let keep = [true, true, false, false, false, true];
        assert!(after(&line[..3]).is_check());
        let plies: Vec<Ply> = line
            .iter()
            .enumerate()
            .map(|(i, m)| Ply {
                best: Some(
                    m.parse::<UciMove>()
                        .unwrap()
                        .to_move(&after(&line[..i]))
                        .unwrap(),
                ),
                score: scores[i],
            })
            .collect();
        let game = Game {
            start: start.clone(),
            plies,
            result: GameResult::WhiteWin,
        };
        let expected: Vec<_> = (0..line.len())
            .filter(|&i| keep[i])
            .map(|i| format::pack(&after(&line[..i]), scores[i], GameResult::WhiteWin))
            .collect();
        assert_eq!(game.records(Selection::Quiet), expected);
        assert_eq!(game.count(Selection::Quiet), expected.len() as u64);
        assert_eq!(game.records(Selection::All).len(), line.len());
        // A mate score alone drops a quiet move.
        let mut mate = game.clone();
        mate.plies[0].score = -(MATE_BOUND as i16) - 1;
        assert_eq!(mate.records(Selection::Quiet), expected[1..]);
    }

    #[test]
    fn records_convert_to_games_and_back() {
        let mut rng = StdRng::seed_from_u64(5);
        let mut file = file_header(Encoding::Plain).to_vec();
        let mut records = Vec::new();
        for start in STARTS.iter().cycle().take(30) {
            let game = random_game(&chess(start), &mut rng, 150);
            for record in game.records(Selection::All) {
                let mut record = record;
                // Scores and results of every kind, mate scores included.
                record[24..26].copy_from_slice(&rng.random::<i16>().to_le_bytes());
                record[26] = rng.random_range(0..3);
                Game::of_record(&record)
                    .unwrap()
                    .encode(&mut file, Encoding::Plain);
                records.push(record);
            }
        }
        let back: Vec<_> = read(&file)
            .flat_map(|g| g.unwrap().1.records(Selection::Quiet))
            .collect();
        assert_eq!(back, records);
        let mut reserved = records[0];
        reserved[31] = 1;
        assert!(Game::of_record(&reserved).is_err());
        // d2 (a pawn) and e2 (the white king) share byte 8: the king becomes a pawn.
        let mut no_king = format::pack(&chess(STARTS[3]), 0, GameResult::Draw);
        assert_eq!(no_king[8], 0x50);
        no_king[8] = 0x00;
        assert!(Game::of_record(&no_king).is_err());
    }

    /// A small file of two games, and the offset of the second.
    fn two_games(encoding: Encoding) -> (Vec<u8>, usize) {
        let mut rng = StdRng::seed_from_u64(11);
        let mut file = file_header(encoding).to_vec();
        random_game(&chess(STARTS[1]), &mut rng, 60).encode(&mut file, encoding);
        let second = file.len();
        let game = loop {
            let game = random_game(&chess(STARTS[2]), &mut rng, 20);
            if game.plies.len() >= 2 {
                break game;
            }
        };
        game.encode(&mut file, encoding);
        (file, second)
    }

    fn first_problem(file: &[u8]) -> Damage {
        read(file)
            .find_map(Result::err)
            .expect("the file has a problem")
    }

    #[test]
    fn a_truncated_file_keeps_its_complete_games_and_names_the_cut() {
        for encoding in ENCODINGS {
            truncated_file(encoding);
        }
    }

    fn truncated_file(encoding: Encoding) {
        let (file, second) = two_games(encoding);
        for cut in (FILE_HEADER_BYTES + 1..file.len()).filter(|&cut| cut != second) {
            let items: Vec<_> = read(&file[..cut]).collect();
            let (complete, damage) = items.split_at(items.len() - 1);
            let damage = damage[0].clone().unwrap_err();
            assert!(
                matches!(damage.problem, Problem::Truncated { .. }),
                "{damage}"
            );
            if cut < second {
                assert_eq!((damage.offset, damage.game), (FILE_HEADER_BYTES, 1));
                assert!(complete.is_empty());
            } else {
                assert_eq!((damage.offset, damage.game), (second, 2));
                assert_eq!(complete.len(), 1);
            }
        }
        // Cut exactly between games: the first is whole and nothing is wrong.
        assert_eq!(read(&file[..second]).filter(|g| g.is_ok()).count(), 1);
        assert!(read(&file[..second]).all(|g| g.is_ok()));
        assert!(read(&file[..FILE_HEADER_BYTES]).next().is_none());
    }

    #[test]
    fn every_damaged_byte_is_found() {
        for encoding in ENCODINGS {
            damaged_bytes(encoding);
        }
    }

    fn damaged_bytes(encoding: Encoding) {
        let (file, second) = two_games(encoding);
        for at in 0..file.len() {
            for flip in [0x01, 0x80, 0xff] {
                let mut bad = file.clone();
                bad[at] ^= flip;
                let damage = first_problem(&bad);
                let game_start = if at < second {
                    FILE_HEADER_BYTES
                } else {
                    second
                };
                if at >= FILE_HEADER_BYTES {
                    assert!(
                        damage.offset >= game_start,
                        "byte {at}: {damage} is before the damaged game"
                    );
                }
                let message = damage.to_string();
                assert!(message.starts_with("byte "), "{message}");
            }
        }
    }

    /// Recomputes the checksum of the game at `at`, so that a test can reach the checks
    /// behind it.
    fn reseal(file: &mut [u8], at: usize, len: usize) {
        let sum = checksum(&file[at..at + len - 4]);
        file[at + len - 4..at + len].copy_from_slice(&sum.to_le_bytes());
    }

    #[test]
    fn bad_fields_are_named_with_their_byte() {
        let (file, second) = two_games(Encoding::Plain);
        let len = file.len() - second;
        let g = second;
        // (byte, new value, the problem's offset, a word of its message)
        let pieces = chess(STARTS[2]).board().occupied().count();
        let first_ply = g + 15 + pieces.div_ceil(2);
        let cases: Vec<(usize, u8, usize, &str)> = vec![
            (g + 2, file[g + 2] | 3, g + 2, "result 3"),
            (g + 2, file[g + 2] | 0x80, g + 2, "bit 7"),
            (g + 3, 9, g + 3, "en passant"),
            (g + 3, 1, g, "start position"),
            (g + 5, 0, g + 5, "fullmove"),
            (g + 15, 0x77, g + 15, "nibble"),
            (g + 15, 0x00, g, "start position"),
            (first_ply, 250, first_ply, "ply 0: index 250"),
            (first_ply + 3, NO_MOVE, first_ply + 3, "ply 1: index 255"),
        ];
        for (at, value, offset, words) in cases {
            let mut bad = file.clone();
            bad[at] = value;
            assert_eq!(first_problem(&bad).problem, Problem::Checksum);
            reseal(&mut bad, g, len);
            let damage = first_problem(&bad);
            assert_eq!(damage.offset, offset, "{damage}");
            assert_eq!(damage.game, 2);
            assert!(damage.to_string().contains(words), "{damage}");
        }
        // An en passant square no capture can use: valid, but not how the writer stores it.
        let mut lone = file_header(Encoding::Plain).to_vec();
        let after_e4 = chess("4k3/8/8/8/4P3/8/8/4K3 b - - 0 1");
        let game = Game {
            start: after_e4,
            plies: vec![],
            result: GameResult::Draw,
        };
        game.encode(&mut lone, Encoding::Plain);
        lone[FILE_HEADER_BYTES + 3] = 5;
        let len = lone.len() - FILE_HEADER_BYTES;
        reseal(&mut lone, FILE_HEADER_BYTES, len);
        let damage = first_problem(&lone);
        assert_eq!(damage.offset, FILE_HEADER_BYTES + 3);
        assert!(
            damage.to_string().contains("no legal en passant"),
            "{damage}"
        );
        let mut bad = file.clone();
        bad[0] = b'B';
        assert_eq!(first_problem(&bad).problem, Problem::NotGamesFile);
        let mut bad = file.clone();
        bad[8] = 3;
        assert_eq!(first_problem(&bad).problem, Problem::UnknownVersion(3));
        assert_eq!(first_problem(&bad).offset, 8);
    }
}
