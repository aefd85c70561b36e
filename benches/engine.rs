//! Criterion benchmarks for the engine's hot paths: perft (against shakmaty's own, to price
//! our make-move and key upkeep), move generation with make/unmake, evaluation, the
//! NNUE inference, the move picker, the correction history, the transposition table and a fixed-depth search.
//!
//! `cargo bench --bench engine` runs all of them in a few minutes; add a filter such as
//! `-- perft` to run one group.

use std::hint::black_box;
use std::sync::Arc;
use std::time::Duration;

use basalt::bench::BENCH_FENS;
use basalt::nnue::{Accumulator, AccumulatorStack};
use basalt::position::Position;
use basalt::search::correction::{CorrectionHistory, CorrectionKeys, CorrectionTables};
use basalt::search::history::{Context, History};
use basalt::search::movepick::MovePicker;
use basalt::search::{Limits, SearchJob, Searcher};
use basalt::tt::{Bound, PackedMove, TranspositionTable, TtEntry};
use criterion::{criterion_group, criterion_main, BatchSize, BenchmarkId, Criterion, Throughput};
use shakmaty::{Chess, Move, Position as _};

/// (name, FEN, depth): the start position, Kiwipete (castling, pins, en passant), CPW
/// position 3 (an endgame rich in en passant and checks) and CPW position 4 (promotions).
const PERFT_POSITIONS: [(&str, &str, u32); 4] = [
    (
        "startpos",
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
        4,
    ),
    (
        "kiwipete",
        "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
        4,
    ),
    ("cpw3", "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1", 5),
    (
        "cpw4",
        "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1",
        4,
    ),
];

/// Opening, Kiwipete, a quiet middlegame and a rook endgame from the bench set.
const SEARCH_FENS: [&str; 4] = [BENCH_FENS[0], BENCH_FENS[1], BENCH_FENS[15], BENCH_FENS[44]];
const SEARCH_DEPTH: i32 = 4;

fn position(fen: &str) -> Position {
    Position::from_fen(fen, false).expect("benchmark FENs are valid")
}

fn bench_positions() -> Vec<Position> {
    BENCH_FENS.iter().map(|fen| position(fen)).collect()
}

fn perft(c: &mut Criterion) {
    let mut group = c.benchmark_group("perft");
    for (name, fen, depth) in PERFT_POSITIONS {
        let mut pos = position(fen);
        let board: Chess = pos.board().clone();
        let nodes = shakmaty::perft(&board, depth);
        group.throughput(Throughput::Elements(nodes));
        group.bench_function(BenchmarkId::new("basalt", name), |b| {
            b.iter(|| basalt::perft::perft(black_box(&mut pos), depth))
        });
        group.bench_function(BenchmarkId::new("shakmaty", name), |b| {
            b.iter(|| shakmaty::perft(black_box(&board), depth))
        });
    }
    group.finish();
}

fn movegen_and_make(c: &mut Criterion) {
    let mut positions = bench_positions();
    let moves: u64 = positions.iter().map(|p| p.legal_moves().len() as u64).sum();
    let mut group = c.benchmark_group("movegen");
    group.throughput(Throughput::Elements(moves));
    group.bench_function("legal_moves", |b| {
        b.iter(|| {
            positions
                .iter()
                .map(|p| black_box(p).legal_moves().len())
                .sum::<usize>()
        })
    });
    group.bench_function("legal_moves+make+unmake", |b| {
        b.iter(|| {
            let mut keys = 0u64;
            for pos in positions.iter_mut() {
                for m in pos.legal_moves() {
                    pos.make_move(m);
                    keys ^= pos.key();
                    pos.unmake_move();
                }
            }
            keys
        })
    });
    group.finish();
}

fn evaluation(c: &mut Criterion) {
    let boards: Vec<Chess> = bench_positions()
        .iter()
        .map(|p| p.board().clone())
        .collect();
    let mut group = c.benchmark_group("eval");
    group.throughput(Throughput::Elements(boards.len() as u64));
    group.bench_function("evaluate_bench_fens", |b| {
        b.iter(|| {
            boards
                .iter()
                .map(|board| basalt::eval::evaluate(black_box(board)))
                .sum::<i32>()
        })
    });
    group.finish();
}

/// A fixed, well-spread key sequence (SplitMix64) so runs are comparable.
fn keys(n: usize, seed: u64) -> Vec<u64> {
    let mut state = seed;
    (0..n)
        .map(|_| {
            state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        })
        .collect()
}

/// Histories with something in them: a cutoff by every third legal move of each bench
/// position, in the empty context, so the quiet scores differ and tie as in a search.
fn trained_history(positions: &[Position]) -> History {
    let mut history = History::default();
    for pos in positions {
        let moves: Vec<Move> = pos.legal_moves().into_iter().collect();
        for (i, &m) in moves.iter().enumerate().step_by(3) {
            let tried = &moves[i.saturating_sub(4)..i];
            if m.is_capture() {
                history.update_capture_cutoff(pos.turn(), 1 + i as i32 % 9, m, tried);
            } else {
                history.update_quiet_cutoff(
                    pos.turn(),
                    1 + i as i32 % 9,
                    m,
                    tried,
                    &Context::default(),
                );
            }
        }
    }
    history
}

/// The staged move picker of inner nodes, every move of every bench position picked: the
/// scoring of captures and quiets, the SEE of the captures and the best-first picks.
fn move_picker(c: &mut Criterion) {
    let positions = bench_positions();
    let history = trained_history(&positions);
    let ctx = Context::default();
    let moves: u64 = positions.iter().map(|p| p.legal_moves().len() as u64).sum();
    let mut group = c.benchmark_group("movepick");
    group.throughput(Throughput::Elements(moves));
    group.bench_function("staged_all_moves", |b| {
        b.iter(|| {
            let mut picked = 0;
            for pos in &positions {
                let board = pos.board();
                let mut picker = MovePicker::new(None, [None; 2], None, true);
                while picker.next_move(board, &history, black_box(&ctx)).is_some() {
                    picked += 1;
                }
            }
            picked
        })
    });
    group.finish();
}

/// A node's correction-history lookup: its entries' indices (from the piece keys the
/// position keeps and the last two moves) and the weighted sum of the entries, for every
/// position two plies after a bench position (so the continuation entry is used too).
fn correction(c: &mut Criterion) {
    let mut positions = Vec::new();
    for pos in bench_positions() {
        for m in pos.legal_moves().into_iter().take(8) {
            let mut child = pos.clone();
            child.make_move(m);
            for reply in child.legal_moves().into_iter().take(4) {
                let mut grandchild = child.clone();
                grandchild.make_move(reply);
                positions.push(grandchild);
            }
        }
    }
    let history = CorrectionHistory::default();
    let mut group = c.benchmark_group("correction");
    group.throughput(Throughput::Elements(positions.len() as u64));
    group.bench_function("keys_and_read", |b| {
        b.iter(|| {
            positions
                .iter()
                .map(|pos| {
                    let keys = CorrectionKeys::of(black_box(pos), CorrectionTables::ALL);
                    history.correction(pos.turn(), &keys)
                })
                .sum::<i32>()
        })
    });
    group.finish();
}

fn transposition_table(c: &mut Criterion) {
    const N: usize = 4096;
    // 16 MB, the default size: bigger than the caches, as in a real search.
    let tt = TranspositionTable::new(16);
    let stored = keys(N, 1);
    let absent = keys(N, 2);
    let entry = TtEntry {
        mv: PackedMove(0x8123),
        score: 35,
        depth: 7,
        bound: Bound::Lower,
        is_pv: false,
    };
    for &key in &stored {
        tt.store(key, entry);
    }
    let mut group = c.benchmark_group("tt");
    group.throughput(Throughput::Elements(N as u64));
    group.bench_function("probe_hit", |b| {
        b.iter(|| {
            stored
                .iter()
                .filter(|&&k| tt.probe(black_box(k)).is_some())
                .count()
        })
    });
    group.bench_function("probe_miss", |b| {
        b.iter(|| {
            absent
                .iter()
                .filter(|&&k| tt.probe(black_box(k)).is_some())
                .count()
        })
    });
    group.bench_function("store", |b| {
        b.iter(|| {
            for &key in &stored {
                tt.store(black_box(key), entry);
            }
        })
    });
    group.finish();
}

fn search(c: &mut Criterion) {
    let limits = Limits {
        depth: Some(SEARCH_DEPTH),
        ..Limits::default()
    };
    // A fresh table and searcher per run, as `basalt bench` does, so each run searches the
    // same tree; they are built outside the timed part.
    let fresh = |fen: &str| {
        let tt = Arc::new(TranspositionTable::new(1));
        (Searcher::new(), tt, position(fen))
    };
    let mut group = c.benchmark_group("search");
    for (i, fen) in SEARCH_FENS.iter().enumerate() {
        let (mut searcher, tt, mut pos) = fresh(fen);
        let nodes = searcher
            .iterative_deepening(&mut pos, SearchJob::new(tt, limits.clone()), &mut |_| {})
            .nodes;
        group.throughput(Throughput::Elements(nodes));
        group.bench_function(BenchmarkId::new("depth4", i), |b| {
            b.iter_batched(
                || fresh(fen),
                |(mut searcher, tt, mut pos)| {
                    let job = SearchJob::new(tt, limits.clone());
                    let result = searcher.iterative_deepening(&mut pos, job, &mut |_| {});
                    // Returned so the table is freed outside the timed part.
                    (searcher, result)
                },
                BatchSize::PerIteration,
            )
        });
    }
    group.finish();
}

/// Every (parent, child) pair one legal move apart in the bench positions.
fn move_pairs() -> Vec<(Chess, Chess)> {
    let mut pairs = Vec::new();
    for position in bench_positions() {
        let parent = position.board().clone();
        for m in parent.legal_moves() {
            let mut child = parent.clone();
            child.play_unchecked(m);
            pairs.push((parent.clone(), child));
        }
    }
    pairs
}

/// NNUE inference with the embedded net: an incremental accumulator update plus the output
/// layer (what the search pays per evaluated node), a refresh from scratch, and the
/// accumulator stack with make/unmake; each figure per move over the bench positions.
fn nnue(c: &mut Criterion) {
    let network = basalt::nnue::embedded();
    let pairs = move_pairs();
    let parents: Vec<Accumulator> = pairs
        .iter()
        .map(|(parent, _)| Accumulator::from_board(&network, parent.board()))
        .collect();
    let mut group = c.benchmark_group("nnue");
    group.throughput(Throughput::Elements(pairs.len() as u64));

    let mut child = Accumulator::zeroed(&network);
    group.bench_function("update_and_output", |b| {
        b.iter(|| {
            let mut sum = 0;
            for ((parent_board, child_board), parent) in pairs.iter().zip(&parents) {
                child.update_from(&network, parent, parent_board.board(), child_board.board());
                let pieces = child_board.board().occupied().count();
                sum += network.output(black_box(&child), child_board.turn(), pieces);
            }
            sum
        })
    });

    group.bench_function("refresh_and_output", |b| {
        b.iter(|| {
            let mut sum = 0;
            for (_, child_board) in &pairs {
                child.refresh(&network, black_box(child_board).board());
                let pieces = child_board.board().occupied().count();
                sum += network.output(&child, child_board.turn(), pieces);
            }
            sum
        })
    });

    let mut stack = AccumulatorStack::new();
    let mut positions = bench_positions();
    group.bench_function("stack_make_evaluate_unmake", |b| {
        b.iter(|| {
            let mut sum = 0;
            for position in &mut positions {
                stack.reset(&network, position.board().board(), position.key());
                for m in position.legal_moves() {
                    position.make_move(m);
                    sum += stack.evaluate(&network, position, 1);
                    position.unmake_move();
                }
            }
            sum
        })
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    targets = perft, movegen_and_make, evaluation, nnue, move_picker, correction, transposition_table, search
}
criterion_main!(benches);
