//! Iterative deepening, aspiration windows and the root of the search. The node search is
//! in `node.rs`, quiescence in `qsearch.rs`.

pub mod correction;
#[cfg(feature = "fault-injection")]
mod fault;
mod frame;
pub mod history;
mod job;
pub mod movepick;
mod node;
pub mod params;
mod played;
mod qsearch;
mod root;
pub mod skill;
mod state;
pub mod stats;

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use shakmaty::{Move, Position as _};

use rand::rngs::StdRng;
use rand::SeedableRng;

use crate::nnue::AccumulatorStack;
use crate::position::Position;
use crate::score::*;
use crate::syzygy::Outcome;
use crate::time::IterationFacts;
pub use crate::time::Limits;
use crate::tt::{Bound, PackedMove, TtEntry};
use correction::{CorrectionHistory, CorrectionKeys, CorrectionTables};
use history::History;
use params::*;
use played::PlayedLines;
use root::{RootMove, RootMoves};

/// How often (in nodes) the clock is read; the stop flag is read at every node.
const CLOCK_CHECK_INTERVAL: u64 = 1024;
/// How often (in nodes) a helper thread yields its core. With more search threads than
/// cores the kernel may otherwise run a `SCHED_IDLE` helper for a whole scheduler tick
/// (4 ms at 250 Hz) while the UCI thread waits to read a command; at a yield it picks
/// again. 256 nodes are about 0.2 ms of a helper's time.
const HELPER_YIELD_INTERVAL: u64 = 256;
/// From how long into a search the main thread names the root move it searches, and then
/// each one as it starts on it (`info currmove`): a GUI shows it in a long analysis, and
/// short searches (bullet games, datagen) print no such lines.
const CURRMOVE_AFTER: Duration = Duration::from_secs(3);
pub use job::{Counters, SearchJob};
use state::SearchState;
pub use stats::Stats;

/// Switches for the parts of the search that the invariant tests turn off. Everything is on
/// in play. A switch stands alone where a test turns it on or off by itself; the rest come
/// in the two groups the tests turn off together.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SearchConfig {
    pub use_tt: bool,
    pub iterative_deepening: bool,
    pub aspiration: bool,
    /// What a full-width search adds to bare alpha-beta: quiescence at the horizon, the
    /// check extension, mate distance pruning and the staged move picker. Off, the horizon
    /// is the static evaluation and every node orders its full move list like the root, so
    /// the search is exactly minimax (`plain`).
    pub refinements: bool,
    /// The selective techniques, which trade the full-width value for depth: null move,
    /// reverse futility, late move pruning, futility and SEE pruning, late move reductions
    /// (with their history, cut-node, TT-PV and re-search terms), singular, double, triple
    /// and negative extensions, the check extension's exchange test, SEE in move ordering
    /// and quiescence, delta pruning, the TT in quiescence and as a bound on the eval, and
    /// the correction history. Off (`without_pruning`), a mate in N is found from depth
    /// 2N - 1, at its exact distance.
    pub selective: bool,
}

impl Default for SearchConfig {
    fn default() -> Self {
        SearchConfig {
            use_tt: true,
            iterative_deepening: true,
            aspiration: true,
            refinements: true,
            selective: true,
        }
    }
}

impl SearchConfig {
    /// Everything on except the selective techniques that change the searched tree's value:
    /// the configuration of the invariant tests that need a full-width value.
    pub fn without_pruning() -> SearchConfig {
        SearchConfig {
            selective: false,
            ..SearchConfig::default()
        }
    }

    /// Bare alpha-beta: no TT, no iterative deepening, no aspiration, no extensions, no
    /// selective pruning or reductions, and the static evaluation at the horizon instead of
    /// quiescence.
    pub fn plain() -> SearchConfig {
        SearchConfig {
            use_tt: false,
            iterative_deepening: false,
            aspiration: false,
            refinements: false,
            selective: false,
        }
    }
}

/// Flags the UCI thread flips while a search runs.
#[derive(Debug, Default)]
pub struct StopFlags {
    pub stop: AtomicBool,
    /// While set, the clock does not run (`go ponder` before `ponderhit`).
    pub pondering: AtomicBool,
}

/// One finished (or failed-aspiration) iteration, for `info` lines.
#[derive(Clone, Debug)]
pub struct Iteration {
    /// Which PV line this is (1 = best; more with MultiPV).
    pub multipv: usize,
    pub depth: i32,
    pub seldepth: usize,
    pub score: i32,
    pub bound: Bound,
    pub nodes: u64,
    pub elapsed: Duration,
    pub hashfull: usize,
    pub tbhits: u64,
    pub pv: Vec<Move>,
}

/// A root move the main thread starts to search (`info currmove`).
#[derive(Clone, Copy, Debug)]
pub struct CurrentMove {
    /// The iteration's depth.
    pub depth: i32,
    pub mv: Move,
    /// 1 for the first move searched in the iteration's current MultiPV line; line k's
    /// moves count on from k, as in Stockfish.
    pub number: usize,
}

#[derive(Clone, Debug, Default)]
pub struct SearchResult {
    pub best_move: Option<Move>,
    pub ponder_move: Option<Move>,
    pub score: i32,
    pub depth: i32,
    pub nodes: u64,
    pub pv: Vec<Move>,
    /// The lines of the move played, one per MultiPV line (the last finished iteration's),
    /// with the nodes, time, hashfull and tablebase hits at the end of the search: the last
    /// `info` lines before the move.
    pub final_lines: Vec<Iteration>,
    /// Whether `final_lines` were the last lines reported, as they are: the search ended
    /// with an iteration, not inside one.
    pub final_lines_shown: bool,
}

/// Converts a score to the UCI form: `Ok(cp)` or `Err(mate in moves)`, negative when mated.
pub fn uci_score(score: i32) -> Result<i32, i32> {
    if score > MATE_BOUND {
        Err((MATE - score + 1) / 2)
    } else if score < -MATE_BOUND {
        Err(-(MATE + score + 1) / 2)
    } else {
        Ok(score)
    }
}

/// A search thread's state: what lives across searches (histories, correction, the
/// network's accumulators, the random picks), the search it is given and what that search
/// computes as it runs.
pub struct Searcher {
    /// Lazy SMP: helper threads with an odd id start one iteration deeper, so the threads
    /// do not all search the same depth at the same time.
    helper_id: usize,
    /// What the current (or no) search is given.
    job: SearchJob,
    /// What the current (or last) search has found so far.
    state: SearchState,
    /// First-layer sums along the current line, for the job's network.
    accumulators: AccumulatorStack,
    rng: StdRng,
    history: History,
    correction: CorrectionHistory,
}

/// The seed of the `UCI_LimitStrength` pick: the clock, so that a weakened engine's games
/// differ from run to run (and it cannot fail, unlike asking the OS for entropy), unless
/// the environment variable `BASALT_SEED` gives one. The tests set it: with it the picks
/// are the same on every run, so a check on them cannot fail by chance.
fn strength_seed() -> u64 {
    std::env::var("BASALT_SEED")
        .ok()
        .and_then(|seed| seed.trim().parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos() as u64)
        })
}

impl Default for Searcher {
    fn default() -> Self {
        Searcher::new()
    }
}

impl Searcher {
    pub fn new() -> Searcher {
        Searcher::helper(0)
    }

    /// Lazy SMP helper number `id` (the main thread is 0).
    pub fn helper(id: usize) -> Searcher {
        Searcher {
            helper_id: id,
            job: SearchJob::none(),
            state: SearchState::new(),
            accumulators: AccumulatorStack::new(),
            rng: StdRng::seed_from_u64(strength_seed()),
            history: History::default(),
            correction: CorrectionHistory::default(),
        }
    }

    /// Forget everything learnt about earlier games (`ucinewgame`).
    pub fn clear(&mut self) {
        self.history.clear();
        self.correction.clear();
    }

    /// The last search's statistics.
    pub fn stats(&self) -> &Stats {
        &self.state.stats
    }

    pub fn nodes(&self) -> u64 {
        self.state.nodes
    }

    /// Searches `pos` as `job` says, calling `report` after every iteration. The result is
    /// the last completed iteration's; an iteration cut off by time or `stop` is discarded.
    /// The result's `final_lines` are the lines played with the search's totals.
    pub fn iterative_deepening(
        &mut self,
        pos: &mut Position,
        job: SearchJob,
        report: &mut dyn FnMut(&Iteration),
    ) -> SearchResult {
        self.start_search(pos, job);
        let mut result = SearchResult {
            best_move: self.state.root_moves.first().map(|r| r.mv),
            ..SearchResult::default()
        };
        if self.state.root_moves.is_empty() {
            // Mate or stalemate: one info line with the score, so a GUI can show it.
            result.score = if pos.in_check() { -MATE } else { DRAW };
            let line = self.iteration(0, result.score, Bound::Exact, Vec::new());
            report(&line);
            result.final_lines = vec![line];
            result.final_lines_shown = true;
            self.job = SearchJob::none();
            return result;
        }
        let (first_depth, max_depth) = self.depths();
        let lines = self.lines_to_search();
        // Each line's score in the last iteration: the center of its aspiration window.
        let mut line_scores = vec![0; lines];
        // A limited strength picks among the lines of the last iteration that found them
        // all, with that iteration's depth.
        let mut finished: Option<(i32, Vec<RootMove>)> = None;
        for depth in first_depth..=max_depth {
            let (iteration_start, nodes_before) = (Instant::now(), self.state.nodes);
            self.start_iteration(depth, first_depth);
            let mut facts = None;
            let mut found = 0;
            while found < lines {
                self.state.pv_index = found;
                self.state.stack[0].pv_len = 0;
                line_scores[found] = self.aspiration(pos, depth, line_scores[found], report);
                if self.state.stopped || self.state.stack[0].pv_len == 0 {
                    // Cut off, or every root move was (cannot happen with a full window,
                    // but a move must always be returned).
                    break;
                }
                let (score, pv) = (line_scores[found], self.root_pv());
                if found == 0 {
                    facts = Some(IterationFacts {
                        depth,
                        new_best_move: pv.first() != result.best_move.as_ref(),
                        score,
                        best_move_node_share: self.state.root_moves.node_share(pv[0]),
                        duration: Duration::ZERO,
                        single_root_move: self.state.root_moves.searched_by(0).count() == 1,
                    });
                    result = SearchResult {
                        best_move: pv.first().copied(),
                        ponder_move: pv.get(1).copied(),
                        score,
                        depth,
                        nodes: self.state.nodes,
                        pv: pv.clone(),
                        ..SearchResult::default()
                    };
                }
                let line = self.iteration(depth, score, Bound::Exact, pv);
                self.state.root_moves.found_line(found, score, line);
                found += 1;
            }
            let Some(mut facts) = facts else {
                break;
            };
            self.show_lines(found, lines, &mut result, report);
            if self.job.strength.is_some() && found == lines {
                finished = Some((depth, self.state.root_moves[..lines].to_vec()));
            }
            self.state.pv_index = 0;
            self.state
                .stats
                .iteration_nodes
                .push((depth, self.state.nodes - nodes_before));
            facts.duration = iteration_start.elapsed();
            if self.state.stopped || self.should_stop_deepening(&facts) {
                break;
            }
        }
        if let Some((depth, lines)) = finished {
            if self.weaken(&mut result, &lines) {
                result.depth = depth;
                // The line actually played goes out last, so the GUI's PV matches `bestmove`.
                let pv = result.pv.clone();
                let line = self.iteration(depth, result.score, Bound::Exact, pv);
                self.state
                    .played
                    .not_shown(line, self.job.multipv.min(lines.len()));
            }
        }
        self.finish_search(pos, &mut result);
        self.job = SearchJob::none();
        result
    }

    /// The first and the last iteration's depth. Lazy SMP: helper threads with an odd id
    /// start one iteration deeper.
    fn depths(&self) -> (i32, i32) {
        let max_depth = self.state.limits.max_depth(MAX_DEPTH);
        if self.job.config.iterative_deepening {
            ((1 + (self.helper_id % 2) as i32).min(max_depth), max_depth)
        } else {
            (max_depth, max_depth)
        }
    }

    /// How many lines each iteration searches. MultiPV: line k searches the root without
    /// the first moves of lines 1..k-1. A limited strength picks among the best few moves,
    /// so it searches them all (at a tablebase root, those that keep its outcome).
    fn lines_to_search(&self) -> usize {
        let lines = match self.job.strength {
            Some(strength) => {
                let keeping = self.state.root_moves.searched_by(0).count();
                self.job
                    .multipv
                    .max(strength.candidate_lines().min(keeping))
            }
            None => self.job.multipv,
        };
        lines.clamp(1, self.state.root_moves.len())
    }

    /// Resets the counters, the clock and the killers, starts a table generation and finds
    /// the root moves: all legal ones, or those of `searchmoves`, or those the tablebases
    /// keep.
    fn start_search(&mut self, pos: &mut Position, job: SearchJob) {
        self.state.start = Instant::now();
        self.job = job;
        let limits = &self.job.limits;
        self.state.limits = limits.start(self.job.strength.map(|s| s.node_budget()));
        self.job.counters.publish(0, 0);
        self.state.nodes = 0;
        self.state.others_nodes = 0;
        self.state.tb_hits = 0;
        self.state.pv_index = 0;
        self.state.stats = Stats::default();
        self.state.stopped = false;
        self.state.announcing = false;
        self.state.current_root_move = None;
        self.state.null_move_min_ply = 0;
        self.state.played = PlayedLines::default();
        self.state.stack.forget_killers();
        if self.job.ages_table {
            self.job.tt.new_search();
        }
        if let Some(network) = &self.job.network {
            self.accumulators
                .reset(network, pos.board().board(), pos.key());
        }

        let legal = pos.legal_moves();
        let mut moves: Vec<Move> = legal
            .iter()
            .copied()
            .filter(|m| {
                self.job.limits.search_moves.is_empty() || self.job.limits.search_moves.contains(m)
            })
            .collect();
        if moves.is_empty() {
            moves = legal.to_vec();
        }
        // In the tablebases, line 1 searches only the moves that keep the root's outcome
        // (winning ones by distance to zeroing, shortest first), so a won ending is never
        // drawn by the fifty-move rule and a drawn one never lost; further MultiPV lines
        // take the other moves by their value, each the value it leads to, one ply from
        // the root.
        self.state.root_moves = match self.job.tablebases.rank_root_moves(pos.board(), &moves) {
            Some(ranking) => {
                self.state.tb_hits += moves.len() as u64;
                RootMoves::ranked(
                    (ranking.moves.into_iter()).map(|(m, o)| (m, tablebase_score(o, 1).0)),
                )
            }
            None => RootMoves::new(&moves),
        };
    }

    /// The move to ponder on, a tablebase root's value, the lines played with the search's
    /// totals; the counters published.
    fn finish_search(&mut self, pos: &mut Position, result: &mut SearchResult) {
        result.ponder_move = self.ponder_move(pos, result);
        let tb_score = result
            .best_move
            .and_then(|m| self.state.root_moves.tb_score(m));
        if let Some(tb_score) = tb_score {
            if result.score.abs() < MATE_BOUND {
                result.score = tb_score;
            }
        }
        let (nodes, elapsed, hashfull) = (self.state.nodes, self.elapsed(), self.job.tt.hashfull());
        result.final_lines =
            self.state
                .played
                .with_totals(nodes, elapsed, self.state.tb_hits, hashfull);
        result.final_lines_shown = self.state.played.shown_last(nodes);
        self.state.stats.nodes = self.state.nodes;
        self.job
            .counters
            .publish(self.state.nodes, self.state.tb_hits);
    }

    /// After an iteration that found `found` of its `lines` lines: shows them. At full
    /// strength they are shown at once, best first, and the best is played (a line searched
    /// without line 1's move can score above it). A weakened search shows an iteration only
    /// once it has all its lines, in the order found and only the user's `MultiPV`, so the
    /// line finally played is never shallower than one shown.
    fn show_lines(
        &mut self,
        found: usize,
        lines: usize,
        result: &mut SearchResult,
        report: &mut dyn FnMut(&Iteration),
    ) {
        let shown = if self.job.strength.is_none() {
            self.state.root_moves.sort_lines(found);
            let best = &self.state.root_moves[0];
            if let Some(line) = best
                .line
                .as_ref()
                .filter(|l| l.pv.first() != result.pv.first())
            {
                result.best_move = line.pv.first().copied();
                result.ponder_move = line.pv.get(1).copied();
                result.score = best.score;
                result.pv = line.pv.clone();
            }
            found
        } else if found == lines {
            lines.min(self.job.multipv)
        } else {
            0
        };
        let shown: Vec<Iteration> = self.state.root_moves[..shown]
            .iter()
            .filter_map(|r| r.line.clone())
            .collect();
        for line in &shown {
            report(line);
        }
        if !shown.is_empty() {
            self.state
                .played
                .shown(shown, self.state.nodes, self.job.multipv.min(lines));
        }
    }

    /// Before an iteration: the root moves back in their order, the iteration's counters
    /// reset.
    fn start_iteration(&mut self, depth: i32, first_depth: i32) {
        self.state.seldepth = 0;
        self.state.in_first_iteration = depth == first_depth;
        self.state.root_moves.start_iteration();
        self.state.root_depth = depth;
        self.state.current_root_move = None;
    }

    /// `UCI_LimitStrength`: replaces the best move by a near-best one chosen at random.
    /// `lines` are those of the last iteration that found them all, the last shown; a
    /// deeper, unfinished iteration's best line is dropped. True when the move played is
    /// not the first line shown, so it needs a line of its own.
    fn weaken(&mut self, result: &mut SearchResult, lines: &[RootMove]) -> bool {
        let Some(strength) = self.job.strength else {
            return false;
        };
        // At a tablebase root, only among the moves that keep its outcome.
        let keeping = lines.first().and_then(|r| r.tb_score);
        let candidates: Vec<(Move, i32)> = (lines.iter())
            .filter(|r| r.tb_score == keeping)
            .map(|r| (r.mv, r.score))
            .collect();
        let chosen = strength.choose(&candidates, &mut self.rng);
        let Some(r) = lines.iter().find(|r| Some(r.mv) == chosen) else {
            return false;
        };
        result.best_move = Some(r.mv);
        result.score = r.score;
        result.pv = r.line.as_ref().map_or_else(Vec::new, |l| l.pv.clone());
        Some(r.mv) != lines.first().map(|l| l.mv)
    }

    /// MultiPV lines past the user's `MultiPV` are searched only for `UCI_LimitStrength`
    /// and not shown.
    fn shows_line(&self) -> bool {
        self.state.pv_index < self.job.multipv
    }

    /// Fail-high/low lines: not for a weakened search, which shows only finished iterations,
    /// nor at a tablebase root, whose lines show their tablebase values as exact (a bound
    /// line would show as an exact line without its PV).
    fn shows_bound_line(&self) -> bool {
        let tablebase_root = self.state.root_moves.in_tablebases();
        self.shows_line() && self.job.strength.is_none() && !tablebase_root
    }

    /// Runs one iteration with a window around the previous score, widening on failure.
    fn aspiration(
        &mut self,
        pos: &mut Position,
        depth: i32,
        previous: i32,
        report: &mut dyn FnMut(&Iteration),
    ) -> i32 {
        let mut window = ASPIRATION_INITIAL_WINDOW.get();
        let use_window = self.job.config.aspiration
            && depth >= ASPIRATION_MIN_DEPTH
            && previous.abs() < MATE_BOUND;
        let (mut alpha, mut beta) = if use_window {
            (previous - window, previous + window)
        } else {
            (-INFINITY, INFINITY)
        };
        loop {
            let score = node::negamax(self, pos, depth, 0, alpha, beta, false);
            if self.state.stopped {
                return score;
            }
            if score <= alpha && alpha > -INFINITY {
                beta = (alpha + beta) / 2;
                alpha = (score - window).max(-INFINITY);
                if self.shows_bound_line() {
                    report(&self.iteration(depth, alpha.max(score), Bound::Upper, self.root_pv()));
                }
            } else if score >= beta && beta < INFINITY {
                beta = (score + window).min(INFINITY);
                if self.shows_bound_line() {
                    report(&self.iteration(depth, score, Bound::Lower, self.root_pv()));
                }
            } else {
                return score;
            }
            window *= ASPIRATION_GROWTH;
            if window > ASPIRATION_MAX_WINDOW {
                alpha = -INFINITY;
                beta = INFINITY;
            }
        }
    }

    /// After an iteration: whether the search ends, as its limits say.
    fn should_stop_deepening(&mut self, it: &IterationFacts) -> bool {
        let pondering = self.job.flags.pondering.load(Ordering::Relaxed);
        let nodes = self.state.nodes + self.state.others_nodes;
        self.state.limits.stop_after(it, nodes, pondering)
    }

    /// The search starts on root move `m`, the `move_count`th of this MultiPV line.
    #[inline]
    fn start_root_move(&mut self, m: Move, move_count: usize) {
        let current = CurrentMove {
            depth: self.state.root_depth,
            mv: m,
            number: move_count + self.state.pv_index,
        };
        self.state.current_root_move = Some(current);
        if self.state.announcing {
            if let Some(tell) = self.job.on_root_move.as_mut() {
                tell(current);
            }
        }
    }

    /// From `CURRMOVE_AFTER` on, root moves are announced, starting with the one searched.
    fn start_announcing_in_time(&mut self) {
        if self.state.start.elapsed() < CURRMOVE_AFTER {
            return;
        }
        self.state.announcing = true;
        if let (Some(tell), Some(current)) =
            (self.job.on_root_move.as_mut(), self.state.current_root_move)
        {
            tell(current);
        }
    }

    fn iteration(&self, depth: i32, score: i32, bound: Bound, pv: Vec<Move>) -> Iteration {
        // At a tablebase root a line shows the value of its first move, unless the search
        // has found a mate.
        let tb_score = pv.first().and_then(|&m| self.state.root_moves.tb_score(m));
        let (score, bound) = match tb_score {
            Some(tb) if score.abs() < MATE_BOUND => (tb, Bound::Exact),
            _ => (score, bound),
        };
        Iteration {
            multipv: self.state.pv_index + 1,
            depth,
            seldepth: self.state.seldepth.max(depth as usize),
            score,
            bound,
            nodes: self.state.nodes,
            elapsed: self.elapsed(),
            hashfull: self.job.tt.hashfull(),
            tbhits: self.state.tb_hits,
            pv,
        }
    }

    fn root_pv(&self) -> Vec<Move> {
        let root = &self.state.stack[0];
        root.pv[..root.pv_len].iter().flatten().copied().collect()
    }

    /// The move to ponder on after `result.best_move`: the PV's second move, or the TT move
    /// of the position after it when the PV was cut short; always legal there, and none when
    /// the best move ends the game (mate, stalemate, a draw by rule or a repetition).
    fn ponder_move(&self, pos: &mut Position, result: &SearchResult) -> Option<Move> {
        let best = result.best_move?;
        pos.make_move(best);
        let legal = pos.legal_moves();
        let game_over = legal.is_empty()
            || pos.is_insufficient_material()
            || pos.is_fifty_move_draw()
            || pos.is_repetition();
        let reply = if game_over {
            None
        } else {
            result
                .pv
                .get(1)
                .copied()
                .filter(|m| legal.contains(m))
                .or_else(|| {
                    self.job
                        .tt
                        .probe(pos.key())
                        .and_then(|e| movepick::tt_move(pos.board(), e.mv))
                })
        };
        pos.unmake_move();
        reply
    }

    pub fn elapsed(&self) -> Duration {
        self.state.start.elapsed()
    }

    /// Called at every node: true once the search must unwind.
    #[inline]
    fn should_abort(&mut self) -> bool {
        if self.state.stopped {
            return true;
        }
        #[cfg(feature = "fault-injection")]
        fault::strike(self.helper_id, self.state.nodes);
        if self.state.in_first_iteration {
            return false;
        }
        if self.job.flags.stop.load(Ordering::Relaxed)
            || self
                .job
                .job_flags
                .as_ref()
                .is_some_and(|c| c.stop.load(Ordering::Relaxed))
        {
            self.state.stopped = true;
            return true;
        }
        if self.helper_id != 0 && self.state.nodes.is_multiple_of(HELPER_YIELD_INTERVAL) {
            std::thread::yield_now();
        }
        // The search's nodes over all its threads: this thread's own, counted exactly, and
        // the others' as last published.
        if self
            .state
            .limits
            .past_node_limit(self.state.nodes + self.state.others_nodes)
        {
            self.state.stopped = true;
            return true;
        }
        if self.state.nodes.is_multiple_of(CLOCK_CHECK_INTERVAL) {
            self.job
                .counters
                .publish(self.state.nodes, self.state.tb_hits);
            self.state.others_nodes = self.job.counters.others_nodes();
            if !self.state.announcing && self.job.on_root_move.is_some() {
                self.start_announcing_in_time();
            }
            if self
                .state
                .limits
                .past_time_limit(self.job.flags.pondering.load(Ordering::Relaxed))
            {
                self.state.stopped = true;
                return true;
            }
        }
        false
    }
}

/// Whether a stored result with this bound settles a node searched with (alpha, beta).
#[inline]
pub fn tt_bound_cuts(bound: Bound, score: i32, alpha: i32, beta: i32) -> bool {
    match bound {
        Bound::Exact => true,
        Bound::Lower => score >= beta,
        Bound::Upper => score <= alpha,
    }
}

impl Searcher {
    /// The static evaluation of `pos`, reached at `ply` from the root, for the side to
    /// move: the network's when there is one, else the hand-crafted one.
    #[inline]
    fn evaluate(&mut self, pos: &Position, ply: usize) -> i32 {
        match &self.job.network {
            Some(network) => self.accumulators.evaluate(network, pos, ply),
            None => crate::eval::evaluate(pos.board()),
        }
    }

    /// A node's entries in the correction tables and what they say about its static eval
    /// (cp); `None` when the search does without them. Read before the node's evaluation,
    /// so any load the parent's prefetch has not finished overlaps it.
    #[inline]
    fn read_correction(&self, pos: &Position) -> Option<(CorrectionKeys, i32)> {
        if !self.job.config.selective {
            return None;
        }
        let keys = CorrectionKeys::of(pos, CorrectionTables::ALL);
        Some((keys, self.correction.correction(pos.turn(), &keys)))
    }

    /// Right after a move (or a null move): starts loading the table bucket and the
    /// correction entries the child will read, so the loads overlap its evaluation.
    #[inline]
    fn prefetch_entries(&self, pos: &Position) {
        self.job.tt.prefetch(pos.key());
        if self.job.config.selective {
            let keys = CorrectionKeys::of(pos, CorrectionTables::ALL);
            self.correction.prefetch(pos.turn(), &keys);
        }
    }

    /// Stores a node's fail-soft result, with the bound kind its window implies.
    #[inline]
    fn store_result(
        &self,
        key: u64,
        ply: usize,
        depth: i32,
        (best_score, original_alpha, beta): (i32, i32, i32),
        best_move: Option<Move>,
    ) {
        let bound = if best_score >= beta {
            Bound::Lower
        } else if best_score > original_alpha {
            Bound::Exact
        } else {
            Bound::Upper
        };
        self.store(key, ply, depth, (best_score, bound), best_move);
    }

    /// The one place an entry is built: the score relative to the node and the depth in
    /// the ranges the entry's fields hold, and the node's TT-PV flag.
    #[inline]
    fn store(
        &self,
        key: u64,
        ply: usize,
        depth: i32,
        (score, bound): (i32, Bound),
        mv: Option<Move>,
    ) {
        self.job.tt.store(
            key,
            TtEntry {
                mv: mv.map_or(PackedMove::NONE, PackedMove::from_move),
                score: score_to_tt(score, ply),
                depth: depth.clamp(0, i32::from(u8::MAX)) as u8,
                bound,
                is_pv: self.state.stack[ply].tt_pv,
            },
        );
    }
}

/// A tablebase outcome as a score for the side to move `ply` plies from the root, and the
/// bound it is: a win or a loss is a bound (the distance to mate is not known, only that
/// it comes), a draw is exact. A win found nearer the root scores higher, as mates do.
pub(crate) fn tablebase_score(outcome: Outcome, ply: usize) -> (i32, Bound) {
    match outcome {
        Outcome::Win => (TB_WIN - ply as i32, Bound::Lower),
        Outcome::Draw => (DRAW, Bound::Exact),
        Outcome::Loss => (-TB_WIN + ply as i32, Bound::Upper),
    }
}

/// Mate and tablebase scores are stored relative to the node (distance from it), not the
/// root.
#[inline]
pub fn score_to_tt(score: i32, ply: usize) -> i16 {
    let s = if score > TB_WIN_BOUND {
        score + ply as i32
    } else if score < -TB_WIN_BOUND {
        score - ply as i32
    } else {
        score
    };
    s as i16
}

#[inline]
pub fn score_from_tt(score: i16, ply: usize) -> i32 {
    let s = i32::from(score);
    if s > TB_WIN_BOUND {
        s - ply as i32
    } else if s < -TB_WIN_BOUND {
        s + ply as i32
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::tt::TranspositionTable;

    #[test]
    fn mate_scores_convert_to_moves() {
        assert_eq!(uci_score(MATE - 1), Err(1));
        assert_eq!(uci_score(MATE - 3), Err(2));
        assert_eq!(uci_score(-MATE + 2), Err(-1));
        assert_eq!(uci_score(-MATE + 4), Err(-2));
        assert_eq!(uci_score(35), Ok(35));
    }

    /// A middlegame with enough going on that the iterations differ in best move and score.
    const NODE_LIMIT_FEN: &str =
        "r1bq1rk1/pp2bppp/2n1pn2/3p4/2PP4/2N1PN2/PP1B1PPP/R2QKB1R w KQ - 0 8";

    /// A finished iteration: depth, nodes when it finished, best move, score.
    type Finished = (i32, u64, Option<Move>, i32);

    /// Searches `NODE_LIMIT_FEN` from a fresh table and fresh histories, so that every run
    /// searches the same tree; returns the result, the nodes spent and the iterations
    /// finished.
    fn fresh_search(limits: Limits) -> (SearchResult, u64, Vec<Finished>) {
        let mut pos = Position::from_fen(NODE_LIMIT_FEN, false).unwrap();
        let tt = Arc::new(TranspositionTable::new(1));
        let mut searcher = Searcher::new();
        let mut finished = Vec::new();
        let result =
            searcher.iterative_deepening(&mut pos, SearchJob::new(tt, limits), &mut |it| {
                if it.bound == Bound::Exact && it.multipv == 1 {
                    finished.push((it.depth, it.nodes, it.pv.first().copied(), it.score));
                }
            });
        (result, searcher.nodes(), finished)
    }

    #[test]
    fn soft_node_limit_finishes_its_iteration_and_the_hard_limit_cuts_it() {
        let (_, _, iterations) = fresh_search(Limits {
            depth: Some(8),
            ..Limits::default()
        });
        assert_eq!(iterations.len(), 8);
        let limited = |soft_nodes, hard_nodes| {
            let (result, nodes, _) = fresh_search(Limits {
                soft_nodes,
                hard_nodes,
                ..Limits::default()
            });
            ((result.depth, result.best_move, result.score), nodes)
        };
        for pair in iterations.windows(2).skip(3) {
            let (previous, this) = (pair[0], pair[1]);
            let (depth, end) = (this.0, this.1);
            let soft = (previous.1 + end) / 2;

            // The budget runs out inside iteration `depth`, which is finished and played.
            let (played, nodes) = limited(Some(soft), Some(8 * soft));
            assert_eq!(played, (depth, this.2, this.3), "soft {soft}");
            assert_eq!(nodes, end, "the iteration finished, no further one started");

            // A hard cap inside that iteration cuts it: the one before is played. The
            // limit is read at the next node searched, a node or two past it.
            let hard = (soft + end) / 2;
            let (played, nodes) = limited(Some(soft), Some(hard));
            assert_eq!(played, (depth - 1, previous.2, previous.3));
            assert!(
                (hard..hard + 8).contains(&nodes),
                "{nodes} nodes, cap {hard}"
            );

            // `go nodes` alone is the hard limit, as before: cut at the budget.
            let (played, nodes) = limited(None, Some(soft));
            assert_eq!(played, (depth - 1, previous.2, previous.3));
            assert!(
                (soft..soft + 8).contains(&nodes),
                "{nodes} nodes, limit {soft}"
            );
        }
    }

    #[test]
    fn a_node_limit_counts_the_nodes_of_every_thread() {
        // Two threads of normal priority, so both search even on one core, where the
        // scheduler gives each a few milliseconds in turn.
        let limit = 60_000;
        let counters = Counters::new(2);
        let tt = Arc::new(TranspositionTable::new(4));
        let threads: Vec<_> = (0..2)
            .map(|index| {
                let (counters, tt) = (counters.for_thread(index), tt.clone());
                std::thread::spawn(move || {
                    let mut pos = Position::from_fen(NODE_LIMIT_FEN, false).unwrap();
                    let limits = Limits {
                        hard_nodes: Some(limit),
                        ..Limits::default()
                    };
                    let job = SearchJob {
                        counters,
                        ages_table: index == 0,
                        ..SearchJob::new(tt, limits)
                    };
                    let mut searcher = Searcher::helper(index);
                    searcher.iterative_deepening(&mut pos, job, &mut |_| {});
                    searcher.nodes()
                })
            })
            .collect();
        let nodes: Vec<u64> = threads.into_iter().map(|t| t.join().unwrap()).collect();
        let total: u64 = nodes.iter().sum();
        // As in tests/uci.rs, `a_node_limit_counts_every_thread`: within four publishing
        // intervals of the limit, where each thread alone would search up to it.
        assert!(
            (limit..limit + 4 * CLOCK_CHECK_INTERVAL).contains(&total),
            "{nodes:?} nodes for a limit of {limit}"
        );
    }

    #[test]
    fn tt_mate_scores_round_trip() {
        for ply in [0, 3, 17] {
            for s in [
                MATE - 5 - ply as i32,
                -MATE + 9 + ply as i32,
                TB_WIN - 7 - ply as i32,
                -TB_WIN + 2 + ply as i32,
                120,
                -3,
            ] {
                assert_eq!(score_from_tt(score_to_tt(s, ply), ply), s);
            }
        }
    }
}
