//! The progress file beside a run's output (`<out>.progress`): how many games, records and
//! bytes are complete, and the settings the games were played with, so that a rerun of the
//! command resumes the same run and a rerun with other settings is refused.
//!
//! ```text
//! games G records R             (a record file; a games file adds ` bytes B`)
//! seed 7                        (then one setting a line: its name, then its value)
//! nodes 2000
//! ...
//! ```
//!
//! Game `g` depends only on `g`, these settings and the binary, so a resume that changed
//! one of them would append games of another run to the file without a trace. A file from
//! a build that recorded none (or fewer) is resumed with a note that the missing ones go
//! unchecked; they are recorded from then on.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use super::format::RECORD_BYTES;
use super::{Config, Format, NodeLimit, Totals};
use crate::nnue::fnv1a64;

/// One setting that decides the games: its name in the progress file, the flags that set
/// it, and its value in words.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Setting {
    pub name: &'static str,
    pub flags: &'static str,
    pub value: String,
}

/// Every setting that decides a run's games (not `--threads`, `--games` or `--positions`,
/// which only decide how fast and how far it goes).
pub fn settings(config: &Config) -> Vec<Setting> {
    let setting = |name, flags, value: String| Setting { name, flags, value };
    let book = if config.book.is_empty() {
        "none".to_string()
    } else {
        // The positions as read, so the book may move or be rewritten in another layout.
        format!(
            "{} positions, FNV-1a {:016x}",
            config.book.len(),
            fnv1a64(config.book.join("\n").as_bytes())
        )
    };
    let evaluation = match &config.network {
        Some(network) => format!("net {:016x}", network.checksum()),
        None => "hand-crafted".to_string(),
    };
    let syzygy = match config.tablebases.cardinality {
        0 => "none".to_string(),
        pieces => format!("up to {pieces} pieces"),
    };
    vec![
        setting("seed", "--seed", config.seed.to_string()),
        setting("nodes", "--nodes", config.nodes.to_string()),
        setting(
            "node-limit",
            "--node-limit",
            match config.node_limit {
                NodeLimit::Soft => "soft",
                NodeLimit::Hard => "hard",
            }
            .to_string(),
        ),
        setting(
            "verify-nodes",
            "--verify-nodes",
            config.verify_nodes.to_string(),
        ),
        setting(
            "opening-max-score",
            "--opening-max-score",
            config.opening_max_score.to_string(),
        ),
        setting(
            "random-plies",
            "--random-plies-min and --random-plies-max",
            format!("{} {}", config.random_plies.0, config.random_plies.1),
        ),
        setting("book", "--book", book),
        setting("evaluation", "--eval-file or --hce", evaluation),
        setting("syzygy", "--syzygy", syzygy),
    ]
}

pub fn path(out: &Path) -> PathBuf {
    let mut name = out.as_os_str().to_owned();
    name.push(".progress");
    PathBuf::from(name)
}

/// What a progress file holds: the totals, and the settings it records as (name, value).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Progress {
    pub totals: Totals,
    pub settings: Vec<(String, String)>,
}

/// Reads the progress file of `out`, a file of `format`.
pub fn read(out: &Path, format: Format) -> io::Result<Progress> {
    let text = fs::read_to_string(path(out))?;
    let mut lines = text.lines();
    let words: Vec<&str> = lines.next().unwrap_or("").split_whitespace().collect();
    let number = |word: &str| word.parse::<u64>().map_err(|_| unreadable());
    let totals = match (format, words.as_slice()) {
        (Format::Records, ["games", g, "records", r]) => Totals {
            games: number(g)?,
            records: number(r)?,
            bytes: number(r)? * RECORD_BYTES as u64,
        },
        (Format::Games, ["games", g, "records", r, "bytes", b]) => Totals {
            games: number(g)?,
            records: number(r)?,
            bytes: number(b)?,
        },
        _ => return Err(unreadable()),
    };
    let settings = lines
        .filter(|line| !line.trim().is_empty())
        .map(|line| match line.trim().split_once(' ') {
            Some((name, value)) => Ok((name.to_string(), value.trim().to_string())),
            None => Err(unreadable()),
        })
        .collect::<io::Result<_>>()?;
    Ok(Progress { totals, settings })
}

fn unreadable() -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        "unreadable progress file (a record file's first line reads `games G records R`, a \
         games file's `games G records R bytes B`, and each line after it a setting and its \
         value)",
    )
}

/// Written beside the data after each game, through a rename so that it is never
/// half-written.
pub fn write(out: &Path, totals: Totals, format: Format, settings: &[Setting]) -> io::Result<()> {
    let path = path(out);
    let mut tmp = path.clone().into_os_string();
    tmp.push(".tmp");
    let mut text = format!("games {} records {}", totals.games, totals.records);
    if format == Format::Games {
        text += &format!(" bytes {}", totals.bytes);
    }
    text.push('\n');
    for setting in settings {
        text += &format!("{} {}\n", setting.name, setting.value);
    }
    fs::write(&tmp, text)?;
    fs::rename(&tmp, &path)
}

/// Whether this run (`settings`) may resume the file of `out`, whose progress file recorded
/// `recorded`: every recorded setting must be this run's. A setting the file does not record
/// (an older build wrote it) is accepted; the returned notes say which went unchecked. The
/// error names every difference.
pub fn check_resume(
    out: &Path,
    recorded: &[(String, String)],
    settings: &[Setting],
) -> Result<Vec<String>, String> {
    let mut differences = Vec::new();
    let mut unrecorded = Vec::new();
    for setting in settings {
        match recorded.iter().find(|(name, _)| name == setting.name) {
            Some((_, value)) if *value == setting.value => {}
            Some((_, value)) => differences.push(format!(
                "{} {value} there, {} in this run ({})",
                setting.name, setting.value, setting.flags
            )),
            None => unrecorded.push(setting.name),
        }
    }
    for (name, value) in recorded {
        if !settings.iter().any(|s| s.name == name) {
            differences.push(format!(
                "{name} {value} there, which this build does not know"
            ));
        }
    }
    if !differences.is_empty() {
        return Err(format!(
            "{} was begun with other settings than this run's, as {} records: {}. Resume it \
             with the settings it was begun with, or write to another --out",
            out.display(),
            path(out).display(),
            differences.join("; ")
        ));
    }
    Ok(if unrecorded.is_empty() {
        Vec::new()
    } else {
        vec![format!(
            "{} does not record {} (an older build wrote it): resuming without checking \
             them; they are recorded from now on",
            path(out).display(),
            unrecorded.join(", ")
        )]
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("basalt-progress-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        dir.join(name)
    }

    fn these(values: &[(&'static str, &str)]) -> Vec<Setting> {
        values
            .iter()
            .map(|&(name, value)| Setting {
                name,
                flags: name,
                value: value.to_string(),
            })
            .collect()
    }

    #[test]
    fn settings_are_written_after_the_totals_and_read_back() {
        let out = scratch("written.bin");
        let totals = Totals {
            games: 3,
            records: 200,
            bytes: 900,
        };
        let settings = these(&[("seed", "7"), ("book", "2 positions, FNV-1a 00ff")]);
        write(&out, totals, Format::Games, &settings).unwrap();
        // The first line is what it always was: tools/data.py reads only that one.
        assert_eq!(
            fs::read_to_string(path(&out)).unwrap(),
            "games 3 records 200 bytes 900\nseed 7\nbook 2 positions, FNV-1a 00ff\n"
        );
        let progress = read(&out, Format::Games).unwrap();
        assert_eq!(progress.totals, totals);
        let recorded: Vec<(&str, &str)> = progress
            .settings
            .iter()
            .map(|(n, v)| (n.as_str(), v.as_str()))
            .collect();
        assert_eq!(
            recorded,
            [("seed", "7"), ("book", "2 positions, FNV-1a 00ff")]
        );
        assert_eq!(
            check_resume(&out, &progress.settings, &settings),
            Ok(vec![])
        );

        // A file from before the settings were recorded: its totals, and nothing else.
        fs::write(path(&out), "games 3 records 200 bytes 900\n").unwrap();
        let old = read(&out, Format::Games).unwrap();
        assert_eq!((old.totals, old.settings.len()), (totals, 0));
        // A setting line without a value is not one.
        fs::write(path(&out), "games 3 records 200 bytes 900\nseed\n").unwrap();
        assert!(read(&out, Format::Games).is_err());
        fs::remove_dir_all(out.parent().unwrap()).unwrap();
    }

    #[test]
    fn a_resume_with_other_settings_is_refused_naming_them() {
        let out = Path::new("run.bin");
        let recorded = |pairs: &[(&str, &str)]| -> Vec<(String, String)> {
            pairs
                .iter()
                .map(|&(n, v)| (n.to_string(), v.to_string()))
                .collect()
        };
        let run = these(&[("seed", "8"), ("nodes", "900"), ("book", "none")]);
        let error = check_resume(
            out,
            &recorded(&[("seed", "7"), ("nodes", "800"), ("book", "none")]),
            &run,
        )
        .unwrap_err();
        assert!(error.contains("seed 7 there, 8 in this run"), "{error}");
        assert!(
            error.contains("nodes 800 there, 900 in this run"),
            "{error}"
        );
        assert!(!error.contains("book"), "{error}");
        assert!(error.contains("run.bin.progress"), "{error}");
        // A setting this build does not know cannot be checked: refused too.
        let error = check_resume(
            out,
            &recorded(&[
                ("seed", "8"),
                ("nodes", "900"),
                ("book", "none"),
                ("x", "1"),
            ]),
            &run,
        )
        .unwrap_err();
        assert!(
            error.contains("x 1 there, which this build does not know"),
            "{error}"
        );
        // Missing ones (an older build's file) are accepted, with a note naming them.
        let notes = check_resume(out, &recorded(&[("seed", "8")]), &run).unwrap();
        assert_eq!(notes.len(), 1);
        assert!(
            notes[0].contains("does not record nodes, book"),
            "{notes:?}"
        );
        let notes = check_resume(out, &[], &run).unwrap();
        assert!(
            notes[0].contains("does not record seed, nodes, book"),
            "{notes:?}"
        );
    }
}
