//! `basalt bench` is the search's fingerprint: its node count must be the same on every run,
//! and its last line must be exactly `<nodes> nodes <nps> nps` for OpenBench.

mod common;

fn bench_last_line(depth: &str) -> String {
    bench_last_line_with(&["--depth", depth])
}

fn bench_last_line_with(args: &[&str]) -> String {
    let out = common::basalt()
        .arg("bench")
        .args(args)
        .output()
        .expect("run basalt bench");
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), basalt::bench::BENCH_FENS.len() + 1, "{text}");
    lines.last().unwrap().to_string()
}

#[test]
fn bench_is_deterministic_and_openbench_readable() {
    let first = bench_last_line("5");
    let second = bench_last_line("5");
    let fields: Vec<&str> = first.split(' ').collect();
    assert_eq!(fields.len(), 4, "{first}");
    assert_eq!(fields[1], "nodes");
    assert_eq!(fields[3], "nps");
    let nodes: u64 = fields[0].parse().unwrap();
    let _: u64 = fields[2].parse().unwrap();
    assert!(nodes > 0);
    assert_eq!(first.split(' ').next(), second.split(' ').next());
}

#[test]
fn bench_hce_flag_searches_with_the_hand_crafted_evaluation() {
    // The net is the default; `--hce` must change the tree (another evaluation) and stay
    // deterministic itself.
    let net = bench_last_line("4");
    let hce = bench_last_line_with(&["--depth", "4", "--hce"]);
    let again = bench_last_line_with(&["--depth", "4", "--hce"]);
    let nodes = |line: &str| line.split(' ').next().unwrap().to_string();
    assert_eq!(nodes(&hce), nodes(&again));
    assert_ne!(nodes(&net), nodes(&hce));
}
