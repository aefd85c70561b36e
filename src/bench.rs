//! `bench`: a fixed-depth search over a fixed set of positions. The total node count is a
//! fingerprint of the search's behaviour (it must not change in a refactor); nodes per
//! second measure speed. OpenBench reads the last line, `<nodes> nodes <nps> nps`.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::nnue::Network;
use crate::position::Position;
use crate::search::{Limits, SearchJob, Searcher, Stats};
use crate::tt::TranspositionTable;

pub const DEFAULT_BENCH_DEPTH: i32 = 12;
const BENCH_HASH_MB: usize = 16;

/// Openings (from the 8-move book), middlegame tactics (WAC, Bratko-Kopec), endgames.
pub const BENCH_FENS: [&str; 50] = [
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
    "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
    "rn1qkb1r/p4ppp/1pp1pn2/8/Q2PP3/5N2/PP1N1PPP/R1B1Kb1R w KQkq - 0 9",
    "r1bqk2r/p3npbp/1pnpp1p1/2p3B1/4P3/2NP2P1/PPP1NPBP/R2Q1RK1 w kq - 0 9",
    "r1b1kb1r/p1qn1ppp/1p2pn2/2p5/8/1Q3NP1/PP1PPPBP/RNB2RK1 w kq - 0 9",
    "r2qk2r/ppp1bppp/1nn1b3/4p3/1P6/P1N2NP1/3PPPBP/R1BQK2R w KQkq - 1 9",
    "1r1qk1nr/pp1bppbp/3p2p1/2p5/3nP3/2NPB1PP/PPP1NPB1/R2QK2R w KQk - 1 9",
    "r1bq1rk1/p2pppbp/1pn2np1/8/2P5/2N1P3/PPN1BPPP/R1BQK2R w KQ - 0 9",
    "r1bqk1nr/pp3pbp/2n1p3/2pp1P2/2B5/2N2N2/PPPP2PP/R1BQ1RK1 w kq - 0 9",
    "r1bqkb1r/pp1n1pp1/4pn1p/4P1B1/Q1Bp4/5N2/PP3PPP/RN2K2R w KQkq - 0 9",
    "r1bq1rk1/pp1nbppp/4pn2/3p4/2Pp1B2/2N1PN2/PPQ2PPP/3RKB1R w K - 0 9",
    "r1bqk2r/pp1p1ppp/2n2n2/2p5/2PPp3/P1PBP3/4NPPP/R1BQK2R w KQkq - 0 9",
    "rnbqk2r/1p2bpp1/p2ppn1p/6B1/3NPP2/2N5/PPP1Q1PP/R3KB1R w KQkq - 0 9",
    "r1bqk2r/p2nbppp/1pp1p3/3n4/3P1B2/1QN2NP1/PP2PP1P/R3KB1R w KQkq - 0 9",
    "r1bqk2r/pp3ppp/5n2/8/1b1npB2/2N5/PP1Q2PP/1K2RBNR w kq - 0 1",
    "3r2k1/pb1q1pp1/1p2pb1p/8/3N4/P2QB3/1P3PPP/1Br1R1K1 w - - 0 1",
    "3r4/2p1rk2/1pQq1pp1/7p/1P1P4/P4P2/6PP/R1R3K1 b - - 0 1",
    "6k1/3r4/2R5/P5P1/1P4p1/8/4rB2/6K1 b - - 0 1",
    "r1b2rk1/pp2bppp/2n1pn2/q5B1/2BP4/2N2N2/PP2QPPP/2R2RK1 b - - 0 1",
    "3q1rk1/4bp1p/1n2P2Q/3p1p2/6r1/Pp2R2N/1B4PP/7K w - - 0 1",
    "6k1/pp5p/2p3q1/6BP/2nPr1Q1/8/PP3R1K/8 w - - 0 1",
    "rb3qk1/pQ3ppp/4p3/3P4/8/1P3N2/1P3PPP/3R2K1 w - - 0 1",
    "2k2r2/2p5/1pq5/p1p1n3/P1P2n1B/1R4Pp/2QR4/6K1 b - - 0 1",
    "8/6pp/3q1p2/3n1k2/1P6/3NQ2P/5PP1/6K1 w - - 0 1",
    "4N2k/5rpp/1Q6/p3q3/8/P5P1/1P3P1P/5K2 w - - 0 1",
    "1n2rr2/1pk3pp/pNn2p2/2N1p3/8/6P1/PP2PPKP/2RR4 w - - 0 1",
    "6k1/p4p1p/1p3np1/2q5/4p3/4P1N1/PP3PPP/3Q2K1 w - - 0 1",
    "3r4/1p2k2p/p1b1p1p1/4Q1Pn/2B3KP/4pP2/PP2R1N1/6q1 b - - 0 1",
    "b2b1r1k/3R1ppp/4qP2/4p1PQ/4P3/5B2/4N1K1/8 w - - 0 1",
    "r1b1qrk1/1p3ppp/p1p5/3Nb3/5N2/P7/1P4PQ/K1R1R3 w - - 0 1",
    "3r1k2/4npp1/1ppr3p/p6P/P2PPPP1/1NR5/5K2/2R5 w - - 0 1",
    "4b3/p3kp2/6p1/3pP2p/2pP1P2/4K1P1/P3N2P/8 w - - 0 1",
    "r2qnrnk/p2b2b1/1p1p2pp/2pPpp2/1PP1P3/PRNBB3/3QNPPP/5RK1 w - - 0 1",
    "r1bq1rk1/pp2ppbp/2np2p1/2n5/P3PP2/N1P2N2/1PB3PP/R1B1QRK1 b - - 0 1",
    "r1b2rk1/2q1b1pp/p2ppn2/1p6/3QP3/1BN1B3/PPP3PP/R4RK1 w - - 0 1",
    "3rr1k1/pp3pp1/1qn2np1/8/3p4/PP1R1P2/2P1NQPP/R1B3K1 b - - 0 1",
    "rnb2r1k/pp2p2p/2pp2p1/q2P1p2/8/1Pb2NP1/PB2PPBP/R2Q1RK1 w - - 0 1",
    "r4k2/pb2bp1r/1p1qp2p/3pNp2/3P1P2/2N3P1/PPP1Q2P/2KRR3 w - - 0 1",
    "K7/p7/k7/8/8/8/8/8 b - - 0 1",
    "2r1k2r/8/8/8/8/8/8/R3K2R w KQk - 0 1",
    "4k3/4p3/4K3/8/8/8/8/8 b - - 0 1",
    "8/1n4N1/2k5/8/8/5K2/1N4n1/8 b - - 0 1",
    "8/2k1p3/3pP3/3P2K1/8/8/8/8 b - - 0 1",
    "7k/8/8/1p6/P7/8/8/7K w - - 0 1",
    "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
    "8/8/8/4k3/8/8/3PK3/8 w - - 0 1",
    "6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1",
    "8/5pk1/6p1/8/5PP1/6K1/8/8 w - - 0 1",
    "4k3/8/8/8/8/8/4P3/4K3 w - - 0 1",
    "2r3k1/5pp1/7p/8/8/7P/5PP1/2R3K1 w - - 0 1",
];

pub struct BenchReport {
    pub nodes: u64,
    pub nps: u64,
    pub stats: Stats,
}

/// Runs the bench: one thread, a fresh 16 MB table and fresh histories per position so
/// every position's count is independent of the others and of earlier runs. `network`:
/// the net to evaluate with, `None` for the hand-crafted evaluation. The speed counts the
/// searches only, as Stockfish's bench does: allocating and zeroing the table and the
/// histories (a fresh 16 MB for each of the 50 positions) is setup, not search.
pub fn run(depth: i32, network: Option<Arc<Network>>, out: &mut dyn FnMut(String)) -> BenchReport {
    let mut searching = Duration::ZERO;
    let mut total = Stats::default();
    let mut nodes = 0;
    for (i, fen) in BENCH_FENS.iter().enumerate() {
        let mut pos = Position::from_fen(fen, false).expect("bench FENs are valid");
        let tt = Arc::new(TranspositionTable::new(BENCH_HASH_MB));
        let mut searcher = Searcher::new();
        let job = SearchJob {
            network: network.clone(),
            ..SearchJob::new(
                tt,
                Limits {
                    depth: Some(depth),
                    ..Limits::default()
                },
            )
        };
        let search_start = Instant::now();
        let result = searcher.iterative_deepening(&mut pos, job, &mut |_| {});
        searching += search_start.elapsed();
        nodes += result.nodes;
        total.add(searcher.stats());
        total
            .iteration_nodes
            .extend(searcher.stats().iteration_nodes.iter().copied());
        let best = result
            .best_move
            .map_or("(none)".to_string(), |m| pos.to_uci(m));
        out(format!(
            "position {:>2}/{} nodes {:>10} bestmove {:<6} score {:>6} fen {fen}",
            i + 1,
            BENCH_FENS.len(),
            result.nodes,
            best,
            result.score
        ));
    }
    let elapsed = searching.as_secs_f64().max(1e-6);
    BenchReport {
        nodes,
        nps: (nodes as f64 / elapsed) as u64,
        stats: total,
    }
}

/// Average effective branching factor over iterations from `from_depth` up.
pub fn average_branching_factor(stats: &Stats, from_depth: i32) -> Option<f64> {
    let factors: Vec<f64> = stats
        .branching_factors()
        .into_iter()
        .filter(|(d, _)| *d >= from_depth)
        .map(|(_, b)| b)
        .collect();
    if factors.is_empty() {
        None
    } else {
        Some(factors.iter().sum::<f64>() / factors.len() as f64)
    }
}
