//! Search statistics: cheap counters kept in every search, printed by `bench --stats` and
//! with `debug on`.

#[derive(Clone, Debug, Default)]
pub struct Stats {
    pub nodes: u64,
    pub qnodes: u64,
    pub tt_probes: u64,
    pub tt_hits: u64,
    pub beta_cutoffs: u64,
    pub first_move_cutoffs: u64,
    /// (depth, nodes spent on that iteration).
    pub iteration_nodes: Vec<(i32, u64)>,
}

impl Stats {
    pub fn add(&mut self, other: &Stats) {
        self.nodes += other.nodes;
        self.qnodes += other.qnodes;
        self.tt_probes += other.tt_probes;
        self.tt_hits += other.tt_hits;
        self.beta_cutoffs += other.beta_cutoffs;
        self.first_move_cutoffs += other.first_move_cutoffs;
    }

    pub fn tt_hit_rate(&self) -> f64 {
        ratio(self.tt_hits, self.tt_probes)
    }

    pub fn first_move_cutoff_rate(&self) -> f64 {
        ratio(self.first_move_cutoffs, self.beta_cutoffs)
    }

    pub fn qsearch_share(&self) -> f64 {
        ratio(self.qnodes, self.nodes)
    }

    /// Effective branching factor of each iteration: its nodes over the previous one's.
    pub fn branching_factors(&self) -> Vec<(i32, f64)> {
        self.iteration_nodes
            .windows(2)
            .filter(|w| w[1].0 == w[0].0 + 1)
            .map(|w| (w[1].0, ratio(w[1].1, w[0].1.max(1))))
            .collect()
    }

    pub fn summary(&self) -> String {
        let ebf: Vec<String> = self
            .branching_factors()
            .iter()
            .map(|(d, b)| format!("{d}:{b:.2}"))
            .collect();
        format!(
            "nodes {} qnodes {:.1}% tt-hits {:.1}% cutoffs {} first-move-cutoffs {:.1}% ebf [{}]",
            self.nodes,
            100.0 * self.qsearch_share(),
            100.0 * self.tt_hit_rate(),
            self.beta_cutoffs,
            100.0 * self.first_move_cutoff_rate(),
            ebf.join(" ")
        )
    }
}

fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 / b as f64
    }
}
