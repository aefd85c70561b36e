//! The self-play chunks committed in data/ against their rows in data/chunks.tsv: every
//! chunk's size and SHA-256, and the first and the newest chunk read whole, game by game
//! (each game's checksum, legal moves), with the row's games and positions.

use std::path::Path;
use std::process::Command;

use basalt::offline::datagen::chunk;
use basalt::offline::datagen::games::{self, Selection};

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/data");

struct Row {
    chunk: String,
    games: u64,
    positions: u64,
    bytes: u64,
    sha256: String,
}

fn rows() -> Vec<Row> {
    let table = std::fs::read_to_string(Path::new(DATA).join("chunks.tsv"))
        .expect("data/chunks.tsv is committed");
    let mut lines = table.lines().filter(|l| !l.starts_with('#'));
    let header: Vec<&str> = lines.next().expect("a header line").split('\t').collect();
    let column = |name: &str| header.iter().position(|&c| c == name).expect(name);
    let (chunk, games, positions, bytes, sha256) = (
        column("chunk"),
        column("games"),
        column("positions"),
        column("bytes"),
        column("sha256"),
    );
    lines
        .map(|line| {
            let f: Vec<&str> = line.split('\t').collect();
            assert_eq!(f.len(), header.len(), "{line}");
            Row {
                chunk: f[chunk].to_string(),
                games: f[games].parse().unwrap(),
                positions: f[positions].parse().unwrap(),
                bytes: f[bytes].parse().unwrap(),
                sha256: f[sha256].to_string(),
            }
        })
        .collect()
}

#[test]
fn every_chunk_matches_its_row() {
    let rows = rows();
    assert!(!rows.is_empty(), "data/chunks.tsv lists no chunk");
    for row in &rows {
        let path = Path::new(DATA).join(&row.chunk);
        let size = std::fs::metadata(&path)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
            .len();
        assert_eq!(size, row.bytes, "{}", row.chunk);
        assert!(size as usize <= chunk::MAX_CHUNK_BYTES, "{}", row.chunk);
        let out = Command::new("sha256sum").arg(&path).output().unwrap();
        let sum = String::from_utf8(out.stdout).unwrap();
        assert_eq!(
            sum.split(' ').next(),
            Some(row.sha256.as_str()),
            "{}",
            row.chunk
        );
    }
    // At most 3 bytes a training position, over whole chunks.
    let bytes: u64 = rows.iter().map(|r| r.bytes).sum();
    let positions: u64 = rows.iter().map(|r| r.positions).sum();
    assert!(
        bytes <= 3 * positions,
        "{bytes} bytes for {positions} positions"
    );
}

#[test]
fn the_first_and_newest_chunks_read_as_their_rows_say() {
    let rows = rows();
    let (first, newest) = (rows.first().unwrap(), rows.last().unwrap());
    for row in [first, newest] {
        let bytes = chunk::read_data_file(&Path::new(DATA).join(&row.chunk)).unwrap();
        let (mut games, mut positions) = (0, 0);
        for game in games::read(&bytes) {
            let (_, game) = game.unwrap_or_else(|damage| panic!("{}: {damage}", row.chunk));
            games += 1;
            positions += game.records(Selection::Quiet).len() as u64;
        }
        assert_eq!(
            (games, positions),
            (row.games, row.positions),
            "{}",
            row.chunk
        );
    }
}
