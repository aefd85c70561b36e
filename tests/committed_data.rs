//! The self-play chunks committed in data/ against their rows in data/chunks.tsv: every file
//! in data/ has a row and every row a chunk of its size and SHA-256, and every chunk, read
//! whole game by game (each game's checksum, legal moves), holds the row's games and
//! positions. The chunks are read on all cores: the pile is tens of millions of positions.

use std::fs::File;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use sha2::{Digest, Sha256};

use basalt::offline::datagen::chunk;
use basalt::offline::datagen::games::{self, Selection};

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/data");
const MANIFEST: &str = "chunks.tsv";

struct Row {
    chunk: String,
    games: u64,
    positions: u64,
    bytes: u64,
    sha256: String,
}

fn rows() -> Vec<Row> {
    let table = std::fs::read_to_string(Path::new(DATA).join(MANIFEST))
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

/// The SHA-256 of the file at `path`, in lowercase hex as `sha256sum` prints it.
fn sha256_of(path: &Path) -> String {
    let mut hasher = Sha256::new();
    let mut file = File::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    std::io::copy(&mut file, &mut hasher).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    format!("{:x}", hasher.finalize())
}

/// The files in `dir` that no row names, the manifest aside, sorted.
fn files_without_a_row(dir: &Path, rows: &[Row]) -> Vec<String> {
    let mut unlisted: Vec<String> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name != MANIFEST && !rows.iter().any(|row| &row.chunk == name))
        .collect();
    unlisted.sort();
    unlisted
}

/// The games in the chunk at `path` and the quiet positions they yield (the positions that
/// train the net), or the chunk's first damage.
fn games_and_positions(path: &Path) -> Result<(u64, u64), String> {
    let bytes = chunk::read_data_file(path).map_err(|e| e.to_string())?;
    let (mut games, mut positions) = (0, 0);
    for game in games::read(&bytes) {
        let (_, game) = game.map_err(|damage| damage.to_string())?;
        games += 1;
        positions += game.count(Selection::Quiet);
    }
    Ok((games, positions))
}

#[test]
fn every_chunk_matches_its_row() {
    let rows = rows();
    assert!(!rows.is_empty(), "data/chunks.tsv lists no chunk");
    for (i, row) in rows.iter().enumerate() {
        assert!(
            !rows[..i].iter().any(|r| r.chunk == row.chunk),
            "{} has two rows",
            row.chunk
        );
        let path = Path::new(DATA).join(&row.chunk);
        let size = std::fs::metadata(&path)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
            .len();
        assert_eq!(size, row.bytes, "{}", row.chunk);
        assert!(size as usize <= chunk::MAX_CHUNK_BYTES, "{}", row.chunk);
        assert_eq!(sha256_of(&path), row.sha256, "{}", row.chunk);
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
fn every_file_in_data_has_a_row() {
    let unlisted = files_without_a_row(Path::new(DATA), &rows());
    assert!(
        unlisted.is_empty(),
        "in data/ without a row in data/chunks.tsv (add one with tools/data.py chunk): {unlisted:?}"
    );
}

/// The check above finds a file that has no row (and only that one).
#[test]
fn a_file_without_a_row_is_found() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("committed_data_unlisted");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    for name in [MANIFEST, "a-001.games.zst", "a-002.games.zst"] {
        std::fs::write(dir.join(name), b"").unwrap();
    }
    let row = Row {
        chunk: "a-001.games.zst".into(),
        games: 0,
        positions: 0,
        bytes: 0,
        sha256: String::new(),
    };
    assert_eq!(files_without_a_row(&dir, &[row]), ["a-002.games.zst"]);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn every_chunk_reads_as_its_row_says() {
    let rows = rows();
    let start = Instant::now();
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let next = AtomicUsize::new(0);
    let failures = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..threads.min(rows.len()) {
            scope.spawn(|| {
                while let Some(row) = rows.get(next.fetch_add(1, Ordering::Relaxed)) {
                    let failure = match games_and_positions(&Path::new(DATA).join(&row.chunk)) {
                        Ok(counts) if counts == (row.games, row.positions) => continue,
                        Ok((games, positions)) => format!(
                            "{}: {games} games and {positions} positions, its row says {} and {}",
                            row.chunk, row.games, row.positions
                        ),
                        Err(damage) => format!("{}: {damage}", row.chunk),
                    };
                    failures.lock().unwrap().push(failure);
                }
            });
        }
    });
    let failures = failures.into_inner().unwrap();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    let positions: u64 = rows.iter().map(|r| r.positions).sum();
    println!(
        "{} chunks, {positions} positions read in {:.1} s on {threads} threads",
        rows.len(),
        start.elapsed().as_secs_f64()
    );
}
