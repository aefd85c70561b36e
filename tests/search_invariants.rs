//! Search invariants, checked against references written here from the rules alone:
//!
//! - the plain alpha-beta (`SearchConfig::plain()`) returns exactly the full-width minimax
//!   value, computed twice here: in negamax form on the engine's `Position`, and in
//!   White-max/Black-min form on shakmaty's `Chess` with its own repetition bookkeeping;
//!   its best move is worth that value and its PV leads to a position worth it;
//! - the transposition table does not change the fixed-depth value (to depth 4; see the
//!   comment above those tests for why not beyond, and for the one known exception);
//! - forced mates (distances verified with Stockfish) are found at the exact distance, a
//!   shorter mate is preferred, and the PV plays out to checkmate;
//! - the best move is legal and the PV is a legal line, also when the search is cut short.
//!
//! Every position is embedded here (or comes from `basalt::bench::BENCH_FENS`), so the tests
//! need nothing outside the repository.

use std::sync::Arc;

use basalt::bench::BENCH_FENS;
use basalt::position::Position;
use basalt::score::{DRAW, INFINITY, MATE};
use basalt::search::{uci_score, Limits, SearchConfig, SearchJob, SearchResult, Searcher};
use basalt::tt::TranspositionTable;
use shakmaty::fen::Fen;
use shakmaty::uci::UciMove;
use shakmaty::{
    Bitboard, Board, CastlingMode, Chess, Color, EnPassantMode, Move, Position as _, Square,
};

/// A test position: a FEN plus moves played before the search, so the game history (and
/// with it repetition detection) is part of the position.
#[derive(Clone, Copy, Debug)]
struct Case {
    fen: &'static str,
    moves: &'static [&'static str],
}

const fn fen(fen: &'static str) -> Case {
    Case { fen, moves: &[] }
}

const fn with_moves(fen: &'static str, moves: &'static [&'static str]) -> Case {
    Case { fen, moves }
}

impl Case {
    fn position(&self) -> Position {
        let mut pos = Position::from_fen(self.fen, false)
            .unwrap_or_else(|e| panic!("bad test FEN {}: {e}", self.fen));
        pos.play_uci_moves(self.moves.iter().copied())
            .unwrap_or_else(|e| panic!("bad test moves for {self}: {e}"));
        pos
    }
}

impl std::fmt::Display for Case {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.moves.is_empty() {
            write!(f, "{}", self.fen)
        } else {
            write!(f, "{} moves {}", self.fen, self.moves.join(" "))
        }
    }
}

/// Positions beside the bench list that exercise the terminal rules: castling, promotions and
/// en passant (perft suites), mates within three plies (WAC), stalemate traps, the fifty-move
/// counter about to run out, captures into insufficient material, and histories that make
/// repetitions reachable within the search.
const EXTRA_CASES: [Case; 38] = [
    // Castling, promotion and en-passant edge cases (standard.epd, tricky perft positions).
    fen("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1"),
    fen("r3k2r/8/8/8/8/8/8/R3K2R b KQkq - 0 1"),
    fen("n1n5/PPPk4/8/8/8/8/4Kppp/5N1N b - - 0 1"),
    fen("n1n5/1Pk5/8/8/8/8/5Kp1/5N1N w - - 0 1"),
    fen("8/PPPk4/8/8/8/8/4Kppp/8 w - - 0 1"),
    fen("B6b/8/8/8/2K5/4k3/8/b6B w - - 0 1"),
    fen("7k/RR6/8/8/8/8/rr6/7K w - - 0 1"),
    fen("K7/8/8/3Q4/4q3/8/8/7k w - - 0 1"),
    fen("3k4/3pp3/8/8/8/8/3PP3/3K4 w - - 0 1"),
    fen("2k4r/pp3pp1/4p3/1P1rP3/1nPpNP2/6Pp/1P5P/2KR3R b - c3 0 1"),
    fen("8/p2r3p/1p3p2/4k3/PP2p1pP/4PnP1/2R1KP2/4N3 b - h3 0 1"),
    fen("r7/pp1k1pp1/2nPp3/6q1/2Pp1N2/5b2/PP1Q1P2/2K1RB2 b - c3 0 1"),
    fen("rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8"),
    fen("r2q1rk1/pP1p2pp/Q4n2/bbp1p3/Np6/1B3NBn/pPPP1PPP/R3K2R b KQ - 0 1"),
    fen("n1n5/PPPk4/8/8/8/8/4Kppp/5N1N w - - 0 1"),
    // Mate in two (WAC.001, WAC.012, WAC.027): the mate is on the third ply.
    fen("2rr3k/pp3pp1/1nnqbN1p/3pN3/2pP4/2P3Q1/PPB4P/R4RK1 w - - 0 1"),
    fen("4k1r1/2p3r1/1pR1p3/3pP2p/3P2qP/P4N2/1PQ4P/5R1K b - - 0 1"),
    fen("7k/pp4np/2p3p1/3pN1q1/3P4/Q7/1r3rPP/2R2RK1 w - - 0 1"),
    // Stalemate traps (the first with Qg7# beside them); stalemate and checkmate at the root.
    fen("7k/5Q2/6K1/8/8/8/8/8 w - - 0 1"),
    fen("k7/8/1Q6/8/8/8/8/7K w - - 0 1"),
    fen("7k/5Q2/6K1/8/8/8/8/8 b - - 0 1"),
    fen("rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3"),
    // The fifty-move counter about to run out: the reversible move that reaches 100 draws,
    // except a mate on that ply (Ra8#); at 100 already, every reply that does not reset the
    // counter is a draw.
    fen("7k/8/6K1/8/8/8/8/R7 w - - 99 80"),
    fen("6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 99 80"),
    fen("6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 98 80"),
    fen("8/5pk1/6p1/8/5PP1/6K1/8/8 w - - 100 90"),
    fen("8/8/4k3/8/8/3QK3/8/8 w - - 98 80"),
    fen("8/8/8/2k5/8/8/1r6/4K3 b - - 99 70"),
    fen("r1b2rk1/pp2bppp/2n1pn2/q5B1/2BP4/2N2N2/PP2QPPP/2R2RK1 b - - 97 40"),
    // Captures into insufficient material.
    fen("8/8/8/3k4/8/8/3pK3/8 w - - 0 1"),
    fen("8/8/8/8/3k4/8/2Bp4/4K3 w - - 0 1"),
    fen("8/8/4k3/8/2n5/8/3N4/4K3 w - - 0 1"),
    // Game histories: the root repeats an earlier position, so shuffling back is a draw.
    with_moves(
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
        &["g1f3", "g8f6", "f3g1", "f6g8"],
    ),
    with_moves(
        "6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1",
        &["d1e1", "g8h8", "e1d1", "h8g8"],
    ),
    with_moves("8/5pk1/6p1/8/5PP1/6K1/8/8 w - - 0 1", &["g3h3", "g7h7"]),
    with_moves(
        "6k1/p4p1p/1p3np1/2q5/4p3/4P1N1/PP3PPP/3Q2K1 w - - 0 1",
        &["d1d8", "g8g7", "d8d1", "g7g8"],
    ),
    with_moves(
        "3r4/2p1rk2/1pQq1pp1/7p/1P1P4/P4P2/6PP/R1R3K1 b - - 0 1",
        &["f7g7", "g1f2", "g7f7", "f2g1"],
    ),
    with_moves(
        "4k3/8/8/8/8/8/4P3/4K3 w - - 0 1",
        &["e1d1", "e8d8", "d1e1", "d8e8", "e1d1"],
    ),
];

/// Smaller trees (endgames, the special cases above, a few tactical middlegames), searched one
/// ply deeper against the reference.
const DEPTH_4_CASES: [Case; 47] = [
    fen("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"),
    fen("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1"),
    fen("r3k2r/8/8/8/8/8/8/R3K2R b KQkq - 0 1"),
    fen("2r1k2r/8/8/8/8/8/8/R3K2R w KQk - 0 1"),
    fen("n1n5/PPPk4/8/8/8/8/4Kppp/5N1N b - - 0 1"),
    fen("n1n5/PPPk4/8/8/8/8/4Kppp/5N1N w - - 0 1"),
    fen("n1n5/1Pk5/8/8/8/8/5Kp1/5N1N w - - 0 1"),
    fen("8/PPPk4/8/8/8/8/4Kppp/8 w - - 0 1"),
    fen("B6b/8/8/8/2K5/4k3/8/b6B w - - 0 1"),
    fen("7k/RR6/8/8/8/8/rr6/7K w - - 0 1"),
    fen("K7/8/8/3Q4/4q3/8/8/7k w - - 0 1"),
    fen("3k4/3pp3/8/8/8/8/3PP3/3K4 w - - 0 1"),
    fen("8/8/3k4/8/2pP4/8/8/3K4 b - d3 0 1"),
    fen("8/p2r3p/1p3p2/4k3/PP2p1pP/4PnP1/2R1KP2/4N3 b - h3 0 1"),
    fen("2k4r/pp3pp1/4p3/1P1rP3/1nPpNP2/6Pp/1P5P/2KR3R b - c3 0 1"),
    fen("K7/p7/k7/8/8/8/8/8 b - - 0 1"),
    fen("4k3/4p3/4K3/8/8/8/8/8 b - - 0 1"),
    fen("8/1n4N1/2k5/8/8/5K2/1N4n1/8 b - - 0 1"),
    fen("8/2k1p3/3pP3/3P2K1/8/8/8/8 b - - 0 1"),
    fen("7k/8/8/1p6/P7/8/8/7K w - - 0 1"),
    fen("8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1"),
    fen("8/8/8/4k3/8/8/3PK3/8 w - - 0 1"),
    fen("6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1"),
    fen("8/5pk1/6p1/8/5PP1/6K1/8/8 w - - 0 1"),
    fen("4k3/8/8/8/8/8/4P3/4K3 w - - 0 1"),
    fen("2r3k1/5pp1/7p/8/8/7P/5PP1/2R3K1 w - - 0 1"),
    fen("4b3/p3kp2/6p1/3pP2p/2pP1P2/4K1P1/P3N2P/8 w - - 0 1"),
    fen("4k1r1/2p3r1/1pR1p3/3pP2p/3P2qP/P4N2/1PQ4P/5R1K b - - 0 1"),
    fen("8/6pp/3q1p2/3n1k2/1P6/3NQ2P/5PP1/6K1 w - - 0 1"),
    fen("7k/5Q2/6K1/8/8/8/8/8 w - - 0 1"),
    fen("k7/8/1Q6/8/8/8/8/7K w - - 0 1"),
    fen("7k/5Q2/6K1/8/8/8/8/8 b - - 0 1"),
    fen("rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3"),
    fen("7k/8/6K1/8/8/8/8/R7 w - - 99 80"),
    fen("6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 99 80"),
    fen("6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 98 80"),
    fen("8/5pk1/6p1/8/5PP1/6K1/8/8 w - - 100 90"),
    fen("8/8/4k3/8/8/3QK3/8/8 w - - 98 80"),
    fen("8/8/8/2k5/8/8/1r6/4K3 b - - 99 70"),
    fen("8/8/8/3k4/8/8/3pK3/8 w - - 0 1"),
    fen("8/8/8/8/3k4/8/2Bp4/4K3 w - - 0 1"),
    fen("8/8/4k3/8/2n5/8/3N4/4K3 w - - 0 1"),
    with_moves(
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
        &["g1f3", "g8f6", "f3g1", "f6g8"],
    ),
    with_moves(
        "6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1",
        &["d1e1", "g8h8", "e1d1", "h8g8"],
    ),
    with_moves("8/5pk1/6p1/8/5PP1/6K1/8/8 w - - 0 1", &["g3h3", "g7h7"]),
    with_moves(
        "6k1/p4p1p/1p3np1/2q5/4p3/4P1N1/PP3PPP/3Q2K1 w - - 0 1",
        &["d1d8", "g8g7", "d8d1", "g7g8"],
    ),
    with_moves(
        "4k3/8/8/8/8/8/4P3/4K3 w - - 0 1",
        &["e1d1", "e8d8", "d1e1", "d8e8", "e1d1"],
    ),
];

fn bench_cases() -> impl Iterator<Item = Case> {
    BENCH_FENS.iter().map(|&f| fen(f))
}

fn all_cases() -> Vec<Case> {
    bench_cases().chain(EXTRA_CASES).collect()
}

thread_local! {
    /// Tests run on threads of their own; one that sets this searches (and evaluates its
    /// references) with the hand-crafted evaluation instead of the embedded net.
    static HAND_CRAFTED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// The evaluation the searches here use: the embedded net unless `HAND_CRAFTED` is set.
fn network() -> Option<Arc<basalt::nnue::Network>> {
    (!HAND_CRAFTED.with(|h| h.get())).then(basalt::nnue::embedded)
}

/// The leaf evaluation of the references, from scratch (the search's incremental
/// accumulators must give the same numbers).
fn evaluate(board: &Chess) -> i32 {
    match network() {
        Some(network) => network.evaluate_from_scratch(board),
        None => basalt::eval::evaluate(board),
    }
}

// ---------------------------------------------------------------------------------------
// The references: full-width minimax, no pruning, no table, no ordering.
// ---------------------------------------------------------------------------------------

/// The draw rules the engine applies below the root: any repetition of a position since the
/// last irreversible move, insufficient material, and the fifty-move rule unless the side to
/// move is checkmated.
fn drawn_by_rule(pos: &Position) -> bool {
    let board = pos.board();
    pos.is_repetition()
        || board.is_insufficient_material()
        || (board.halfmoves() >= 100 && !board.is_checkmate())
}

/// The value of `pos` for the side to move, searched `depth` plies at `ply` from the root.
fn negamax(pos: &mut Position, depth: i32, ply: i32) -> i32 {
    if ply > 0 && drawn_by_rule(pos) {
        return DRAW;
    }
    let moves = pos.legal_moves();
    if moves.is_empty() {
        return if pos.in_check() { -MATE + ply } else { DRAW };
    }
    if depth == 0 {
        return evaluate(pos.board());
    }
    let mut best = -INFINITY;
    for m in moves {
        pos.make_move(m);
        best = best.max(-negamax(pos, depth - 1, ply + 1));
        pos.unmake_move();
    }
    best
}

/// The value of every root move (for the side to move) and the root value, by negamax.
fn negamax_root(pos: &mut Position, depth: i32) -> (i32, Vec<(Move, i32)>) {
    let moves = pos.legal_moves();
    if moves.is_empty() {
        return (negamax(pos, depth, 0), Vec::new());
    }
    let mut values = Vec::with_capacity(moves.len());
    for m in moves {
        pos.make_move(m);
        values.push((m, -negamax(pos, depth - 1, 1)));
        pos.unmake_move();
    }
    let best = values.iter().map(|&(_, v)| v).max().expect("some moves");
    (best, values)
}

/// What makes two positions the same for the repetition rule: the pieces, the side to move,
/// the castling rights and an en-passant capture that can actually be made.
#[derive(PartialEq, Eq)]
struct Identity {
    board: Board,
    turn: Color,
    castling: Bitboard,
    ep: Option<Square>,
}

fn identity(board: &Chess) -> Identity {
    Identity {
        board: board.board().clone(),
        turn: board.turn(),
        castling: board.castles().castling_rights(),
        ep: board.ep_square(EnPassantMode::Legal),
    }
}

/// The second reference works on shakmaty's `Chess` with its own game history rather than
/// on the engine's `Position`, so it also checks the engine's Zobrist keys and repetition
/// detection. `history` holds every earlier position of the game, oldest first.
struct Game {
    board: Chess,
    history: Vec<Identity>,
}

impl Game {
    fn new(case: &Case) -> Game {
        let mut board: Chess = case
            .fen
            .parse::<Fen>()
            .expect("valid FEN")
            .into_position(CastlingMode::Standard)
            .expect("legal position");
        let mut history = Vec::new();
        for text in case.moves {
            let m = text
                .parse::<UciMove>()
                .expect("UCI move")
                .to_move(&board)
                .expect("legal move");
            history.push(identity(&board));
            board.play_unchecked(m);
        }
        Game { board, history }
    }

    /// The current position occurred before, with no capture or pawn move since.
    fn is_repetition(&self) -> bool {
        let me = identity(&self.board);
        let reversible = self.board.halfmoves() as usize;
        self.history.iter().rev().take(reversible).any(|p| *p == me)
    }

    fn play(&mut self, m: Move) -> Chess {
        self.history.push(identity(&self.board));
        let before = self.board.clone();
        self.board.play_unchecked(m);
        before
    }

    fn undo(&mut self, before: Chess) {
        self.history.pop();
        self.board = before;
    }
}

/// Terminal values from White's point of view, written out case by case rather than shared
/// with `negamax`: mate first (a mate on the hundredth ply stands), then stalemate, then the
/// draw rules that only apply below the root.
fn terminal_for_white(game: &Game, ply: i32) -> Option<i32> {
    let board = &game.board;
    if board.is_checkmate() {
        let mated = MATE - ply;
        return Some(match board.turn() {
            Color::White => -mated,
            Color::Black => mated,
        });
    }
    if board.is_stalemate() {
        return Some(DRAW);
    }
    if ply > 0 {
        if board.halfmoves() >= 100 || board.is_insufficient_material() {
            return Some(DRAW);
        }
        if game.is_repetition() {
            return Some(DRAW);
        }
    }
    None
}

/// White to move: the best of White's moves, from White's point of view.
fn max_value(game: &mut Game, depth: i32, ply: i32) -> i32 {
    debug_assert_eq!(game.board.turn(), Color::White);
    if let Some(v) = terminal_for_white(game, ply) {
        return v;
    }
    if depth == 0 {
        return evaluate(&game.board);
    }
    let mut value = i32::MIN;
    for m in game.board.legal_moves() {
        let before = game.play(m);
        value = value.max(min_value(game, depth - 1, ply + 1));
        game.undo(before);
    }
    value
}

/// Black to move: the worst (for White) of Black's moves.
fn min_value(game: &mut Game, depth: i32, ply: i32) -> i32 {
    debug_assert_eq!(game.board.turn(), Color::Black);
    if let Some(v) = terminal_for_white(game, ply) {
        return v;
    }
    if depth == 0 {
        return -evaluate(&game.board);
    }
    let mut value = i32::MAX;
    for m in game.board.legal_moves() {
        let before = game.play(m);
        value = value.min(max_value(game, depth - 1, ply + 1));
        game.undo(before);
    }
    value
}

/// The max/min reference converted to the side to move's point of view.
fn max_min_root(case: &Case, depth: i32) -> i32 {
    let mut game = Game::new(case);
    match game.board.turn() {
        Color::White => max_value(&mut game, depth, 0),
        Color::Black => -min_value(&mut game, depth, 0),
    }
}

// ---------------------------------------------------------------------------------------
// Driving the engine.
// ---------------------------------------------------------------------------------------

fn search(pos: &mut Position, config: SearchConfig, limits: Limits, tt_mb: usize) -> SearchResult {
    let tt = Arc::new(TranspositionTable::new(tt_mb));
    let mut searcher = Searcher::new();
    let job = SearchJob {
        network: network(),
        config,
        ..SearchJob::new(tt, limits)
    };
    let fen_before = pos.fen();
    let plies_before = pos.ply_count();
    let result = searcher.iterative_deepening(pos, job, &mut |_| {});
    assert_eq!(pos.fen(), fen_before, "search changed the position");
    assert_eq!(
        pos.ply_count(),
        plies_before,
        "search left moves on the stack"
    );
    result
}

fn depth_limit(depth: i32) -> Limits {
    Limits {
        depth: Some(depth),
        ..Limits::default()
    }
}

/// A plain fixed-depth search (one iteration, full window, no TT).
fn plain_search(pos: &mut Position, depth: i32) -> SearchResult {
    search(pos, SearchConfig::plain(), depth_limit(depth), 1)
}

/// Plays `line` from `pos`, panicking on the first illegal move.
fn play_line(pos: &mut Position, line: &[Move], what: &str) {
    for (i, &m) in line.iter().enumerate() {
        assert!(
            pos.legal_moves().contains(&m),
            "{what}: move {} ({}) is illegal in {}",
            i + 1,
            pos.to_uci(m),
            pos.fen()
        );
        pos.make_move(m);
    }
}

fn uci_line(pos: &Position, line: &[Move]) -> String {
    let mut pos = pos.clone();
    let mut out = Vec::new();
    for &m in line {
        out.push(pos.to_uci(m));
        if !pos.legal_moves().contains(&m) {
            out.push("(illegal)".to_string());
            break;
        }
        pos.make_move(m);
    }
    out.join(" ")
}

/// Checks one case at `depth`: the plain search's value equals both references, its best
/// move is one of the moves with that value, and its PV is a legal line that reaches the
/// horizon (or a terminal node) at a position worth exactly the root value.
fn check_against_minimax(case: &Case, depth: i32) -> Result<(), String> {
    let mut pos = case.position();
    let (value, move_values) = negamax_root(&mut pos, depth);
    let max_min = max_min_root(case, depth);
    if max_min != value {
        return Err(format!(
            "depth {depth}: negamax {value} but max/min {max_min} for {case}"
        ));
    }
    let result = plain_search(&mut pos, depth);
    if result.score != value {
        return Err(format!(
            "depth {depth}: alpha-beta {} but minimax {value} for {case}",
            result.score
        ));
    }
    if move_values.is_empty() {
        return match result.best_move {
            None => Ok(()),
            Some(m) => Err(format!("best move {m:?} with no legal move in {case}")),
        };
    }
    let Some(best) = result.best_move else {
        return Err(format!("depth {depth}: no best move for {case}"));
    };
    match move_values.iter().find(|&&(m, _)| m == best) {
        Some(&(_, v)) if v == value => {}
        Some(&(_, v)) => {
            return Err(format!(
                "depth {depth}: best move {} is worth {v}, not {value}, in {case}",
                pos.to_uci(best)
            ))
        }
        None => return Err(format!("best move {best:?} is not legal in {case}")),
    }
    if result.pv.first() != Some(&best) {
        return Err(format!(
            "depth {depth}: PV {} does not start with the best move in {case}",
            uci_line(&pos, &result.pv)
        ));
    }
    let pv_len = result.pv.len() as i32;
    let pv = uci_line(&pos, &result.pv);
    if pv_len > depth {
        return Err(format!("depth {depth}: PV {pv} is too long in {case}"));
    }
    let mut end = pos.clone();
    play_line(&mut end, &result.pv, &format!("PV of {case}"));
    let terminal = drawn_by_rule(&end) || end.legal_moves().is_empty();
    if pv_len < depth && !terminal {
        return Err(format!(
            "depth {depth}: PV {pv} stops short of the horizon at a live position in {case}"
        ));
    }
    let end_value = negamax(&mut end, depth - pv_len, pv_len);
    let end_value = if pv_len % 2 == 0 {
        end_value
    } else {
        -end_value
    };
    if end_value != value {
        return Err(format!(
            "depth {depth}: PV {pv} ends at a position worth {end_value}, not {value}, in {case}"
        ));
    }
    Ok(())
}

fn assert_all(failures: Vec<String>, checked: usize) {
    assert!(
        failures.is_empty(),
        "{} of {checked} positions failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

// ---------------------------------------------------------------------------------------
// Alpha-beta == minimax.
// ---------------------------------------------------------------------------------------

#[test]
fn alpha_beta_equals_minimax_at_depth_3_on_bench_positions() {
    let cases: Vec<Case> = bench_cases().collect();
    let failures = cases
        .iter()
        .filter_map(|c| check_against_minimax(c, 3).err())
        .collect();
    assert_all(failures, cases.len());
}

#[test]
fn alpha_beta_equals_minimax_at_depth_3_on_special_positions() {
    let failures = EXTRA_CASES
        .iter()
        .filter_map(|c| check_against_minimax(c, 3).err())
        .collect();
    assert_all(failures, EXTRA_CASES.len());
}

#[test]
fn alpha_beta_equals_minimax_at_depth_4() {
    let failures = DEPTH_4_CASES
        .iter()
        .filter_map(|c| check_against_minimax(c, 4).err())
        .collect();
    assert_all(failures, DEPTH_4_CASES.len());
}

/// The two references must agree at depths 1 and 2 too, where a mistake in the horizon or
/// terminal handling shows up without being averaged away by deeper trees.
#[test]
fn references_agree_at_shallow_depths() {
    for case in all_cases() {
        let mut pos = case.position();
        for depth in 1..=2 {
            let (value, _) = negamax_root(&mut pos, depth);
            assert_eq!(max_min_root(&case, depth), value, "depth {depth}: {case}");
            assert_eq!(
                plain_search(&mut pos, depth).score,
                value,
                "depth {depth}: {case}"
            );
        }
    }
}

// ---------------------------------------------------------------------------------------
// Transposition table on == off.
//
// Why equality is expected, and how far: a fixed-depth search with a table may only differ
// from one without if a stored result is reused somewhere it does not apply. With plain
// search (no extensions) a node at ply p always has depth d - p, so a hit has the same
// depth unless the same position occurs at two plies of the same parity; and a reused
// result is only right if the subtree below the position does not depend on how it was
// reached.
//
// - Depth 3: only nodes at plies 0-2 probe the table (ply 3 is the horizon, which never
//   does), and a position at ply 1 or 2 is reached by exactly one move sequence. Every hit
//   is the same node searched again (a PVS re-search), so the value cannot change. Sound.
// - Depth 4: ply-3 nodes (depth 1) now transpose: w1 b1 w2 and w2 b1 w1 give the same
//   position. A position cannot recur two plies later (the other side would have had to
//   pass), so every hit has exactly the right depth, and repetition checks from the ply-4
//   horizon only look back to the root, which all paths share. What is NOT shared is the
//   fifty-move counter: when exactly one of w1, w2 is a capture or pawn move, the two orders
//   reach the position with different counters, and `evaluate` scales its score by the
//   counter while the Zobrist key ignores it (the net does not). So with the hand-crafted
//   evaluation equality at depth 4 holds only as far as that scaling never decides a
//   comparison; it does on the positions below and, today, on the lopsided ones in
//   `tt_reuses_values_across_fifty_move_counters`, which once failed.
// - Iterative deepening adds entries from shallower iterations. At depth 4 none of them can
//   cut: an entry from iteration k at ply q has depth k - q, and a node at ply p needs
//   4 - p; with k <= 4 that needs q < p at the same parity, the same position two plies
//   apart, which (as above) cannot happen before ply 4. So ID changes only the move order,
//   and the depth-4 statement above carries over unchanged. From depth 5 on, a position at
//   ply 4 can match one stored at ply 2 with more depth, and repetition checks at ply 5
//   compare with ply 1, which differs between transposing paths: the value may legitimately
//   change (WAC.062 at depth 5 with ID: -101 with the table, -100 without, also with the
//   fifty-move scaling taken out of the evaluation), so nothing is asserted there.
// ---------------------------------------------------------------------------------------

fn with_tt(iterative_deepening: bool) -> SearchConfig {
    SearchConfig {
        use_tt: true,
        iterative_deepening,
        ..SearchConfig::plain()
    }
}

/// Each search gets a fresh table, so no result leaks from one search into the next.
fn tt_mismatches(cases: &[Case], depth: i32, config: SearchConfig) -> Vec<String> {
    let mut failures = Vec::new();
    for case in cases {
        let mut pos = case.position();
        let off = plain_search(&mut pos, depth).score;
        let on = search(&mut pos, config, depth_limit(depth), 4).score;
        if on != off {
            failures.push(format!(
                "depth {depth}: {on} with {config:?}, {off} without a table, for {case}"
            ));
        }
    }
    failures
}

#[test]
fn transposition_table_keeps_the_value_at_depth_3() {
    let cases = all_cases();
    assert_all(tt_mismatches(&cases, 3, with_tt(false)), cases.len());
    assert_all(tt_mismatches(&cases, 3, with_tt(true)), cases.len());
}

#[test]
fn transposition_table_keeps_the_value_at_depth_4() {
    let cases = all_cases();
    assert_all(tt_mismatches(&cases, 4, with_tt(false)), cases.len());
}

#[test]
fn transposition_table_with_iterative_deepening_keeps_the_value_at_depth_4() {
    let cases = all_cases();
    assert_all(tt_mismatches(&cases, 4, with_tt(true)), cases.len());
    // Aspiration windows add re-searches of the same tree with other windows, which probe
    // bounds stored by the failed attempt: same nodes, same depths, so the same argument
    // holds, and the fail-soft re-search must end at the exact value.
    let aspiration = SearchConfig {
        aspiration: true,
        ..with_tt(true)
    };
    assert_all(tt_mismatches(&cases, 4, aspiration), cases.len());
}

/// The second search of a position with the table the first one filled: every node now
/// starts from a stored move and bound, so nodes are searched in another order and with
/// other windows than the first time, and the stored bounds are probed against windows
/// they were not made for. Entries are only ever hit by the same position at the same ply
/// and depth (same argument as above), so the value must not move.
#[test]
fn warm_table_keeps_the_value() {
    let mut failures = Vec::new();
    let cases = all_cases();
    for depth in [3, 4] {
        for case in &cases {
            let mut pos = case.position();
            let cold = plain_search(&mut pos, depth).score;
            let tt = Arc::new(TranspositionTable::new(4));
            let mut searcher = Searcher::new();
            let job = || SearchJob {
                network: network(),
                config: with_tt(false),
                ..SearchJob::new(tt.clone(), depth_limit(depth))
            };
            let first = searcher.iterative_deepening(&mut pos, job(), &mut |_| {});
            let second = searcher.iterative_deepening(&mut pos, job(), &mut |_| {});
            if (first.score, second.score) != (cold, cold) {
                failures.push(format!(
                    "depth {depth}: {} then {} with one table, {cold} without, for {case}",
                    first.score, second.score
                ));
            }
        }
    }
    assert_all(failures, 2 * cases.len());
}

/// Book positions with Black's queen and a rook removed (about +1400), where the
/// hand-crafted evaluation's fifty-move scaling (1% per two plies) once made a depth-1
/// result stored for a ply-3 position reached with one counter wrong where the counter
/// differs: 4 to 14 centipawns off with the table (the values in the comments are from
/// then). The key still ignores the counter, but at e1221d4 and since (checked in session
/// 13) these positions agree, so the test runs, with the
/// hand-crafted evaluation; the net has no fifty-move scaling.
#[test]
fn tt_reuses_values_across_fifty_move_counters() {
    HAND_CRAFTED.with(|h| h.set(true));
    let cases = [
        // no TT: 1403; TT: 1399; TT+ID: 1399
        fen("2b2rk1/p2pppbp/1pn2np1/8/3N4/1P2P3/PBP1BPPP/RN1Q1RK1 w - - 0 9"),
        // no TT: 1338; TT: 1325
        fen("2b1k2r/pp2ppb1/3p1npp/2pPn3/P4N1P/6P1/1PP1PPB1/RNBQK2R w KQ - 1 9"),
        // no TT: 1461; TT: 1447
        fen("1n2kb1r/pp2pppp/5n2/3p4/1P6/2P1Pb1P/PB3PP1/RN1QKB1R w KQ - 0 9"),
        // no TT: 1439; TT+ID: 1435
        fen("2b1k2r/3pnpbp/2p3p1/p1p1p3/4P3/PPN2N2/2PP1PPP/R1BQ1RK1 w - - 0 1"),
        // no TT: 1481; TT+ID: 1474
        fen("2b1kb1r/1p1p1ppp/p1n1p3/2p5/P1B1P3/2N2Q2/1PPP1PPP/R1B2RK1 w - - 3 9"),
    ];
    let mut failures = tt_mismatches(&cases, 4, with_tt(false));
    failures.extend(tt_mismatches(&cases, 4, with_tt(true)));
    assert_all(failures, cases.len());
}

// ---------------------------------------------------------------------------------------
// Forced mates, full engine.
// ---------------------------------------------------------------------------------------

/// (moves to mate, FEN). Every distance was checked with Stockfish 15.1 (`go depth 26`: mate
/// in exactly this many moves, and its PV ends in checkmate). Mates in 2 to 4 are from Win
/// At Chess (WAC.001, .188, .012, .005, .246, .027, .156, .154, .060; .191, .097, .197,
/// .219, .064, .050; .298, .215, .253, .035, .103) and Bratko-Kopec (BK.01); the mates in
/// one are composed: back rank, a lone rook, Scholar's and Fool's mate, a smothered mate,
/// a promotion, a back-rank mate beside a hanging queen, and Ra8# on the hundredth ply.
const MATES: [(i32, &str); 29] = [
    (1, "6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1"),
    (1, "7k/8/6K1/8/8/8/8/R7 w - - 0 1"),
    (
        1,
        "r1bqkb1r/pppp1ppp/2n2n2/4p2Q/2B1P3/8/PPPP1PPP/RNB1K1NR w KQkq - 4 4",
    ),
    (
        1,
        "rnbqkbnr/pppp1ppp/8/4p3/6P1/5P2/PPPPP2P/RNBQKBNR b KQkq - 0 2",
    ),
    (1, "6rk/6pp/8/6N1/8/8/8/6K1 w - - 0 1"),
    (1, "k7/2P5/1K6/8/8/8/8/8 w - - 0 1"),
    (1, "6k1/5ppp/8/8/8/1q6/5PPP/1R1R2K1 w - - 0 1"),
    (1, "7k/8/6K1/8/8/8/8/R7 w - - 99 80"),
    (
        2,
        "2rr3k/pp3pp1/1nnqbN1p/3pN3/2pP4/2P3Q1/PPB4P/R4RK1 w - - 0 1",
    ),
    (2, "3RNbk1/pp3p2/4rQpp/8/1qr5/7P/P4P2/3R2K1 w - - 0 1"),
    (
        2,
        "4k1r1/2p3r1/1pR1p3/3pP2p/3P2qP/P4N2/1PQ4P/5R1K b - - 0 1",
    ),
    (2, "5k2/6pp/p1qN4/1p1p4/3P4/2PKP2Q/PP3r2/3R4 b - - 0 1"),
    (2, "6R1/4qp1p/ppr1n1pk/8/1P2P1QP/6N1/P4PP1/6K1 w - - 0 1"),
    (2, "7k/pp4np/2p3p1/3pN1q1/3P4/Q7/1r3rPP/2R2RK1 w - - 0 1"),
    (2, "r1b1qN1k/1pp3p1/p2p3n/4p1B1/8/1BP4Q/PP3KPP/8 w - - 0 1"),
    (
        2,
        "r1b2rk1/2p2ppp/p7/1p6/3P3q/1BP3bP/PP3QP1/RNB1R1K1 w - - 0 1",
    ),
    (
        2,
        "rn1qr1k1/1p2np2/2p3p1/8/1pPb4/7Q/PB1P1PP1/2KR1B1R w - - 0 1",
    ),
    (3, "1k1r4/pp1b1R2/3q2pp/4p3/2B5/4Q3/PPP2B2/2K5 b - - 0 1"),
    (3, "2r1Rn1k/1p1q2pp/p7/5p2/3P4/1B4P1/P1P1QP1P/6K1 w - - 0 1"),
    (3, "6k1/5p2/p5np/4B3/3P4/1PP1q3/P3r1QP/6RK w - - 0 1"),
    (3, "7k/1p4p1/7p/3P1n2/4Q3/2P2P2/PP3qRP/7K b - - 0 1"),
    (3, "7k/p4q1p/1pb5/2p5/4B2Q/2P1B3/P6P/7K b - - 0 1"),
    (3, "8/6pp/3q1p2/3n1k2/1P6/3NQ2P/5PP1/6K1 w - - 0 1"),
    (3, "k4r2/1R4pb/1pQp1n1p/3P4/5p1P/3P2P1/r1q1R2K/8 w - - 0 1"),
    (4, "3Q4/p3b1k1/2p2rPp/2q5/4B3/P2P4/7P/6RK w - - 0 1"),
    (
        4,
        "3r2k1/pb1q1pp1/1p2pb1p/8/3N4/P2QB3/1P3PPP/1Br1R1K1 w - - 0 1",
    ),
    (4, "k5r1/p4b2/2P5/5p2/3P1P2/4QBrq/P5P1/4R1K1 w - - 0 1"),
    (4, "r3r2k/2R3pp/pp1q1p2/8/3P3R/7P/PP3PP1/3Q2K1 w - - 0 1"),
    (
        4,
        "6k1/2pb1r1p/3p1PpQ/p1nPp3/1q2P3/2N2P2/PrB5/2K3RR w - - 0 1",
    ),
];

/// Searches `fen` and checks a mate in exactly `moves`, with a PV of 2 * moves - 1 plies
/// that ends in checkmate.
fn check_mate(moves: i32, fen: &str, config: SearchConfig, limits: Limits) -> Result<(), String> {
    let mut pos = Position::from_fen(fen, false).expect("mate FENs are valid");
    let depth = limits.depth;
    let result = search(&mut pos, config, limits, 16);
    let pv = uci_line(&pos, &result.pv);
    let what = format!(
        "mate in {moves} at depth {depth:?}, score {}, PV {pv}, in {fen}",
        result.score
    );
    if result.score != MATE - (2 * moves - 1) || uci_score(result.score) != Err(moves) {
        return Err(format!("wrong score: {what}"));
    }
    if result.best_move.is_none() || result.best_move != result.pv.first().copied() {
        return Err(format!("best move is not the PV's first move: {what}"));
    }
    if result.pv.len() != (2 * moves - 1) as usize {
        return Err(format!("PV has the wrong length: {what}"));
    }
    let mut board = pos.board().clone();
    for &m in &result.pv {
        if !board.is_legal(m) {
            return Err(format!("illegal PV: {what}"));
        }
        board.play_unchecked(m);
    }
    if !board.is_checkmate() {
        return Err(format!("PV does not end in checkmate: {what}"));
    }
    Ok(())
}

/// Full width (everything on but the selective pruning and reductions), a mate in N is
/// inside the tree from depth 2N - 1, so at any depth from there the score must be exactly
/// mate in N. The iterations go past the mate (2N + 2 plies for short mates, 2N + 1 for a
/// mate in three, 2N for a mate in four, to keep the run short) and must all keep it.
#[test]
fn finds_forced_mates_at_the_exact_distance() {
    let failures: Vec<String> = MATES
        .iter()
        .filter_map(|&(moves, fen)| {
            let depth = match moves {
                1 | 2 => 2 * moves + 2,
                3 => 2 * moves + 1,
                _ => 2 * moves,
            };
            check_mate(
                moves,
                fen,
                SearchConfig::without_pruning(),
                depth_limit(depth),
            )
            .err()
        })
        .collect();
    assert_all(failures, MATES.len());
}

/// The configuration the engine plays with, as `go mate N` drives it: the search stops at the
/// first iteration that proves a mate in at most N. Selective pruning and reductions may
/// need more depth than 2N - 1 to see the mate (a quiet queen sacrifice, say), hence the
/// generous depth cap; what must hold is that the mate is found, that its distance is
/// exact (never shorter than the real one), and that the PV mates.
#[test]
fn finds_forced_mates_with_the_default_configuration() {
    let failures: Vec<String> = MATES
        .iter()
        .filter_map(|&(moves, fen)| {
            let limits = Limits {
                depth: Some(2 * moves + 16),
                mate: Some(moves),
                ..Limits::default()
            };
            check_mate(moves, fen, SearchConfig::default(), limits).err()
        })
        .collect();
    assert_all(failures, MATES.len());
}

#[test]
fn prefers_the_shorter_mate() {
    let fen = "7k/8/6K1/8/8/8/8/R7 w - - 0 1";
    let pos = Position::from_fen(fen, false).unwrap();
    let ra7 = pos.parse_uci_move("a1a7").unwrap();
    for config in [SearchConfig::without_pruning(), SearchConfig::default()] {
        // Rd8# mates at once; Rxb3 wins a queen, and the search is deep enough to find
        // slower mates after it (Stockfish: Rd8# is the only mate in one).
        let back_rank = "6k1/5ppp/8/8/8/1q6/5PPP/1R1R2K1 w - - 0 1";
        check_mate(1, back_rank, config, depth_limit(7)).unwrap();
        // Ra8# now, or Ra7 Kg8 Ra8# (Stockfish with `searchmoves a1a7`: mate in 2):
        // restricted to Ra7 the engine must see the mate in two, and unrestricted it must
        // take the one.
        check_mate(1, fen, config, depth_limit(8)).unwrap();
        let restricted = Limits {
            depth: Some(8),
            search_moves: vec![ra7],
            ..Limits::default()
        };
        check_mate(2, fen, config, restricted).unwrap();
    }
}

// ---------------------------------------------------------------------------------------
// Legal best move and PV.
// ---------------------------------------------------------------------------------------

/// The best move is legal and first in the PV, the PV is a legal line and the ponder move
/// is legal after the best move (and the PV's second move when the PV has one). Checked with
/// the configuration the engine plays with and with the full-width one: from a completed
/// search, from one stopped by a node limit in the middle of an iteration, and with the
/// root moves restricted.
#[test]
fn best_move_and_pv_are_legal() {
    let mut checked = 0;
    for case in all_cases() {
        let mut pos = case.position();
        let legal = pos.legal_moves();
        let first_two: Vec<Move> = legal.iter().copied().take(2).collect();
        let runs = [
            depth_limit(4),
            Limits {
                depth: Some(30),
                hard_nodes: Some(3_000),
                ..Limits::default()
            },
            Limits {
                depth: Some(3),
                search_moves: first_two.clone(),
                ..Limits::default()
            },
        ];
        for config in [SearchConfig::default(), SearchConfig::without_pruning()] {
            for limits in &runs {
                let result = search(&mut pos, config, limits.clone(), 4);
                let what = format!("{case} with {limits:?} and {config:?}");
                check_result_is_legal(&pos, &result, &limits.search_moves, &what);
                checked += 1;
            }
        }
    }
    assert!(checked >= 6 * 80, "only {checked} searches checked");
}

fn check_result_is_legal(pos: &Position, result: &SearchResult, search_moves: &[Move], what: &str) {
    let legal = pos.legal_moves();
    if legal.is_empty() {
        assert_eq!(
            result.best_move, None,
            "best move without legal moves: {what}"
        );
        assert!(result.pv.is_empty(), "PV without legal moves: {what}");
        return;
    }
    let best = result
        .best_move
        .unwrap_or_else(|| panic!("no best move: {what}"));
    assert!(legal.contains(&best), "illegal best move {best:?}: {what}");
    if !search_moves.is_empty() {
        assert!(
            search_moves.contains(&best),
            "best move outside searchmoves: {what}"
        );
    }
    assert_eq!(
        result.pv.first(),
        Some(&best),
        "PV does not start with the best move: {what}"
    );
    let mut line = pos.clone();
    play_line(&mut line, &result.pv, what);
    if let Some(ponder) = result.ponder_move {
        if let Some(&second) = result.pv.get(1) {
            assert_eq!(
                ponder, second,
                "ponder move is not the PV's second move: {what}"
            );
        }
        let mut after = pos.clone();
        after.make_move(best);
        assert!(
            after.legal_moves().contains(&ponder),
            "illegal ponder move: {what}"
        );
    }
}
