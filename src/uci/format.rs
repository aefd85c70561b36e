//! Formatting of the engine's UCI output lines.

use std::fmt::Write as _;

use shakmaty::CastlingMode;

use crate::search::{uci_score, Iteration, SearchResult};
use crate::threads::Report;
use crate::tt::Bound;

/// The lines that say `report`.
pub fn report(report: &Report) -> Vec<String> {
    match *report {
        Report::Iteration {
            iteration,
            mode,
            show_wdl,
        } => vec![info(mode, iteration, show_wdl)],
        Report::CurrentMove { current, mode } => vec![format!(
            "info depth {} currmove {} currmovenumber {}",
            current.depth,
            current.mv.to_uci(mode),
            current.number
        )],
        Report::BestMove { result, mode } => vec![bestmove(mode, result)],
        Report::PerftMove { uci_move, nodes } => vec![format!("{uci_move}: {nodes}")],
        Report::PerftTotal(nodes) => vec![String::new(), format!("Nodes searched: {nodes}")],
        Report::BenchTotal { nodes, nps } => vec![format!("{nodes} nodes {nps} nps")],
        Report::Note(text) => vec![format!("info string {text}")],
        Report::Ready => vec!["readyok".to_string()],
    }
}

/// `score cp X` / `score mate N`, with `lowerbound`/`upperbound` for aspiration misses.
pub fn score(score: i32, bound: Bound) -> String {
    let mut s = match uci_score(score) {
        Ok(cp) => format!("score cp {cp}"),
        Err(moves) => format!("score mate {moves}"),
    };
    match bound {
        Bound::Exact => {}
        Bound::Lower => s.push_str(" lowerbound"),
        Bound::Upper => s.push_str(" upperbound"),
    }
    s
}

/// `wdl W D L`: permille from the side to move's view (UCI_ShowWDL).
pub fn wdl(score: i32) -> String {
    let (w, d, l) = super::wdl::wdl(score);
    format!("wdl {w} {d} {l}")
}

pub fn info(mode: CastlingMode, it: &Iteration, show_wdl: bool) -> String {
    let millis = it.elapsed.as_millis() as u64;
    let nps = it.nodes * 1000 / millis.max(1);
    let mut line = format!(
        "info depth {} seldepth {} multipv {} {}",
        it.depth,
        it.seldepth,
        it.multipv,
        score(it.score, it.bound)
    );
    if show_wdl {
        let _ = write!(line, " {}", wdl(it.score));
    }
    let _ = write!(
        line,
        " nodes {} nps {} hashfull {} tbhits {} time {}",
        it.nodes, nps, it.hashfull, it.tbhits, millis
    );
    if !it.pv.is_empty() {
        line.push_str(" pv");
        for m in &it.pv {
            let _ = write!(line, " {}", m.to_uci(mode));
        }
    }
    line
}

pub fn bestmove(mode: CastlingMode, result: &SearchResult) -> String {
    match (result.best_move, result.ponder_move) {
        (None, _) => "bestmove (none)".to_string(),
        (Some(best), None) => format!("bestmove {}", best.to_uci(mode)),
        (Some(best), Some(ponder)) => {
            format!(
                "bestmove {} ponder {}",
                best.to_uci(mode),
                ponder.to_uci(mode)
            )
        }
    }
}
