//! `basalt bench` is the search's fingerprint: its node count must be the same on every run,
//! and its last line must be exactly `<nodes> nodes <nps> nps` for OpenBench.

mod common;

/// What `basalt bench` prints at its default depth: the search's signature, the `Bench: N`
/// every commit message ends with. A commit that changes the search changes this number in
/// the same commit and says so in its message; any other commit must leave it alone, and
/// this test fails if it does not.
const BENCH_NODES: u64 = 4_449_832;

fn bench_last_line(depth: &str) -> String {
    bench_last_line_with(&["--depth", depth])
}

fn bench_last_line_with(args: &[&str]) -> String {
    let out = common::run_engine(
        common::basalt().arg("bench").args(args),
        std::time::Duration::from_secs(300),
        &[],
    );
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), basalt::bench::BENCH_FENS.len() + 1, "{text}");
    lines.last().unwrap().to_string()
}

/// The node count of an OpenBench-readable last line, `<nodes> nodes <nps> nps`.
fn nodes_of(line: &str) -> u64 {
    let fields: Vec<&str> = line.split(' ').collect();
    assert!(
        fields.len() == 4 && fields[1] == "nodes" && fields[3] == "nps",
        "not `<nodes> nodes <nps> nps`: {line:?}"
    );
    fields[2]
        .parse::<u64>()
        .unwrap_or_else(|_| panic!("nps is not a number: {line:?}"));
    fields[0]
        .parse()
        .unwrap_or_else(|_| panic!("nodes is not a number: {line:?}"))
}

#[test]
fn bench_prints_the_signature_node_count() {
    let nodes = nodes_of(&bench_last_line_with(&[]));
    assert_eq!(
        nodes, BENCH_NODES,
        "bench gives {nodes} nodes, not {BENCH_NODES}: the search changed. If that was meant, \
         set BENCH_NODES to {nodes} and end the commit message with `Bench: {nodes}`"
    );
}

#[test]
fn bench_is_deterministic() {
    let first = nodes_of(&bench_last_line("5"));
    let second = nodes_of(&bench_last_line("5"));
    assert!(first > 0);
    assert_eq!(first, second);
}

#[test]
fn bench_hce_flag_searches_with_the_hand_crafted_evaluation() {
    // The net is the default; `--hce` must change the tree (another evaluation) and stay
    // deterministic itself.
    let net = bench_last_line("4");
    let hce = bench_last_line_with(&["--depth", "4", "--hce"]);
    let again = bench_last_line_with(&["--depth", "4", "--hce"]);
    assert_eq!(nodes_of(&hce), nodes_of(&again));
    assert_ne!(nodes_of(&net), nodes_of(&hce));
}
