//! What OpenBench asks of an engine, checked the way its client does it (Client/genfens.py,
//! Client/utils.py, OpenBench/spsa_utils.py) without OpenBench itself:
//!
//! - `genfens`: the binary run with the request and `quit` as two arguments prints N lines
//!   `info string genfens <FEN>` of legal six-field FENs, the same for the same request, the
//!   openings of the `basalt datagen` games of that seed; a bad request exits with status 2
//!   and a message;
//! - `EVALFILE`: the build script's choice and checks of the net, and the Makefile passing
//!   the variable to it (`make -n`). A second build with another net would cost minutes,
//!   so the build itself is not repeated here;
//! - the SPSA build: `make -n SPSA=1` turns on the `spsa` feature, and `basalt spsa-inputs`
//!   prints OpenBench's input lines;
//! - `convert-data --from-pgn`: tests/data/openbench_datagen.pgn (fastchess's and
//!   OpenBench's comment forms, a FEN start with a book move, mates both ways, skipped
//!   games) becomes a chunk whose games, scores, results and positions are read back.

mod common;

#[path = "../build.rs"]
#[allow(dead_code)]
mod build_script;

use std::ffi::OsStr;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

use shakmaty::fen::Fen;
use shakmaty::{CastlingMode, Chess, EnPassantMode, Position};

use basalt::offline::datagen::chunk;
use basalt::offline::datagen::format::{self, GameResult};
use basalt::offline::datagen::games::{self, Game, Selection};

use common::{basalt, run_engine, run_within};

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
    run_engine(
        basalt().args([request, "quit"]),
        Duration::from_secs(60),
        &[],
    )
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
    let output = run_engine(
        basalt().args(["genfens 1 seed 1 book None", "uci", "quit"]),
        Duration::from_secs(60),
        &[],
    );
    assert_eq!(fens(&output).len(), 1);
    assert!(text(&output.stdout).lines().any(|l| l == "uciok"));
}

#[test]
fn genfens_openings_are_those_of_the_datagen_games_of_the_seed() {
    let dir = scratch("datagen");
    let out = dir.join("games.bin");
    let output = run_engine(
        basalt()
            .args(["datagen", "--games", "2", "--seed", "77", "--out"])
            .arg(&out),
        Duration::from_secs(120),
        &["datagen: "],
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
        let output = run_engine(
            basalt().args(arguments),
            Duration::from_secs(30),
            &["genfens: "],
        );
        let stderr = text(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{arguments:?}: {stderr}");
        assert!(stderr.contains(words), "{arguments:?}: {stderr}");
        assert!(!text(&output.stdout).contains(PREFIX));
    }
}

#[test]
fn the_build_script_embeds_the_committed_net_or_a_checked_evalfile() {
    // Its constants are the crate's.
    assert_eq!(build_script::MAGIC, basalt::nnue::MAGIC);
    assert_eq!(build_script::FORMAT_VERSION, basalt::nnue::FORMAT_VERSION);
    assert_eq!(
        build_script::MAX_FILE_BYTES,
        basalt::nnue::MAX_FILE_BYTES as u64
    );
    let root = Path::new(ROOT);
    let committed = root.join("nets/basalt.nnue");
    for unset in [None, Some(OsStr::new(""))] {
        assert_eq!(build_script::chosen_net(root, unset), Ok(committed.clone()));
    }
    let relative = build_script::chosen_net(root, Some(OsStr::new("nets/basalt.nnue")));
    assert_eq!(relative, Ok(committed.clone()));
    let dir = scratch("evalfile");
    let copy = dir.join("other.nnue");
    fs::copy(&committed, &copy).unwrap();
    assert_eq!(
        build_script::chosen_net(root, Some(copy.as_os_str())),
        Ok(copy.clone())
    );
    let mut version_9 = fs::read(&committed).unwrap();
    version_9[8..12].copy_from_slice(&9u32.to_le_bytes());
    let bad_cases = [
        ("missing.nnue", None, "missing.nnue"),
        ("a-directory", None, "not a regular file"),
        (
            "text.nnue",
            Some(b"not a net at all".to_vec()),
            "does not start with BSLTNNUE",
        ),
        ("v9.nnue", Some(version_9), "format version 9"),
    ];
    for (name, bytes, words) in bad_cases {
        let path = dir.join(name);
        match bytes {
            Some(bytes) => fs::write(&path, bytes).unwrap(),
            None if name == "a-directory" => fs::create_dir(&path).unwrap(),
            None => {}
        }
        let error = build_script::chosen_net(root, Some(path.as_os_str())).unwrap_err();
        assert!(
            error.contains(words) && error.contains("EVALFILE"),
            "{name}: {error}"
        );
    }
    fs::remove_dir_all(&dir).unwrap();
}

/// `make -n` with `variables` in the repository root: what it would run, or its error.
fn make_dry_run(variables: &[&str]) -> Output {
    let mut command = Command::new("make");
    command.current_dir(ROOT).arg("-n").args(variables);
    for inherited in ["EVALFILE", "SPSA", "EXE", "MAKEFLAGS", "MFLAGS"] {
        command.env_remove(inherited);
    }
    run_within(&mut command, Duration::from_secs(30))
}

#[test]
fn the_makefile_passes_evalfile_and_spsa_to_the_build() {
    let plain = make_dry_run(&["EXE=ob-dev"]);
    let recipe = text(&plain.stdout);
    assert!(plain.status.success(), "{}", text(&plain.stderr));
    assert!(
        recipe.contains("BASALT_EVALFILE=\"\" cargo rustc --release --bin basalt")
            && recipe.contains("--emit link=ob-dev")
            && !recipe.contains("--features"),
        "{recipe}"
    );
    // As OpenBench's client calls it (Client/utils.py: makefile_command).
    let net = make_dry_run(&["-j", "EXE=ob-dev", "EVALFILE=/srv/Networks/0123abcd"]);
    let recipe = text(&net.stdout);
    assert!(
        recipe.contains("BASALT_EVALFILE=\"/srv/Networks/0123abcd\" cargo rustc"),
        "{recipe}"
    );
    let spsa = make_dry_run(&["EXE=ob-tune", "SPSA=1"]);
    let recipe = text(&spsa.stdout);
    assert!(
        recipe.contains("cargo rustc --release --bin basalt --features spsa --"),
        "{recipe}"
    );
    let off = make_dry_run(&["SPSA=0"]);
    assert!(!text(&off.stdout).contains("--features"));
    let bad = make_dry_run(&["SPSA=yes"]);
    assert!(!bad.status.success());
    assert!(
        text(&bad.stderr).contains("SPSA=yes"),
        "{}",
        text(&bad.stderr)
    );
}

#[test]
fn spsa_inputs_are_openbenchs_lines() {
    let output = run_engine(basalt().arg("spsa-inputs"), Duration::from_secs(30), &[]);
    assert!(output.status.success());
    let all = text(&output.stdout);
    assert!(all.lines().count() > 30, "{all}");
    for line in all.lines() {
        // OpenBench/spsa_utils.py: name, int|float, value, min, max, c_end, r_end.
        let fields: Vec<&str> = line.split(',').map(str::trim).collect();
        assert_eq!(fields.len(), 7, "{line}");
        assert_eq!(fields[1], "int", "{line}");
        assert!(
            fields[2..].iter().all(|f| f.parse::<f64>().is_ok()),
            "{line}"
        );
    }
    let one = run_engine(
        basalt().args(["spsa-inputs", "--only", "LMP_BASE", "--r-end", "0.005"]),
        Duration::from_secs(30),
        &[],
    );
    assert_eq!(text(&one.stdout), "LMP_BASE, int, 3, 0, 10, 0.50, 0.005\n");
    let unknown = run_engine(
        basalt().args(["spsa-inputs", "--only", "NO_SUCH"]),
        Duration::from_secs(30),
        &["spsa-inputs: "],
    );
    assert_eq!(unknown.status.code(), Some(2));
    assert!(text(&unknown.stderr).contains("NO_SUCH"));
}

/// What one game of tests/data/openbench_datagen.pgn must become.
struct Expected {
    start: &'static str,
    moves: &'static [&'static str],
    scores: &'static [i16],
    result: GameResult,
    /// The scores of the positions the quiet rule keeps.
    positions: &'static [i16],
}

const STARTPOS: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";

const EXPECTED: [Expected; 4] = [
    // Scholar's mate: the mates (-M2 for Black, +M1 for White) and the capture are dropped.
    Expected {
        start: STARTPOS,
        moves: &["e2e4", "e7e5", "d1h5", "b8c6", "f1c4", "g8f6", "h5f7"],
        scores: &[35, 20, 10, 5, 40, 31_998, 31_999],
        result: GameResult::WhiteWin,
        positions: &[35, 20, 10, 5, 40],
    },
    // From a FEN, after a book move: castling kept, a capture and an evasion dropped.
    Expected {
        start: "r7/3k4/8/8/8/8/8/4K2R w K - 4 21",
        moves: &["e1g1", "a8a1", "f1a1", "d7e6", "a1a6", "e6d5", "g1f2"],
        scores: &[50, 30, 500, 490, 510, 520, 500],
        result: GameResult::WhiteWin,
        positions: &[50, 30, 490, 510, 500],
    },
    // OpenBench's compact comments, a comment over two lines.
    Expected {
        start: STARTPOS,
        moves: &["d2d4", "d7d5", "c2c4", "d5c4", "e2e3", "b7b5"],
        scores: &[20, 15, 25, -10, 5, 30],
        result: GameResult::Draw,
        positions: &[20, 15, 25, 5, 30],
    },
    // Fool's mate: mate scores for Black, from White's view.
    Expected {
        start: STARTPOS,
        moves: &["f2f3", "e7e5", "g2g4", "d8h4"],
        scores: &[-50, -60, -31_998, -31_999],
        result: GameResult::BlackWin,
        positions: &[-50, -60],
    },
];

#[test]
fn from_pgn_makes_a_chunk_of_the_games_scores_and_results() {
    let dir = scratch("from-pgn");
    let pgn = Path::new(ROOT).join("tests/data/openbench_datagen.pgn");
    let out = dir.join("openbench.games.zst");
    let convert = || {
        run_engine(
            basalt()
                .args(["convert-data", "--from-pgn"])
                .arg(&pgn)
                .arg("--out")
                .arg(&out),
            Duration::from_secs(30),
            &["convert-data: "],
        )
    };
    let output = convert();
    let stdout = text(&output.stdout);
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert!(
        stdout.contains("7 games read, 4 kept (skipped: 1 Termination \"time forfeit\", 1 no move")
            && stdout.contains("24 plies, 17 positions"),
        "{stdout}"
    );
    let bytes = chunk::read_data_file(&out).unwrap();
    let read: Vec<Game> = games::read(&bytes).map(|g| g.unwrap().1).collect();
    assert_eq!(read.len(), EXPECTED.len());
    for (game, expected) in read.iter().zip(&EXPECTED) {
        assert_eq!(fen_of(&game.start), expected.start);
        let moves: Vec<String> = game
            .plies
            .iter()
            .map(|p| p.best.unwrap().to_uci(CastlingMode::Standard).to_string())
            .collect();
        assert_eq!(moves, expected.moves);
        let scores: Vec<i16> = game.plies.iter().map(|p| p.score).collect();
        assert_eq!(scores, expected.scores);
        assert_eq!(game.result, expected.result);
        let positions: Vec<(i16, GameResult)> = game
            .records(Selection::Quiet)
            .iter()
            .map(|r| {
                let p = format::unpack(r).unwrap();
                (p.score, p.result)
            })
            .collect();
        let wanted: Vec<(i16, GameResult)> = expected
            .positions
            .iter()
            .map(|&s| (s, expected.result))
            .collect();
        assert_eq!(positions, wanted, "{}", expected.start);
    }
    // The output is never overwritten.
    let again = convert();
    assert!(!again.status.success());
    assert!(text(&again.stderr).contains("exists"));
    fs::remove_dir_all(&dir).unwrap();
}
