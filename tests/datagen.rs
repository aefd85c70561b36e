//! `basalt datagen` end to end: reproducible from its seed whatever the thread count,
//! resumable to the same bytes, and every record a sane quiet position.

mod common;

use std::path::{Path, PathBuf};

use basalt::offline::datagen::format::{unpack, RECORD_BYTES};
use shakmaty::{CastlingMode, Color, FromSetup, Position, Setup};

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let path = dir.join(name);
    let _ = std::fs::remove_file(&path);
    let mut progress = path.clone().into_os_string();
    progress.push(".progress");
    let _ = std::fs::remove_file(progress);
    path
}

fn datagen(out: &Path, games: u64, threads: usize) {
    let status = common::basalt()
        .args(["datagen", "--out"])
        .arg(out)
        .args(["--games", &games.to_string()])
        .args(["--threads", &threads.to_string()])
        .args(["--nodes", "800", "--seed", "7", "--book"])
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/eval_book_8moves_v3.epd"))
        .output()
        .expect("datagen runs");
    assert!(
        status.status.success(),
        "{}",
        String::from_utf8_lossy(&status.stderr)
    );
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
    let progress = std::fs::read_to_string(format!("{}.progress", one.display())).unwrap();
    assert_eq!(
        progress.trim(),
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
