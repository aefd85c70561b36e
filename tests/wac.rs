//! Tactical regression check on Win At Chess (the revised Arasan solutions). Selective
//! search must solve at least as many positions as the full-width search (pruning off)
//! within the same node budget, and each must stay above a floor. The stricter goal, that
//! every position the full-width search solves is still solved (at worst with a few times
//! the budget), is an ignored test that allows only the known exceptions.

use std::sync::Arc;

use basalt::position::Position;
use basalt::search::{Limits, SearchConfig, SearchJob, Searcher};
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
            let mut searcher = Searcher::new();
            let limits = Limits {
                hard_nodes: Some(budget),
                ..Limits::default()
            };
            let job = SearchJob {
                config,
                ..SearchJob::new(tt, limits)
            };
            let result = searcher.iterative_deepening(&mut pos, job, &mut |_| {});
            result.best_move.is_some_and(|m| p.best.contains(&m))
        })
        .collect()
}

/// Floors under the two counts at `NODE_BUDGET`: today's 241 (selective) and 236 (full
/// width) less 6. Comparing the searches alone would pass if both got worse together (a
/// broken evaluation or move ordering); the margin allows for the few positions a harmless
/// change of a search parameter moves (docs/strength.md, "WAC guard").
const SELECTIVE_FLOOR: usize = 235;
const FULL_WIDTH_FLOOR: usize = 230;

/// Full width and selective, each at `NODE_BUDGET`: which positions each solves.
fn solve_both(problems: &[Problem]) -> (Vec<bool>, Vec<bool>) {
    assert_eq!(problems.len(), 300);
    let full_width = solved(problems, SearchConfig::without_pruning(), NODE_BUDGET);
    let selective = solved(problems, SearchConfig::default(), NODE_BUDGET);
    println!(
        "WAC at {NODE_BUDGET} nodes: full width {}/300, selective {}/300",
        count(&full_width),
        count(&selective)
    );
    (full_width, selective)
}

fn count(solved: &[bool]) -> usize {
    solved.iter().filter(|&&s| s).count()
}

#[test]
fn pruning_solves_at_least_as_many_wac_positions() {
    let (full_width, selective) = solve_both(&load());
    let (full_width, selective) = (count(&full_width), count(&selective));
    assert!(
        selective >= full_width,
        "selective {selective} < full width {full_width}"
    );
    assert!(
        selective >= SELECTIVE_FLOOR,
        "selective search solves {selective}, below the floor of {SELECTIVE_FLOOR}"
    );
    assert!(
        full_width >= FULL_WIDTH_FLOOR,
        "full-width search solves {full_width}, below the floor of {FULL_WIDTH_FLOOR}"
    );
}

/// Positions the full-width search solves at `NODE_BUDGET` that the selective search misses
/// even with `SLOW_SOLVE_FACTOR` times the nodes: the known cost of pruning, measured when
/// this list was written (the strict test below prints the list it finds).
const KNOWN_LOSSES: [&str; 8] = [
    "WAC.021", "WAC.081", "WAC.131", "WAC.169", "WAC.190", "WAC.218", "WAC.243", "WAC.281",
];

/// The strict form: nothing the full-width search solves is lost, even with more nodes,
/// beyond `KNOWN_LOSSES`. Prints a known loss that is solved again, so the list can shrink.
#[test]
#[ignore = "about a minute more than the test above; run by hand"]
fn pruning_loses_no_wac_solution_beyond_the_known_ones() {
    let problems = load();
    let (full_width, selective) = solve_both(&problems);
    let slower: Vec<Problem> = problems
        .iter()
        .zip(full_width.iter().zip(&selective))
        .filter(|(_, (&before, &after))| before && !after)
        .map(|(p, _)| p.clone())
        .collect();
    let ids: Vec<&str> = slower.iter().map(|p| p.id.as_str()).collect();
    println!("solved only with more nodes by the selective search: {ids:?}");
    let retried = solved(
        &slower,
        SearchConfig::default(),
        NODE_BUDGET * SLOW_SOLVE_FACTOR,
    );
    let lost: Vec<&str> = slower
        .iter()
        .zip(&retried)
        .filter(|(_, &ok)| !ok)
        .map(|(p, _)| p.id.as_str())
        .collect();
    let regained: Vec<&&str> = KNOWN_LOSSES
        .iter()
        .filter(|id| !lost.contains(id))
        .collect();
    println!(
        "lost at {}: {lost:?}; known losses solved now: {regained:?}",
        NODE_BUDGET * SLOW_SOLVE_FACTOR
    );
    let new: Vec<&&str> = lost
        .iter()
        .filter(|id| !KNOWN_LOSSES.contains(id))
        .collect();
    assert!(
        new.is_empty(),
        "solved without pruning at {NODE_BUDGET} nodes but not with it at {}: {new:?}",
        NODE_BUDGET * SLOW_SOLVE_FACTOR
    );
}
