//! The win/draw/loss model behind `UCI_ShowWDL`: a logistic curve from the score (side to
//! move's view, centipawns) to the probability of winning,
//! `P(win) = 1 / (1 + exp(-(cp - a) / b))`, `P(loss) = P(win) at -cp`, draw = the rest.
//! `a` and `b` were fitted by maximum likelihood on 109,373 scored positions from 965 games
//! of Basalt against Basalt (`tools/fit_wdl.py`; data, command and result in
//! docs/strength.md, "WDL model (issue 6)").

use crate::score::MATE_BOUND;

/// Score (cp) at which a win is as likely as not.
pub const WDL_A: f64 = 182.4;
/// Spread of the curve (cp): how fast the win probability rises with the score.
pub const WDL_B: f64 = 162.2;

/// Win, draw and loss probabilities in permille, summing to 1000, for a search score.
/// Mate scores are certain.
pub fn wdl(score: i32) -> (u32, u32, u32) {
    if score > MATE_BOUND {
        return (1000, 0, 0);
    }
    if score < -MATE_BOUND {
        return (0, 0, 1000);
    }
    let cp = f64::from(score);
    let win = (1000.0 * logistic(cp)).round() as u32;
    let loss = (1000.0 * logistic(-cp)).round() as u32;
    // The two tails can only overlap through rounding; the draw share takes up the rest.
    let loss = loss.min(1000 - win);
    (win, 1000 - win - loss, loss)
}

fn logistic(cp: f64) -> f64 {
    1.0 / (1.0 + (-(cp - WDL_A) / WDL_B).exp())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::score::MATE;

    #[test]
    fn sums_to_a_thousand_and_is_symmetric() {
        for cp in [-3000, -400, -150, -20, 0, 1, 35, 150, 400, 3000, 31_000] {
            let (w, d, l) = wdl(cp);
            assert_eq!(w + d + l, 1000, "cp {cp}");
            let (w2, _, l2) = wdl(-cp);
            assert_eq!((w, l), (l2, w2), "cp {cp}");
        }
    }

    #[test]
    fn monotonic_in_the_score() {
        let mut last = wdl(-2000);
        for cp in (-1990..=2000).step_by(10) {
            let now = wdl(cp);
            assert!(
                now.0 >= last.0 && now.2 <= last.2,
                "cp {cp}: {now:?} after {last:?}"
            );
            last = now;
        }
        assert!(
            wdl(0).1 > 500,
            "an equal position is mostly a draw: {:?}",
            wdl(0)
        );
    }

    #[test]
    fn mates_are_certain() {
        assert_eq!(wdl(MATE - 5), (1000, 0, 0));
        assert_eq!(wdl(-MATE + 8), (0, 0, 1000));
    }
}
