//! `UCI_LimitStrength` / `UCI_Elo`: playing below full strength for casual games.
//!
//! Two levers, both smooth in the Elo setting: a node budget per move (a weak player sees
//! little), and a choice among the best few root moves weighted by how much each is worse
//! than the best (a weak player often misses the best move but rarely blunders outright).
//! The choice never takes a move more than `max_loss_cp` below the best, so a weakened
//! Basalt plays plausible inferior moves instead of hanging pieces. The constants were set
//! by matches against Stockfish's own `UCI_Elo`; the calibration is in `docs/strength.md`,
//! "UCI_LimitStrength calibration".

use rand::Rng;
use shakmaty::Move;

pub const MIN_ELO: u32 = 1320;
pub const MAX_ELO: u32 = 3000;
pub const DEFAULT_ELO: u32 = 1500;

/// Root moves considered for the weakened choice (searched as internal MultiPV lines).
const CANDIDATE_LINES: usize = 4;
/// Node budget per move at `MIN_ELO`; it doubles every `ELO_PER_NODE_DOUBLING`.
const NODES_AT_MIN_ELO: f64 = 2700.0;
const ELO_PER_NODE_DOUBLING: f64 = 143.0;
/// At and above this setting moves are no longer chosen at random.
const ELO_WITHOUT_RANDOMNESS: u32 = 2100;
/// Softmax temperature (centipawns) and largest accepted loss at `MIN_ELO`; both shrink
/// linearly to 0 at `ELO_WITHOUT_RANDOMNESS`.
const TEMPERATURE_AT_MIN_ELO: f64 = 43.0;
const MAX_LOSS_AT_MIN_ELO: f64 = 108.0;

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StrengthLimit {
    elo: u32,
}

impl StrengthLimit {
    pub fn new(elo: u32) -> StrengthLimit {
        StrengthLimit {
            elo: elo.clamp(MIN_ELO, MAX_ELO),
        }
    }

    pub fn elo(&self) -> u32 {
        self.elo
    }

    /// Nodes the search may spend on one move at this level.
    pub fn node_budget(&self) -> u64 {
        let doublings = f64::from(self.elo - MIN_ELO) / ELO_PER_NODE_DOUBLING;
        (NODES_AT_MIN_ELO * doublings.exp2()) as u64
    }

    /// 0 at `ELO_WITHOUT_RANDOMNESS` and above, growing linearly to 1 at `MIN_ELO`.
    fn weakness(&self) -> f64 {
        let span = f64::from(ELO_WITHOUT_RANDOMNESS - MIN_ELO);
        (f64::from(ELO_WITHOUT_RANDOMNESS.saturating_sub(self.elo)) / span).clamp(0.0, 1.0)
    }

    /// Root moves to search as candidates: one when the choice is no longer random, so a
    /// strong setting is not slowed by MultiPV lines it would not use.
    pub fn candidate_lines(&self) -> usize {
        if self.weakness() > 0.0 {
            CANDIDATE_LINES
        } else {
            1
        }
    }

    pub fn temperature_cp(&self) -> f64 {
        TEMPERATURE_AT_MIN_ELO * self.weakness()
    }

    pub fn max_loss_cp(&self) -> i32 {
        (MAX_LOSS_AT_MIN_ELO * self.weakness()).round() as i32
    }

    /// Picks one of `lines` (root move, score from the side to move, best first). Moves more
    /// than `max_loss_cp` worse than the best are never picked; among the rest, a move `d`
    /// centipawns worse than the best has weight `exp(-d / temperature)`. Mates are never
    /// gambled with: when the best line has a mate score, its move is played.
    pub fn choose(&self, lines: &[(Move, i32)], rng: &mut impl Rng) -> Option<Move> {
        let &(best_move, best_score) = lines.first()?;
        let temperature = self.temperature_cp();
        if temperature <= 0.0 || best_score.abs() >= crate::score::MATE_BOUND {
            return Some(best_move);
        }
        let weights: Vec<(Move, f64)> = lines
            .iter()
            .filter(|(_, score)| best_score - score <= self.max_loss_cp())
            // A later line can come back a little above the first one at shallow depth (its
            // window differs); it counts as equal, not better.
            .map(|&(m, score)| {
                let loss = (best_score - score).max(0);
                (m, (-f64::from(loss) / temperature).exp())
            })
            .collect();
        let total: f64 = weights.iter().map(|(_, w)| w).sum();
        let mut pick = rng.random::<f64>() * total;
        for &(m, w) in &weights {
            if pick < w {
                return Some(m);
            }
            pick -= w;
        }
        Some(best_move)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::StdRng;
    use rand::SeedableRng;
    use shakmaty::{Chess, Position};

    fn moves(n: usize) -> Vec<Move> {
        Chess::default().legal_moves().into_iter().take(n).collect()
    }

    #[test]
    fn budget_grows_with_elo() {
        let low = StrengthLimit::new(MIN_ELO).node_budget();
        let mid = StrengthLimit::new(2000).node_budget();
        let high = StrengthLimit::new(MAX_ELO).node_budget();
        assert_eq!(low, NODES_AT_MIN_ELO as u64);
        assert!(low < mid && mid < high, "{low} {mid} {high}");
        assert_eq!(StrengthLimit::new(100).elo(), MIN_ELO);
    }

    #[test]
    fn strong_levels_always_play_the_best_move() {
        let m = moves(3);
        let lines = [(m[0], 20), (m[1], 15), (m[2], 10)];
        let mut rng = StdRng::seed_from_u64(1);
        for _ in 0..100 {
            assert_eq!(
                StrengthLimit::new(2700).choose(&lines, &mut rng),
                Some(m[0])
            );
        }
    }

    #[test]
    fn weak_levels_vary_but_never_blunder() {
        let m = moves(4);
        let limit = StrengthLimit::new(MIN_ELO);
        let lines = [(m[0], 50), (m[1], 40), (m[2], 0), (m[3], -300)];
        let mut rng = StdRng::seed_from_u64(7);
        let mut counts = [0; 4];
        for _ in 0..2000 {
            let chosen = limit.choose(&lines, &mut rng).unwrap();
            counts[m.iter().position(|&x| x == chosen).unwrap()] += 1;
        }
        assert_eq!(counts[3], 0, "a 350 cp blunder was chosen");
        assert!(counts[0] > counts[1] && counts[1] > counts[2], "{counts:?}");
        assert!(counts[2] > 0, "{counts:?}");
    }

    #[test]
    fn mates_are_never_gambled() {
        let m = moves(2);
        let lines = [(m[0], crate::score::MATE - 3), (m[1], 0)];
        let mut rng = StdRng::seed_from_u64(3);
        for _ in 0..100 {
            assert_eq!(
                StrengthLimit::new(MIN_ELO).choose(&lines, &mut rng),
                Some(m[0])
            );
        }
    }
}
