//! Time manager: turns the clock into a soft limit (do not start another iteration past
//! a share of it) and a hard limit (abort the iteration in progress), both kept inside the
//! remaining time minus the move overhead the GUI asked for. During the search the
//! [`TimeManager`] makes every decision the clock drives: it hears what each iteration
//! found and answers whether to start another, and it says when the hard limit is passed.
//!
//! The plan, with `usable` = clock - `Move Overhead` and `moves` = `movestogo`, at most
//! SUDDEN_DEATH_MOVES (also the horizon in sudden death):
//!
//! ```text
//! soft = (usable - STALL_RESERVE_MS) / moves
//!        + INCREMENT_PERCENT x (increment - Move Overhead)   at most MAX_SOFT_SHARE x usable
//! hard = HARD_LIMIT_PERCENT x soft                           at most MAX_HARD_SHARE x usable
//! ```
//!
//! (both caps LAST_MOVE_SHARE on the last move before a time control). The caps are plain
//! constants that no tuning moves, so one move never takes more than a quarter of the
//! clock, three quarters before a control. The search starts no iteration past
//! NEXT_ITERATION_PERCENT of the soft limit as [`soft_scale`] stretches it, nor one that
//! would likely run into the hard limit.
//!
//! For comparison: Ethereal plans (clock + 25 increments) / 20 and stops after the
//! iteration that passes it; Stockfish's optimum at 10+0.1 is about 1/60 of the clock plus
//! its future increments less their overheads at move 1 and 1/30 by move 30, which its
//! search then stretches.

use std::time::{Duration, Instant};

use shakmaty::Move;

use crate::score::{MATE, MATE_BOUND};
use crate::tunable::tunable;

/// What `go` said about the clock, in milliseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Clock {
    pub time_left: Option<u64>,
    pub increment: u64,
    pub moves_to_go: Option<u64>,
    pub move_time: Option<u64>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimeLimits {
    pub soft: Duration,
    pub hard: Duration,
    /// `go movetime`: the user asked for this time to be spent, so the search runs until
    /// the hard limit unless the position is decided.
    pub spend_all: bool,
}

/// Clock values are capped here (about 35 years in ms) so the arithmetic below cannot
/// overflow whatever a GUI sends; nobody's clock is longer.
const MAX_CLOCK_MS: u64 = 1 << 40;

// The plan a tuner may move (`spsa` builds: UCI options of these names). The safety caps
// below are plain constants: no tuned value can push a move past them.
tunable! {
    /// Moves the usable clock is spread over in sudden death, and the most it is spread
    /// over with `movestogo` (a long cyclic control is no reason to spend less than sudden
    /// death would).
    SUDDEN_DEATH_MOVES = 25, 10, 60;
    /// Share of the increment beyond the move overhead added to the soft limit (%).
    INCREMENT_PERCENT = 80, 25, 120;
    /// Hard limit as a share of the soft limit (%).
    HARD_LIMIT_PERCENT = 300, 150, 600;
    /// No new iteration starts past this share of the (scaled) soft limit (%): an iteration
    /// costs a few times the one before, more than everything before it, so one started
    /// later would most likely end well past the soft limit.
    NEXT_ITERATION_PERCENT = 80, 40, 100;
}

/// Clock (ms) the plan leaves alone. On a loaded machine a reply can stall for a tenth of a
/// second whatever the limits say (seen twice in 40 games at 1+0.01 with both cores busy,
/// each time with about 50 ms on the clock and a hard limit of 10 ms), so a plan that lets
/// the clock sink that low loses games on time. The caps below count the whole clock, so
/// with less than this left the engine still searches, briefly.
const STALL_RESERVE_MS: u64 = 100;
/// Never plan on more than this share of the usable time for one move.
const MAX_SOFT_SHARE: (u64, u64) = (1, 5);
/// Never search one move longer than this share of the usable time, even when the search
/// is in trouble: while the transit takes less than the increment, a game in which every
/// move ran to its hard limit would still never lose on time (see the tests).
const MAX_HARD_SHARE: (u64, u64) = (1, 4);
/// On the last move before a time control the clock is refilled after it, so soft and
/// hard limits may take this share of the usable time.
const LAST_MOVE_SHARE: (u64, u64) = (3, 4);

impl Clock {
    /// Limits for this move, or `None` when the search is not clock-bound.
    pub fn limits(&self, move_overhead: u64) -> Option<TimeLimits> {
        if let Some(move_time) = self.move_time {
            let t = move_time
                .min(MAX_CLOCK_MS)
                .saturating_sub(move_overhead)
                .max(1);
            return Some(TimeLimits {
                soft: Duration::from_millis(t),
                hard: Duration::from_millis(t),
                spend_all: true,
            });
        }
        let time_left = self.time_left?.min(MAX_CLOCK_MS);
        let increment = self.increment.min(MAX_CLOCK_MS);
        // What we may spend at most: the clock minus the overhead for the move's transit.
        let usable = time_left.saturating_sub(move_overhead).max(1);
        let horizon = SUDDEN_DEATH_MOVES.get().max(1) as u64;
        let moves = self.moves_to_go.unwrap_or(horizon).clamp(1, horizon);
        // Every move loses its transit time, so only the increment beyond the overhead is
        // there to spend (Stockfish likewise counts each future move's increment less its
        // overhead), and the plan leaves STALL_RESERVE_MS of the clock alone. Once the clock
        // is low a move then costs less than the increment, and the clock settles well
        // above the reserve instead of sinking to where the caps below bind (about 50 ms at
        // 1+0.01). The increment only arrives after the move: the caps, which count the
        // clock alone, keep an increment larger than the clock from being spent ahead.
        let spare_increment = increment.saturating_sub(move_overhead);
        let planned = usable.saturating_sub(STALL_RESERVE_MS) / moves
            + spare_increment * INCREMENT_PERCENT.get().max(0) as u64 / 100;
        let (soft_cap, hard_cap) = if moves == 1 {
            (
                share(usable, LAST_MOVE_SHARE),
                share(usable, LAST_MOVE_SHARE),
            )
        } else {
            (share(usable, MAX_SOFT_SHARE), share(usable, MAX_HARD_SHARE))
        };
        let soft = planned.min(soft_cap).max(1);
        let hard = (soft * HARD_LIMIT_PERCENT.get().max(100) as u64 / 100)
            .min(hard_cap)
            .max(soft);
        Some(TimeLimits {
            soft: Duration::from_millis(soft),
            hard: Duration::from_millis(hard),
            spend_all: false,
        })
    }
}

/// `value` x numerator / denominator (`value` is at most MAX_CLOCK_MS: no overflow).
fn share(value: u64, (numerator, denominator): (u64, u64)) -> u64 {
    value * numerator / denominator
}

/// Whether an iteration may no longer start `elapsed` into the search, given the soft
/// limit in force (scaled or not).
fn too_late_for_next_iteration(elapsed: Duration, soft: Duration) -> bool {
    elapsed.as_secs_f64() * 100.0 >= soft.as_secs_f64() * f64::from(NEXT_ITERATION_PERCENT.get())
}

/// How the soft limit adapts to the search so far (the adaptive soft limit).
#[derive(Clone, Copy, Debug, PartialEq)]
struct SearchTrend {
    /// Consecutive completed iterations that kept the same best move.
    pub stable_iterations: u32,
    /// Share of the last iteration's root nodes spent below the best move (0..=1).
    pub best_move_node_share: f64,
    /// How far (cp) the score fell since the previous iteration (negative: it rose).
    pub score_drop: i32,
}

/// The adaptive soft limit (`soft_scale`) applies only from this depth: earlier iterations
/// are too cheap and too noisy to say anything.
const DYNAMIC_TIME_MIN_DEPTH: i32 = 6;
/// With a single move to play the search stops after this depth: enough for a PV and a move
/// to ponder on, and nothing the search finds would change the move.
const SINGLE_MOVE_DEPTH: i32 = 4;

/// Soft-limit multipliers by best-move stability: a move that keeps winning iteration after
/// iteration is unlikely to change, a new one deserves a second look.
const STABILITY_SCALE: [f64; 7] = [1.5, 1.25, 1.1, 1.0, 1.0, 0.95, 0.9];
/// Node-share factor: (pivot - share) x slope, clamped; a typical share (~0.85) gives ~1.
const NODE_SHARE_PIVOT: f64 = 1.5;
const NODE_SHARE_SLOPE: f64 = 1.6;
const NODE_SHARE_RANGE: (f64, f64) = (0.6, 2.0);
/// Score drops (cp) that extend the soft limit, and by how much.
const SCORE_DROP_SMALL: (i32, f64) = (20, 1.25);
const SCORE_DROP_LARGE: (i32, f64) = (50, 1.6);

/// The factor to apply to the soft limit. Never pushes past the hard limit: callers clamp.
fn soft_scale(trend: &SearchTrend) -> f64 {
    let stability =
        STABILITY_SCALE[(trend.stable_iterations as usize).min(STABILITY_SCALE.len() - 1)];
    // When nearly all nodes went to the best move, the alternatives were refuted quickly.
    let node_share = ((NODE_SHARE_PIVOT - trend.best_move_node_share.clamp(0.0, 1.0))
        * NODE_SHARE_SLOPE)
        .clamp(NODE_SHARE_RANGE.0, NODE_SHARE_RANGE.1);
    let score = if trend.score_drop >= SCORE_DROP_LARGE.0 {
        SCORE_DROP_LARGE.1
    } else if trend.score_drop >= SCORE_DROP_SMALL.0 {
        SCORE_DROP_SMALL.1
    } else {
        1.0
    };
    stability * node_share * score
}

impl TimeLimits {
    /// The soft limit scaled for the search so far, never past the hard limit.
    fn scaled_soft(&self, trend: &SearchTrend) -> Duration {
        self.soft.mul_f64(soft_scale(trend)).min(self.hard)
    }
}

/// What an iteration that has just ended tells the time manager.
#[derive(Clone, Copy, Debug)]
pub struct IterationFacts {
    pub depth: i32,
    /// Whether its first line's best move differs from the move the search was going to
    /// play before it.
    pub new_best_move: bool,
    /// Its first line's score.
    pub score: i32,
    /// Share of its first line's root nodes spent below that line's best move (0..=1).
    pub best_move_node_share: f64,
    /// How long it took.
    pub duration: Duration,
    /// Whether the root has a single move to search (one legal move, or one allowed by
    /// `searchmoves` or the tablebases).
    pub single_root_move: bool,
}

/// The clock's side of one search: when it started, its limits, and the trend of the
/// iterations so far that stretches or shrinks the soft limit.
#[derive(Clone, Debug)]
pub struct TimeManager {
    limits: TimeLimits,
    /// When the clock started for this move: at the start of the search, or at `ponderhit`.
    clock_start: Instant,
    /// Iterations in a row that kept the best move.
    stable_iterations: u32,
    /// The last iteration's score.
    last_score: Option<i32>,
}

impl TimeManager {
    /// The clock starts now.
    pub fn new(limits: TimeLimits) -> TimeManager {
        TimeManager {
            limits,
            clock_start: Instant::now(),
            stable_iterations: 0,
            last_score: None,
        }
    }

    /// Whether the search must stop inside its iteration: the hard limit has passed. While
    /// the engine ponders the clock does not run, so it starts again at every look until
    /// `ponderhit`.
    #[inline]
    pub fn past_hard_limit(&mut self, pondering: bool) -> bool {
        if pondering {
            self.clock_start = Instant::now();
            return false;
        }
        self.clock_start.elapsed() >= self.limits.hard
    }

    /// Whether to start another iteration after `it`.
    pub fn another_iteration(&mut self, it: &IterationFacts, pondering: bool) -> bool {
        self.stable_iterations = if it.new_best_move {
            0
        } else {
            self.stable_iterations + 1
        };
        let trend = SearchTrend {
            stable_iterations: self.stable_iterations,
            best_move_node_share: it.best_move_node_share,
            score_drop: self.last_score.map_or(0, |last| last - it.score),
        };
        self.last_score = Some(it.score);
        if it.single_root_move && it.depth >= SINGLE_MOVE_DEPTH {
            return false;
        }
        if pondering || self.limits.spend_all {
            // `go movetime` asks for that time to be spent, as Stockfish and Ethereal
            // spend it: a proven mate is searched on too (a selective search can still
            // find a shorter one), until the hard limit or the depth limit.
            return true;
        }
        let soft = if it.depth >= DYNAMIC_TIME_MIN_DEPTH {
            self.limits.scaled_soft(&trend)
        } else {
            self.limits.soft
        };
        let elapsed = self.clock_start.elapsed();
        // The next iteration costs a few times this one; if even twice this one would end
        // past the hard limit, it would be cut off there and its time wasted.
        let next_end = elapsed + it.duration * 2;
        !too_late_for_next_iteration(elapsed, soft) && next_end < self.limits.hard
    }
}

/// What one search is asked to obey besides the `stop` flag: what `go` said. Every limit is
/// decided here and in [`Limiter`], which holds the search to them as it runs.
#[derive(Clone, Debug, Default)]
pub struct Limits {
    pub depth: Option<i32>,
    /// Stop within the iteration once the search has visited this many nodes (`go nodes`,
    /// as in Stockfish); the unfinished iteration is discarded.
    pub hard_nodes: Option<u64>,
    /// Start no new iteration once this many nodes are spent: the iteration in which the
    /// budget runs out is finished, so every node of it counts (self-play data at a node
    /// budget; `hard_nodes` caps an iteration that explodes).
    pub soft_nodes: Option<u64>,
    /// Stop once a mate in at most this many moves is found.
    pub mate: Option<i32>,
    pub time: Option<TimeLimits>,
    /// Only these root moves are searched (empty: all).
    pub search_moves: Vec<Move>,
}

impl Limits {
    /// Whether the search has an end of its own: a depth, node, mate or time limit.
    /// Without one it searches until stopped, or to `MAX_DEPTH`, which only the smallest
    /// endings reach.
    pub fn is_bounded(&self) -> bool {
        self.depth.is_some()
            || self.hard_nodes.is_some()
            || self.soft_nodes.is_some()
            || self.mate.is_some()
            || self.time.is_some()
    }

    /// How long the search may wait for its threads and table before it starts: on the
    /// clock, a quarter of its soft limit; without a clock nothing can be late, and waiting
    /// as long as it takes keeps such searches independent of how fast the machine
    /// allocates.
    pub fn setup_wait(&self) -> Option<Duration> {
        self.time.map(|time| time.soft / 4)
    }

    /// The wait before the search counts against its time, unless the clock has not
    /// started (pondering).
    pub fn charge_setup_wait(&mut self, waited: Duration, pondering: bool) {
        if pondering {
            return;
        }
        if let Some(time) = &mut self.time {
            time.soft = time.soft.saturating_sub(waited);
            time.hard = time.hard.saturating_sub(waited);
        }
    }

    /// The limits as the search obeys them from now on, the clock starting now.
    /// `node_budget` (the strength setting's) caps the nodes as `go nodes` does.
    pub fn start(&self, node_budget: Option<u64>) -> Limiter {
        let hard_nodes = match node_budget {
            Some(budget) => Some(self.hard_nodes.map_or(budget, |n| n.min(budget))),
            None => self.hard_nodes,
        };
        Limiter {
            depth: self.depth,
            hard_nodes,
            soft_nodes: self.soft_nodes,
            mate: self.mate,
            clock: self.time.map(TimeManager::new),
        }
    }
}

/// One search's limits as it runs: asked at every node whether to cut the iteration off,
/// and after every iteration whether to start another.
#[derive(Clone, Debug, Default)]
pub struct Limiter {
    depth: Option<i32>,
    hard_nodes: Option<u64>,
    soft_nodes: Option<u64>,
    mate: Option<i32>,
    /// The clock's decisions, in a search with a clock.
    clock: Option<TimeManager>,
}

impl Limiter {
    /// The last iteration's depth, at most `deepest`.
    pub fn max_depth(&self, deepest: i32) -> i32 {
        self.depth.unwrap_or(deepest).clamp(1, deepest)
    }

    /// Whether the search must stop inside its iteration for its node count (`go nodes`,
    /// the strength setting's budget).
    #[inline]
    pub fn past_node_limit(&self, nodes: u64) -> bool {
        self.hard_nodes.is_some_and(|max| nodes >= max)
    }

    /// Whether the search must stop inside its iteration for the clock: the hard limit has
    /// passed. While pondering the clock does not run.
    #[inline]
    pub fn past_time_limit(&mut self, pondering: bool) -> bool {
        self.clock
            .as_mut()
            .is_some_and(|time| time.past_hard_limit(pondering))
    }

    /// After iteration `it`, with `nodes` spent: whether the search ends, by a limit of its
    /// own (a mate found within `go mate`, the soft node budget spent) or on the time
    /// manager's word.
    pub fn stop_after(&mut self, it: &IterationFacts, nodes: u64, pondering: bool) -> bool {
        if self.mate.is_some_and(|mate| mates_within(it.score, mate)) {
            return true;
        }
        if self.soft_nodes.is_some_and(|soft| nodes >= soft) {
            return true;
        }
        self.clock
            .as_mut()
            .is_some_and(|time| !time.another_iteration(it, pondering))
    }
}

/// Whether `score` mates in at most `moves` moves.
fn mates_within(score: i32, moves: i32) -> bool {
    score > MATE_BOUND && (MATE - score + 1) / 2 <= moves
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_stay_inside_the_clock() {
        for time_left in [1, 5, 25, 100, 1000, 60_000, 3_600_000] {
            for increment in [0, 10, 1000] {
                for moves_to_go in [None, Some(1), Some(2), Some(40)] {
                    let clock = Clock {
                        time_left: Some(time_left),
                        increment,
                        moves_to_go,
                        move_time: None,
                    };
                    let l = clock.limits(10).unwrap();
                    assert!(l.soft <= l.hard);
                    let budget = time_left.saturating_sub(10).max(1);
                    assert!(l.hard.as_millis() as u64 <= budget, "{clock:?} -> {l:?}");
                }
            }
        }
    }

    #[test]
    fn huge_clocks_do_not_overflow() {
        for (time_left, increment, moves_to_go) in [
            (u64::MAX, u64::MAX, None),
            (u64::MAX, 0, Some(1)),
            (1000, u64::MAX, Some(1)),
            (u64::MAX, u64::MAX, Some(u64::MAX)),
        ] {
            let clock = Clock {
                time_left: Some(time_left),
                increment,
                moves_to_go,
                move_time: None,
            };
            let l = clock.limits(u64::MAX).unwrap();
            assert!(l.soft <= l.hard);
        }
        let clock = Clock {
            move_time: Some(u64::MAX),
            ..Clock::default()
        };
        assert!(clock.limits(0).is_some());
    }

    #[test]
    fn move_time_is_exact() {
        let clock = Clock {
            move_time: Some(500),
            ..Clock::default()
        };
        let l = clock.limits(10).unwrap();
        assert_eq!(l.hard, Duration::from_millis(490));
        assert!(l.spend_all);
        let clock = Clock {
            time_left: Some(500),
            ..Clock::default()
        };
        assert!(!clock.limits(10).unwrap().spend_all);
    }

    #[test]
    fn soft_scale_rewards_stability_and_punishes_drops() {
        let calm = SearchTrend {
            stable_iterations: 8,
            best_move_node_share: 0.95,
            score_drop: -5,
        };
        let new_move = SearchTrend {
            stable_iterations: 0,
            ..calm
        };
        let falling = SearchTrend {
            score_drop: 80,
            ..calm
        };
        assert!(soft_scale(&calm) < 1.0);
        assert!(soft_scale(&new_move) > soft_scale(&calm));
        assert!(soft_scale(&falling) > soft_scale(&calm));
        let worst = SearchTrend {
            stable_iterations: 0,
            best_move_node_share: 0.0,
            score_drop: 500,
        };
        assert!(soft_scale(&worst) <= 1.5 * 2.0 * 1.6);
    }

    #[test]
    fn scaled_soft_limit_stays_under_the_hard_limit() {
        let clock = Clock {
            time_left: Some(4000),
            increment: 40,
            moves_to_go: None,
            move_time: None,
        };
        let limits = clock.limits(10).unwrap();
        let panic = SearchTrend {
            stable_iterations: 0,
            best_move_node_share: 0.0,
            score_drop: 500,
        };
        assert!(limits.scaled_soft(&panic) > limits.soft);
        assert!(limits.scaled_soft(&panic) <= limits.hard);
    }

    #[test]
    fn the_time_manager_stops_for_the_clock_and_for_a_single_move() {
        let hour = Duration::from_secs(3600);
        let clock = TimeLimits {
            soft: hour,
            hard: 3 * hour,
            spend_all: false,
        };
        let it = IterationFacts {
            depth: 8,
            new_best_move: false,
            score: 20,
            best_move_node_share: 0.9,
            duration: Duration::from_millis(1),
            single_root_move: false,
        };
        let mut time = TimeManager::new(clock);
        assert!(time.another_iteration(&it, false));
        assert!(!time.past_hard_limit(false));
        // An iteration that took half the hard limit: the next would be cut off.
        let slow = IterationFacts {
            duration: 3 * hour / 2,
            ..it
        };
        assert!(!time.another_iteration(&slow, false));
        // While pondering the clock does not run.
        assert!(time.another_iteration(&slow, true));
        // One move to play: a few iterations are enough, pondering or not.
        let single = IterationFacts {
            single_root_move: true,
            ..it
        };
        assert!(!time.another_iteration(&single, true));
        assert!(time.another_iteration(&IterationFacts { depth: 3, ..single }, false));
        // `go movetime` spends its time.
        let mut movetime = TimeManager::new(TimeLimits {
            spend_all: true,
            ..clock
        });
        assert!(movetime.another_iteration(&slow, false));
        // The hard limit, and the clock restarted while pondering.
        let mut spent = TimeManager::new(TimeLimits {
            soft: Duration::ZERO,
            hard: Duration::ZERO,
            spend_all: false,
        });
        assert!(spent.past_hard_limit(false));
        assert!(!spent.past_hard_limit(true));
    }

    #[test]
    fn the_limiter_folds_the_node_budget_and_stops_at_a_mate_found() {
        let go_nodes = Limits {
            hard_nodes: Some(1000),
            ..Limits::default()
        };
        assert!(go_nodes.start(Some(500)).past_node_limit(500));
        assert!(!go_nodes.start(Some(5000)).past_node_limit(999));
        assert!(Limits::default().start(Some(500)).past_node_limit(500));
        assert!(!Limits::default().start(None).past_node_limit(u64::MAX));

        let it = IterationFacts {
            depth: 5,
            new_best_move: false,
            score: MATE - 3,
            best_move_node_share: 0.9,
            duration: Duration::ZERO,
            single_root_move: false,
        };
        let mate_in = |moves| {
            Limits {
                mate: Some(moves),
                ..Limits::default()
            }
            .start(None)
        };
        assert!(mate_in(2).stop_after(&it, 0, false));
        assert!(!mate_in(1).stop_after(&it, 0, false));
        let mated = IterationFacts {
            score: -MATE + 2,
            ..it
        };
        assert!(!mate_in(5).stop_after(&mated, 0, false));
    }

    #[test]
    fn no_clock_means_no_limit() {
        assert_eq!(Clock::default().limits(10), None);
    }

    fn limits_ms(
        time_left: u64,
        increment: u64,
        moves_to_go: Option<u64>,
        overhead: u64,
    ) -> (u64, u64) {
        let clock = Clock {
            time_left: Some(time_left),
            increment,
            moves_to_go,
            move_time: None,
        };
        let l = clock.limits(overhead).unwrap();
        (l.soft.as_millis() as u64, l.hard.as_millis() as u64)
    }

    #[test]
    fn hard_limit_never_passes_its_share_of_the_clock() {
        for time_left in [
            0, 1, 5, 10, 11, 25, 100, 200, 1000, 10_000, 60_000, 3_600_000,
        ] {
            for increment in [0, 5, 10, 100, 1000, 10_000, 100_000] {
                for moves_to_go in [
                    None,
                    Some(0),
                    Some(1),
                    Some(2),
                    Some(3),
                    Some(10),
                    Some(40),
                    Some(100),
                ] {
                    for overhead in [0, 10, 100] {
                        let (soft, hard) = limits_ms(time_left, increment, moves_to_go, overhead);
                        let usable = time_left.saturating_sub(overhead).max(1);
                        let cap = if moves_to_go.is_some_and(|m| m <= 1) {
                            usable * 3 / 4
                        } else {
                            usable / 4
                        };
                        let case = format!("{time_left}+{increment} mtg {moves_to_go:?} overhead {overhead}: {soft} {hard}");
                        assert!(soft >= 1 && soft <= hard, "{case}");
                        // 1 ms is the floor: a search needs some time to return a legal move.
                        assert!(hard <= cap.max(1), "{case}");
                    }
                }
            }
        }
    }

    #[test]
    fn sudden_death_starts_the_last_iteration_late_enough() {
        // 10+0.1 at move 1, Move Overhead 10.
        let (soft, hard) = limits_ms(10_000, 100, None, 10);
        let planned = (9990 - STALL_RESERVE_MS) / SUDDEN_DEATH_MOVES.get() as u64
            + 90 * INCREMENT_PERCENT.get() as u64 / 100;
        assert_eq!(soft, planned);
        assert_eq!(hard, planned * HARD_LIMIT_PERCENT.get() as u64 / 100);
        // The clock is spent, not hoarded: a new iteration may start half as late again as
        // with a plan of 1/40 of the clock plus 3/4 of the increment and no iteration past
        // 60% of it, which left a median 2.3 s of 10 unspent at the end of games.
        let hoarding = 9990 / 40 + 75;
        assert!(
            soft * NEXT_ITERATION_PERCENT.get() as u64 >= hoarding * 60 * 3 / 2,
            "{soft}"
        );
    }

    #[test]
    fn tiny_clocks_stay_sane() {
        // 1+0.01 at move 1, and with 0.2 s left.
        let (soft, hard) = limits_ms(1000, 10, None, 10);
        assert!(
            (30..=60).contains(&soft) && hard <= 990 / 4,
            "{soft} {hard}"
        );
        let (soft, hard) = limits_ms(200, 10, None, 10);
        assert!((1..=10).contains(&soft) && hard <= 190 / 4, "{soft} {hard}");
        // Inside the stall reserve, with an increment to spend.
        let (soft, hard) = limits_ms(60, 40, None, 10);
        assert!(soft == 10 && hard == 12, "{soft} {hard}");
        // Less on the clock than the overhead: the shortest search there is.
        assert_eq!(limits_ms(8, 10, None, 10), (1, 1));
        assert_eq!(limits_ms(0, 0, Some(1), 10), (1, 1));
    }

    #[test]
    fn increment_larger_than_the_clock_is_not_spent_ahead() {
        // 0.1 s left, 1 s increment: the increment arrives only after the move.
        let (soft, hard) = limits_ms(100, 1000, None, 10);
        assert!(soft <= 90 / 5 && hard <= 90 / 4, "{soft} {hard}");
    }

    #[test]
    fn movestogo_plans_over_the_moves_left() {
        // The last move before the control may take most, never all, of the clock.
        let (soft, hard) = limits_ms(10_000, 0, Some(1), 10);
        assert!(soft >= 9990 / 2 && hard <= 9990 * 3 / 4, "{soft} {hard}");
        // Ten moves left: a tenth each of what the plan may spend.
        assert_eq!(
            limits_ms(10_000, 0, Some(10), 10).0,
            (9990 - STALL_RESERVE_MS) / 10
        );
        // A long cyclic control plans like sudden death, not on a longer horizon.
        assert_eq!(
            limits_ms(60_000, 0, Some(40), 10),
            limits_ms(60_000, 0, None, 10)
        );
        assert_eq!(
            limits_ms(10_000, 0, Some(0), 10),
            limits_ms(10_000, 0, Some(1), 10)
        );
    }

    /// Plays `moves` moves on a clock of `base` ms + `increment` (refilled with `base`
    /// every `cycle` moves if `cycle` is not 0), each move taking `spend(soft, hard)` plus
    /// `lag` ms of transit. Returns the least time left after any move and the time left
    /// after the last move of the first cycle, or the move that lost on time.
    fn play(
        base: u64,
        increment: u64,
        cycle: u64,
        lag: i64,
        spend: fn(u64, u64) -> u64,
    ) -> Result<(i64, i64), u64> {
        let mut clock = base as i64;
        let (mut least, mut at_control) = (clock, 0);
        for k in 0..500 {
            let moves_to_go = (cycle > 0).then(|| cycle - k % cycle);
            let (soft, hard) = limits_ms(clock as u64, increment, moves_to_go, 10);
            clock -= spend(soft, hard) as i64 + lag;
            if clock < 0 {
                return Err(k);
            }
            least = least.min(clock);
            clock += increment as i64;
            if moves_to_go == Some(1) {
                if k + 1 == cycle {
                    at_control = clock;
                }
                clock += base as i64;
            }
        }
        Ok((least, at_control))
    }

    #[test]
    fn a_game_of_hard_limits_never_loses_on_time() {
        // Every move runs to its hard limit (Move Overhead 10, 2 ms of transit): with an
        // increment above the transit time the clock settles, it never runs out.
        let hard = |_, hard| hard;
        for (base, increment) in [(1000, 10), (500, 5), (10_000, 100), (100, 1000)] {
            assert!(
                play(base, increment, 0, 2, hard).is_ok(),
                "{base}+{increment}"
            );
        }
        // Cyclic controls without an increment: each move taking one and a half times its
        // soft limit still reaches the control, and leaves little of the period unspent.
        let long = |soft: u64, hard: u64| (soft * 3 / 2).min(hard);
        for base in [10_000, 60_000] {
            let (least, at_control) = play(base, 0, 40, 2, long).unwrap();
            assert!(
                least > 0 && at_control < base as i64 / 20,
                "{base}: {least} {at_control}"
            );
        }
    }
}
