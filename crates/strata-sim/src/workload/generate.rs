//! The seeded generator of random workloads.

use std::collections::BTreeMap;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use super::{Evolution, Header, Key, Op, Row, Workload};

impl Workload {
    /// A random workload: `commits` commits of puts and deletes over a uniform or zipfian key space, with
    /// compactions, scans, gets, expirations, crashes and mode switches mixed in.
    pub fn generate(seed: u64, commits: usize) -> Self {
        let mut rng = StdRng::seed_from_u64(seed);
        let partitioned = rng.random_bool(0.3);
        let engine =
            ["deduplicate", "deduplicate", "partial-update", "aggregation", "first-row"][rng.random_range(0..5)];
        let mut header = Header {
            buckets: rng.random_range(1..=3),
            partitioned,
            deletion_vectors: engine != "first-row" && rng.random_bool(0.5),
            merge_engine: engine.to_string(),
            options: BTreeMap::from([
                ("num-sorted-run.compaction-trigger".to_string(), rng.random_range(2..=5).to_string()),
                ("target-file-size".to_string(), format!("{} kb", rng.random_range(4..=64))),
            ]),
        };
        let key_space: i64 = [20, 200, 2000][rng.random_range(0..3)];
        let zipf = rng.random_bool(0.5);
        let key = |rng: &mut StdRng| -> Key {
            let id = if zipf {
                // Zipf-ish: small keys far more often.
                ((key_space as f64).powf(rng.random::<f64>()) as i64 - 1).clamp(0, key_space - 1)
            } else {
                rng.random_range(0..key_space)
            };
            Key { id, p: partitioned.then(|| ["a", "b"][rng.random_range(0..2)].to_string()) }
        };
        let delete_ratio = [0.0, 0.1, 0.4][rng.random_range(0..3)];
        let mut ops = Vec::new();
        // Schema and layout changes, drawn from a generator of their own so that earlier seeds keep their
        // other steps.
        let mut evolutions = Evolutions::new(seed);
        for _ in 0..commits {
            for _ in 0..rng.random_range(1..4) {
                let n = rng.random_range(1..40);
                if rng.random_bool(delete_ratio) {
                    ops.push(Op::Delete { keys: (0..n).map(|_| key(&mut rng)).collect() });
                } else {
                    let rows = (0..n)
                        .map(|_| {
                            let k = key(&mut rng);
                            Row {
                                id: k.id,
                                p: k.p,
                                v: rng.random_bool(0.9).then(|| rng.random_range(-1000..1000)),
                                s: rng.random_bool(0.8).then(|| format!("s{}", rng.random_range(0..100))),
                            }
                        })
                        .collect();
                    ops.push(Op::Put { rows });
                }
            }
            if rng.random_bool(0.05) {
                ops.push(Op::Crash);
            }
            ops.push(Op::Commit);
            match rng.random_range(0..40) {
                0..=2 => ops.push(Op::Compact),
                3 => ops.push(Op::FullCompact),
                4..=6 => ops.push(Op::Expire { retain: rng.random_range(1..4) }),
                // First-row tables cannot have deletion vectors.
                7 if engine != "first-row" => ops.push(Op::SwitchMode { dv: rng.random_bool(0.5) }),
                8 => ops.push(Op::Reopen),
                9..=12 => ops.push(Op::Get { key: key(&mut rng) }),
                _ => {}
            }
            if let Some(change) = evolutions.next() {
                ops.push(Op::Evolve { change });
            }
        }
        ops.push(Op::Scan);
        // Changelog producers, drawn from a generator of their own so that earlier seeds keep their workloads.
        let mut changelog_rng = StdRng::seed_from_u64(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15).wrapping_add(17));
        if changelog_rng.random_bool(0.4) {
            // Input changelog is every input row: it folds to the table only where the last row wins.
            let producer = if matches!(engine, "deduplicate" | "first-row") {
                ["input", "lookup"][changelog_rng.random_range(0..2)]
            } else {
                "lookup"
            };
            header.options.insert("changelog-producer".to_string(), producer.to_string());
        }
        Workload { header, ops }
    }
}

/// The schema changes of one generated workload: after about one commit in twelve, add, widen or drop an
/// INT column, rename `s`, or switch the file layout, keeping track of what the table has.
struct Evolutions {
    rng: StdRng,
    added: Vec<(String, bool)>,
    next_name: u32,
    thin: bool,
}

impl Evolutions {
    fn new(seed: u64) -> Self {
        let rng = StdRng::seed_from_u64(seed.wrapping_mul(0xD134_2543_DE82_EF95).wrapping_add(29));
        Evolutions { rng, added: Vec::new(), next_name: 1, thin: false }
    }

    fn next(&mut self) -> Option<Evolution> {
        if !self.rng.random_bool(1.0 / 12.0) {
            return None;
        }
        let n = self.next_name;
        Some(match self.rng.random_range(0..5) {
            0 | 1 if self.added.len() < 4 => {
                self.next_name += 1;
                self.added.push((format!("e{n}"), false));
                Evolution::AddColumn { name: format!("e{n}"), after_v: self.rng.random_bool(0.5) }
            }
            2 if !self.added.is_empty() => {
                let i = self.rng.random_range(0..self.added.len());
                Evolution::DropColumn { name: self.added.remove(i).0 }
            }
            3 if self.added.iter().any(|(_, wide)| !wide) => {
                let (name, wide) = self.added.iter_mut().find(|(_, wide)| !*wide)?;
                *wide = true;
                Evolution::WidenColumn { name: name.clone() }
            }
            4 => {
                self.thin = !self.thin;
                Evolution::ThinMode { on: self.thin }
            }
            _ => {
                self.next_name += 1;
                Evolution::RenameS { to: format!("s{n}") }
            }
        })
    }
}
