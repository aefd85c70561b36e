//! UCI options: their declarations, current values and validation.

use crate::search::skill::{DEFAULT_ELO, MAX_ELO, MIN_ELO};
use crate::syzygy::{DEFAULT_PROBE_DEPTH, MAX_PROBE_DEPTH, MAX_TB_PIECES};
use crate::tt::{DEFAULT_HASH_MB, MAX_HASH_MB, MIN_HASH_MB};

pub const MAX_THREADS: usize = 1024;
pub const MAX_MULTIPV: usize = 256;
/// How a UCI string option shows "no value".
pub const EMPTY_STRING: &str = "<empty>";
pub const DEFAULT_MOVE_OVERHEAD_MS: u64 = 10;
pub const MAX_MOVE_OVERHEAD_MS: u64 = 5000;
/// How `EvalFile` names the net built into the binary.
pub const EMBEDDED_NET: &str = "<embedded>";

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Options {
    pub hash_mb: usize,
    pub threads: usize,
    pub move_overhead_ms: u64,
    pub ponder: bool,
    pub chess960: bool,
    pub multipv: usize,
    pub show_wdl: bool,
    pub limit_strength: bool,
    pub elo: u32,
    pub syzygy_path: String,
    pub syzygy_probe_depth: i32,
    pub syzygy_probe_limit: usize,
    pub syzygy_50_move_rule: bool,
    /// Evaluate with the network (`UseNNUE`); false: the hand-crafted evaluation.
    pub use_nnue: bool,
    /// The network file in use, or `EMBEDDED_NET`.
    pub eval_file: String,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            hash_mb: DEFAULT_HASH_MB,
            threads: 1,
            move_overhead_ms: DEFAULT_MOVE_OVERHEAD_MS,
            ponder: false,
            chess960: false,
            multipv: 1,
            show_wdl: false,
            limit_strength: false,
            elo: DEFAULT_ELO,
            syzygy_path: EMPTY_STRING.to_string(),
            syzygy_probe_depth: DEFAULT_PROBE_DEPTH,
            syzygy_probe_limit: MAX_TB_PIECES,
            syzygy_50_move_rule: true,
            use_nnue: true,
            eval_file: EMBEDDED_NET.to_string(),
        }
    }
}

/// What the engine must do after an option changed.
#[derive(Debug, PartialEq, Eq)]
pub enum Change {
    None,
    Hash(usize),
    ClearHash,
    Threads(usize),
    /// Rescan the tablebase directories.
    SyzygyPath(String),
    /// Load this network file (or the embedded net); the caller sets `eval_file` once it
    /// has loaded, so a file that fails leaves the old one in place.
    EvalFile(String),
}

pub fn declarations() -> Vec<String> {
    vec![
        format!(
            "option name Hash type spin default {DEFAULT_HASH_MB} min {MIN_HASH_MB} max {MAX_HASH_MB}"
        ),
        "option name Clear Hash type button".to_string(),
        format!("option name Threads type spin default 1 min 1 max {MAX_THREADS}"),
        format!(
            "option name Move Overhead type spin default {DEFAULT_MOVE_OVERHEAD_MS} min 0 max {MAX_MOVE_OVERHEAD_MS}"
        ),
        "option name Ponder type check default false".to_string(),
        "option name UCI_Chess960 type check default false".to_string(),
        format!("option name MultiPV type spin default 1 min 1 max {MAX_MULTIPV}"),
        "option name UCI_ShowWDL type check default false".to_string(),
        "option name UCI_LimitStrength type check default false".to_string(),
        format!("option name UCI_Elo type spin default {DEFAULT_ELO} min {MIN_ELO} max {MAX_ELO}"),
        format!("option name UCI_Opponent type string default {EMPTY_STRING}"),
        format!("option name SyzygyPath type string default {EMPTY_STRING}"),
        format!(
            "option name SyzygyProbeDepth type spin default {DEFAULT_PROBE_DEPTH} min 1 max {MAX_PROBE_DEPTH}"
        ),
        format!(
            "option name SyzygyProbeLimit type spin default {MAX_TB_PIECES} min 0 max {MAX_TB_PIECES}"
        ),
        "option name Syzygy50MoveRule type check default true".to_string(),
        "option name UseNNUE type check default true".to_string(),
        format!("option name EvalFile type string default {EMBEDDED_NET}"),
    ]
    .into_iter()
    .chain(tunable_declarations())
    .collect()
}

/// Every tunable parameter: the search's margins, then the time manager's plan.
#[cfg(feature = "spsa")]
fn tunables() -> impl Iterator<Item = &'static crate::tunable::Param> {
    crate::search::params::TUNABLE
        .iter()
        .chain(crate::time::TUNABLE)
        .copied()
}

/// The tunable parameters as spin options (`spsa` builds only).
fn tunable_declarations() -> Vec<String> {
    #[cfg(feature = "spsa")]
    return tunables()
        .map(|p| {
            format!(
                "option name {} type spin default {} min {} max {}",
                p.name, p.default, p.min, p.max
            )
        })
        .collect();
    #[cfg(not(feature = "spsa"))]
    Vec::new()
}

fn spin(name: &str, value: Option<&str>, min: u64, max: u64) -> Result<u64, String> {
    let text = value.ok_or_else(|| format!("option {name} needs a value"))?;
    let v: u64 = text.trim().parse().map_err(|_| {
        format!(
            "option {name}: '{}' is not a number",
            super::parse::echo(text)
        )
    })?;
    if !(min..=max).contains(&v) {
        return Err(format!(
            "option {name}: {v} is out of range {min}..{max}; value unchanged"
        ));
    }
    Ok(v)
}

/// Sets the tunable parameter named `name` (lower case), if there is one.
#[cfg(feature = "spsa")]
fn set_tunable(name: &str, value: Option<&str>) -> Result<bool, String> {
    let Some(param) = tunables().find(|p| p.name.eq_ignore_ascii_case(name)) else {
        return Ok(false);
    };
    let text = value.ok_or_else(|| format!("option {} needs a value", param.name))?;
    let v: i32 = text.trim().parse().map_err(|_| {
        format!(
            "option {}: '{}' is not a number",
            param.name,
            super::parse::echo(text)
        )
    })?;
    param.set(v)?;
    Ok(true)
}

fn check(name: &str, value: Option<&str>) -> Result<bool, String> {
    match value.map(|v| v.trim().to_ascii_lowercase()).as_deref() {
        Some("true") => Ok(true),
        Some("false") => Ok(false),
        _ => Err(format!("option {name} must be true or false")),
    }
}

impl Options {
    /// Validates and applies a `setoption`. Names are case-insensitive, as in Stockfish.
    pub fn set(&mut self, name: &str, value: Option<&str>) -> Result<Change, String> {
        match name.trim().to_ascii_lowercase().as_str() {
            "hash" => {
                let mb = spin("Hash", value, MIN_HASH_MB as u64, MAX_HASH_MB as u64)? as usize;
                self.hash_mb = mb;
                Ok(Change::Hash(mb))
            }
            "clear hash" => Ok(Change::ClearHash),
            "threads" => {
                self.threads = spin("Threads", value, 1, MAX_THREADS as u64)? as usize;
                Ok(Change::Threads(self.threads))
            }
            "move overhead" => {
                self.move_overhead_ms = spin("Move Overhead", value, 0, MAX_MOVE_OVERHEAD_MS)?;
                Ok(Change::None)
            }
            "ponder" => {
                self.ponder = check("Ponder", value)?;
                Ok(Change::None)
            }
            "uci_chess960" => {
                self.chess960 = check("UCI_Chess960", value)?;
                Ok(Change::None)
            }
            "multipv" => {
                self.multipv = spin("MultiPV", value, 1, MAX_MULTIPV as u64)? as usize;
                Ok(Change::None)
            }
            "uci_showwdl" => {
                self.show_wdl = check("UCI_ShowWDL", value)?;
                Ok(Change::None)
            }
            "uci_limitstrength" => {
                self.limit_strength = check("UCI_LimitStrength", value)?;
                Ok(Change::None)
            }
            "uci_elo" => {
                self.elo = spin("UCI_Elo", value, MIN_ELO as u64, MAX_ELO as u64)? as u32;
                Ok(Change::None)
            }
            // Accepted for GUIs and lichess-bot, which announce the opponent; Basalt plays
            // everyone the same way.
            "uci_opponent" => Ok(Change::None),
            "syzygypath" => {
                let path = value.map(str::trim).unwrap_or_default();
                self.syzygy_path = if path.is_empty() {
                    EMPTY_STRING.to_string()
                } else {
                    path.to_string()
                };
                Ok(Change::SyzygyPath(self.syzygy_path.clone()))
            }
            "syzygyprobedepth" => {
                self.syzygy_probe_depth =
                    spin("SyzygyProbeDepth", value, 1, MAX_PROBE_DEPTH as u64)? as i32;
                Ok(Change::None)
            }
            "syzygyprobelimit" => {
                self.syzygy_probe_limit =
                    spin("SyzygyProbeLimit", value, 0, MAX_TB_PIECES as u64)? as usize;
                Ok(Change::None)
            }
            "syzygy50moverule" => {
                self.syzygy_50_move_rule = check("Syzygy50MoveRule", value)?;
                Ok(Change::None)
            }
            "usennue" => {
                self.use_nnue = check("UseNNUE", value)?;
                Ok(Change::None)
            }
            "evalfile" => {
                let path = value.map(str::trim).unwrap_or_default();
                let path = if path.is_empty() || path == "<empty>" {
                    EMBEDDED_NET
                } else {
                    path
                };
                Ok(Change::EvalFile(path.to_string()))
            }
            #[cfg(feature = "spsa")]
            other if set_tunable(other, value)? => Ok(Change::None),
            _ => Err(format!("no such option: '{}'", super::parse::echo(name))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn out_of_range_keeps_value() {
        let mut o = Options::default();
        assert!(o.set("Hash", Some("0")).is_err());
        assert!(o.set("hash", Some("65537")).is_err());
        assert!(o.set("Hash", Some("abc")).is_err());
        assert_eq!(o.hash_mb, DEFAULT_HASH_MB);
        assert_eq!(o.set("HASH", Some("64")), Ok(Change::Hash(64)));
        assert_eq!(o.hash_mb, 64);
    }

    #[test]
    fn search_parameters_are_options_only_in_spsa_builds() {
        let declared = declarations()
            .iter()
            .any(|d| d.starts_with("option name RFP_MARGIN_PER_DEPTH type spin default 80 "));
        assert_eq!(declared, cfg!(feature = "spsa"));
        let mut o = Options::default();
        // Out of range in an spsa build, no such option otherwise.
        assert!(o.set("rfp_margin_per_depth", Some("5000")).is_err());
        #[cfg(feature = "spsa")]
        {
            use crate::search::params::LMP_BASE;
            let _others_wait = crate::tunable::test_lock();
            assert_eq!(o.set("LMP_BASE", Some("7")), Ok(Change::None));
            assert_eq!(LMP_BASE.get(), 7);
            assert!(o.set("LMP_BASE", Some("x")).is_err());
            assert_eq!(o.set("LMP_BASE", Some("3")), Ok(Change::None));
            assert_eq!(LMP_BASE.get(), 3);
        }
    }

    #[test]
    fn tunable_names_are_unique_across_modules() {
        // `setoption` takes the first parameter of a name: the lists must not share one.
        let all: Vec<_> = crate::search::params::TUNABLE
            .iter()
            .chain(crate::time::TUNABLE)
            .copied()
            .collect();
        crate::tunable::check_list(&all);
    }

    #[test]
    fn names_are_case_insensitive() {
        let mut o = Options::default();
        o.set("move overhead", Some("100")).unwrap();
        o.set("uci_chess960", Some("TRUE")).unwrap();
        assert_eq!(o.move_overhead_ms, 100);
        assert!(o.chess960);
        assert!(o.set("Ponder", Some("maybe")).is_err());
        assert!(!o.ponder);
    }

    #[test]
    fn new_options_validate_their_values() {
        let mut o = Options::default();
        assert!(o.set("MultiPV", Some("0")).is_err());
        assert!(o.set("MultiPV", Some("257")).is_err());
        assert_eq!(o.multipv, 1);
        o.set("multipv", Some("256")).unwrap();
        assert_eq!(o.multipv, 256);
        assert!(o.set("UCI_ShowWDL", Some("yes")).is_err());
        o.set("UCI_ShowWDL", Some("true")).unwrap();
        assert!(o.show_wdl);
        assert!(o.set("SyzygyProbeDepth", Some("0")).is_err());
        assert!(o.set("SyzygyProbeDepth", Some("101")).is_err());
        assert!(o.set("SyzygyProbeLimit", Some("8")).is_err());
        assert_eq!((o.syzygy_probe_depth, o.syzygy_probe_limit), (1, 7));
        o.set("SyzygyProbeLimit", Some("0")).unwrap();
        assert_eq!(o.syzygy_probe_limit, 0);
        assert!(o.set("Syzygy50MoveRule", Some("1")).is_err());
        assert!(o.syzygy_50_move_rule);
        assert_eq!(
            o.set("UCI_Opponent", Some("GM 2800 human Some One")),
            Ok(Change::None)
        );
        assert_eq!(
            o.set("SyzygyPath", Some("")),
            Ok(Change::SyzygyPath(EMPTY_STRING.into()))
        );
        assert_eq!(
            o.set("SyzygyPath", Some("/a:/b c")),
            Ok(Change::SyzygyPath("/a:/b c".into()))
        );
    }
}
