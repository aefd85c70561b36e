//! `basalt datagen` end to end: reproducible from its seed whatever the thread count (with
//! a book or from random plies alone), resumable to the same bytes, and every record a sane
//! quiet position; a games file (`--format games`, the default) yields the records of the
//! record format, record for record, and `basalt convert-data` converts between the two;
//! `--syzygy` ends a game with the tablebase result.

mod common;

use std::path::{Path, PathBuf};

use std::process::{Command, Output};
use std::time::Duration;

use basalt::offline::datagen::format::{unpack, GameResult, RECORD_BYTES};
use basalt::offline::datagen::games::{self, Selection};
use shakmaty::{CastlingMode, Color, FromSetup, Position, Setup};

/// Far above what the tests' runs take (seconds); only reached when one hangs.
const DATAGEN_PATIENCE: Duration = Duration::from_secs(300);

/// Runs a datagen or convert-data command to its end: its progress and errors are the
/// only stderr lines it may write.
fn run_checked(command: &mut Command) -> Output {
    common::run_engine(command, DATAGEN_PATIENCE, &["datagen: ", "convert-data: "])
}

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let path = dir.join(name);
    let _ = std::fs::remove_file(&path);
    let mut progress = path.clone().into_os_string();
    progress.push(".progress");
    let _ = std::fs::remove_file(progress);
    path
}

/// Runs datagen with the tests' settings and `flags`.
fn run_datagen(out: &Path, flags: &[&str]) -> Output {
    run_checked(
        common::basalt()
            .args(["datagen", "--out"])
            .arg(out)
            .args(flags)
            .args(["--nodes", "800", "--seed", "7", "--book"])
            .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/eval_book_8moves_v3.epd")),
    )
}

fn succeeded(output: Output) -> Output {
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

fn datagen(out: &Path, games: u64, threads: usize) {
    datagen_format(out, "records", games, threads);
}

fn datagen_format(out: &Path, format: &str, games: u64, threads: usize) {
    let (games, threads) = (games.to_string(), threads.to_string());
    let flags = ["--format", format, "--games", &games, "--threads", &threads];
    succeeded(run_datagen(out, &flags));
}

/// The progress file's first line: the complete games, records and bytes.
fn progress(out: &Path) -> String {
    std::fs::read_to_string(format!("{}.progress", out.display()))
        .unwrap()
        .lines()
        .next()
        .unwrap_or("")
        .to_string()
}

/// The records a games file yields under `selection`, concatenated.
fn records_of(games_file: &[u8], selection: Selection) -> Vec<u8> {
    games::read(games_file)
        .flat_map(|game| game.expect("whole games").1.records(selection))
        .flatten()
        .collect()
}

fn convert(input: &Path, out: &Path) -> String {
    let _ = std::fs::remove_file(out);
    let output = succeeded(run_checked(
        common::basalt()
            .args(["convert-data", "--in"])
            .arg(input)
            .arg("--out")
            .arg(out),
    ));
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[test]
fn same_seed_same_file_with_any_thread_count_and_after_resuming() {
    let one = scratch("datagen_one.bin");
    let two = scratch("datagen_two.bin");
    let resumed = scratch("datagen_resumed.bin");
    datagen(&one, 6, 1);
    datagen(&two, 6, 2);
    datagen(&resumed, 2, 1);
    datagen(&resumed, 6, 2);
    let bytes = std::fs::read(&one).unwrap();
    assert!(!bytes.is_empty());
    assert_eq!(bytes.len() % RECORD_BYTES, 0);
    assert_eq!(bytes, std::fs::read(&two).unwrap(), "1 vs 2 threads");
    assert_eq!(bytes, std::fs::read(&resumed).unwrap(), "resumed run");
    assert_eq!(
        progress(&one),
        format!("games 6 records {}", bytes.len() / RECORD_BYTES)
    );
}

#[test]
fn records_are_quiet_legal_positions() {
    let out = scratch("datagen_check.bin");
    datagen(&out, 4, 1);
    let bytes = std::fs::read(&out).unwrap();
    let mut results = [0; 3];
    for chunk in bytes.chunks_exact(RECORD_BYTES) {
        let record = unpack(chunk.try_into().unwrap()).expect("record decodes");
        let board = &record.board;
        for color in [Color::White, Color::Black] {
            assert_eq!(board.kings().intersect(board.by_color(color)).count(), 1);
        }
        assert!(!board.pawns().intersects(shakmaty::Bitboard::BACKRANKS));
        results[record.result as usize] += 1;
        assert!(record.score.abs() < 20000, "no mate scores");
        let setup = Setup {
            board: board.clone(),
            turn: record.turn,
            ..Setup::empty()
        };
        let pos = shakmaty::Chess::from_setup(setup, CastlingMode::Standard)
            .or_else(shakmaty::PositionError::ignore_impossible_check)
            .expect("a legal position");
        assert!(!pos.is_check(), "side to move in check");
        assert!(!pos.legal_moves().is_empty());
    }
    assert!(results.iter().sum::<i32>() > 0);
}

#[test]
fn games_file_yields_the_records_and_resumes_after_a_cut() {
    let records = scratch("games_records.bin");
    let one = scratch("games_one.bin");
    let two = scratch("games_two.bin");
    let cut = scratch("games_cut.bin");
    datagen(&records, 6, 1);
    datagen_format(&one, "games", 6, 1);
    let record_bytes = std::fs::read(&records).unwrap();
    let game_bytes = std::fs::read(&one).unwrap();
    let record_count = record_bytes.len() / RECORD_BYTES;
    assert!(record_count > 0);

    // The positions the games file yields are the records, byte for byte.
    assert_eq!(records_of(&game_bytes, Selection::Quiet), record_bytes);
    assert_eq!(
        progress(&one),
        format!("games 6 records {record_count} bytes {}", game_bytes.len())
    );
    let all = records_of(&game_bytes, Selection::All).len() / RECORD_BYTES;
    assert!(all > record_count, "{all} searched positions");
    assert!(
        game_bytes.len() < 6 * record_count,
        "{} bytes for {record_count} positions",
        game_bytes.len()
    );

    // The same file with two threads, and after a half-written game was cut off.
    datagen_format(&two, "games", 6, 2);
    assert_eq!(std::fs::read(&two).unwrap(), game_bytes, "1 vs 2 threads");
    datagen_format(&cut, "games", 2, 1);
    let two_games = std::fs::read(&cut).unwrap();
    let fourth_game_start = games::read(&game_bytes)
        .nth(3)
        .map(|g| g.unwrap().0)
        .unwrap();
    let mut half_written = two_games.clone();
    half_written.extend_from_slice(&game_bytes[two_games.len()..fourth_game_start - 7]);
    std::fs::write(&cut, &half_written).unwrap();
    assert!(games::read(&half_written).last().unwrap().is_err());
    datagen_format(&cut, "games", 6, 1);
    assert_eq!(
        std::fs::read(&cut).unwrap(),
        game_bytes,
        "resumed after a cut"
    );

    // convert-data: games to records gives the record file; records to games and back too.
    let converted = scratch("games_converted.bin");
    convert(&one, &converted);
    assert_eq!(std::fs::read(&converted).unwrap(), record_bytes);
    let as_games = scratch("games_of_records.bin");
    let report = convert(&records, &as_games);
    assert!(report.contains("records to games"), "{report}");
    let back = scratch("games_back.bin");
    convert(&as_games, &back);
    assert_eq!(std::fs::read(&back).unwrap(), record_bytes);

    // A file is resumed only in its own format.
    let wrong = run_datagen(&one, &["--games", "7", "--format", "records"]);
    assert!(!wrong.status.success());
    assert!(String::from_utf8_lossy(&wrong.stderr).contains("--format games"));
    let wrong = run_datagen(&records, &["--games", "7", "--format", "games"]);
    assert!(!wrong.status.success());
    assert!(String::from_utf8_lossy(&wrong.stderr).contains("--format records"));
}

#[test]
fn positions_target_stops_both_formats_at_the_same_game() {
    let records = scratch("positions_records.bin");
    let games_file = scratch("positions_games.bin");
    succeeded(run_datagen(
        &records,
        &["--positions", "100", "--format", "records"],
    ));
    succeeded(run_datagen(
        &games_file,
        &["--positions", "100", "--format", "games", "--threads", "2"],
    ));
    let record_bytes = std::fs::read(&records).unwrap();
    assert!(record_bytes.len() >= 100 * RECORD_BYTES);
    let game_bytes = std::fs::read(&games_file).unwrap();
    assert_eq!(records_of(&game_bytes, Selection::Quiet), record_bytes);
}

/// Runs datagen with only `flags` (no book: the start position and random plies).
fn run_bare(out: &Path, flags: &[&str]) -> Output {
    run_checked(
        common::basalt()
            .args(["datagen", "--out"])
            .arg(out)
            .args(flags),
    )
}

/// Plies from the start position to `pos`, by its side to move and move number.
fn plies_from_start(pos: &shakmaty::Chess) -> u32 {
    2 * (pos.fullmoves().get() - 1) + u32::from(pos.turn() == Color::Black)
}

#[test]
fn random_ply_openings_without_a_book_give_the_same_bytes() {
    let one = scratch("random_one.bin");
    let two = scratch("random_two.bin");
    let flags = ["--games", "4", "--nodes", "300", "--seed", "5"];
    succeeded(run_bare(&one, &[&flags[..], &["--threads", "1"]].concat()));
    succeeded(run_bare(&two, &[&flags[..], &["--threads", "2"]].concat()));
    let bytes = std::fs::read(&one).unwrap();
    assert!(games::is_games_file(&bytes), "games is the default format");
    assert_eq!(bytes, std::fs::read(&two).unwrap(), "1 vs 2 threads");
    let mut count = 0;
    for game in games::read(&bytes) {
        let (_, game) = game.expect("whole games");
        let plies = plies_from_start(&game.start);
        assert!((8..=10).contains(&plies), "{plies} random plies");
        assert!(!game.plies.is_empty());
        count += 1;
    }
    assert_eq!(count, 4);
}

#[test]
fn syzygy_ends_games_with_the_tablebase_result() {
    let dir = common::syzygy_dir();
    // Start positions (played as they are: no random plies) and their results.
    let starts = [
        ("8/8/8/4k3/8/8/8/R3K3 w - -", GameResult::WhiteWin),
        ("8/8/8/8/3Q4/2k5/8/K7 b - -", GameResult::Draw),
        ("8/8/8/8/8/3q4/8/K6k w - -", GameResult::BlackWin),
    ];
    let book = scratch("tablebase_book.epd");
    let lines: Vec<&str> = starts.iter().map(|(fen, _)| *fen).collect();
    std::fs::write(&book, lines.join("\n") + "\n").unwrap();
    let play = |out: &Path, syzygy: bool| {
        let mut flags = vec![
            "--games",
            "12",
            "--nodes",
            "300",
            "--seed",
            "1",
            "--random-plies-min",
            "0",
            "--random-plies-max",
            "0",
            "--opening-max-score",
            "100000",
            "--book",
        ];
        flags.push(book.to_str().unwrap());
        if syzygy {
            flags.extend(["--syzygy", dir]);
        }
        succeeded(run_bare(out, &flags));
        let bytes = std::fs::read(out).unwrap();
        games::read(&bytes)
            .map(|game| game.expect("whole games").1)
            .collect::<Vec<_>>()
    };
    let mut seen = [false; 3];
    for game in play(&scratch("tablebase_on.bin"), true) {
        let fen = shakmaty::fen::Fen::from_position(&game.start, shakmaty::EnPassantMode::Legal);
        let fen = fen.to_string();
        let k = starts
            .iter()
            .position(|(start, _)| fen.starts_with(start))
            .unwrap_or_else(|| panic!("{fen} is not a book position"));
        seen[k] = true;
        assert_eq!(game.result, starts[k].1, "{fen}");
        assert!(
            game.plies.is_empty(),
            "{fen}: ended before its first search"
        );
    }
    assert_eq!(seen, [true; 3]);
    // Without the tables the same games are played on.
    for game in play(&scratch("tablebase_off.bin"), false) {
        assert!(!game.plies.is_empty());
    }
}

/// `flags` with the value after `flag` replaced by `value`.
fn with(flags: &[&str], flag: &str, value: &str) -> Vec<String> {
    let mut flags: Vec<String> = flags.iter().map(|f| f.to_string()).collect();
    let at = flags
        .iter()
        .position(|f| f == flag)
        .expect("the flag is there")
        + 1;
    flags[at] = value.to_string();
    flags
}

#[test]
fn a_resume_with_other_settings_is_refused_naming_the_difference() {
    let out = scratch("settings_resumed.bin");
    let book = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/eval_book_8moves_v3.epd");
    let book = book.to_str().unwrap();
    let run = |games: &str, flags: &[String]| {
        let mut all = vec!["--games", games];
        all.extend(flags.iter().map(String::as_str));
        run_bare(&out, &all)
    };
    let base = ["--nodes", "300", "--seed", "7", "--book", book];
    let same = with(&base, "--seed", "7");
    succeeded(run("2", &same));
    let two_games = std::fs::read(&out).unwrap();
    let recorded = std::fs::read_to_string(format!("{}.progress", out.display())).unwrap();
    assert!(recorded.contains("\nseed 7\nnodes 300\n"), "{recorded}");

    // Another seed, node budget, book or evaluation: refused, naming what differs, and
    // nothing written.
    let shorter_book = scratch("settings_book.epd");
    let lines: Vec<String> = std::fs::read_to_string(book)
        .unwrap()
        .lines()
        .skip(1)
        .map(|l| l.to_string() + "\n")
        .collect();
    std::fs::write(&shorter_book, lines.concat()).unwrap();
    let mut hce = same.clone();
    hce.push("--hce".into());
    let refused = [
        (
            with(&base, "--seed", "8"),
            "seed 7 there, 8 in this run (--seed)",
        ),
        (
            with(&base, "--nodes", "400"),
            "nodes 300 there, 400 in this run (--nodes)",
        ),
        (
            with(&base, "--book", shorter_book.to_str().unwrap()),
            "(--book)",
        ),
        (hce, "in this run (--eval-file or --hce)"),
    ];
    for (flags, named) in refused {
        let output = run("3", &flags);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success(), "{flags:?} was accepted");
        assert!(stderr.contains(named), "{flags:?}: {stderr}");
        assert_eq!(std::fs::read(&out).unwrap(), two_games, "{flags:?}");
        let progress = std::fs::read_to_string(format!("{}.progress", out.display())).unwrap();
        assert_eq!(progress, recorded, "{flags:?}");
    }

    // The same settings go on, as an uninterrupted run would have.
    succeeded(run("3", &same));
    let whole = scratch("settings_whole.bin");
    succeeded(run_bare(
        &whole,
        &[&["--games", "3"][..], &base[..]].concat(),
    ));
    assert_eq!(std::fs::read(&out).unwrap(), std::fs::read(&whole).unwrap());

    // A progress file from before the settings were recorded: resumed, with a note, and
    // recorded from then on.
    std::fs::write(format!("{}.progress", out.display()), progress(&out) + "\n").unwrap();
    let output = succeeded(run("4", &same));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("does not record seed, nodes,"), "{stderr}");
    let recorded = std::fs::read_to_string(format!("{}.progress", out.display())).unwrap();
    assert!(recorded.contains("\nseed 7\n"), "{recorded}");
    assert!(!run("5", &with(&base, "--seed", "9")).status.success());
}
