//! The search stack: one `Frame` per ply of the line being searched, as Stockfish's `Stack`
//! and akimbo's `PlyEntry`. A frame holds what a node leaves for the nodes after it at
//! the same ply (killers), for its children and grandchildren (its eval, its count of
//! multiple extensions), for the searches of itself that it starts (the move a singular
//! search leaves out, the TT-PV flag), its principal variation, and buffers it reuses so
//! that no node allocates.

use std::ops::{Index, IndexMut};

use shakmaty::Move;

use super::movepick::MovePicker;
use crate::score::MAX_PLY;

/// The moves a node has searched so far, by kind (for the history update at a cutoff).
#[derive(Default)]
pub struct TriedMoves {
    pub quiets: Vec<Move>,
    pub captures: Vec<Move>,
}

pub struct Frame {
    /// The node's static eval (-INFINITY when in check): a node compares its own with the
    /// one two plies up to tell whether the side to move is improving.
    pub static_eval: i32,
    /// The move a singular-extension search of this node leaves out.
    pub excluded: Option<Move>,
    /// Double and triple extensions on the line from the root to this ply.
    pub multi_extensions: u8,
    /// Whether the node is TT-PV (a PV node, or flagged so by the table), which its stores
    /// keep; a singular-extension search of the node, which skips the table, inherits it.
    pub tt_pv: bool,
    /// The last two quiet moves that caused a cutoff at this ply, newest first: a move that
    /// refuted one line often refutes its neighbours.
    pub killers: [Option<Move>; 2],
    /// The principal variation from this ply: `pv[ply..pv_len]`.
    pub pv: [Option<Move>; MAX_PLY + 1],
    pub pv_len: usize,
    /// The quiet moves and captures the node has searched, kept from node to node so that
    /// none allocates them.
    pub tried: TriedMoves,
    /// Quiescence's move list, filled in place: a move list is a few kilobytes, and
    /// building one per node and moving it into place showed in profiles.
    pub qsearch_moves: MovePicker,
}

impl Frame {
    fn new() -> Frame {
        Frame {
            static_eval: 0,
            excluded: None,
            multi_extensions: 0,
            tt_pv: false,
            killers: [None; 2],
            pv: [None; MAX_PLY + 1],
            pv_len: 0,
            tried: TriedMoves::default(),
            qsearch_moves: MovePicker::empty(),
        }
    }

    /// `m` caused a cutoff here: it becomes the first killer, the first the second.
    #[inline]
    pub fn add_killer(&mut self, m: Move) {
        if self.killers[0] != Some(m) {
            self.killers[1] = self.killers[0];
            self.killers[0] = Some(m);
        }
    }
}

/// One frame for every ply a search can reach, indexed by ply.
pub struct Stack(Box<[Frame; MAX_PLY + 1]>);

impl Default for Stack {
    /// A stack of fresh frames, built on the heap (it is hundreds of kilobytes).
    fn default() -> Stack {
        let frames: Vec<Frame> = (0..=MAX_PLY).map(|_| Frame::new()).collect();
        match frames.into_boxed_slice().try_into() {
            Ok(frames) => Stack(frames),
            Err(_) => unreachable!("MAX_PLY + 1 frames"),
        }
    }
}

impl Stack {
    /// Killers belong to the plies of one search: a new search forgets them.
    pub fn forget_killers(&mut self) {
        for frame in self.0.iter_mut() {
            frame.killers = [None; 2];
        }
    }

    /// Makes the PV at `ply` `m` followed by the child's.
    #[inline]
    pub fn update_pv(&mut self, ply: usize, m: Move) {
        let (upper, lower) = self.0.split_at_mut(ply + 1);
        let (frame, child) = (&mut upper[ply], &lower[0]);
        frame.pv[ply] = Some(m);
        let len = child.pv_len.max(ply + 1);
        frame.pv[ply + 1..len].copy_from_slice(&child.pv[ply + 1..len]);
        frame.pv_len = len;
    }
}

impl Index<usize> for Stack {
    type Output = Frame;

    #[inline(always)]
    fn index(&self, ply: usize) -> &Frame {
        &self.0[ply]
    }
}

impl IndexMut<usize> for Stack {
    #[inline(always)]
    fn index_mut(&mut self, ply: usize) -> &mut Frame {
        &mut self.0[ply]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use shakmaty::{Chess, Position};

    #[test]
    fn killers_keep_the_two_newest_distinct_moves() {
        let moves: Vec<Move> = Chess::default().legal_moves().into_iter().collect();
        let mut stack = Stack::default();
        let frame = &mut stack[3];
        frame.add_killer(moves[0]);
        frame.add_killer(moves[0]);
        assert_eq!(frame.killers, [Some(moves[0]), None]);
        frame.add_killer(moves[1]);
        frame.add_killer(moves[2]);
        assert_eq!(frame.killers, [Some(moves[2]), Some(moves[1])]);
        stack.forget_killers();
        assert_eq!(stack[3].killers, [None; 2]);
    }

    #[test]
    fn a_pv_is_the_move_and_the_childs_pv() {
        let moves: Vec<Move> = Chess::default().legal_moves().into_iter().collect();
        let mut stack = Stack::default();
        stack[3].pv_len = 3;
        stack.update_pv(2, moves[0]);
        assert_eq!(&stack[2].pv[2..stack[2].pv_len], &[Some(moves[0])]);
        stack[3].pv[3] = Some(moves[1]);
        stack[3].pv[4] = Some(moves[2]);
        stack[3].pv_len = 5;
        stack.update_pv(2, moves[3]);
        assert_eq!(
            &stack[2].pv[2..stack[2].pv_len],
            &[Some(moves[3]), Some(moves[1]), Some(moves[2])]
        );
    }
}
