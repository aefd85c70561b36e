//! Training records: loading them raw, decoding one, and turning it into network inputs.
//!
//! A record is the 32-byte layout `basalt datagen` writes (`crate::offline::datagen::format`, described
//! in docs/datagen.md); a record file is a plain concatenation of records. A games file
//! (`crate::offline::datagen::games`, told apart by its magic) is loaded as the records of
//! its quiet positions, the ones the record format would hold; so is a chunk of `data/`
//! (`crate::offline::datagen::chunk`), the games file it holds.

use std::io;
use std::path::Path;

use shakmaty::{Color, Piece, Square};

use crate::nnue::{KingBuckets, EVAL_SCALE};
use crate::offline::datagen::chunk;
use crate::offline::datagen::format::{self, GameResult};
use crate::offline::datagen::games::{self, Selection};

pub const RECORD_SIZE: usize = format::RECORD_BYTES;
pub type Record = [u8; RECORD_SIZE];

/// Records whose |score| reaches this are mate scores or close to them: the sigmoid of such
/// a score is 1 or 0 whatever the position, so they teach the net nothing it can use.
pub const MATE_SCORE_CUTOFF: i32 = 10_000;

/// At most 32 pieces on the board, so at most 32 active features per perspective.
pub const MAX_ACTIVE_FEATURES: usize = 32;

/// One record decoded.
#[derive(Clone, Debug)]
pub struct LabelledPosition {
    pieces: [(Square, Piece); MAX_ACTIVE_FEATURES],
    piece_count: usize,
    /// Search score in centipawns, White's view.
    pub score: i16,
    /// Game result for White: 0 loss, 1 draw, 2 win.
    pub result: u8,
    pub turn: Color,
}

impl LabelledPosition {
    pub fn pieces(&self) -> &[(Square, Piece)] {
        &self.pieces[..self.piece_count]
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RecordError {
    TooManyPieces,
    BadPiece,
    BadResult,
    BadSideToMove,
}

/// Decodes one record with the datagen format's own helpers, without building a board.
pub fn decode(record: &Record) -> Result<LabelledPosition, RecordError> {
    let occupancy = u64::from_le_bytes(record[0..8].try_into().expect("8 bytes"));
    if occupancy.count_ones() as usize > MAX_ACTIVE_FEATURES {
        return Err(RecordError::TooManyPieces);
    }
    let result = GameResult::from_byte(record[26]).ok_or(RecordError::BadResult)?;
    let mut position = LabelledPosition {
        pieces: [(Square::A1, Color::White.pawn()); MAX_ACTIVE_FEATURES],
        piece_count: 0,
        score: i16::from_le_bytes([record[24], record[25]]),
        result: result as u8,
        turn: match record[27] {
            0 => Color::White,
            1 => Color::Black,
            _ => return Err(RecordError::BadSideToMove),
        },
    };
    for (square, bits) in format::pieces(record) {
        let piece = format::piece_of(bits).ok_or(RecordError::BadPiece)?;
        position.pieces[position.piece_count] = (square, piece);
        position.piece_count += 1;
    }
    Ok(position)
}

/// The record of the same position mirrored left to right (a1 <-> h1): every piece moves
/// to the same rank on the opposite file; score, result and side to move are unchanged. The
/// evaluation has no castling rights, so the mirrored position is worth the same.
pub fn mirror_files(record: &Record) -> Record {
    let mut pieces: Vec<(u32, u8)> = format::pieces(record)
        .map(|(square, bits)| (u32::from(square) ^ 7, bits))
        .collect();
    pieces.sort_unstable_by_key(|&(square, _)| square);
    let mut out = *record;
    out[0..24].fill(0);
    let occupancy = pieces.iter().fold(0u64, |o, &(square, _)| o | 1 << square);
    out[0..8].copy_from_slice(&occupancy.to_le_bytes());
    for (i, &(_, bits)) in pieces.iter().enumerate() {
        out[8 + i / 2] |= bits << (4 * (i % 2));
    }
    out
}

/// Records read from the data files, with the counts of what was left out.
#[derive(Debug, Default, PartialEq)]
pub struct LoadedRecords {
    pub records: Vec<Record>,
    /// Records that do not decode.
    pub invalid: usize,
    /// Records with |score| >= MATE_SCORE_CUTOFF.
    pub mate_scores: usize,
    /// Records the [`Filter`] left out.
    pub filtered: usize,
}

/// Which positions a training run keeps, beyond the valid, non-mate ones.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Filter {
    /// Positions before this ply of the game (from the record's move number and side to
    /// move; 0 is the start position) are left out: the first plies of a self-play game
    /// follow random moves and a book, and their scores are the noisiest.
    pub min_ply: u32,
    /// Positions whose |score| is above this (centipawns) are left out.
    pub max_score: Option<i32>,
}

impl Filter {
    /// Whether `record` (which decodes as `position`) passes.
    pub fn keeps(&self, record: &Record, position: &LabelledPosition) -> bool {
        let within_score = self
            .max_score
            .is_none_or(|bound| i32::from(position.score).abs() <= bound);
        within_score && ply_of(record) >= self.min_ply
    }
}

/// The ply of a record's position in its game, from its full-move number and side to move.
pub fn ply_of(record: &Record) -> u32 {
    let fullmoves = u32::from(u16::from_le_bytes([record[29], record[30]])).max(1);
    2 * (fullmoves - 1) + u32::from(record[27] == 1)
}

impl LoadedRecords {
    fn add(&mut self, record: Record, filter: &Filter) {
        match decode(&record) {
            Err(_) => self.invalid += 1,
            Ok(p) if i32::from(p.score).abs() >= MATE_SCORE_CUTOFF => self.mate_scores += 1,
            Ok(p) if !filter.keeps(&record, &p) => self.filtered += 1,
            Ok(_) => self.records.push(record),
        }
    }
}

/// Reads whole record or games files into memory, keeping only the records the trainer
/// will use.
pub fn load(paths: &[impl AsRef<Path>]) -> io::Result<LoadedRecords> {
    load_filtered(paths, &Filter::default())
}

/// [`load`], keeping only the records `filter` passes.
pub fn load_filtered(paths: &[impl AsRef<Path>], filter: &Filter) -> io::Result<LoadedRecords> {
    let mut loaded = LoadedRecords::default();
    for path in paths {
        let path = path.as_ref();
        let bytes = chunk::read_data_file(path)?;
        if games::is_games_file(&bytes) {
            for game in games::read(&bytes) {
                let (_, game) = game.map_err(|damage| damage.in_file(path))?;
                for record in game.records(Selection::Quiet) {
                    loaded.add(record, filter);
                }
            }
            continue;
        }
        if bytes.len() % RECORD_SIZE != 0 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "{}: {} bytes is not a whole number of {RECORD_SIZE}-byte records",
                    path.display(),
                    bytes.len()
                ),
            ));
        }
        loaded.records.reserve(bytes.len() / RECORD_SIZE);
        for chunk in bytes.chunks_exact(RECORD_SIZE) {
            loaded.add(chunk.try_into().expect("chunks_exact"), filter);
        }
    }
    Ok(loaded)
}

/// The first bytes of a record cache (`basalt train --cache`).
const CACHE_MAGIC: &[u8; 16] = b"basalt-records1\n";

/// What a cache of `paths` loaded with `filter` must have been made from: each path as
/// given, its size and modification time, and the filter. A file rewritten since (a
/// growing run file, a new chunk in the list) makes another fingerprint.
pub fn cache_fingerprint(paths: &[impl AsRef<Path>], filter: &Filter) -> io::Result<u64> {
    let mut text = format!("{filter:?}");
    for path in paths {
        let path = path.as_ref();
        let meta = std::fs::metadata(path)?;
        let modified = meta
            .modified()
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_nanos());
        text.push_str(&format!("\n{}\t{}\t{modified}", path.display(), meta.len()));
    }
    Ok(crate::nnue::fnv1a64(text.as_bytes()))
}

/// [`load_filtered`] through the cache file `cache`: read from it when it was made from the
/// same files and filter, else loaded and written to it. The second value says whether the
/// cache answered.
pub fn load_cached(
    paths: &[impl AsRef<Path>],
    filter: &Filter,
    cache: &Path,
) -> io::Result<(LoadedRecords, bool)> {
    let fingerprint = cache_fingerprint(paths, filter)?;
    if let Ok(loaded) = read_cache(cache, fingerprint) {
        return Ok((loaded, true));
    }
    let loaded = load_filtered(paths, filter)?;
    write_cache(cache, fingerprint, &loaded)?;
    Ok((loaded, false))
}

fn write_cache(path: &Path, fingerprint: u64, loaded: &LoadedRecords) -> io::Result<()> {
    use std::io::Write;
    // Written beside and renamed into place, so an interrupted write leaves no cache that
    // looks whole.
    let partial = path.with_extension("partial");
    let mut out = io::BufWriter::new(std::fs::File::create(&partial)?);
    out.write_all(CACHE_MAGIC)?;
    for value in [
        fingerprint,
        loaded.invalid as u64,
        loaded.mate_scores as u64,
        loaded.filtered as u64,
        loaded.records.len() as u64,
    ] {
        out.write_all(&value.to_le_bytes())?;
    }
    out.write_all(loaded.records.as_flattened())?;
    out.into_inner().map_err(|e| e.into_error())?.sync_all()?;
    std::fs::rename(&partial, path)
}

fn read_cache(path: &Path, fingerprint: u64) -> io::Result<LoadedRecords> {
    use std::io::Read;
    let invalid = |what: &str| io::Error::new(io::ErrorKind::InvalidData, what.to_string());
    let mut file = std::fs::File::open(path)?;
    let mut header = [0u8; CACHE_MAGIC.len() + 5 * 8];
    file.read_exact(&mut header)?;
    if &header[..CACHE_MAGIC.len()] != CACHE_MAGIC {
        return Err(invalid("not a record cache"));
    }
    let value = |i: usize| {
        let at = CACHE_MAGIC.len() + 8 * i;
        u64::from_le_bytes(header[at..at + 8].try_into().expect("8 bytes"))
    };
    if value(0) != fingerprint {
        return Err(invalid("made from other files or another filter"));
    }
    let count = value(4) as usize;
    let expected = (header.len() + count * RECORD_SIZE) as u64;
    if file.metadata()?.len() != expected {
        return Err(invalid("cut short or too long"));
    }
    let mut records = vec![[0u8; RECORD_SIZE]; count];
    file.read_exact(records.as_flattened_mut())?;
    Ok(LoadedRecords {
        records,
        invalid: value(1) as usize,
        mate_scores: value(2) as usize,
        filtered: value(3) as usize,
    })
}

/// What a sample's target is made of: the search score as an expected result, on a sigmoid
/// of `scale` cp, blended with the game's result at weight `wdl`.
///
/// The net's output stays in centipawns whatever the scale: the trainer compares
/// sigmoid(output / scale) with the target. A scale fitted to the data (the result a score
/// of `scale` cp gives is 1 / (1 + e^-1)) keeps a blended target from inflating the scores
/// the net learns; with `wdl` 0 the scale only weighs the errors.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Target {
    pub wdl: f32,
    pub scale: f32,
}

impl Target {
    /// The search score alone, on the net's own scale.
    pub const SCORE: Target = Target {
        wdl: 0.0,
        scale: EVAL_SCALE as f32,
    };
    /// The game's result alone.
    pub const RESULT: Target = Target {
        wdl: 1.0,
        scale: EVAL_SCALE as f32,
    };

    /// The blend `wdl` on the net's own scale.
    pub fn blend(wdl: f32) -> Target {
        Target {
            wdl,
            scale: EVAL_SCALE as f32,
        }
    }

    /// What the net's output (in logits of EVAL_SCALE cp) is multiplied by to be a logit
    /// of this target's scale: exactly 1.0 on the net's own scale.
    pub fn gain(self) -> f32 {
        EVAL_SCALE as f32 / self.scale
    }
}

/// A position as the network sees it: active feature indices from the side to move's
/// perspective and from the other side's, and the training target.
#[derive(Clone, Debug)]
pub struct TrainingSample {
    /// `[side to move, other side]`; the first `len` entries of each are used.
    pub features: [[u16; MAX_ACTIVE_FEATURES]; 2],
    pub len: usize,
    /// Expected score for the side to move, in [0, 1].
    pub target: f32,
    /// The target's `Target::gain`.
    pub gain: f32,
}

impl TrainingSample {
    /// `target` says how the score and result make the target; `kings` numbers the inputs.
    pub fn new(position: &LabelledPosition, target: Target, kings: &KingBuckets) -> TrainingSample {
        let us = position.turn;
        let mut sample = TrainingSample {
            features: [[0; MAX_ACTIVE_FEATURES]; 2],
            len: position.piece_count,
            target: 0.0,
            gain: target.gain(),
        };
        // Without king buckets the views ignore the king: skip looking for it.
        let king_of = |color: Color| {
            if !kings.uses_king() {
                return Square::A1;
            }
            position
                .pieces()
                .iter()
                .find(|(_, piece)| *piece == color.king())
                .map_or(Square::A1, |&(square, _)| square)
        };
        let views = [kings.view(us, king_of(us)), kings.view(!us, king_of(!us))];
        for (i, &(square, piece)) in position.pieces().iter().enumerate() {
            sample.features[0][i] = views[0].index(piece, square) as u16;
            sample.features[1][i] = views[1].index(piece, square) as u16;
        }
        let (score, result) = match us {
            Color::White => (f32::from(position.score), f32::from(position.result) / 2.0),
            Color::Black => (
                -f32::from(position.score),
                1.0 - f32::from(position.result) / 2.0,
            ),
        };
        let expected = 1.0 / (1.0 + (-score / target.scale).exp());
        sample.target = (1.0 - target.wdl) * expected + target.wdl * result;
        sample
    }

    /// The active inputs, the side to move's first (what `FloatNetwork::forward_inputs`
    /// takes).
    #[inline]
    pub fn inputs(&self) -> [&[u16]; 2] {
        [&self.features[0][..self.len], &self.features[1][..self.len]]
    }

    /// The sample for a record, or None if it does not decode (`load` drops those, so this
    /// does not happen to loaded data).
    pub fn from_record(
        record: &Record,
        target: Target,
        kings: &KingBuckets,
    ) -> Option<TrainingSample> {
        decode(record)
            .ok()
            .map(|p| TrainingSample::new(&p, target, kings))
    }
}

/// Records made from positions, for tests and trial runs only (real data comes from
/// `basalt datagen`); `examples/synthetic_records.rs` writes them to a file.
pub mod synthetic {
    use rand::rngs::StdRng;
    use rand::seq::IndexedRandom;
    use rand::{Rng, SeedableRng};
    use shakmaty::{Chess, Position};

    use super::{Record, RECORD_SIZE};
    use crate::eval;

    /// The inverse of `decode`.
    pub fn encode(position: &Chess, score: i16, result: u8) -> Record {
        let board = position.board();
        let mut record = [0u8; RECORD_SIZE];
        record[0..8].copy_from_slice(&board.occupied().0.to_le_bytes());
        for (i, square) in board.occupied().into_iter().enumerate() {
            let piece = board.piece_at(square).expect("occupied");
            let nibble = (piece.color.fold_wb(0, 8) + piece.role as u8 - 1) << (4 * (i % 2));
            record[8 + i / 2] |= nibble;
        }
        record[24..26].copy_from_slice(&score.to_le_bytes());
        record[26] = result;
        record[27] = position.turn().fold_wb(0, 1);
        record[28] = position.halfmoves().min(255) as u8;
        record[29..31]
            .copy_from_slice(&(position.fullmoves().get().min(65535) as u16).to_le_bytes());
        record
    }

    /// `count` positions from random games of 4 to 80 plies, scored by the static
    /// evaluation (White's view) with a result that follows the score, so the labels are
    /// learnable but not trivially linear.
    pub fn random_records(count: usize, seed: u64) -> Vec<Record> {
        let mut rng = StdRng::seed_from_u64(seed);
        let mut records = Vec::with_capacity(count);
        while records.len() < count {
            let mut position = Chess::default();
            let plies = rng.random_range(4..80);
            for _ in 0..plies {
                let moves = position.legal_moves();
                let Some(m) = moves.choose(&mut rng) else {
                    break;
                };
                position.play_unchecked(*m);
            }
            if position.is_game_over() {
                continue;
            }
            let white_score = position.turn().fold_wb(1, -1) * eval::evaluate(&position);
            let result = match white_score {
                s if s > 150 => 2,
                s if s < -150 => 0,
                _ => 1,
            };
            records.push(encode(&position, white_score as i16, result));
        }
        records
    }
}

#[cfg(test)]
mod tests {
    use super::synthetic::{encode, random_records};
    use super::*;
    use shakmaty::fen::Fen;
    use shakmaty::{CastlingMode, Chess, Position};

    /// The ply filter reads the move number and side to move; the score filter the score.
    #[test]
    fn filters_leave_out_early_plies_and_large_scores() {
        let start = Chess::default();
        let record = encode(&start, 30, 1);
        assert_eq!(ply_of(&record), 0);
        let position = decode(&record).unwrap();
        let keeps = |min_ply, max_score| Filter { min_ply, max_score }.keeps(&record, &position);
        assert!(keeps(0, None) && keeps(0, Some(30)));
        assert!(!keeps(1, None) && !keeps(0, Some(29)));
        let later: Chess = "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3"
            .parse::<Fen>()
            .unwrap()
            .into_position(CastlingMode::Standard)
            .unwrap();
        assert_eq!(ply_of(&encode(&later, 0, 1)), 4);
        let mut black = encode(&later, 0, 1);
        black[27] = 1;
        assert_eq!(ply_of(&black), 5);
    }

    /// A cache gives back what loading gave, is refused for another filter or a changed
    /// file, and a refused cache is rebuilt.
    #[test]
    fn cache_round_trips_and_follows_its_inputs() {
        let dir = std::env::temp_dir().join(format!("basalt-cache-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let data = dir.join("records.bin");
        std::fs::write(&data, random_records(300, 14).concat()).unwrap();
        let cache = dir.join("records.cache");
        let filter = Filter {
            min_ply: 10,
            max_score: Some(300),
        };
        let paths = [data.clone()];
        let (first, hit) = load_cached(&paths, &filter, &cache).unwrap();
        assert!(!hit);
        assert!(first.filtered > 0 && !first.records.is_empty());
        assert_eq!(first, load_filtered(&paths, &filter).unwrap());
        let (again, hit) = load_cached(&paths, &filter, &cache).unwrap();
        assert!(hit);
        assert_eq!(again, first);
        let (other, hit) = load_cached(&paths, &Filter::default(), &cache).unwrap();
        assert!(!hit, "another filter");
        assert_eq!(other, load(&paths).unwrap());
        std::fs::write(&data, random_records(200, 15).concat()).unwrap();
        let (changed, hit) = load_cached(&paths, &Filter::default(), &cache).unwrap();
        assert!(!hit, "a rewritten file");
        assert_eq!(changed.records.len() + changed.mate_scores, 200);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn decode_inverts_encode() {
        for record in random_records(200, 7) {
            let position = decode(&record).expect("valid");
            let mut occupancy = 0u64;
            let mut previous = None;
            for &(square, _) in position.pieces() {
                assert!(previous < Some(square), "ascending squares");
                previous = Some(square);
                occupancy |= 1 << square as u32;
            }
            assert_eq!(occupancy.to_le_bytes(), record[0..8]);
        }
    }

    #[test]
    fn mirror_files_is_the_flipped_board() {
        for record in random_records(100, 9) {
            let mirrored = mirror_files(&record);
            let mut board = crate::offline::datagen::format::unpack(&record)
                .unwrap()
                .board;
            board.flip_horizontal();
            let back = crate::offline::datagen::format::unpack(&mirrored).unwrap();
            assert_eq!(back.board, board);
            assert_eq!(
                mirrored[24..],
                record[24..],
                "score, result and the rest kept"
            );
            assert_eq!(mirror_files(&mirrored), record);
        }
    }

    #[test]
    fn decodes_a_known_position() {
        let fen = "4k3/8/8/8/8/8/4P3/4K2R b K - 3 40";
        let chess: Chess = fen
            .parse::<Fen>()
            .unwrap()
            .into_position(CastlingMode::Standard)
            .unwrap();
        let record = encode(&chess, -123, 0);
        // e1, h1, e2, e8 in ascending order: white king 5, white rook 3, white pawn 0,
        // black king 8 + 5.
        assert_eq!(record[8], 0x35);
        assert_eq!(record[9], 0xd0);
        assert_eq!(record[28], 3);
        assert_eq!(u16::from_le_bytes([record[29], record[30]]), 40);
        let position = decode(&record).unwrap();
        assert_eq!(position.score, -123);
        assert_eq!(position.result, 0);
        assert_eq!(position.turn, Color::Black);
        let pieces: Vec<_> = position.pieces().to_vec();
        assert_eq!(
            pieces,
            vec![
                (Square::E1, Color::White.king()),
                (Square::H1, Color::White.rook()),
                (Square::E2, Color::White.pawn()),
                (Square::E8, Color::Black.king()),
            ]
        );
        assert_eq!(chess.board().occupied().count(), 4);
    }

    #[test]
    fn rejects_malformed_records() {
        let mut record = encode(&Chess::default(), 0, 1);
        record[26] = 3;
        assert_eq!(decode(&record).unwrap_err(), RecordError::BadResult);
        let mut record = encode(&Chess::default(), 0, 1);
        record[27] = 2;
        assert_eq!(decode(&record).unwrap_err(), RecordError::BadSideToMove);
        let mut record = encode(&Chess::default(), 0, 1);
        record[8] |= 0x06;
        assert_eq!(decode(&record).unwrap_err(), RecordError::BadPiece);
        let mut record = encode(&Chess::default(), 0, 1);
        record[0..8].copy_from_slice(&u64::MAX.to_le_bytes());
        assert_eq!(decode(&record).unwrap_err(), RecordError::TooManyPieces);
    }

    #[test]
    fn target_is_from_the_side_to_move() {
        let black_to_move: Chess = "4k3/8/8/8/8/8/8/4K2Q b - - 0 1"
            .parse::<Fen>()
            .unwrap()
            .into_position(CastlingMode::Standard)
            .unwrap();
        // White is 400 cp up and won; Black to move: sigmoid(-1) and result 0.
        let sample = TrainingSample::from_record(
            &encode(&black_to_move, 400, 2),
            Target::blend(0.25),
            &KingBuckets::NONE,
        )
        .unwrap();
        let expected = 0.75 / (1.0 + 1f32.exp());
        assert!((sample.target - expected).abs() < 1e-6);
        // The black king on e8 is the side to move's own king: seen from Black, e8 is e1.
        assert!(sample.features[0][..sample.len].contains(&(5 * 64 + 4)));
        assert!(sample.features[1][..sample.len].contains(&(384 + 5 * 64 + 60)));
    }

    /// On another scale the score's expected result changes and the gain says how the
    /// net's output is read; on the net's own scale the gain is exactly 1, so the default
    /// trains the same bytes as before the scale existed.
    #[test]
    fn target_scale_changes_the_expected_result_not_the_result() {
        let white_to_move = Chess::default();
        let record = encode(&white_to_move, 250, 2);
        let fitted = Target {
            wdl: 0.25,
            scale: 250.0,
        };
        let sample = TrainingSample::from_record(&record, fitted, &KingBuckets::NONE).unwrap();
        let expected = 0.75 / (1.0 + (-1f32).exp()) + 0.25;
        assert!((sample.target - expected).abs() < 1e-6);
        assert_eq!(sample.gain, 400.0 / 250.0);
        let own = TrainingSample::from_record(&record, Target::blend(0.25), &KingBuckets::NONE);
        assert_eq!(own.unwrap().gain, 1.0);
    }

    #[test]
    fn games_files_load_as_their_records() {
        let dir = std::env::temp_dir().join(format!("basalt-train-games-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let records = random_records(300, 4);
        let mut games_file = games::file_header(games::Encoding::Plain).to_vec();
        for record in &records {
            games::Game::of_record(record)
                .unwrap()
                .encode(&mut games_file, games::Encoding::Plain);
        }
        let (as_records, as_games) = (dir.join("records.bin"), dir.join("games.bin"));
        std::fs::write(&as_records, records.concat()).unwrap();
        std::fs::write(&as_games, &games_file).unwrap();
        let from_records = load(&[&as_records]).unwrap();
        let from_games = load(&[&as_games]).unwrap();
        assert_eq!(from_games.records, from_records.records);
        assert_eq!(from_games.mate_scores, from_records.mate_scores);
        // Both kinds in one run, in the order given.
        let both = load(&[&as_games, &as_records]).unwrap();
        assert_eq!(both.records.len(), 2 * from_records.records.len());
        // A damaged games file names itself and the byte.
        let last = games_file.len() - 1;
        games_file[last] ^= 1;
        std::fs::write(&as_games, &games_file).unwrap();
        let message = load(&[&as_games]).err().unwrap().to_string();
        assert!(
            message.contains("games.bin: byte") && message.contains("checksum"),
            "{message}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn load_drops_mate_scores_and_rejects_partial_files() {
        let dir = std::env::temp_dir().join(format!("basalt-train-load-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut bytes = Vec::new();
        bytes.extend_from_slice(&encode(&Chess::default(), 20, 1));
        bytes.extend_from_slice(&encode(&Chess::default(), -10_000, 0));
        let mut invalid = encode(&Chess::default(), 0, 1);
        invalid[27] = 9;
        bytes.extend_from_slice(&invalid);
        let path = dir.join("three.bin");
        std::fs::write(&path, &bytes).unwrap();
        let loaded = load(&[&path]).unwrap();
        assert_eq!(
            (loaded.records.len(), loaded.mate_scores, loaded.invalid),
            (1, 1, 1)
        );
        std::fs::write(&path, &bytes[..40]).unwrap();
        assert!(load(&[&path]).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
