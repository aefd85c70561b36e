//! Perft suites against published node counts, and the incremental Zobrist key against a
//! from-scratch hash at every node of perft trees.
//!
//! `cargo test --release --test perft` runs the fast checks: every position of every suite,
//! each to the depths whose published count fits a per-suite node cap (see `perft/README.md`).
//! `cargo test --release --test perft -- --ignored` checks every count of up to 10 million
//! leaves in every suite (minutes); `PERFT_MAX_LEAVES=all` every count, which takes hours;
//! `PERFT_SUITES=cpw_positions,fischer` limits it to some suites.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use basalt::perft::{parse_suite_line, perft, SuiteEntry};
use basalt::position::{key_from_scratch, PieceKeys, Position};
use shakmaty::zobrist::{Zobrist64, ZobristValue};
use shakmaty::{Move, Position as _};

/// Positions in the suites that shakmaty refuses to load because no legal game reaches them.
/// They test how a generator copes with impossible input, which Basalt never gets from a
/// game, so they are the only load failures a suite may have. Anything else that fails to
/// load is a bug.
const KNOWN_IMPOSSIBLE: [(&str, &str); 11] = [
    (
        "B6b/8/8/8/2K5/5k2/8/b6B b - - 0 1",
        "two bishops check along one diagonal from both sides",
    ),
    (
        "3R4/8/q4k2/2B5/1NK5/3b4/8/8 w - - 0 1",
        "queen and bishop check along one diagonal from both sides",
    ),
    (
        "2Nq4/2K5/1b6/8/7R/3k4/7P/8 w - - 0 1",
        "queen and bishop check along one diagonal from both sides",
    ),
    (
        "5R2/2P5/8/4k3/8/3rK2r/8/8 w - - 0 1",
        "two rooks check along one rank from both sides",
    ),
    (
        "8/8/8/1k6/3Pp3/8/8/4KQ2 b - d3 0 1",
        "the check did not come from the double push the en-passant square implies",
    ),
    (
        "1b1k4/8/8/1rPpK3/8/8/8/8 w - d6 0 1",
        "the check did not come from the double push the en-passant square implies",
    ),
    (
        "rnbqk1nr/bb3p1p/1q2r3/2pPp3/3P4/7P/1PP1NpPP/R1BQKBNR w KQkq c6 0 1",
        "the check did not come from the double push the en-passant square implies",
    ),
    (
        "1rrrrrk1/1PPPPPPP/8/8/8/8/8/6K1 b - - 0 1",
        "two pawns give check",
    ),
    (
        "1q4k1/3r1Ppp/5NP1/pP6/8/1Q6/3B4/2K2R2 b - - 0 1",
        "a pawn and a knight give check",
    ),
    (
        "2b5/1nbn4/n3n3/1kn5/n3n3/1n1n4/5RQ1/2KQ1R2 w K - 0 1",
        "two knights give check",
    ),
    (
        "kBQQQQQQ/BR5Q/Q6Q/Q6Q/Q6Q/Q6Q/Q6Q/KQQQQQQQ w - - 0 1",
        "more pieces than promotions allow",
    ),
];

const SUITES: [&str; 8] = [
    "standard",
    "cpw_positions",
    "fischer",
    "tricky_shakmaty",
    "special_cases_whittington",
    "double_checks_ferdy",
    "enpassant_ferdy",
    "random_marcel",
];

/// Which listed counts to check. A count is checked when its depth and its node count are
/// both within the limits; the node count is a fair proxy for the time a bulk-counted
/// perft takes. The depth limit matters for the `;D32 1` line: a count says nothing about
/// interior nodes whose subtrees end in mate, so a deep count is never assumed cheap.
#[derive(Clone, Copy)]
struct Limits {
    max_depth: u32,
    max_nodes: u64,
}

/// The ignored deep run's cap on the leaves of a count, unless `PERFT_MAX_LEAVES` sets one:
/// 26 billion leaves in all, about 7 minutes on two busy cores. The fast tests' caps are
/// 0.3 to 30 million a suite; this takes every suite to 10 million.
const DEEP_MAX_LEAVES: u64 = 10_000_000;

/// Fast-test limits. The caps are sized for `--release`; an unoptimised build counts some
/// thirty times slower, so it checks less rather than taking many minutes.
const fn fast(max_nodes: u64) -> Limits {
    Limits {
        max_depth: 8,
        max_nodes: if cfg!(debug_assertions) {
            max_nodes / 64
        } else {
            max_nodes
        },
    }
}

struct Line {
    number: usize,
    entry: SuiteEntry,
}

fn load_suite(name: &str) -> Vec<Line> {
    let path = format!("{}/perft/{name}.epd", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let lines: Vec<Line> = text
        .lines()
        .enumerate()
        .filter(|(_, text)| !text.trim().is_empty())
        .map(|(i, text)| Line {
            number: i + 1,
            entry: parse_suite_line(text)
                .unwrap_or_else(|| panic!("{path}:{}: unparsable line: {text}", i + 1)),
        })
        .collect();
    assert!(!lines.is_empty(), "{path} has no positions");
    lines
}

fn impossibility(fen: &str) -> Option<&'static str> {
    KNOWN_IMPOSSIBLE
        .iter()
        .find(|(known, _)| *known == fen.trim())
        .map(|(_, why)| *why)
}

/// Checks one suite line, returning a description of each failure and the leaves counted.
fn check_line(suite: &str, line: &Line, limits: Limits) -> (Vec<String>, u64) {
    let fen = &line.entry.fen;
    let at = format!("{suite}.epd:{} `{fen}`", line.number);
    let pos = match Position::from_fen(fen, true) {
        Ok(pos) => pos,
        Err(_) if impossibility(fen).is_some() => return (Vec::new(), 0),
        Err(e) => return (vec![format!("{at}: does not load: {e}")], 0),
    };
    let mut failures = Vec::new();
    let mut leaves = 0;
    let mut shallow_checked = false;
    for &(depth, expected) in &line.entry.counts {
        if depth > limits.max_depth || expected > limits.max_nodes {
            continue;
        }
        let found = perft(&mut pos.clone(), depth);
        leaves += found;
        shallow_checked |= depth <= 2;
        if found != expected {
            failures.push(format!(
                "{at}: depth {depth}: expected {expected}, found {found}"
            ));
        }
    }
    // Some suites list only deep counts (D4, D6) that are too dear for the fast run. Such a
    // line is still loaded and walked, against shakmaty's own perft: that cannot catch a
    // generator bug, but it does catch one in our FEN loading or make/unmake.
    if !shallow_checked {
        for depth in 1..=2 {
            let expected = shakmaty::perft(pos.board(), depth);
            let found = perft(&mut pos.clone(), depth);
            leaves += found;
            if found != expected {
                failures.push(format!(
                    "{at}: depth {depth}: shakmaty's perft gives {expected}, ours found {found}"
                ));
            }
        }
    }
    (failures, leaves)
}

/// Checks every line of a suite on `threads` threads and panics with all failures.
fn check_suite(suite: &str, limits: Limits, threads: usize) {
    let lines = load_suite(suite);
    let start = Instant::now();
    let next = AtomicUsize::new(0);
    let failures = Mutex::new(Vec::new());
    let leaves = AtomicUsize::new(0);
    std::thread::scope(|s| {
        for _ in 0..threads.max(1) {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(line) = lines.get(i) else { break };
                let (mut found, n) = check_line(suite, line, limits);
                leaves.fetch_add(n as usize, Ordering::Relaxed);
                if !found.is_empty() {
                    failures.lock().unwrap().append(&mut found);
                }
            });
        }
    });
    println!(
        "{suite}: {} positions, {} leaves in {:.2}s",
        lines.len(),
        leaves.into_inner(),
        start.elapsed().as_secs_f64()
    );
    let mut failures = failures.into_inner().unwrap();
    if !failures.is_empty() {
        failures.sort();
        let shown = failures.len().min(30);
        panic!(
            "{} perft mismatches in {suite}.epd (first {shown}):\n{}",
            failures.len(),
            failures[..shown].join("\n")
        );
    }
}

// Fast tests: one thread each, as the harness already runs them side by side. The caps keep
// the whole file to about ten seconds of CPU; perft/README.md lists what each one covers.

#[test]
fn standard_suite() {
    check_suite("standard", fast(10_000_000), 1);
}

#[test]
fn cpw_positions_suite() {
    check_suite("cpw_positions", fast(30_000_000), 1);
}

#[test]
fn fischer_suite() {
    check_suite("fischer", fast(3_000_000), 1);
}

#[test]
fn tricky_shakmaty_suite() {
    check_suite("tricky_shakmaty", fast(u64::MAX), 1);
}

#[test]
fn special_cases_whittington_suite() {
    check_suite("special_cases_whittington", fast(10_000_000), 1);
}

#[test]
fn double_checks_ferdy_suite() {
    check_suite("double_checks_ferdy", fast(u64::MAX), 1);
}

#[test]
fn enpassant_ferdy_suite() {
    check_suite("enpassant_ferdy", fast(1_000_000), 1);
}

#[test]
fn random_marcel_suite() {
    check_suite("random_marcel", fast(300_000), 1);
}

/// Every suite to every listed depth whose count is at most `PERFT_MAX_LEAVES` (default
/// `DEEP_MAX_LEAVES`; `all` for every count, hours of CPU), on all cores.
#[test]
#[ignore = "minutes of CPU on all cores (hours with PERFT_MAX_LEAVES=all); run by hand"]
fn all_suites_deep() {
    let max_nodes = match std::env::var("PERFT_MAX_LEAVES").as_deref() {
        Err(_) => DEEP_MAX_LEAVES,
        Ok("all") => u64::MAX,
        Ok(n) => n
            .parse()
            .unwrap_or_else(|_| panic!("PERFT_MAX_LEAVES is a number or `all`, not {n:?}")),
    };
    let wanted = std::env::var("PERFT_SUITES").unwrap_or_default();
    let wanted: Vec<&str> = wanted.split(',').filter(|s| !s.is_empty()).collect();
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let limits = Limits {
        max_depth: u32::MAX,
        max_nodes,
    };
    for suite in SUITES {
        if wanted.is_empty() || wanted.contains(&suite) {
            check_suite(suite, limits, threads);
        }
    }
}

/// Keeps the exemption list honest: each entry must be in a suite and still be refused.
#[test]
fn known_impossible_positions_are_refused() {
    let fens: Vec<String> = SUITES
        .iter()
        .flat_map(|suite| load_suite(suite))
        .map(|line| line.entry.fen.trim().to_string())
        .collect();
    for (fen, why) in KNOWN_IMPOSSIBLE {
        assert!(fens.iter().any(|f| f == fen), "`{fen}` is in no suite");
        assert!(
            Position::from_fen(fen, true).is_err(),
            "`{fen}` ({why}) now loads: drop it from KNOWN_IMPOSSIBLE"
        );
    }
}

#[derive(Default)]
struct KeyWalk {
    root: String,
    nodes: u64,
    null_moves: u64,
    castles: u64,
    en_passants: u64,
    promotions: u64,
}

/// Walks the perft tree below `pos`, asserting at every node that the incremental key (and
/// the piece keys beside it) is the from-scratch key, that unmaking restores it, and that a
/// null move changes exactly the side to move and the en-passant file.
fn walk_keys(pos: &mut Position, depth: u32, path: &mut Vec<Move>, walk: &mut KeyWalk) {
    walk.nodes += 1;
    let key = pos.key();
    let scratch = key_from_scratch(pos.board());
    if key != scratch {
        panic!(
            "{}: incremental key {key:#018x}, from scratch {scratch:#018x}",
            describe(pos, &walk.root, path)
        );
    }
    let piece_keys = PieceKeys::from_scratch(pos.board().board());
    if pos.piece_keys() != piece_keys {
        panic!(
            "{}: incremental piece keys {:?}, from scratch {piece_keys:?}",
            describe(pos, &walk.root, path),
            pos.piece_keys()
        );
    }
    if depth == 0 {
        return;
    }

    let plies = pos.ply_count();
    if pos.in_check() {
        assert!(
            !pos.make_null_move(),
            "{}: null move allowed in check",
            describe(pos, &walk.root, path)
        );
        assert_eq!(
            pos.ply_count(),
            plies,
            "{}",
            describe(pos, &walk.root, path)
        );
    } else {
        let mut expected = key ^ Zobrist64::zobrist_for_white_turn().0;
        if let Some(ep) = pos.board().legal_ep_square() {
            expected ^= Zobrist64::zobrist_for_en_passant_file(ep.file()).0;
        }
        assert!(
            pos.make_null_move(),
            "{}: null move refused",
            describe(pos, &walk.root, path)
        );
        assert_eq!(
            pos.key(),
            expected,
            "{}: null move key",
            describe(pos, &walk.root, path)
        );
        assert_eq!(pos.key(), key_from_scratch(pos.board()));
        assert_eq!(pos.piece_keys(), piece_keys, "null move piece keys");
        pos.unmake_move();
        assert_eq!(
            pos.key(),
            key,
            "{}: key after null unmake",
            describe(pos, &walk.root, path)
        );
        walk.null_moves += 1;
    }

    for m in pos.legal_moves() {
        walk.castles += u64::from(m.is_castle());
        walk.en_passants += u64::from(m.is_en_passant());
        walk.promotions += u64::from(m.is_promotion());
        path.push(m);
        pos.make_move(m);
        walk_keys(pos, depth - 1, path, walk);
        pos.unmake_move();
        path.pop();
        if pos.key() != key || pos.ply_count() != plies {
            panic!(
                "{}: key not restored by unmake",
                describe(pos, &walk.root, path)
            );
        }
    }
}

/// The root FEN, the moves from it and the FEN reached, for a failure message.
fn describe(pos: &Position, root: &str, path: &[Move]) -> String {
    let moves: Vec<String> = path.iter().map(|&m| pos.to_uci(m)).collect();
    format!("`{root}` moves [{}] (now `{}`)", moves.join(" "), pos.fen())
}

#[test]
fn incremental_key_matches_scratch_in_perft_trees() {
    // (FEN, depth, Chess960 castling expected). Kiwipete and CPW 3-5 cover castling, en
    // passant and promotions; the Chess960 lines include X-FEN and Shredder-FEN rights.
    let trees: [(&str, u32, bool); 13] = [
        (
            "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
            3,
            false,
        ),
        ("8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1", 5, false),
        (
            "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1",
            4,
            false,
        ),
        (
            "rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8",
            3,
            false,
        ),
        (
            "r1k1r2q/p1ppp1pp/8/8/8/8/P1PPP1PP/R1K1R2Q w KQkq - 0 1",
            3,
            true,
        ),
        (
            "r1k2r1q/p1ppp1pp/8/8/8/8/P1PPP1PP/R1K2R1Q w KQkq - 0 1",
            3,
            true,
        ),
        ("8/8/8/4B2b/6nN/8/5P2/2R1K2k w Q - 0 1", 3, true),
        ("2r5/8/8/8/8/8/6PP/k2KR3 w K - 0 1", 4, true),
        ("4r3/3k4/8/8/8/8/6PP/qR1K1R2 w KQ - 0 1", 3, true),
        (
            "4rrk1/pbbp2p1/1ppnp3/3n1pqp/3N1PQP/1PPNP3/PBBP2P1/4RRK1 w Ff - 0 1",
            3,
            true,
        ),
        (
            "bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w HFhf - 2 9",
            3,
            true,
        ),
        (
            "2nnrbkr/p1qppppp/8/1ppb4/6PP/3PP3/PPP2P2/BQNNRBKR w HEhe - 1 9",
            3,
            true,
        ),
        (
            "b1q1rrkb/pppppppp/3nn3/8/P7/1PPP4/4PPPP/BQNNRKRB w GE - 1 9",
            3,
            true,
        ),
    ];
    let mut total = KeyWalk::default();
    for (fen, depth, chess960) in trees {
        let mut pos = Position::from_fen(fen, true).unwrap();
        let mut walk = KeyWalk {
            root: fen.to_string(),
            ..KeyWalk::default()
        };
        walk_keys(&mut pos, depth, &mut Vec::new(), &mut walk);
        assert!(
            !chess960 || walk.castles > 0,
            "`{fen}`: no castling reached"
        );
        total.nodes += walk.nodes;
        total.null_moves += walk.null_moves;
        total.castles += walk.castles;
        total.en_passants += walk.en_passants;
        total.promotions += walk.promotions;
    }
    println!(
        "key walk: {} nodes, {} null moves, {} castles, {} en passant, {} promotions",
        total.nodes, total.null_moves, total.castles, total.en_passants, total.promotions
    );
    assert!(total.nodes > 1_000_000, "only {} nodes walked", total.nodes);
    assert!(total.castles > 0 && total.en_passants > 0 && total.promotions > 0);
}
