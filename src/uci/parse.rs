//! Parsing of UCI input lines into typed commands. Every error is a message for an
//! `info string` line; nothing here touches the engine's state.

use shakmaty::{Color, Move};

use crate::bench::DEFAULT_BENCH_DEPTH;
use crate::position::Position;
use crate::search::Limits;
use crate::time::Clock;

/// Longest input text echoed back in an error message.
const ECHO_LIMIT: usize = 60;

/// Cuts user input to a printable length for error messages.
pub fn echo(text: &str) -> String {
    let mut s: String = text.chars().take(ECHO_LIMIT).collect();
    if text.chars().count() > ECHO_LIMIT {
        s.push_str("...");
    }
    s
}

#[derive(Debug, PartialEq, Eq)]
pub enum Command {
    Uci,
    IsReady,
    Debug(bool),
    UciNewGame,
    SetOption {
        name: String,
        value: Option<String>,
    },
    Position {
        fen: Option<String>,
        moves: Vec<String>,
    },
    Go(GoCommand),
    Stop,
    PonderHit,
    Quit,
    Display,
    Eval,
    Bench(i32),
}

#[derive(Debug, Default, PartialEq, Eq)]
pub struct GoCommand {
    pub wtime: Option<i64>,
    pub btime: Option<i64>,
    pub winc: Option<i64>,
    pub binc: Option<i64>,
    pub movestogo: Option<i64>,
    pub depth: Option<i64>,
    pub nodes: Option<i64>,
    pub mate: Option<i64>,
    pub movetime: Option<i64>,
    pub infinite: bool,
    pub ponder: bool,
    pub search_moves: Vec<Move>,
    pub perft: Option<u32>,
}

/// Parses an integer leniently: huge values saturate instead of failing, since a GUI that
/// sends `wtime 99999999999999999999` means "a lot of time", not "ignore the command".
fn number(key: &str, text: Option<&str>) -> Result<i64, String> {
    let text = text.ok_or_else(|| format!("go {key} needs a number"))?;
    if let Ok(v) = text.parse::<i64>() {
        return Ok(v);
    }
    let digits = text.strip_prefix('-').unwrap_or(text);
    if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
        return Ok(if text.starts_with('-') {
            i64::MIN
        } else {
            i64::MAX
        });
    }
    Err(format!(
        "go {key}: '{}' is not a number; go ignored",
        echo(text)
    ))
}

const GO_KEYWORDS: [&str; 13] = [
    "wtime",
    "btime",
    "winc",
    "binc",
    "movestogo",
    "depth",
    "nodes",
    "mate",
    "movetime",
    "infinite",
    "ponder",
    "searchmoves",
    "perft",
];

fn parse_go(words: &[&str], position: &Position) -> Result<GoCommand, String> {
    let mut go = GoCommand::default();
    let mut i = 0;
    while i < words.len() {
        let key = words[i];
        let value = words.get(i + 1).copied();
        let mut takes_value = true;
        match key {
            "wtime" => go.wtime = Some(number(key, value)?),
            "btime" => go.btime = Some(number(key, value)?),
            "winc" => go.winc = Some(number(key, value)?),
            "binc" => go.binc = Some(number(key, value)?),
            "movestogo" => go.movestogo = Some(number(key, value)?),
            "depth" => go.depth = Some(number(key, value)?),
            "nodes" => go.nodes = Some(number(key, value)?),
            "mate" => go.mate = Some(number(key, value)?),
            "movetime" => go.movetime = Some(number(key, value)?),
            "perft" => {
                let n = number(key, value)?;
                if !(1..=20).contains(&n) {
                    return Err(format!("go perft: depth {n} is out of range 1..20"));
                }
                go.perft = Some(n as u32);
            }
            "infinite" => {
                go.infinite = true;
                takes_value = false;
            }
            "ponder" => {
                go.ponder = true;
                takes_value = false;
            }
            "searchmoves" => {
                let mut j = i + 1;
                while j < words.len() && !GO_KEYWORDS.contains(&words[j]) {
                    match position.parse_uci_move(words[j]) {
                        Some(m) => go.search_moves.push(m),
                        None => {
                            return Err(format!(
                                "go searchmoves: '{}' is not a legal move; go ignored",
                                echo(words[j])
                            ))
                        }
                    }
                    j += 1;
                }
                i = j;
                continue;
            }
            other => {
                return Err(format!(
                    "go: unknown parameter '{}'; go ignored",
                    echo(other)
                ));
            }
        }
        i += if takes_value { 2 } else { 1 };
    }
    Ok(go)
}

fn positive(v: Option<i64>) -> Option<u64> {
    v.map(|v| v.max(0) as u64)
}

impl GoCommand {
    /// The search limits for the side to move `us`.
    pub fn limits(&self, us: Color, move_overhead_ms: u64) -> Limits {
        let (time, inc) = match us {
            Color::White => (self.wtime, self.winc),
            Color::Black => (self.btime, self.binc),
        };
        let clock = Clock {
            time_left: if self.infinite { None } else { positive(time) },
            increment: positive(inc).unwrap_or(0),
            moves_to_go: positive(self.movestogo).filter(|&m| m > 0),
            move_time: if self.infinite {
                None
            } else {
                positive(self.movetime)
            },
        };
        Limits {
            depth: self.depth.map(|d| d.clamp(1, i64::from(i32::MAX)) as i32),
            hard_nodes: positive(self.nodes).map(|n| n.max(1)),
            // `go nodes` stays a hard limit, as in Stockfish.
            soft_nodes: None,
            mate: self.mate.map(|m| m.clamp(1, 1000) as i32),
            time: clock.limits(move_overhead_ms),
            search_moves: self.search_moves.clone(),
        }
    }
}

/// Parses one line. `Ok(None)` for a blank line.
pub fn parse(line: &str, position: &Position) -> Result<Option<Command>, String> {
    let words: Vec<&str> = line.split_whitespace().collect();
    let Some((&head, rest)) = words.split_first() else {
        return Ok(None);
    };
    let command = match head {
        "uci" => Command::Uci,
        "isready" => Command::IsReady,
        "ucinewgame" => Command::UciNewGame,
        "stop" => Command::Stop,
        "ponderhit" => Command::PonderHit,
        "quit" => Command::Quit,
        "d" => Command::Display,
        "eval" => Command::Eval,
        "debug" => match rest.first().copied() {
            Some("on") => Command::Debug(true),
            Some("off") => Command::Debug(false),
            _ => return Err("debug takes on or off".into()),
        },
        "bench" => {
            let depth = match rest.first() {
                None => DEFAULT_BENCH_DEPTH,
                Some(d) => match d.parse::<i32>() {
                    Ok(d) if (1..=30).contains(&d) => d,
                    _ => return Err(format!("bench: '{}' is not a depth in 1..30", echo(d))),
                },
            };
            Command::Bench(depth)
        }
        "setoption" => parse_setoption(rest)?,
        "position" => parse_position(rest)?,
        "go" => Command::Go(parse_go(rest, position)?),
        other => return Err(format!("unknown command: '{}'", echo(other))),
    };
    Ok(Some(command))
}

fn parse_setoption(words: &[&str]) -> Result<Command, String> {
    if words.first() != Some(&"name") {
        return Err("setoption needs: setoption name <name> [value <value>]".into());
    }
    let value_at = words.iter().position(|&w| w == "value");
    let name_words = &words[1..value_at.unwrap_or(words.len())];
    if name_words.is_empty() {
        return Err("setoption: missing option name".into());
    }
    let value = value_at.map(|i| words[i + 1..].join(" "));
    Ok(Command::SetOption {
        name: name_words.join(" "),
        value,
    })
}

fn parse_position(words: &[&str]) -> Result<Command, String> {
    let moves_at = words.iter().position(|&w| w == "moves");
    let moves: Vec<String> = match moves_at {
        Some(i) => words[i + 1..].iter().map(|s| s.to_string()).collect(),
        None => Vec::new(),
    };
    let setup = &words[..moves_at.unwrap_or(words.len())];
    match setup.first().copied() {
        Some("startpos") if setup.len() == 1 => Ok(Command::Position { fen: None, moves }),
        Some("fen") if setup.len() > 1 => Ok(Command::Position {
            fen: Some(setup[1..].join(" ")),
            moves,
        }),
        _ => Err(
            "position needs: position startpos|fen <FEN> [moves ...]; position unchanged".into(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(line: &str) -> Result<Option<Command>, String> {
        parse(line, &Position::default())
    }

    #[test]
    fn parses_go_with_clock() {
        let Ok(Some(Command::Go(go))) = p("go wtime 1000 btime 2000 winc 10 binc 20 movestogo 5")
        else {
            panic!("not parsed")
        };
        assert_eq!(go.wtime, Some(1000));
        assert_eq!(go.binc, Some(20));
        assert_eq!(go.movestogo, Some(5));
    }

    #[test]
    fn huge_numbers_saturate() {
        let Ok(Some(Command::Go(go))) = p("go wtime 999999999999999999999999 depth 5") else {
            panic!("not parsed")
        };
        assert_eq!(go.wtime, Some(i64::MAX));
        assert_eq!(go.depth, Some(5));
    }

    #[test]
    fn rejects_bad_input() {
        assert!(p("go depth x").is_err());
        assert!(p("go depth").is_err());
        assert!(p("go sideways").is_err());
        assert!(p("go searchmoves e2e5").is_err());
        assert!(p("frobnicate").is_err());
        assert!(p("position").is_err());
        assert!(p("position fen").is_err());
        assert!(p("setoption Hash 5").is_err());
        assert_eq!(p("   "), Ok(None));
    }

    #[test]
    fn parses_setoption_with_spaces() {
        assert_eq!(
            p("setoption name Move Overhead value 50"),
            Ok(Some(Command::SetOption {
                name: "Move Overhead".into(),
                value: Some("50".into())
            }))
        );
        assert_eq!(
            p("setoption name Clear Hash"),
            Ok(Some(Command::SetOption {
                name: "Clear Hash".into(),
                value: None
            }))
        );
    }

    #[test]
    fn search_moves_stop_at_keywords() {
        let Ok(Some(Command::Go(go))) = p("go searchmoves e2e4 d2d4 depth 3") else {
            panic!("not parsed")
        };
        assert_eq!(go.search_moves.len(), 2);
        assert_eq!(go.depth, Some(3));
    }
}
