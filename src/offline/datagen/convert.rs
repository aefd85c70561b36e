//! `basalt convert-data`: a file of 32-byte records to a games file, or a games file to
//! records; and PGNs with search scores to a chunk.
//!
//! Records are not games: each becomes a game of one ply with no move (`Game::of_record`),
//! which gives the record back byte for byte. A games file becomes the records of the
//! positions a `Selection` keeps, as `basalt train` would load them. A chunk of `data/` reads
//! as the games file it holds; `pack` makes one, and `from_pgn` makes one of PGN games
//! (`pgn.rs`: OpenBench's DATAGEN workloads return them).

use std::fs::{self, File};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use super::chunk;
use super::format::RECORD_BYTES;
use super::games::{self, Game, Selection};
use super::pgn;

/// What a conversion read and wrote.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Converted {
    /// Whether the input was records (and the output games).
    pub to_games: bool,
    pub games: u64,
    pub plies: u64,
    /// Records read (to games) or written (from games).
    pub records: u64,
    pub bytes_in: u64,
    pub bytes_out: u64,
}

/// Converts `input` to `output`, in the other format; `selection` chooses the records of a
/// games file. The output must not exist; it is written under a temporary name and renamed
/// when complete, so a stopped conversion leaves no partial file under that name.
pub fn convert(input: &Path, output: &Path, selection: Selection) -> io::Result<Converted> {
    refuse_existing(output)?;
    let bytes = chunk::read_data_file(input)?;
    let mut converted = Converted {
        to_games: !games::is_games_file(&bytes),
        bytes_in: fs::metadata(input)?.len(),
        ..Converted::default()
    };
    converted.bytes_out = write_then_rename(output, |writer| {
        write_converted(&bytes, input, selection, &mut converted, writer)
    })?;
    Ok(converted)
}

/// Packs the games file (or chunk) `input` into the chunk `output` (`chunk::pack`), which
/// must not exist and may not pass `chunk::MAX_CHUNK_BYTES`.
pub fn pack(input: &Path, output: &Path) -> io::Result<chunk::Packed> {
    refuse_existing(output)?;
    let bytes = chunk::read_data_file(input)?;
    let packed = chunk::pack(&bytes).map_err(|damage| damage.in_file(input))?;
    if packed.chunk.len() > chunk::MAX_CHUNK_BYTES {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "{} games pack into {} bytes, more than a chunk's {}: pack fewer",
                packed.games,
                packed.chunk.len(),
                chunk::MAX_CHUNK_BYTES
            ),
        ));
    }
    write_then_rename(output, |writer| writer.write_all(&packed.chunk))?;
    Ok(packed)
}

/// What `from_pgn` read and wrote.
#[derive(Debug)]
pub struct FromPgn {
    /// Games in the PGNs, kept or not.
    pub seen: u64,
    /// Games skipped, by reason (`pgn.rs`).
    pub skipped: std::collections::BTreeMap<String, u64>,
    pub packed: chunk::Packed,
}

/// Packs the games of the PGN files `inputs` (in order) into the chunk `output`, which must
/// not exist and may not pass `chunk::MAX_CHUNK_BYTES`. A file that cannot be read as PGN,
/// or holds an illegal move, fails the whole conversion; so do PGNs without a game to keep.
pub fn from_pgn(inputs: &[PathBuf], output: &Path) -> io::Result<FromPgn> {
    refuse_existing(output)?;
    let mut read = pgn::Read::default();
    for input in inputs {
        let named = |e: String| {
            io::Error::new(
                io::ErrorKind::InvalidData,
                format!("{}: {e}", input.display()),
            )
        };
        let text = fs::read(input)
            .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", input.display())))?;
        let text = String::from_utf8(text).map_err(|e| named(format!("not UTF-8 text: {e}")))?;
        read.append(pgn::read(&text).map_err(named)?);
    }
    let skipped = || {
        let reasons: Vec<String> = read
            .skipped
            .iter()
            .map(|(reason, count)| format!("{count} {reason}"))
            .collect();
        reasons.join(", ")
    };
    if read.games.is_empty() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!(
                "no game to keep among the {} games read (skipped: {})",
                read.seen,
                skipped()
            ),
        ));
    }
    let mut file = games::file_header(games::Encoding::Plain).to_vec();
    for game in &read.games {
        game.encode(&mut file, games::Encoding::Plain);
    }
    let packed = chunk::pack(&file).map_err(|damage| {
        io::Error::other(format!("the converted games do not read back: {damage}"))
    })?;
    if packed.chunk.len() > chunk::MAX_CHUNK_BYTES {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "{} games pack into {} bytes, more than a chunk's {}: convert fewer",
                packed.games,
                packed.chunk.len(),
                chunk::MAX_CHUNK_BYTES
            ),
        ));
    }
    write_then_rename(output, |writer| writer.write_all(&packed.chunk))?;
    Ok(FromPgn {
        seen: read.seen,
        skipped: read.skipped,
        packed,
    })
}

fn refuse_existing(output: &Path) -> io::Result<()> {
    if output.exists() {
        return Err(io::Error::new(
            io::ErrorKind::AlreadyExists,
            format!("{} exists; not overwriting it", output.display()),
        ));
    }
    Ok(())
}

/// Writes `output` under a temporary name with `write`, then renames it, so a stopped
/// conversion leaves no partial file under that name; returns the bytes written.
fn write_then_rename(
    output: &Path,
    write: impl FnOnce(&mut BufWriter<File>) -> io::Result<()>,
) -> io::Result<u64> {
    let mut tmp = output.as_os_str().to_owned();
    tmp.push(".tmp");
    let written = File::create(&tmp).and_then(|file| {
        let mut writer = BufWriter::new(file);
        write(&mut writer)?;
        writer.flush()
    });
    if let Err(e) = written {
        let _ = fs::remove_file(&tmp);
        return Err(e);
    }
    let bytes = fs::metadata(&tmp)?.len();
    fs::rename(&tmp, output)?;
    Ok(bytes)
}

fn write_converted(
    bytes: &[u8],
    input: &Path,
    selection: Selection,
    converted: &mut Converted,
    writer: &mut impl Write,
) -> io::Result<()> {
    if converted.to_games {
        if !bytes.len().is_multiple_of(RECORD_BYTES) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "{}: neither a games file nor whole {RECORD_BYTES}-byte records: the \
                     record at byte {} is cut off",
                    input.display(),
                    bytes.len() / RECORD_BYTES * RECORD_BYTES
                ),
            ));
        }
        writer.write_all(&games::file_header(games::Encoding::Plain))?;
        let mut game_bytes = Vec::new();
        for (i, chunk) in bytes.chunks_exact(RECORD_BYTES).enumerate() {
            let record = chunk.try_into().expect("chunks_exact");
            let game = Game::of_record(record).map_err(|e| {
                io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!(
                        "{}: the record at byte {}: {e}",
                        input.display(),
                        i * RECORD_BYTES
                    ),
                )
            })?;
            game_bytes.clear();
            game.encode(&mut game_bytes, games::Encoding::Plain);
            writer.write_all(&game_bytes)?;
            converted.games += 1;
            converted.plies += 1;
            converted.records += 1;
        }
    } else {
        for item in games::read(bytes) {
            let (_, game) = item.map_err(|damage| damage.in_file(input))?;
            converted.games += 1;
            converted.plies += game.plies.len() as u64;
            for record in game.records(selection) {
                writer.write_all(&record)?;
                converted.records += 1;
            }
        }
    }
    Ok(())
}
