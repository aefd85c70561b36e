//! The crate's imports run one way. Reads every source file under `src/` and checks two
//! rules on the paths it names (`crate::a::b`, `super::c`, `use` groups included):
//!
//! - a top-level module uses only modules of a lower layer in [`LAYERS`] (so no cycle can
//!   form between them, and nothing below `search` knows UCI);
//! - the files of one module (siblings such as `eval/pawns.rs` and `eval/terms.rs`) form no
//!   import cycle. A module's `mod.rs` is left out of that check: its children extend its
//!   types (`impl Searcher` in `search/node.rs`), which is a seam, not a tangle.
//!
//! Unit tests (`#[cfg(test)] mod tests`) are left out: a test may borrow any module's
//! fixtures (the bench positions, say) without shaping the build.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// Bottom first. A module may use only modules of lower layers.
const LAYERS: &[&[&str]] = &[
    &["score", "tunable"],
    &["position", "movegen", "see", "eval", "time", "tt", "syzygy"],
    &["nnue", "perft"],
    &["search"],
    &["bench"],
    &["threads"],
    &["uci"],
    // The offline tools (datagen, training, Texel tuning) use the engine; nothing in the
    // engine uses them.
    &["offline"],
];

/// A source file, by its module path (`src/eval/mod.rs` is `["eval"]`).
struct Source {
    module: Vec<String>,
    file: PathBuf,
    /// The text with comments, string literals and unit tests removed.
    code: String,
}

fn collect(dir: &Path, out: &mut Vec<Source>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            collect(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let relative = path.strip_prefix(src_dir()).unwrap().with_extension("");
            let mut module: Vec<String> = relative
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            if module.last().is_some_and(|m| m == "mod") {
                module.pop();
            }
            // The crate roots declare modules rather than use them.
            if module == ["lib"] || module == ["main"] {
                continue;
            }
            let text = fs::read_to_string(&path).unwrap();
            out.push(Source {
                module,
                file: path,
                code: without_tests(&strip_comments_and_strings(&text)),
            });
        }
    }
}

fn src_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// Drops `//` and `/* */` comments and the contents of string and char literals, so a
/// path in a doc comment or a message is not taken for an import.
fn strip_comments_and_strings(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            i += 2;
            while i + 1 < chars.len() && !(chars[i] == '*' && chars[i + 1] == '/') {
                i += 1;
            }
            i += 2;
        } else if c == '"' {
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                i += if chars[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
            out.push_str("\"\"");
        } else if c == '\'' && next.is_some() && chars.get(i + 2) == Some(&'\'') {
            // A char literal such as 'a' (a lifetime has no closing quote).
            i += 3;
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

/// Removes every `#[cfg(test)] mod ... { ... }` block.
fn without_tests(code: &str) -> String {
    let mut out = code.to_string();
    while let Some(at) = out.find("#[cfg(test)]") {
        let rest = out[at + "#[cfg(test)]".len()..].trim_start();
        if !rest.starts_with("mod ") && !rest.starts_with("pub mod ") {
            // A test-only item outside a test module: blank the attribute and go on.
            out.replace_range(at..at + 1, " ");
            continue;
        }
        let open = at + out[at..].find('{').expect("a test module has a body");
        let mut depth = 0;
        let mut end = open;
        for (i, c) in out[open..].char_indices() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        end = open + i + 1;
                        break;
                    }
                }
                _ => {}
            }
        }
        out.replace_range(at..end, "");
    }
    out
}

/// Every path after `prefix` (`crate::` or `super::`) in `code`, as its segments; `use`
/// groups (`crate::{a, b::c}`) give one path per member.
fn paths_after(code: &str, prefix: &str) -> Vec<Vec<String>> {
    let mut paths = Vec::new();
    let mut from = 0;
    while let Some(found) = code[from..].find(prefix) {
        let at = from + found;
        from = at + prefix.len();
        let before = code[..at].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        expand(&code[from..], &mut Vec::new(), &mut paths);
    }
    paths
}

/// Reads one path (or group) at the start of `rest`, appending what it names to `out`.
fn expand(rest: &str, stem: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
    let rest = rest.trim_start();
    if let Some(group) = rest.strip_prefix('{') {
        let mut depth = 0;
        let mut start = 0;
        for (i, c) in group.char_indices() {
            match c {
                '{' => depth += 1,
                '}' if depth == 0 => {
                    expand(&group[start..i], &mut stem.clone(), out);
                    return;
                }
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    expand(&group[start..i], &mut stem.clone(), out);
                    start = i + 1;
                }
                _ => {}
            }
        }
        return;
    }
    let ident: String = rest
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect();
    if ident.is_empty() {
        if !stem.is_empty() {
            out.push(stem.clone());
        }
        return;
    }
    stem.push(ident.clone());
    match rest[ident.len()..].strip_prefix("::") {
        Some(more) => expand(more, stem, out),
        None => out.push(stem.clone()),
    }
}

fn layer_of(module: &str) -> usize {
    LAYERS
        .iter()
        .position(|layer| layer.contains(&module))
        .unwrap_or_else(|| panic!("module `{module}` has no layer in tests/layering.rs"))
}

#[test]
fn top_level_modules_use_only_lower_layers() {
    let mut sources = Vec::new();
    collect(&src_dir(), &mut sources);
    let mut wrong = Vec::new();
    for source in &sources {
        let own = &source.module[0];
        for path in paths_after(&source.code, "crate::") {
            let used = &path[0];
            if used != own && layer_of(used) >= layer_of(own) {
                wrong.push(format!(
                    "{} uses crate::{}",
                    source.file.display(),
                    path.join("::")
                ));
            }
        }
    }
    wrong.sort();
    wrong.dedup();
    assert!(
        wrong.is_empty(),
        "imports against the layers:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn sibling_files_form_no_import_cycle() {
    let mut sources = Vec::new();
    collect(&src_dir(), &mut sources);
    let modules: BTreeSet<Vec<String>> = sources.iter().map(|s| s.module.clone()).collect();
    // parent module -> child -> the siblings it uses
    let mut graphs: BTreeMap<Vec<String>, BTreeMap<String, BTreeSet<String>>> = BTreeMap::new();
    for source in sources.iter().filter(|s| s.module.len() >= 2) {
        let (name, parent) = source.module.split_last().unwrap();
        let mut used = BTreeSet::new();
        let absolute = paths_after(&source.code, "crate::");
        let relative = paths_after(&source.code, "super::").into_iter().map(|p| {
            let mut full = parent.to_vec();
            full.extend(p);
            full
        });
        for path in absolute.into_iter().chain(relative) {
            if path.len() > parent.len() && path.starts_with(parent) {
                let sibling = path[parent.len()].clone();
                let mut module = parent.to_vec();
                module.push(sibling.clone());
                if &sibling != name && modules.contains(&module) {
                    used.insert(sibling);
                }
            }
        }
        graphs
            .entry(parent.to_vec())
            .or_default()
            .insert(name.clone(), used);
    }
    for (parent, graph) in &graphs {
        if let Some(cycle) = find_cycle(graph) {
            panic!(
                "import cycle in {}: {}",
                parent.join("::"),
                cycle.join(" -> ")
            );
        }
    }
}

/// A cycle in `graph`, as the nodes along it, if there is one.
fn find_cycle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|n| n == node) {
            let mut cycle = path[at..].to_vec();
            cycle.push(node.to_string());
            return Some(cycle);
        }
        if done.contains(node) {
            return None;
        }
        path.push(node.to_string());
        for next in graph.get(node).into_iter().flatten() {
            if let Some(cycle) = visit(next, graph, path, done) {
                return Some(cycle);
            }
        }
        path.pop();
        done.insert(node.to_string());
        None
    }
    let mut done = BTreeSet::new();
    graph
        .keys()
        .find_map(|node| visit(node, graph, &mut Vec::new(), &mut done))
}

#[test]
fn the_checker_sees_paths_groups_and_cycles() {
    let code = strip_comments_and_strings(
        "use crate::{search::{Limits, params::X}, tt};\n// crate::uci in a comment\n\
         let s = \"crate::uci\"; use super::pawns::Info;",
    );
    assert_eq!(
        paths_after(&code, "crate::"),
        vec![
            vec!["search", "Limits"],
            vec!["search", "params", "X"],
            vec!["tt"]
        ]
    );
    assert_eq!(paths_after(&code, "super::"), vec![vec!["pawns", "Info"]]);
    let tests = "fn a() {}\n#[cfg(test)]\nmod tests { use crate::uci; fn b() { {} } }\nfn c() {}";
    assert!(!without_tests(tests).contains("uci") && without_tests(tests).contains("fn c"));
    let graph: BTreeMap<String, BTreeSet<String>> = [
        ("pawns".to_string(), BTreeSet::from(["terms".to_string()])),
        ("terms".to_string(), BTreeSet::from(["pawns".to_string()])),
    ]
    .into();
    assert_eq!(
        find_cycle(&graph),
        Some(vec!["pawns".into(), "terms".into(), "pawns".into()])
    );
}
