//! Quiet-move ordering memory: killers per ply and a butterfly history table.

use shakmaty::{Color, Move};

use super::params::{HISTORY_MAX, MAX_PLY};

pub struct History {
    /// [colour][from][to], in `-HISTORY_MAX..=HISTORY_MAX`.
    butterfly: Box<[[[i32; 64]; 64]; 2]>,
    killers: [[Option<Move>; 2]; MAX_PLY + 1],
}

impl Default for History {
    fn default() -> Self {
        History {
            butterfly: Box::new([[[0; 64]; 64]; 2]),
            killers: [[None; 2]; MAX_PLY + 1],
        }
    }
}

fn squares(m: Move) -> (usize, usize) {
    let from = m.from().map_or(0, |s| s as usize);
    (from, m.to() as usize)
}

impl History {
    pub fn clear(&mut self) {
        *self = History::default();
    }

    /// Forget killers from the previous search (they belonged to other plies) and halve
    /// history so old statistics yield to new ones.
    pub fn new_search(&mut self) {
        self.killers = [[None; 2]; MAX_PLY + 1];
        for table in self.butterfly.iter_mut() {
            for row in table.iter_mut() {
                for v in row.iter_mut() {
                    *v /= 2;
                }
            }
        }
    }

    #[inline]
    pub fn quiet_score(&self, turn: Color, m: Move) -> i32 {
        let (from, to) = squares(m);
        self.butterfly[turn as usize][from][to]
    }

    #[inline]
    pub fn killers(&self, ply: usize) -> [Option<Move>; 2] {
        self.killers[ply.min(MAX_PLY)]
    }

    /// Reward the quiet move that caused a cutoff and punish the quiets tried before it.
    pub fn update_quiets(
        &mut self,
        turn: Color,
        ply: usize,
        depth: i32,
        best: Move,
        tried: &[Move],
    ) {
        let bonus = (16 * depth * depth).min(HISTORY_MAX / 8);
        self.apply(turn, best, bonus);
        for &m in tried {
            if m != best {
                self.apply(turn, m, -bonus);
            }
        }
        let k = &mut self.killers[ply.min(MAX_PLY)];
        if k[0] != Some(best) {
            k[1] = k[0];
            k[0] = Some(best);
        }
    }

    /// Gravity update: the closer a value is to the bound, the less it moves, so values
    /// stay within `HISTORY_MAX` and recent results outweigh old ones.
    #[inline]
    fn apply(&mut self, turn: Color, m: Move, bonus: i32) {
        let (from, to) = squares(m);
        let v = &mut self.butterfly[turn as usize][from][to];
        *v += bonus - *v * bonus.abs() / HISTORY_MAX;
        *v = (*v).clamp(-HISTORY_MAX, HISTORY_MAX);
    }
}
