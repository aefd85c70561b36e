//! The evaluation options reach the search. A small net committed for the tests
//! (tests/data/tiny16.nnue; tests/data/README.md has the command that made it) loaded with
//! `EvalFile`, and the hand-crafted evaluation chosen with `UseNNUE false`, each give
//! `go depth 6` another tree and another score than the embedded net, and setting the
//! options back gives the first searches again. UCI `bench` searches with the evaluation
//! the options choose (the embedded net and the hand-crafted one as `basalt bench` and
//! `basalt bench --hce` do); datagen's `--eval-file` and `--hce` play games with other
//! scores than the embedded net.

mod common;

use std::path::{Path, PathBuf};
use std::time::Duration;

use basalt::offline::datagen::games;
use common::{basalt, check_search, run_engine, shared_cpu, Engine, Score, PATIENCE};

const TINY_NET: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/tiny16.nnue");

/// A middlegame where the three evaluations disagree on the best move and its score.
const FEN: &str = "r1bq1rk1/pp2bppp/2n1pn2/3p4/2PP4/2N1PN2/PP1B1PPP/R2QKB1R w KQ - 0 8";

/// What `go depth 6` from `FEN` finds after `ucinewgame` (a clear table and histories, so
/// the same options give the same search): its nodes, score and best move.
fn search(e: &mut Engine) -> (u64, Score, String) {
    e.sync_after("ucinewgame");
    e.send(&format!("position fen {FEN}"));
    let search = e.go("go depth 6");
    check_search(FEN, false, &search);
    let last = search.last_exact();
    assert_eq!(last.depth, 6);
    (last.nodes, last.score, search.best().to_string())
}

/// Sets an option; what the engine said about it.
fn set(e: &mut Engine, name: &str, value: &str) -> Vec<String> {
    e.sync_after(&format!("setoption name {name} value {value}"))
}

/// Loads `TINY_NET` and checks that the engine says so.
fn load_tiny_net(e: &mut Engine) {
    let said = set(e, "EvalFile", TINY_NET);
    let loaded = format!("info string EvalFile {TINY_NET}: network ");
    assert!(
        said.iter()
            .any(|l| l.starts_with(&loaded) && l.ends_with(", loaded")),
        "{said:?}"
    );
}

#[test]
fn eval_file_and_use_nnue_change_the_search_and_set_back_restore_it() {
    let _cpu = shared_cpu();
    let mut e = Engine::ready();
    let embedded = search(&mut e);
    load_tiny_net(&mut e);
    let tiny = search(&mut e);
    set(&mut e, "UseNNUE", "false");
    let hce = search(&mut e);
    for (a, b, what) in [
        (&embedded, &tiny, "the tiny net and the embedded one"),
        (
            &embedded,
            &hce,
            "the hand-crafted evaluation and the embedded net",
        ),
        (&tiny, &hce, "the hand-crafted evaluation and the tiny net"),
    ] {
        assert!(
            a.0 != b.0 && a.1 != b.1,
            "{what} give the same node count or score: {a:?}, {b:?}"
        );
    }
    // The net stays loaded while the hand-crafted evaluation searches...
    set(&mut e, "UseNNUE", "true");
    assert_eq!(search(&mut e), tiny);
    // ...the embedded net is one option away...
    set(&mut e, "EvalFile", "<embedded>");
    assert_eq!(search(&mut e), embedded);
    // ...and the hand-crafted evaluation does not depend on the net loaded.
    set(&mut e, "UseNNUE", "false");
    assert_eq!(search(&mut e), hce);
}

/// The node total of a `<nodes> nodes <nps> nps` line.
fn total_nodes(line: &str) -> u64 {
    match line.split_whitespace().collect::<Vec<_>>().as_slice() {
        [nodes, "nodes", _, "nps"] => nodes.parse().expect("a node count"),
        _ => panic!("not a bench total: {line:?}"),
    }
}

/// UCI `bench` at `depth`: its node total.
fn uci_bench(e: &mut Engine, depth: u32) -> u64 {
    e.send(&format!("bench {depth}"));
    let reply = e.expect_line("the bench total", PATIENCE * 6, |l| l.ends_with(" nps"));
    total_nodes(&reply.line)
}

/// `basalt bench` with `args`: its node total.
fn command_line_bench(args: &[&str]) -> u64 {
    let output = run_engine(basalt().arg("bench").args(args), PATIENCE * 6, &[]);
    assert!(output.status.success(), "{output:?}");
    let stdout = String::from_utf8_lossy(&output.stdout);
    total_nodes(stdout.lines().last().expect("bench printed nothing"))
}

#[test]
fn uci_bench_searches_with_the_evaluation_the_options_choose() {
    let _cpu = shared_cpu();
    let mut e = Engine::ready();
    let embedded = uci_bench(&mut e, 4);
    load_tiny_net(&mut e);
    let tiny = uci_bench(&mut e, 4);
    set(&mut e, "UseNNUE", "false");
    let hce = uci_bench(&mut e, 4);
    assert!(
        embedded != tiny && embedded != hce && tiny != hce,
        "embedded {embedded}, tiny net {tiny}, hand-crafted {hce}"
    );
    assert_eq!(embedded, command_line_bench(&["--depth", "4"]));
    assert_eq!(hce, command_line_bench(&["--depth", "4", "--hce"]));
}

fn scratch(name: &str) -> PathBuf {
    let path = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_file(&path);
    let mut progress = path.clone().into_os_string();
    progress.push(".progress");
    let _ = std::fs::remove_file(progress);
    path
}

/// Two datagen games with `flags` choosing the evaluation (the same seed and budget
/// otherwise): each game's moves and search scores.
fn datagen_games(name: &str, flags: &[&str]) -> Vec<(Vec<String>, Vec<i16>)> {
    let out = scratch(name);
    let output = run_engine(
        basalt()
            .args(["datagen", "--games", "2", "--nodes", "300", "--seed", "5"])
            .args(["--threads", "1", "--out"])
            .arg(&out)
            .args(flags),
        Duration::from_secs(120),
        &["datagen: "],
    );
    assert!(output.status.success(), "{output:?}");
    let bytes = std::fs::read(&out).expect("datagen wrote its games");
    let played: Vec<_> = games::read(&bytes)
        .map(|game| {
            let game = game.expect("a whole game").1;
            let moves = game
                .plies
                .iter()
                .filter_map(|p| p.best)
                .map(|m| m.to_uci(shakmaty::CastlingMode::Standard).to_string())
                .collect();
            let scores = game.plies.iter().map(|p| p.score).collect();
            (moves, scores)
        })
        .collect();
    assert_eq!(played.len(), 2, "{name}");
    played
}

#[test]
fn datagen_eval_file_and_hce_play_other_games() {
    let _cpu = shared_cpu();
    let embedded = datagen_games("eval_options_embedded.games", &[]);
    let tiny = datagen_games("eval_options_tiny.games", &["--eval-file", TINY_NET]);
    let hce = datagen_games("eval_options_hce.games", &["--hce"]);
    for (a, b, what) in [
        (&embedded, &tiny, "--eval-file and the embedded net"),
        (&embedded, &hce, "--hce and the embedded net"),
        (&tiny, &hce, "--hce and --eval-file"),
    ] {
        for (game, (x, y)) in a.iter().zip(b).enumerate() {
            assert_ne!(x.1, y.1, "{what}: game {} has the same scores", game + 1);
        }
    }
}
