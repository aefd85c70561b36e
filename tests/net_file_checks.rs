//! A net file is checked before it is read: a FIFO (which would block the reader until a
//! writer came), a device such as `/dev/zero` or a file larger than the largest net (which
//! would fill the memory), a directory, or a symlink to one of them, given as `EvalFile`
//! gets one `info string` at once, and the engine keeps its net, answers `isready` and
//! plays; `datagen --eval-file` and `train --init` exit with an error instead of hanging.
//! (`nnue::network`'s unit tests check the same on the reader itself.)

#![cfg(unix)]

mod common;

use std::path::{Path, PathBuf};
use std::time::Duration;

use basalt::nnue::MAX_FILE_BYTES;
use basalt::offline::datagen::format::{pack, GameResult};
use common::{assert_legal_bestmove, basalt, run_engine, shared_cpu, Engine, PATIENCE, STARTPOS};

/// How soon a refusal must come: it reads nothing, so only a loaded machine delays it.
const REFUSAL: Duration = Duration::from_secs(1);

const NET: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/nets/basalt.nnue");

/// A fresh, empty directory for one test's files.
fn scratch_dir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A FIFO at `path` that nothing ever writes to.
fn make_fifo(path: &Path) {
    let made = std::process::Command::new("mkfifo").arg(path).status();
    assert!(
        made.is_ok_and(|status| status.success()),
        "mkfifo {}",
        path.display()
    );
}

#[test]
fn eval_file_refuses_what_is_not_a_net_file_at_once_and_keeps_the_net() {
    let _cpu = shared_cpu();
    let dir = scratch_dir("eval_file_checks");
    let fifo = dir.join("net.fifo");
    make_fifo(&fifo);
    let link = dir.join("link.nnue");
    std::os::unix::fs::symlink(&fifo, &link).unwrap();
    // Sparse: larger than any net without taking the disk space.
    let huge = dir.join("huge.nnue");
    std::fs::File::create(&huge)
        .unwrap()
        .set_len(MAX_FILE_BYTES as u64 + 1)
        .unwrap();

    let mut e = Engine::ready();
    let out = e.sync_after(&format!("setoption name EvalFile value {NET}"));
    assert!(out.len() == 1 && out[0].contains("loaded"), "{out:?}");
    let cases = [
        (fifo.display().to_string(), "a FIFO, not a regular file"),
        ("/dev/zero".to_string(), "a character device"),
        (dir.display().to_string(), "a directory"),
        (link.display().to_string(), "a FIFO"),
        (huge.display().to_string(), "more than the largest net"),
    ];
    for (path, why) in cases {
        let sent = e.send(&format!("setoption name EvalFile value {path}"));
        let reply = e.expect_line("the refusal", PATIENCE, |l| l.starts_with("info string"));
        assert!(reply.before.is_empty(), "{path}: {:?}", reply.before);
        assert!(
            reply.at - sent < REFUSAL,
            "{path}: refused after {:?}",
            reply.at - sent
        );
        let line = &reply.line;
        assert!(
            line.starts_with(&format!("info string EvalFile {path}: ")) && line.contains(why),
            "{path}: {line}"
        );
        assert!(line.ends_with(&format!("; keeping {NET}")), "{line}");
        // One line, and the engine answers at once.
        assert!(e.sync().is_empty(), "{path}");
    }
    // The net loaded before is still the one in use, and the engine plays with it.
    e.send("position startpos");
    let lines = e.sync_after("eval");
    let nnue = lines.iter().find(|l| l.starts_with("NNUE evaluation: "));
    assert!(
        nnue.is_some_and(|l| l.ends_with(&format!("({NET})"))),
        "{lines:?}"
    );
    let search = e.go("go depth 1");
    assert_legal_bestmove(STARTPOS, &search);
    drop(e);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn train_init_from_dev_zero_is_an_error() {
    let dir = scratch_dir("train_init_checks");
    // Two records: enough data to train on, so the net is the only thing wrong.
    let data = dir.join("two.bin");
    let start = shakmaty::Chess::default();
    let mut records = pack(&start, 20, GameResult::Draw).to_vec();
    records.extend_from_slice(&pack(&start, -20, GameResult::Draw));
    std::fs::write(&data, records).unwrap();
    let out = dir.join("out.nnue");
    let output = run_engine(
        basalt()
            .args(["train", "--epochs", "1", "--threads", "1", "--data"])
            .arg(&data)
            .arg("--out")
            .arg(&out)
            .args(["--init", "/dev/zero"]),
        PATIENCE,
        &["--init /dev/zero: "],
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "{stderr}");
    assert!(
        stderr.contains("--init /dev/zero: a character device, not a regular file"),
        "{stderr}"
    );
    assert!(!out.exists(), "a net was written");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn datagen_eval_file_from_a_fifo_is_an_error() {
    let dir = scratch_dir("datagen_eval_file_checks");
    let fifo = dir.join("net.fifo");
    make_fifo(&fifo);
    let games = dir.join("games.bin");
    let output = run_engine(
        basalt()
            .args(["datagen", "--games", "1", "--nodes", "100", "--out"])
            .arg(&games)
            .arg("--eval-file")
            .arg(&fifo),
        PATIENCE,
        &["datagen: "],
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "datagen: {}: a FIFO, not a regular file",
            fifo.display()
        )),
        "{stderr}"
    );
    assert!(!games.exists(), "games were written");
    std::fs::remove_dir_all(&dir).unwrap();
}
