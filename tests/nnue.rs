//! NNUE invariants across modules: the accumulator stack, driven the way the search drives
//! it (make, unmake and null moves through `Position`, evaluations at some nodes only),
//! always agrees with a from-scratch evaluation; a position and its colour-flipped mirror
//! evaluate exactly the same for the side to move; and a network survives its file format.

use basalt::bench::BENCH_FENS;
use basalt::nnue::{AccumulatorStack, FloatNetwork, Network};
use basalt::position::Position;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use shakmaty::fen::Fen;
use shakmaty::{CastlingMode, Chess, EnPassantMode, FromSetup, Position as _};
use std::path::Path;

/// Start, Kiwipete, a position with promotions and en passant, and CPW position 3.
const TREE_FENS: [&str; 4] = [
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
    "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
    "rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8",
    "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
];

struct Walk<'a> {
    network: &'a Network,
    stack: AccumulatorStack,
    rng: StdRng,
    evaluated: u64,
    skipped: u64,
    null_moves: u64,
}

impl Walk<'_> {
    /// Evaluates through the stack and from scratch, and insists they agree.
    fn check(&mut self, position: &Position, ply: usize) {
        let incremental = self.stack.evaluate(self.network, position, ply);
        let scratch = self.network.evaluate_from_scratch(position.board());
        assert_eq!(
            incremental,
            scratch,
            "ply {ply}: stack {incremental}, from scratch {scratch} in {}",
            position.fen()
        );
        self.evaluated += 1;
    }

    /// A perft walk to `depth`. A third of the nodes are not evaluated (as a TT hit or a
    /// check skips the evaluation in the search), so later nodes must bring up several
    /// plies at once; each node is evaluated again after its children, whose siblings have
    /// overwritten the plies above it; and some nodes try a null move, sometimes searched
    /// below.
    fn perft(&mut self, position: &mut Position, ply: usize, depth: u32) {
        if self.rng.random_range(0..3) == 0 {
            self.skipped += 1;
        } else {
            self.check(position, ply);
        }
        if depth == 0 {
            return;
        }
        if !position.in_check() && self.rng.random_range(0..4) == 0 && position.make_null_move() {
            self.null_moves += 1;
            self.check(position, ply + 1);
            if depth >= 2 && self.rng.random_range(0..4) == 0 {
                self.perft(position, ply + 1, depth - 2);
            }
            position.unmake_move();
        }
        for m in position.legal_moves() {
            position.make_move(m);
            self.perft(position, ply + 1, depth - 1);
            position.unmake_move();
        }
        self.check(position, ply);
    }
}

#[test]
fn incremental_accumulators_match_from_scratch_over_perft_trees() {
    let network = FloatNetwork::random(64, 0x19).quantize();
    let mut walk = Walk {
        network: &network,
        stack: AccumulatorStack::new(),
        rng: StdRng::seed_from_u64(0x5eed),
        evaluated: 0,
        skipped: 0,
        null_moves: 0,
    };
    for fen in TREE_FENS {
        let mut position = Position::from_fen(fen, false).unwrap();
        walk.stack
            .reset(&network, position.board().board(), position.key());
        walk.perft(&mut position, 0, 3);
    }
    println!(
        "{} evaluations checked, {} nodes skipped, {} null moves",
        walk.evaluated, walk.skipped, walk.null_moves
    );
    assert!(walk.evaluated > 100_000 && walk.null_moves > 1_000);
}

#[test]
fn stack_agrees_with_a_full_size_network_along_random_games() {
    let network = FloatNetwork::random(256, 0x256).quantize();
    let mut rng = StdRng::seed_from_u64(0x9a3e);
    let mut stack = AccumulatorStack::new();
    for fen in BENCH_FENS.iter().step_by(5) {
        let mut position = Position::from_fen(fen, false).unwrap();
        stack.reset(&network, position.board().board(), position.key());
        for ply in 1..=100 {
            let moves = position.legal_moves();
            if moves.is_empty() {
                break;
            }
            position.make_move(moves[rng.random_range(0..moves.len())]);
            assert_eq!(
                stack.evaluate(&network, &position, ply),
                network.evaluate_from_scratch(position.board()),
                "{}",
                position.fen()
            );
        }
    }
}

/// The colour-flipped mirror: board flipped top to bottom, colours and side to move swapped.
fn mirrored(board: &Chess) -> Chess {
    let setup = board.to_setup(EnPassantMode::Always).into_mirrored();
    Chess::from_setup(setup, CastlingMode::Standard).expect("the mirror of a legal position")
}

#[test]
fn mirror_evaluates_the_same_for_the_side_to_move() {
    let network = FloatNetwork::random(32, 0x3412).quantize();
    let float = network.dequantize();
    let mut rng = StdRng::seed_from_u64(0x0ddba11);
    let mut checked = 0;
    for fen in BENCH_FENS {
        let mut board: Chess = fen
            .parse::<Fen>()
            .unwrap()
            .into_position(CastlingMode::Standard)
            .unwrap();
        for _ in 0..40 {
            let mirror = mirrored(&board);
            assert_eq!(
                network.evaluate_from_scratch(&board),
                network.evaluate_from_scratch(&mirror),
                "{}",
                Fen::from_position(&board, EnPassantMode::Legal)
            );
            // The float pass adds the same rows in another order (pieces are visited from
            // a1 up on both boards), so it agrees up to f32 rounding.
            assert!((float.forward(&board) - float.forward(&mirror)).abs() < 1e-4);
            checked += 1;
            let moves = board.legal_moves();
            if moves.is_empty() {
                break;
            }
            board.play_unchecked(moves[rng.random_range(0..moves.len())]);
        }
    }
    assert!(checked > 1_000);
}

#[test]
fn a_loaded_network_evaluates_like_the_one_written() {
    let network = FloatNetwork::random(256, 0xf11e).quantize();
    let loaded = Network::from_bytes(&network.to_bytes()).unwrap();
    for fen in BENCH_FENS {
        let board: Chess = fen
            .parse::<Fen>()
            .unwrap()
            .into_position(CastlingMode::Standard)
            .unwrap();
        assert_eq!(
            loaded.evaluate_from_scratch(&board),
            network.evaluate_from_scratch(&board)
        );
    }
}

/// Every net kept in `nets/` and `nets/candidates/` loads (format, checksum) and evaluates
/// the start position close to level and a queen-up position far ahead, for the side to move.
#[test]
fn every_committed_net_loads_and_evaluates_sensibly() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("nets");
    let candidates = std::fs::read_dir(dir.join("candidates"))
        .into_iter()
        .flatten();
    let mut checked = Vec::new();
    for entry in std::fs::read_dir(&dir)
        .expect("nets/ exists")
        .chain(candidates)
    {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "nnue") {
            continue;
        }
        let bytes = std::fs::read(&path).unwrap();
        let network =
            Network::from_bytes(&bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let start = network.evaluate_from_scratch(&Chess::default());
        assert!(start.abs() < 100, "{}: start {start}", path.display());
        let queen_up: Chess = "rnb1kbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"
            .parse::<Fen>()
            .unwrap()
            .into_position(CastlingMode::Standard)
            .unwrap();
        let ahead = network.evaluate_from_scratch(&queen_up);
        assert!(ahead > 500, "{}: a queen up {ahead}", path.display());
        checked.push(path.file_name().unwrap().to_string_lossy().into_owned());
    }
    assert!(checked.iter().any(|n| n == "basalt.nnue"), "{checked:?}");
}
