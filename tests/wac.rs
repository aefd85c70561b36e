//! Tactical regression check on Win At Chess (the revised Arasan solutions). Selective
//! search must solve at least as many positions as the full-width search (pruning off)
//! within the same node budget. The stricter goal, that every position the full-width
//! search solves is still solved (at worst with a few times the budget), is an ignored test
//! until the last three exceptions are fixed.

use std::sync::Arc;

use basalt::position::Position;
use basalt::search::{Limits, SearchConfig, Searcher, StopFlags};
use basalt::tt::TranspositionTable;
use shakmaty::san::San;
use shakmaty::Move;

const NODE_BUDGET: u64 = 100_000;
/// Budget multiplier for positions the selective search misses at `NODE_BUDGET`.
const SLOW_SOLVE_FACTOR: u64 = 4;

#[derive(Clone)]
struct Problem {
    id: String,
    fen: String,
    best: Vec<Move>,
}

fn load() -> Vec<Problem> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/wac.epd");
    let text = std::fs::read_to_string(path).expect("tests/data/wac.epd");
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|line| {
            let (setup, ops) = line.split_once(" bm ").expect("every WAC line has bm");
            let fields: Vec<&str> = setup.split_whitespace().take(4).collect();
            let fen = format!("{} 0 1", fields.join(" "));
            let pos = Position::from_fen(&fen, false).expect("valid WAC position");
            let (bm, rest) = ops.split_once(';').expect("bm ends with ;");
            let best = bm
                .split_whitespace()
                .map(|san| {
                    san.parse::<San>()
                        .ok()
                        .and_then(|s| s.to_move(pos.board()).ok())
                        .unwrap_or_else(|| panic!("bad bm {san} in {line}"))
                })
                .collect();
            let id = rest.split('"').nth(1).unwrap_or("?").to_string();
            Problem { id, fen, best }
        })
        .collect()
}

fn solved(problems: &[Problem], config: SearchConfig, budget: u64) -> Vec<bool> {
    problems
        .iter()
        .map(|p| {
            let mut pos = Position::from_fen(&p.fen, false).unwrap();
            let tt = Arc::new(TranspositionTable::new(16));
            let mut searcher = Searcher::new(tt, Arc::new(StopFlags::default()));
            searcher.config = config;
            let limits = Limits {
                hard_nodes: Some(budget),
                ..Limits::default()
            };
            let result = searcher.iterative_deepening(&mut pos, limits, &mut |_| {});
            result.best_move.is_some_and(|m| p.best.contains(&m))
        })
        .collect()
}

#[test]
fn pruning_solves_at_least_as_many_wac_positions() {
    let problems = load();
    assert_eq!(problems.len(), 300);
    let full_width = solved(&problems, SearchConfig::without_pruning(), NODE_BUDGET);
    let selective = solved(&problems, SearchConfig::default(), NODE_BUDGET);
    let count = |v: &[bool]| v.iter().filter(|&&s| s).count();
    println!(
        "WAC at {NODE_BUDGET} nodes: full width {}/300, selective {}/300",
        count(&full_width),
        count(&selective)
    );
    assert!(count(&selective) >= count(&full_width));
}

/// The strict form: nothing the full-width search solves is lost, even with more nodes.
/// Fails today on WAC.081, WAC.169 and WAC.296 (see docs/strength.md), hence ignored.
#[test]
#[ignore = "known gap: three WAC positions need more than 4x the nodes with pruning on"]
fn pruning_loses_no_wac_solution() {
    let problems = load();
    assert_eq!(problems.len(), 300);
    let full_width = solved(&problems, SearchConfig::without_pruning(), NODE_BUDGET);
    let selective = solved(&problems, SearchConfig::default(), NODE_BUDGET);
    let count = |v: &[bool]| v.iter().filter(|&&s| s).count();
    println!(
        "WAC at {NODE_BUDGET} nodes: full width {}/300, selective {}/300",
        count(&full_width),
        count(&selective)
    );
    assert!(count(&selective) >= count(&full_width));
    let slower: Vec<&Problem> = problems
        .iter()
        .zip(full_width.iter().zip(&selective))
        .filter(|(_, (&before, &after))| before && !after)
        .map(|(p, _)| p)
        .collect();
    let ids: Vec<&str> = slower.iter().map(|p| p.id.as_str()).collect();
    println!("solved only with more nodes by the selective search: {ids:?}");
    let slower_owned: Vec<Problem> = slower.into_iter().cloned().collect();
    let retried = solved(
        &slower_owned,
        SearchConfig::default(),
        NODE_BUDGET * SLOW_SOLVE_FACTOR,
    );
    let lost: Vec<&str> = slower_owned
        .iter()
        .zip(&retried)
        .filter(|(_, &ok)| !ok)
        .map(|(p, _)| p.id.as_str())
        .collect();
    assert!(
        lost.is_empty(),
        "solved without pruning at {NODE_BUDGET} nodes but not with it at {}: {lost:?}",
        NODE_BUDGET * SLOW_SOLVE_FACTOR
    );
}
