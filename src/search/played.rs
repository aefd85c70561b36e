//! The lines of the move the search plays, as last shown: what the final `info` lines before
//! `bestmove` repeat with the search's totals, once per MultiPV line.
//!
//! A search that ends inside an iteration (a node or time limit, `stop`) plays the last
//! finished iteration's move, but the last lines shown may be a fail-high or fail-low of the
//! unfinished one, with the node count and time of that moment. Repeating the played lines
//! at the end tells a GUI (and python-chess's `analyse`, which keeps the last values) what
//! is played and what the search cost in all.

use std::time::Duration;

use shakmaty::Move;

use super::Iteration;

#[derive(Default)]
pub(super) struct PlayedLines {
    /// Best first, numbered 1, 2, ... in that order.
    lines: Vec<Iteration>,
    /// The node count when `lines` were shown, all of them and as they are, with nothing
    /// shown since; `None` when some of them have not been shown so.
    shown_at: Option<u64>,
}

impl PlayedLines {
    /// `newer` (best first) were just shown at `nodes`: they take the first slots, and the
    /// lines kept from before for other first moves follow them, up to `slots` lines. That
    /// is where an iteration cut short after its first MultiPV lines leaves the others:
    /// the earlier iteration's, which had all of them (Stockfish shows the same).
    pub fn shown(&mut self, newer: Vec<Iteration>, nodes: u64, slots: usize) {
        let count = newer.len();
        self.replace(newer, slots);
        // Shown as they are unless lines from before were kept below them.
        self.shown_at = (self.lines.len() <= count).then_some(nodes);
    }

    /// `line` is the line played but has not been shown (a weakened search's pick): it
    /// takes the first slot, and every line is shown at the end.
    pub fn not_shown(&mut self, line: Iteration, slots: usize) {
        self.replace(vec![line], slots);
        self.shown_at = None;
    }

    fn replace(&mut self, newer: Vec<Iteration>, slots: usize) {
        let firsts: Vec<Option<Move>> = newer.iter().map(|l| l.pv.first().copied()).collect();
        let older = std::mem::take(&mut self.lines)
            .into_iter()
            .filter(|l| !firsts.contains(&l.pv.first().copied()));
        self.lines = newer.into_iter().chain(older).take(slots.max(1)).collect();
        for (k, line) in self.lines.iter_mut().enumerate() {
            line.multipv = k + 1;
        }
    }

    /// Whether these lines, all of them, were the last shown, at this node count: the
    /// search ended with an iteration, not inside one.
    pub fn shown_last(&self, nodes: u64) -> bool {
        self.shown_at == Some(nodes)
    }

    /// The lines with the search's totals at its end.
    pub fn with_totals(
        &self,
        nodes: u64,
        elapsed: Duration,
        tbhits: u64,
        hashfull: usize,
    ) -> Vec<Iteration> {
        self.lines
            .iter()
            .map(|line| Iteration {
                nodes,
                elapsed,
                hashfull,
                tbhits,
                ..line.clone()
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tt::Bound;
    use shakmaty::{Chess, Position as _};

    fn line(depth: i32, multipv: usize, first: usize, nodes: u64) -> Iteration {
        let moves = Chess::default().legal_moves();
        Iteration {
            multipv,
            depth,
            seldepth: depth as usize + 3,
            score: 10 * first as i32,
            bound: Bound::Exact,
            nodes,
            elapsed: Duration::from_millis(nodes / 1000),
            hashfull: 5,
            tbhits: 0,
            pv: vec![moves[first]],
        }
    }

    fn summary(lines: &[Iteration]) -> Vec<(usize, i32, u64)> {
        lines
            .iter()
            .map(|l| (l.multipv, l.depth, l.nodes))
            .collect()
    }

    #[test]
    fn nothing_to_repeat_when_the_search_ended_with_the_lines_shown() {
        let mut played = PlayedLines::default();
        played.shown(vec![line(5, 1, 0, 900)], 900, 1);
        assert!(played.shown_last(900));
        // Nodes searched after them: the same line with the totals of the end.
        assert!(!played.shown_last(1500));
        let last = played.with_totals(1500, Duration::from_millis(7), 0, 12);
        assert_eq!(summary(&last), [(1, 5, 1500)]);
        assert_eq!(
            (last[0].hashfull, last[0].seldepth, last[0].score),
            (12, 8, 0)
        );
        assert_eq!(last[0].elapsed, Duration::from_millis(7));
    }

    #[test]
    fn an_iteration_cut_after_its_first_lines_keeps_the_others_from_before() {
        let mut played = PlayedLines::default();
        let depth_6 = vec![line(6, 1, 0, 100), line(6, 2, 1, 150), line(6, 3, 2, 200)];
        played.shown(depth_6, 200, 3);
        // Depth 7 found move 1 best, then was stopped: move 0 and move 2 keep depth 6's
        // lines below it.
        played.shown(vec![line(7, 1, 1, 400)], 400, 3);
        let last = played.with_totals(450, Duration::ZERO, 0, 0);
        assert_eq!(summary(&last), [(1, 7, 450), (2, 6, 450), (3, 6, 450)]);
        let scores: Vec<i32> = last.iter().map(|l| l.score).collect();
        assert_eq!(scores, [10, 0, 20]);
        // Only one of the three was shown last, even with no node searched since.
        assert!(!played.shown_last(400));
    }

    #[test]
    fn a_line_not_shown_is_shown_at_the_end() {
        let mut played = PlayedLines::default();
        played.shown(vec![line(4, 1, 0, 50)], 50, 1);
        played.not_shown(line(4, 1, 3, 50), 1);
        assert!(!played.shown_last(50));
        let last = played.with_totals(50, Duration::ZERO, 0, 0);
        assert_eq!(last.len(), 1);
        assert_eq!(last[0].score, 30);
    }
}
