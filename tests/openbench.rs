//! What OpenBench asks of an engine, checked the way its client does it (Client/genfens.py)
//! without OpenBench itself:
//!
//! - `genfens`: the binary run with the request and `quit` as two arguments prints N lines
//!   `info string genfens <FEN>` of legal six-field FENs, the same for the same request, the
//!   openings of the `basalt datagen` games of that seed; a bad request exits with status 2
//!   and a message.

mod common;

use std::fs;
use std::path::PathBuf;
use std::process::Output;
use std::time::Duration;

use shakmaty::fen::Fen;
use shakmaty::{CastlingMode, Chess, EnPassantMode, Position};

use basalt::offline::datagen::games;

use common::{basalt, run_within};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");
const PREFIX: &str = "info string genfens ";

/// A scratch directory of this test process, emptied first.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("basalt-openbench-{}-{name}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    dir
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Runs the engine as OpenBench's client does: `./engine "<request>" "quit"`.
fn genfens(request: &str) -> Output {
    run_within(basalt().args([request, "quit"]), Duration::from_secs(60))
}

/// The FENs of the `info string genfens` lines, after checking that the run succeeded.
fn fens(output: &Output) -> Vec<String> {
    let stdout = text(&output.stdout);
    assert!(
        output.status.success(),
        "{:?}\n{stdout}\n{}",
        output.status,
        text(&output.stderr)
    );
    stdout
        .lines()
        .filter_map(|line| line.strip_prefix(PREFIX))
        .map(str::to_string)
        .collect()
}

fn chess(fen: &str) -> Chess {
    fen.parse::<Fen>()
        .unwrap()
        .into_position(CastlingMode::Standard)
        .unwrap_or_else(|e| panic!("{fen}: {e}"))
}

fn fen_of(pos: &Chess) -> String {
    Fen::from_position(pos, EnPassantMode::Legal).to_string()
}

#[test]
fn genfens_prints_n_legal_openings_the_same_for_the_same_request() {
    let output = genfens("genfens 6 seed 12345 book None ");
    let first = fens(&output);
    assert_eq!(first.len(), 6, "{}", text(&output.stdout));
    for fen in &first {
        // OpenBench turns the last two fields into `hmvc` and `fmvn`: six fields.
        let fields: Vec<&str> = fen.split(' ').collect();
        assert_eq!(fields.len(), 6, "{fen}");
        let pos = chess(fen);
        assert!(!pos.legal_moves().is_empty() && !pos.is_insufficient_material());
        // datagen's default of 8 to 10 random plies from the start position.
        let fullmove: u32 = fields[5].parse().unwrap();
        let plies = 2 * (fullmove - 1) + u32::from(fields[1] == "b");
        assert!((8..=10).contains(&plies), "{plies} plies: {fen}");
    }
    assert_eq!(fens(&genfens("genfens 6 seed 12345 book None")), first);
    // Opening i does not depend on how many are asked for.
    assert_eq!(fens(&genfens("genfens 2 seed 12345 book None")), first[..2]);
    let other = fens(&genfens("genfens 6 seed 12346 book None"));
    assert!(other.iter().all(|fen| !first.contains(fen)), "{other:?}");
    // The command after the request is run (OpenBench sends `quit`; `uci` answers).
    let output = run_within(
        basalt().args(["genfens 1 seed 1 book None", "uci", "quit"]),
        Duration::from_secs(60),
    );
    assert_eq!(fens(&output).len(), 1);
    assert!(text(&output.stdout).lines().any(|l| l == "uciok"));
}

#[test]
fn genfens_openings_are_those_of_the_datagen_games_of_the_seed() {
    let dir = scratch("datagen");
    let out = dir.join("games.bin");
    let output = run_within(
        basalt()
            .args(["datagen", "--games", "2", "--seed", "77", "--out"])
            .arg(&out),
        Duration::from_secs(120),
    );
    assert!(output.status.success(), "{}", text(&output.stderr));
    let starts: Vec<String> = games::read(&fs::read(&out).unwrap())
        .map(|game| fen_of(&game.unwrap().1.start))
        .collect();
    assert_eq!(fens(&genfens("genfens 2 seed 77 book None")), starts);
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn genfens_draws_from_a_book_with_the_workloads_settings() {
    let dir = scratch("book");
    let book = dir.join("book.epd");
    fs::write(
        &book,
        "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - id \"e4\";\n\
         rnbqkbnr/pppppppp/8/8/3P4/8/PPP1PPPP/RNBQKBNR b KQkq -\n",
    )
    .unwrap();
    let request = format!(
        "genfens 8 seed 5 book {} random-plies-min 0 random-plies-max 0",
        book.display()
    );
    let drawn = fens(&genfens(&request));
    assert_eq!(drawn.len(), 8);
    let lines = [
        "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1",
        "rnbqkbnr/pppppppp/8/8/3P4/8/PPP1PPPP/RNBQKBNR b KQkq - 0 1",
    ];
    assert!(
        drawn.iter().all(|fen| lines.contains(&fen.as_str())),
        "{drawn:?}"
    );
    assert!(lines.iter().all(|line| drawn.iter().any(|fen| fen == line)));
    // Two plies from the book: black's reply and white's.
    let request = format!(
        "genfens 4 seed 5 book {} random-plies-min 2 random-plies-max 2",
        book.display()
    );
    for fen in fens(&genfens(&request)) {
        let fields: Vec<&str> = fen.split(' ').collect();
        assert_eq!((fields[1], fields[5]), ("b", "2"), "{fen}");
    }
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_bad_genfens_request_exits_with_a_message_and_no_opening() {
    let missing = format!("genfens 4 seed 1 book {ROOT}/tests/data/no_such_book.epd");
    let cases: [(&[&str], &str); 5] = [
        (&["genfens x seed 1 book None", "quit"], "N: `x`"),
        (
            &["genfens 4 seed 1 book None depth 3", "quit"],
            "unknown setting `depth`",
        ),
        (&["genfens 4 seed 1", "quit"], "as one argument"),
        // The request split over arguments, as a shell without quotes would pass it.
        (
            &["genfens", "4", "seed", "1", "book", "None"],
            "as one argument",
        ),
        (&[missing.as_str(), "quit"], "cannot read the book"),
    ];
    for (arguments, words) in cases {
        let output = run_within(basalt().args(arguments), Duration::from_secs(30));
        let stderr = text(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{arguments:?}: {stderr}");
        assert!(stderr.contains(words), "{arguments:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{arguments:?}: {stderr}");
        assert!(!text(&output.stdout).contains(PREFIX));
    }
}
