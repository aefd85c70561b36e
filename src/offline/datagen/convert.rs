//! `basalt convert-data`: a file of 32-byte records to a games file, or a games file to
//! records.
//!
//! Records are not games: each becomes a game of one ply with no move (`Game::of_record`),
//! which gives the record back byte for byte. A games file becomes the records of the
//! positions a `Selection` keeps, as `basalt train` would load them.

use std::fs::{self, File};
use std::io::{self, BufWriter, Write};
use std::path::Path;

use super::format::RECORD_BYTES;
use super::games::{self, Game, Selection};

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
    if output.exists() {
        return Err(io::Error::new(
            io::ErrorKind::AlreadyExists,
            format!("{} exists; not overwriting it", output.display()),
        ));
    }
    let bytes = fs::read(input)
        .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", input.display())))?;
    let mut tmp = output.as_os_str().to_owned();
    tmp.push(".tmp");
    let mut converted = Converted {
        to_games: !games::is_games_file(&bytes),
        bytes_in: bytes.len() as u64,
        ..Converted::default()
    };
    let written = File::create(&tmp).and_then(|file| {
        let mut writer = BufWriter::new(file);
        write_converted(&bytes, input, selection, &mut converted, &mut writer)?;
        writer.flush()
    });
    if let Err(e) = written {
        let _ = fs::remove_file(&tmp);
        return Err(e);
    }
    converted.bytes_out = fs::metadata(&tmp)?.len();
    fs::rename(&tmp, output)?;
    Ok(converted)
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
        writer.write_all(&games::file_header())?;
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
            game.encode(&mut game_bytes);
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
