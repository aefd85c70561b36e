//! Perft: count the leaves of the legal move tree, to prove the move generator and our
//! make-move (copy-make plus incremental Zobrist key) against published counts.

use std::sync::atomic::{AtomicBool, Ordering};

use crate::position::Position;

/// Leaf count at `depth` (bulk-counted at the last ply).
pub fn perft(pos: &mut Position, depth: u32) -> u64 {
    let never = AtomicBool::new(false);
    perft_until(pos, depth, &never).expect("the stop flag is never raised")
}

/// `perft`, abandoned (`None`) once `stop` is raised: `go perft` must answer `stop` at once.
/// The flag is read only at nodes three or more plies from the leaves, so it costs nothing
/// measurable.
pub fn perft_until(pos: &mut Position, depth: u32, stop: &AtomicBool) -> Option<u64> {
    let moves = pos.legal_moves();
    if depth <= 1 {
        return Some(if depth == 0 { 1 } else { moves.len() as u64 });
    }
    if depth >= 3 && stop.load(Ordering::Relaxed) {
        return None;
    }
    let mut total = 0;
    for m in moves {
        pos.make_move(m);
        let n = perft_until(pos, depth - 1, stop);
        pos.unmake_move();
        total += n?;
    }
    Some(total)
}

/// Divide: each root move's count, in move generation order, handed to `on_move` as it is
/// found; returns the total, or `None` once `stop` is raised.
pub fn divide_until(
    pos: &mut Position,
    depth: u32,
    stop: &AtomicBool,
    on_move: &mut dyn FnMut(&str, u64),
) -> Option<u64> {
    let mut total = 0;
    for m in pos.legal_moves() {
        if stop.load(Ordering::Relaxed) {
            return None;
        }
        let uci = pos.to_uci(m);
        pos.make_move(m);
        let n = if depth <= 1 {
            Some(1)
        } else {
            perft_until(pos, depth - 1, stop)
        };
        pos.unmake_move();
        let n = n?;
        total += n;
        on_move(&uci, n);
    }
    Some(total)
}

/// Per-root-move counts, in move generation order.
pub fn divide(pos: &mut Position, depth: u32) -> Vec<(String, u64)> {
    let mut out = Vec::new();
    let never = AtomicBool::new(false);
    divide_until(pos, depth, &never, &mut |uci, n| {
        out.push((uci.to_string(), n))
    })
    .expect("the stop flag is never raised");
    out
}

/// One line of an EPD perft suite: `FEN ;D1 20 ;D2 400 ...`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SuiteEntry {
    pub fen: String,
    pub counts: Vec<(u32, u64)>,
}

pub fn parse_suite_line(line: &str) -> Option<SuiteEntry> {
    let line = line.trim();
    if line.is_empty() || line.starts_with('#') {
        return None;
    }
    let mut parts = line.split(';');
    let fen = parts.next()?.trim().to_string();
    let mut counts = Vec::new();
    for part in parts {
        let mut words = part.split_whitespace();
        let (Some(d), Some(n)) = (words.next(), words.next()) else {
            continue;
        };
        let depth = d.trim_start_matches(['D', 'd']).parse().ok()?;
        counts.push((depth, n.parse().ok()?));
    }
    Some(SuiteEntry { fen, counts })
}

/// Result of checking one suite position: the mismatches found (empty when it passed).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mismatch {
    pub fen: String,
    pub depth: u32,
    pub expected: u64,
    pub found: Option<u64>,
}

/// Checks every depth of `entry` up to `max_depth`. FENs are read with Chess960 castling so
/// Shredder-FEN and X-FEN rights work; standard positions read the same either way.
pub fn check_entry(entry: &SuiteEntry, max_depth: u32) -> Vec<Mismatch> {
    let mut mismatches = Vec::new();
    let pos = Position::from_fen(&entry.fen, true);
    for &(depth, expected) in entry.counts.iter().filter(|(d, _)| *d <= max_depth) {
        let found = match &pos {
            Ok(p) => Some(perft(&mut p.clone(), depth)),
            Err(_) => None,
        };
        if found != Some(expected) {
            mismatches.push(Mismatch {
                fen: entry.fen.clone(),
                depth,
                expected,
                found,
            });
        }
    }
    mismatches
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn start_position_depth_4() {
        assert_eq!(perft(&mut Position::default(), 4), 197_281);
    }

    #[test]
    fn parses_suite_lines() {
        let e = parse_suite_line("8/8/8/8/8/8/8/K6k w - - 0 1 ;D1 3 ;D2 9").unwrap();
        assert_eq!(e.fen, "8/8/8/8/8/8/8/K6k w - - 0 1");
        assert_eq!(e.counts, vec![(1, 3), (2, 9)]);
        assert_eq!(parse_suite_line("# comment"), None);
    }
}
