//! The middlegame/endgame score pair every evaluation weight is, blended by game phase.

use std::ops::{Add, AddAssign, Mul, Neg, Sub, SubAssign};

/// A middlegame/endgame score pair.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Score {
    pub mg: i32,
    pub eg: i32,
}

impl Add for Score {
    type Output = Score;
    fn add(self, o: Score) -> Score {
        Score {
            mg: self.mg + o.mg,
            eg: self.eg + o.eg,
        }
    }
}
impl Sub for Score {
    type Output = Score;
    fn sub(self, o: Score) -> Score {
        Score {
            mg: self.mg - o.mg,
            eg: self.eg - o.eg,
        }
    }
}
impl Neg for Score {
    type Output = Score;
    fn neg(self) -> Score {
        Score {
            mg: -self.mg,
            eg: -self.eg,
        }
    }
}
impl AddAssign for Score {
    fn add_assign(&mut self, o: Score) {
        *self = *self + o;
    }
}
impl SubAssign for Score {
    fn sub_assign(&mut self, o: Score) {
        *self = *self - o;
    }
}
impl Mul<i32> for Score {
    type Output = Score;
    fn mul(self, k: i32) -> Score {
        Score {
            mg: self.mg * k,
            eg: self.eg * k,
        }
    }
}
