//! The chunks of `data/`: self-play games as they are committed to the repository.
//!
//! A chunk is a games file in the packed encoding (`games::Encoding::Packed`: score changes
//! as varints), compressed as one zstd frame with its content size and checksum. zstd does
//! what a hand-made entropy coder would (the move indices and small score changes repeat
//! their patterns) at about 2.6 bytes a training position against 4.6 for the plain games
//! file, and `zstd -d` turns a chunk back into an ordinary games file. The compression
//! level is fixed, so packing the same games gives the same bytes with the same library.
//!
//! A damaged chunk is refused whole: a cut or changed byte breaks the frame or its checksum,
//! and the error names the file. Inside a sound frame the games keep their own checksums.

use std::fs;
use std::io::{self, Read, Write};
use std::path::Path;

use super::games::{self, Damage, Encoding};

/// The first four bytes of a zstd frame.
pub const ZSTD_MAGIC: [u8; 4] = [0x28, 0xb5, 0x2f, 0xfd];
/// zstd's strongest level without its `--ultra` window: a chunk is packed once and read
/// many times, and decompression costs the same at every level.
pub const ZSTD_LEVEL: i32 = 19;
/// The largest chunk kept: git hosts warn about larger files, and a chunk is never rewritten.
pub const MAX_CHUNK_BYTES: usize = 16 << 20;
/// A chunk that unpacks to more than this is refused rather than read (about 150 M plies).
const MAX_UNPACKED_BYTES: u64 = 1 << 30;

/// Whether `bytes` (a file's beginning) is a chunk.
pub fn is_chunk(bytes: &[u8]) -> bool {
    bytes.starts_with(&ZSTD_MAGIC)
}

/// What a packing read and wrote.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Packed {
    pub chunk: Vec<u8>,
    pub games: u64,
    pub plies: u64,
    /// The quiet positions, which train the net (`games::Selection::Quiet`).
    pub positions: u64,
    /// The packed games file before compression.
    pub unpacked_bytes: usize,
}

/// Packs a games file's bytes (either encoding) into a chunk, or names its first damage.
pub fn pack(games_file: &[u8]) -> Result<Packed, Damage> {
    let mut packed = Packed::default();
    let mut unpacked = games::file_header(Encoding::Packed).to_vec();
    for item in games::read(games_file) {
        let (_, game) = item?;
        packed.games += 1;
        packed.plies += game.plies.len() as u64;
        packed.positions += game.count(games::Selection::Quiet);
        game.encode(&mut unpacked, Encoding::Packed);
    }
    packed.unpacked_bytes = unpacked.len();
    packed.chunk = compress(&unpacked).expect("compressing into memory does not fail");
    Ok(packed)
}

fn compress(bytes: &[u8]) -> io::Result<Vec<u8>> {
    let mut encoder = zstd::Encoder::new(Vec::new(), ZSTD_LEVEL)?;
    encoder.include_checksum(true)?;
    encoder.include_contentsize(true)?;
    encoder.set_pledged_src_size(Some(bytes.len() as u64))?;
    encoder.write_all(bytes)?;
    encoder.finish()
}

/// The games file a chunk holds.
pub fn unpack(chunk: &[u8]) -> io::Result<Vec<u8>> {
    let mut unpacked = Vec::new();
    zstd::Decoder::new(chunk)?
        .take(MAX_UNPACKED_BYTES + 1)
        .read_to_end(&mut unpacked)?;
    if unpacked.len() as u64 > MAX_UNPACKED_BYTES {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("unpacks to more than {MAX_UNPACKED_BYTES} bytes"),
        ));
    }
    Ok(unpacked)
}

/// A data file's bytes as the readers take them: a chunk unpacked to its games file, any
/// other file as it is. Errors name the file.
pub fn read_data_file(path: &Path) -> io::Result<Vec<u8>> {
    let named = |e: io::Error| io::Error::new(e.kind(), format!("{}: {e}", path.display()));
    let bytes = fs::read(path).map_err(named)?;
    if !is_chunk(&bytes) {
        return Ok(bytes);
    }
    unpack(&bytes).map_err(|e| {
        named(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("a damaged or truncated chunk: {e}"),
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::offline::datagen::format::GameResult;
    use crate::offline::datagen::games::{Game, Ply, Selection};
    use rand::rngs::StdRng;
    use rand::seq::IndexedRandom;
    use rand::{Rng, SeedableRng};
    use shakmaty::{Chess, Position};

    /// A plain games file of `count` random games with scores that drift as a search's do,
    /// and extremes (the score range's ends, mate-like jumps) now and then.
    fn plain_file(count: usize, seed: u64) -> Vec<u8> {
        let mut rng = StdRng::seed_from_u64(seed);
        let mut file = games::file_header(Encoding::Plain).to_vec();
        for _ in 0..count {
            let mut pos = Chess::default();
            let mut plies = Vec::new();
            let mut score: i16 = 0;
            for _ in 0..rng.random_range(0..120) {
                let Some(&m) = pos.legal_moves().choose(&mut rng) else {
                    break;
                };
                score = match rng.random_range(0..20) {
                    0 => *[i16::MIN, i16::MAX, 0].choose(&mut rng).unwrap(),
                    1 => rng.random(),
                    _ => score.saturating_add(rng.random_range(-40..40)),
                };
                plies.push(Ply {
                    best: Some(m),
                    score,
                });
                pos.play_unchecked(m);
            }
            let result = GameResult::from_byte(rng.random_range(0..3)).unwrap();
            let start = Chess::default();
            Game {
                start,
                plies,
                result,
            }
            .encode(&mut file, Encoding::Plain);
        }
        file
    }

    fn all_games(file: &[u8]) -> Vec<Game> {
        games::read(file).map(|g| g.unwrap().1).collect()
    }

    #[test]
    fn a_chunk_unpacks_to_the_same_games() {
        let plain = plain_file(60, 1);
        let packed = pack(&plain).unwrap();
        assert!(is_chunk(&packed.chunk));
        let unpacked = unpack(&packed.chunk).unwrap();
        assert_eq!(unpacked.len(), packed.unpacked_bytes);
        assert_eq!(&unpacked[8..12], &2u32.to_le_bytes());
        let (before, after) = (all_games(&plain), all_games(&unpacked));
        assert_eq!(before.len(), 60);
        assert_eq!(packed.games, 60);
        for (a, b) in before.iter().zip(&after) {
            assert_eq!(a.plies, b.plies);
            assert_eq!(a.result, b.result);
            assert_eq!(a.records(Selection::All), b.records(Selection::All));
        }
        let quiet: usize = before
            .iter()
            .map(|g| g.records(Selection::Quiet).len())
            .sum();
        assert_eq!(packed.positions, quiet as u64);
        // Packing is a function of the games: again, and from the packed file itself.
        assert_eq!(pack(&plain).unwrap().chunk, packed.chunk);
        assert_eq!(pack(&unpacked).unwrap().chunk, packed.chunk);
        // Smaller than the plain file even for these random moves.
        assert!(packed.chunk.len() < plain.len(), "{}", packed.chunk.len());
    }

    #[test]
    fn a_damaged_or_cut_chunk_is_refused_with_its_name() {
        let chunk = pack(&plain_file(20, 2)).unwrap().chunk;
        let dir = std::env::temp_dir().join(format!("basalt-chunk-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let path = dir.join("c.games.zst");
        for cut in [5, chunk.len() / 2, chunk.len() - 1] {
            fs::write(&path, &chunk[..cut]).unwrap();
            let e = read_data_file(&path).unwrap_err().to_string();
            assert!(e.contains("c.games.zst") && e.contains("chunk"), "{e}");
        }
        for at in (4..chunk.len()).step_by(7) {
            let mut bad = chunk.clone();
            bad[at] ^= 0x10;
            fs::write(&path, &bad).unwrap();
            // Refused, or (a bit the format does not use) the same games back.
            if let Ok(bytes) = read_data_file(&path) {
                assert_eq!(
                    bytes,
                    unpack(&chunk).unwrap(),
                    "byte {at} changed unnoticed"
                );
            }
        }
        fs::write(&path, [&chunk[..], b"x"].concat()).unwrap();
        assert!(read_data_file(&path).is_err(), "trailing bytes");
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn packed_scores_survive_every_jump() {
        let start = Chess::default();
        let moves = start.legal_moves();
        let scores = [
            0,
            i16::MAX,
            i16::MIN,
            i16::MAX,
            -1,
            1,
            63,
            64,
            -64,
            -65,
            8191,
            8192,
        ];
        let mut pos = start.clone();
        let mut plies = Vec::new();
        for (i, &score) in scores.iter().enumerate() {
            let m = if i % 2 == 0 {
                moves[i % 4]
            } else {
                pos.legal_moves()[0]
            };
            let m = if pos.is_legal(m) {
                m
            } else {
                pos.legal_moves()[0]
            };
            plies.push(Ply {
                best: Some(m),
                score,
            });
            pos.play_unchecked(m);
        }
        let game = Game {
            start,
            plies,
            result: GameResult::Draw,
        };
        let mut file = games::file_header(Encoding::Packed).to_vec();
        game.encode(&mut file, Encoding::Packed);
        assert_eq!(all_games(&file)[0].plies, game.plies);
    }
}
