//! Time manager: turns the clock into a soft limit (do not start another iteration past it)
//! and a hard limit (abort the iteration in progress), both kept inside the remaining time
//! minus the move overhead the GUI asked for.

use std::time::Duration;

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

/// Moves we plan for when the GUI does not say how many are left (sudden death).
const DEFAULT_MOVES_TO_GO: u64 = 40;
/// Never plan on more than this share of the remaining time for one move.
const MAX_SOFT_SHARE: (u64, u64) = (1, 5);
/// Hard limit as a multiple of the planned time.
const HARD_FACTOR: u64 = 3;
/// Outside the last move before a time control, one move may take at most this share.
const MAX_HARD_SHARE_NORMAL: (u64, u64) = (1, 4);
/// Never use more than this share of the remaining time on one move, even when aborting.
const MAX_HARD_SHARE: (u64, u64) = (3, 4);

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
        let moves_to_go = self.moves_to_go.unwrap_or(DEFAULT_MOVES_TO_GO).clamp(1, 60);
        // With the last move before a time control, the whole remaining time is usable.
        let planned = usable / moves_to_go + increment * 3 / 4;
        let soft_cap = if moves_to_go == 1 {
            usable * MAX_HARD_SHARE.0 / MAX_HARD_SHARE.1
        } else {
            usable * MAX_SOFT_SHARE.0 / MAX_SOFT_SHARE.1
        };
        let soft = planned.min(soft_cap).max(1);
        let hard_cap = if moves_to_go == 1 {
            usable * MAX_HARD_SHARE.0 / MAX_HARD_SHARE.1
        } else {
            usable * MAX_HARD_SHARE_NORMAL.0 / MAX_HARD_SHARE_NORMAL.1
        };
        let hard = (soft * HARD_FACTOR).min(hard_cap).max(soft).max(1);
        Some(TimeLimits {
            soft: Duration::from_millis(soft),
            hard: Duration::from_millis(hard),
            spend_all: false,
        })
    }
}

/// How the soft limit adapts to the search so far (the adaptive soft limit).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SearchTrend {
    /// Consecutive completed iterations that kept the same best move.
    pub stable_iterations: u32,
    /// Share of the last iteration's root nodes spent below the best move (0..=1).
    pub best_move_node_share: f64,
    /// How far (cp) the score fell since the previous iteration (negative: it rose).
    pub score_drop: i32,
}

/// The adaptive soft limit (`soft_scale`) applies only from this depth: earlier iterations
/// are too cheap and too noisy to say anything.
pub const DYNAMIC_TIME_MIN_DEPTH: i32 = 6;

/// Do not start another iteration once this share (numerator, denominator) of the soft
/// time limit has passed.
pub const SOFT_LIMIT_NEXT_ITERATION: (u32, u32) = (6, 10);

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
pub fn soft_scale(trend: &SearchTrend) -> f64 {
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
    pub fn scaled_soft(&self, trend: &SearchTrend) -> Duration {
        self.soft.mul_f64(soft_scale(trend)).min(self.hard)
    }
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
    fn no_clock_means_no_limit() {
        assert_eq!(Clock::default().limits(10), None);
    }
}
