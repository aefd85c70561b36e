//! `tools/data.py` on a scratch manifest and data directory: `record` writes a file's row and
//! a checkpoint each time, and `status` tells a present file, a missing one, a partial one
//! (a regeneration under way) that matches the last checkpoint it has passed, one that has
//! passed none yet, and one whose bytes differ from that checkpoint; `cut` takes a file's
//! first games out as datagen would have written them; `chunk` packs the games no chunk
//! holds yet into a new chunk, `chunk-pgn` turns PGNs into one, and `status` checks the chunks.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

const DATA_PY: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tools/data.py");
const FILE: &str = "t.games";

/// The datagen flags of the test file (the manifest row's flags: no --out or --games).
fn flags() -> Vec<String> {
    let book = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/eval_book_8moves_v3.epd");
    let mut flags: Vec<String> = "--format games --threads 1 --nodes 800 --seed 7 --book"
        .split(' ')
        .map(String::from)
        .collect();
    flags.push(book.display().to_string());
    flags
}

/// Plays `games` games into `data/FILE` (resuming what is there).
fn datagen(data: &Path, games: u32) {
    std::fs::create_dir_all(data).unwrap();
    let output = common::run_engine(
        common::basalt()
            .args(["datagen", "--out"])
            .arg(data.join(FILE))
            .args(["--games", &games.to_string()])
            .args(flags()),
        Duration::from_secs(300),
        &["datagen: "],
    );
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// Runs `tools/data.py ARGS` on `manifest` and `data`.
fn run_data_py(manifest: &Path, data: &Path, args: &[&str]) -> Output {
    Command::new("python3")
        .arg(DATA_PY)
        .args(args)
        .env("BASALT_MANIFEST", manifest)
        .env("BASALT_DATA", data)
        .env("BASALT_CHUNKS", manifest.parent().unwrap().join("chunks"))
        .env("BASALT_BIN", common::binary())
        .output()
        .expect("python3 runs tools/data.py")
}

/// `tools/data.py ARGS`, which must succeed: its standard output.
fn data_py(manifest: &Path, data: &Path, args: &[&str]) -> String {
    let output = run_data_py(manifest, data, args);
    assert!(
        output.status.success(),
        "data.py {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

/// `tools/data.py ARGS`, which must fail: its standard error.
fn data_py_fails(manifest: &Path, data: &Path, args: &[&str]) -> String {
    let output = run_data_py(manifest, data, args);
    assert!(!output.status.success(), "data.py {args:?} succeeded");
    String::from_utf8(output.stderr).unwrap()
}

fn record(manifest: &Path, data: &Path) {
    let flags = flags();
    let mut args = vec!["record", FILE, "abc1234", "test net", "--"];
    args.extend(flags.iter().map(String::as_str));
    data_py(manifest, data, &args);
}

/// The state `status` gives the test file.
fn state(manifest: &Path, data: &Path) -> String {
    let out = data_py(manifest, data, &["status"]);
    let line = out
        .lines()
        .find(|l| l.starts_with(FILE))
        .unwrap_or_else(|| panic!("no line for {FILE} in {out}"));
    line.split("records").nth(1).unwrap().trim().to_string()
}

fn scratch_dir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn status_checks_a_partial_regeneration_against_the_checkpoints() {
    let dir = scratch_dir("data-manifest");
    let manifest = dir.join("datasets.tsv");
    std::fs::write(
        &manifest,
        "# test manifest\nfile\tcommit\tnet\tgames\trecords\tbytes\tsha256\tflags\n",
    )
    .unwrap();
    let data = dir.join("data");

    // Recorded at 3 games and again at 6: the row says 6, the checkpoints both.
    datagen(&data, 3);
    record(&manifest, &data);
    datagen(&data, 6);
    record(&manifest, &data);
    assert_eq!(state(&manifest, &data), "present");
    let checkpoints = std::fs::read_to_string(dir.join("datasets-checkpoints.tsv")).unwrap();
    let games: Vec<&str> = checkpoints
        .lines()
        .filter(|l| l.starts_with(FILE))
        .map(|l| l.split('\t').nth(1).unwrap())
        .collect();
    assert_eq!(games, ["3", "6"]);
    // Recording the same games again adds no checkpoint.
    record(&manifest, &data);
    let again = std::fs::read_to_string(dir.join("datasets-checkpoints.tsv")).unwrap();
    assert_eq!(again, checkpoints);

    // Another machine: nothing yet, then a regeneration stopped before the first checkpoint,
    // then one past it.
    let other = dir.join("other");
    assert_eq!(state(&manifest, &other), "missing");
    datagen(&other, 2);
    assert_eq!(
        state(&manifest, &other),
        "partial: 2 of 6 games, no checkpoint reached yet"
    );
    datagen(&other, 4);
    assert_eq!(
        state(&manifest, &other),
        "partial: 4 of 6 games, matches the checkpoint at 3 games"
    );

    // `cut` takes the same 4 games out of the 6-game file, byte for byte, and refuses to
    // make up games or overwrite a file.
    let four = dir.join("four.games");
    data_py(
        &manifest,
        &data,
        &["cut", FILE, "4", four.to_str().unwrap()],
    );
    assert_eq!(
        std::fs::read(&four).unwrap(),
        std::fs::read(other.join(FILE)).unwrap()
    );
    let seven = dir.join("seven.games");
    let refused = data_py_fails(
        &manifest,
        &data,
        &["cut", FILE, "7", seven.to_str().unwrap()],
    );
    assert!(
        refused.contains("holds 6 complete games, fewer than 7"),
        "{refused}"
    );
    assert!(!seven.exists());
    let again = data_py_fails(
        &manifest,
        &data,
        &["cut", FILE, "2", four.to_str().unwrap()],
    );
    assert!(again.contains("exists"), "{again}");

    // One changed byte inside the checkpoint's bytes is caught.
    let path = other.join(FILE);
    let mut bytes = std::fs::read(&path).unwrap();
    bytes[40] ^= 1;
    std::fs::write(&path, &bytes).unwrap();
    let damaged = state(&manifest, &other);
    assert!(
        damaged.starts_with("different: its first ")
            && damaged.ends_with("bytes do not match the checkpoint at 3 games"),
        "{damaged}"
    );
}

/// The records `basalt convert-data` reads from `input` (a games file or a chunk).
fn records_of(input: &Path, dir: &Path) -> Vec<u8> {
    let out = dir.join("records.bin");
    let _ = std::fs::remove_file(&out);
    let output = common::run_engine(
        common::basalt()
            .args(["convert-data", "--in"])
            .arg(input)
            .arg("--out")
            .arg(&out),
        Duration::from_secs(60),
        &[],
    );
    assert!(output.status.success(), "{output:?}");
    std::fs::read(&out).unwrap()
}

/// A scratch directory with an empty manifest: (the directory, the manifest, the data
/// directory, the chunk directory).
fn chunks_scratch(name: &str) -> (PathBuf, PathBuf, PathBuf, PathBuf) {
    let dir = scratch_dir(name);
    let manifest = dir.join("datasets.tsv");
    std::fs::write(
        &manifest,
        "file\tcommit\tnet\tgames\trecords\tbytes\tsha256\tflags\n",
    )
    .unwrap();
    let (data, chunks) = (dir.join("data"), dir.join("chunks"));
    (dir, manifest, data, chunks)
}

#[test]
fn chunk_packs_the_new_games_and_status_checks_them() {
    let (dir, manifest, data, chunks) = chunks_scratch("data-chunks");
    datagen(&data, 4);
    // The first chunk needs the run's origin, seed included.
    let refused = data_py_fails(&manifest, &data, &["chunk", FILE]);
    assert!(refused.contains("no chunk yet"), "{refused}");
    let flags = flags();
    let mut args = vec!["chunk", FILE, "abc1234", "test net", "--"];
    args.extend(flags.iter().map(String::as_str));
    let first = data_py(&manifest, &data, &args);
    assert!(
        first.starts_with("t-001.games.zst: games 1-4 of t.games"),
        "{first}"
    );
    datagen(&data, 6);
    let second = data_py(&manifest, &data, &["chunk", FILE]);
    assert!(
        second.starts_with("t-002.games.zst: games 5-6 of t.games"),
        "{second}"
    );
    let nothing = data_py(&manifest, &data, &["chunk", FILE]);
    assert!(
        nothing.contains("every complete game is in a chunk"),
        "{nothing}"
    );

    let table = std::fs::read_to_string(chunks.join("chunks.tsv")).unwrap();
    let rows: Vec<Vec<&str>> = table
        .lines()
        .filter(|l| l.starts_with("t-"))
        .map(|l| l.split('\t').collect())
        .collect();
    assert_eq!(rows.len(), 2);
    // chunk file first_game games positions bytes sha256 commit net seed flags
    assert_eq!(&rows[1][..4], ["t-002.games.zst", FILE, "5", "2"]);
    assert_eq!(&rows[1][7..10], ["abc1234", "test net", "7"]);
    assert!(!rows[1][10].contains("--seed"));

    // The chunks hold the run's positions, in order, and their rows count them.
    let mut from_chunks = records_of(&chunks.join("t-001.games.zst"), &dir);
    from_chunks.extend(records_of(&chunks.join("t-002.games.zst"), &dir));
    assert_eq!(from_chunks, records_of(&data.join(FILE), &dir));
    let counted: usize = rows.iter().map(|r| r[4].parse::<usize>().unwrap()).sum();
    assert_eq!(counted * 32, from_chunks.len());
    let paths = data_py(&manifest, &data, &["chunks"]);
    assert_eq!(paths.lines().count(), 2);

    let status = data_py(&manifest, &data, &["status"]);
    assert!(
        status.contains("2 chunks") && status.contains("0 missing or different"),
        "{status}"
    );
    // A changed byte in a committed chunk fails `status`.
    let path = chunks.join("t-002.games.zst");
    let mut bytes = std::fs::read(&path).unwrap();
    bytes[20] ^= 1;
    std::fs::write(&path, &bytes).unwrap();
    let output = run_data_py(&manifest, &data, &["status"]);
    let out = String::from_utf8_lossy(&output.stdout);
    assert!(!output.status.success(), "{out}");
    assert!(
        out.contains("t-002.games.zst") && out.contains("different"),
        "{out}"
    );
}

#[test]
fn chunk_pgn_converts_pgns_into_a_chunk_with_its_row() {
    let (dir, manifest, data, chunks) = chunks_scratch("data-chunk-pgn");
    let pgn = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/openbench_datagen.pgn");
    let pgn = pgn.to_str().unwrap();

    // The same PGN converted by hand: the chunk must hold these games and positions.
    let direct = dir.join("direct.games.zst");
    let output = common::basalt()
        .args(["convert-data", "--from-pgn", pgn, "--out"])
        .arg(&direct)
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let report = String::from_utf8(output.stdout).unwrap();
    // convert-data: from PGN: R games read, K kept; P plies, Q positions; ...
    let number_before = |word: &str| {
        report
            .split(word)
            .next()
            .unwrap()
            .rsplit(' ')
            .next()
            .unwrap()
    };
    let (kept, positions) = (number_before(" kept"), number_before(" positions;"));

    let usage = data_py_fails(&manifest, &data, &["chunk-pgn", "ob-1", "abc1234", "net"]);
    assert!(usage.contains("usage"), "{usage}");
    let how = "OpenBench datagen 1, N=5000";
    let args = ["chunk-pgn", "ob-1", "abc1234", "test net", how, "--", pgn];
    let first = data_py(&manifest, &data, &args);
    assert!(
        first.contains(&format!("ob-1-001.games.zst: games 1-{kept} of ob-1")),
        "{first}"
    );
    let second = data_py(&manifest, &data, &args);
    assert!(second.contains("ob-1-002.games.zst: games "), "{second}");

    let table = std::fs::read_to_string(chunks.join("chunks.tsv")).unwrap();
    let rows: Vec<Vec<&str>> = table
        .lines()
        .filter(|l| l.starts_with("ob-1-"))
        .map(|l| l.split('\t').collect())
        .collect();
    assert_eq!(rows.len(), 2);
    // chunk file first_game games positions bytes sha256 commit net seed flags
    assert_eq!(
        &rows[0][..5],
        ["ob-1-001.games.zst", "ob-1", "1", kept, positions]
    );
    let next = (1 + kept.parse::<u64>().unwrap()).to_string();
    assert_eq!(rows[1][2], next);
    assert_eq!(
        &rows[0][7..],
        [
            "abc1234",
            "test net",
            "-",
            "from-pgn: OpenBench datagen 1, N=5000"
        ]
    );
    assert_eq!(
        records_of(&chunks.join("ob-1-001.games.zst"), &dir),
        records_of(&direct, &dir)
    );
    let status = data_py(&manifest, &data, &["status"]);
    assert!(
        status.contains("2 chunks") && status.contains("0 missing or different"),
        "{status}"
    );
}
