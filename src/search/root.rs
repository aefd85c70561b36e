//! The root moves: one list that serves MultiPV, `UCI_LimitStrength`, the time manager's
//! node share and the order the root searches its moves in.
//!
//! During an iteration the list's first k places hold the best moves of the k lines found
//! so far, in the order found, and line k searches the moves from place k on. At the end of
//! the iteration they are the iteration's lines: MultiPV shows them sorted by score, a
//! limited strength picks among them.
//!
//! At a root in the tablebases every move carries its tablebase value, and the list is
//! ordered by it (wins, then draws, then losses). A line searches only the moves of the
//! best value left, so line 1 is always a move that keeps the root's outcome, the lines
//! come in the order of their values, and each shows the value of its own move.

use std::ops::Deref;

use shakmaty::Move;

use super::Iteration;

#[derive(Clone, Debug)]
pub struct RootMove {
    pub mv: Move,
    /// Its place in the order the root searches its moves: as generated, or as the
    /// tablebases rank them. Every iteration starts from that order (the move picker breaks
    /// its ties by it).
    order: usize,
    /// Nodes spent below it in the current iteration.
    pub nodes: u64,
    /// The search's score of the line it leads, once that line is found in this iteration.
    pub score: i32,
    /// That line as shown, with the depth, node count and time when it was found.
    pub line: Option<Iteration>,
    /// At a tablebase root: the value the move leads to, shown for its line instead of
    /// the search's score unless the search finds a mate.
    pub tb_score: Option<i32>,
}

#[derive(Clone, Debug, Default)]
pub struct RootMoves(Vec<RootMove>);

impl RootMoves {
    /// The moves to search, in the order to search them.
    pub fn new(moves: &[Move]) -> RootMoves {
        RootMoves::with_tb_scores(moves.iter().map(|&mv| (mv, None)))
    }

    /// The moves of a tablebase root with the value each leads to, best first.
    pub fn ranked(moves: impl IntoIterator<Item = (Move, i32)>) -> RootMoves {
        RootMoves::with_tb_scores(moves.into_iter().map(|(mv, tb)| (mv, Some(tb))))
    }

    fn with_tb_scores(moves: impl IntoIterator<Item = (Move, Option<i32>)>) -> RootMoves {
        RootMoves(
            moves
                .into_iter()
                .enumerate()
                .map(|(order, (mv, tb_score))| RootMove {
                    mv,
                    order,
                    nodes: 0,
                    score: 0,
                    line: None,
                    tb_score,
                })
                .collect(),
        )
    }

    /// Back to the search order, with no nodes counted and no line found.
    pub fn start_iteration(&mut self) {
        self.0.sort_by_key(|r| r.order);
        for r in &mut self.0 {
            r.nodes = 0;
            r.line = None;
        }
    }

    /// The moves line `line` searches: every move but the best moves of the lines before
    /// it, and at a tablebase root only those of the best value among them (the moves
    /// behind place `line` keep the list's order, best value first).
    pub fn searched_by(&self, line: usize) -> impl Iterator<Item = Move> + '_ {
        let value = self.0[line].tb_score;
        self.0[line..]
            .iter()
            .take_while(move |r| r.tb_score == value)
            .map(|r| r.mv)
    }

    /// The tablebase value of root move `m`, if the root is in the tablebases.
    pub fn tb_score(&self, m: Move) -> Option<i32> {
        self.0.iter().find(|r| r.mv == m).and_then(|r| r.tb_score)
    }

    /// Whether the root is in the tablebases.
    pub fn in_tablebases(&self) -> bool {
        self.0.first().is_some_and(|r| r.tb_score.is_some())
    }

    #[inline]
    pub fn add_nodes(&mut self, m: Move, nodes: u64) {
        if let Some(r) = self.0.iter_mut().find(|r| r.mv == m) {
            r.nodes += nodes;
        }
    }

    /// Share of this iteration's root nodes spent below `best`.
    pub fn node_share(&self, best: Move) -> f64 {
        let total: u64 = self.0.iter().map(|r| r.nodes).sum();
        let best_nodes = self.0.iter().find(|r| r.mv == best).map_or(0, |r| r.nodes);
        best_nodes as f64 / total.max(1) as f64
    }

    /// Line `k` has been found: its first move takes place k, the moves it passed keep
    /// their order behind it.
    pub fn found_line(&mut self, k: usize, score: i32, line: Iteration) {
        let first = line.pv.first().copied();
        if let Some(place) = self.0[k..].iter().position(|r| Some(r.mv) == first) {
            self.0[k..=k + place].rotate_right(1);
            self.0[k].score = score;
            self.0[k].line = Some(line);
        }
    }

    /// The first `lines` lines by tablebase value (at a tablebase root), then by score,
    /// best first (of equal ones, the one found first), numbered in that order.
    pub fn sort_lines(&mut self, lines: usize) {
        self.0[..lines].sort_by_key(|r| std::cmp::Reverse((r.tb_score, r.score)));
        for (k, r) in self.0[..lines].iter_mut().enumerate() {
            if let Some(line) = &mut r.line {
                line.multipv = k + 1;
            }
        }
    }
}

impl Deref for RootMoves {
    type Target = [RootMove];

    fn deref(&self) -> &[RootMove] {
        &self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tt::Bound;
    use shakmaty::{Chess, Position};
    use std::time::Duration;

    fn line(pv: Vec<Move>) -> Iteration {
        Iteration {
            multipv: 1,
            depth: 1,
            seldepth: 1,
            score: 0,
            bound: Bound::Exact,
            nodes: 0,
            elapsed: Duration::ZERO,
            hashfull: 0,
            tbhits: 0,
            pv,
        }
    }

    #[test]
    fn lines_take_the_first_places_and_the_rest_keep_their_order() {
        let moves: Vec<Move> = Chess::default().legal_moves().into_iter().take(5).collect();
        let mut root = RootMoves::new(&moves);
        root.start_iteration();
        root.found_line(0, 10, line(vec![moves[3]]));
        assert_eq!(
            root.searched_by(1).collect::<Vec<_>>(),
            [moves[0], moves[1], moves[2], moves[4]]
        );
        root.found_line(1, 30, line(vec![moves[1]]));
        assert_eq!(
            root.searched_by(2).collect::<Vec<_>>(),
            [moves[0], moves[2], moves[4]]
        );
        root.sort_lines(2);
        assert_eq!((root[0].mv, root[1].mv), (moves[1], moves[3]));
        assert_eq!(root[0].line.as_ref().map(|l| l.multipv), Some(1));
        assert_eq!(root[1].line.as_ref().map(|l| l.multipv), Some(2));
        root.add_nodes(moves[1], 30);
        root.add_nodes(moves[0], 10);
        assert_eq!(root.node_share(moves[1]), 0.75);
        root.start_iteration();
        assert_eq!(root.searched_by(0).collect::<Vec<_>>(), moves);
        assert_eq!(root.node_share(moves[1]), 0.0);
    }

    #[test]
    fn at_a_tablebase_root_each_line_takes_the_best_value_left() {
        let moves: Vec<Move> = Chess::default().legal_moves().into_iter().take(4).collect();
        let values = [100, 100, 0, -100];
        let mut root = RootMoves::ranked(moves.iter().copied().zip(values));
        root.start_iteration();
        assert!(root.in_tablebases());
        assert_eq!(root.searched_by(0).collect::<Vec<_>>(), moves[..2]);
        root.found_line(0, 10, line(vec![moves[1]]));
        assert_eq!(root.searched_by(1).collect::<Vec<_>>(), [moves[0]]);
        root.found_line(1, 20, line(vec![moves[0]]));
        assert_eq!(root.searched_by(2).collect::<Vec<_>>(), [moves[2]]);
        // The draw scores above both wins in the search; its line still comes after them.
        root.found_line(2, 500, line(vec![moves[2]]));
        assert_eq!(root.searched_by(3).collect::<Vec<_>>(), [moves[3]]);
        root.sort_lines(3);
        let order: Vec<Move> = root[..3].iter().map(|r| r.mv).collect();
        assert_eq!(order, [moves[0], moves[1], moves[2]]);
        assert_eq!(root.tb_score(moves[2]), Some(0));
        assert!(!RootMoves::new(&moves).in_tablebases());
    }
}
