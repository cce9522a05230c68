//! The order an experiment's runs are done in. Sequential is target after
//! target (`matrix` per target). Interleaved: round r runs repeat r of every
//! cell; within a round the workloads keep the file's order (a later one may
//! read what an earlier one left: fio's fill before its reads, YCSB's load
//! before its run), and each workload's cells (target × cache × background)
//! come in an order shuffled per (round, workload) from the experiment's
//! seed. The cells a comparison pairs then run close together in time, and
//! a load that drifts over the experiment falls on every level alike.

use super::experiment::{matrix, Planned};
use super::rng::Rng;
use crate::model::environment::{DeviceSource, TargetSpec};
use crate::model::experiment::{Experiment, Order};
use std::collections::BTreeMap;

/// Every run of `exp`, in the order they run.
pub fn schedule(exp: &Experiment) -> Vec<Planned> {
    let all = exp.targets.iter().flat_map(|t| matrix(exp, &t.label));
    match exp.order {
        Order::Sequential => all.collect(),
        Order::Interleaved => {
            let mut groups: BTreeMap<(u32, usize), Vec<Planned>> = BTreeMap::new();
            for p in all {
                groups.entry((p.repeat, p.workload)).or_default().push(p);
            }
            let mut out = Vec::new();
            for ((round, workload), mut cells) in groups {
                shuffle(&mut cells, &mut Rng::new(group_seed(exp.seed, round, workload)));
                out.extend(cells);
            }
            out
        }
    }
}

/// The shuffle of (round, workload): its own stream of the experiment's seed.
fn group_seed(seed: u64, round: u32, workload: usize) -> u64 {
    seed ^ ((round as u64) << 32 | workload as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

/// Fisher–Yates.
fn shuffle<T>(v: &mut [T], rng: &mut Rng) {
    for i in (1..v.len()).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        v.swap(i, j);
    }
}

/// The device a target holds while it is up, when another target could
/// name the same one: a device the user names, or a zram device of a size.
fn device_of(spec: &TargetSpec) -> Option<String> {
    let source = match spec {
        TargetSpec::Device(p) => return Some(p.display().to_string()),
        TargetSpec::ManagedDevice(d) | TargetSpec::Managed { device: d, .. } => d,
        TargetSpec::Directory(_) => return None,
    };
    match source {
        DeviceSource::Device(p) => Some(p.display().to_string()),
        DeviceSource::Zram { size } => Some(format!("a zram device of {size} bytes")),
        DeviceSource::Loop { .. } => None,
    }
}

/// Interleaved runs keep every target up at once: two targets on the same
/// device cannot be. One problem per pair.
pub fn device_conflicts(exp: &Experiment) -> Vec<String> {
    if exp.order != Order::Interleaved {
        return Vec::new();
    }
    let mut out = Vec::new();
    for (i, a) in exp.targets.iter().enumerate() {
        for b in &exp.targets[i + 1..] {
            if let (Some(da), Some(db)) = (device_of(&a.spec), device_of(&b.spec)) {
                if da == db {
                    out.push(format!(
                        "targets '{}' and '{}' both need {da}, and the interleaved order keeps every target up at once; \
                         order = \"sequential\" (or --order sequential) runs them one after the other",
                        a.label, b.label
                    ));
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::environment::{BackgroundSpec, CacheScenario};
    use crate::model::experiment::{BackgroundChoice, MatrixWorkload, Target};
    use crate::model::recipe::{Lowered, Placement, Recipe, RecipeError};
    use std::sync::Arc;

    #[derive(Debug)]
    struct NoPlan;
    impl Recipe for NoPlan {
        fn plan(&self, _: &Placement) -> Result<Lowered, RecipeError> {
            unreachable!("schedules never plan")
        }
    }

    /// Three targets, two workloads (fill, then read), two background levels, 4 repeats.
    fn exp(order: &str, seed: u64) -> Experiment {
        let target = |l: &str| Target { label: l.into(), spec: TargetSpec::Directory("/tmp".into()) };
        let workload = |l: &str| MatrixWorkload { label: l.into(), family: "fio", recipe: Arc::new(NoPlan), only: None };
        let files = BackgroundChoice { label: "files".into(), spec: BackgroundSpec::seed("/tmp"), dir_given: false };
        Experiment {
            name: "o".into(),
            description: None,
            file: "o.toml".into(),
            repeat: 4,
            params: Default::default(),
            targets: vec![target("a"), target("b"), target("c")],
            workloads: vec![workload("fill"), workload("read")],
            caches: vec![CacheScenario::Warm],
            backgrounds: vec![None, Some(files)],
            trace: None,
            order: Order::parse(order).unwrap(),
            seed,
            gaps: Vec::new(),
        }
    }

    fn keys(v: &[Planned]) -> Vec<(String, u32)> {
        v.iter().map(|p| (p.cell.key(), p.repeat)).collect()
    }

    #[test]
    fn sequential_is_target_after_target() {
        let e = exp("sequential", 1);
        let old: Vec<Planned> = e.targets.iter().flat_map(|t| matrix(&e, &t.label)).collect();
        assert_eq!(keys(&schedule(&e)), keys(&old));
    }

    #[test]
    fn interleaved_rounds_are_permutations_with_workloads_in_file_order() {
        let e = exp("interleaved", 7);
        let s = schedule(&e);
        let cells = e.targets.len() * e.backgrounds.len();
        assert_eq!(s.len(), cells * e.workloads.len() * e.repeat as usize);
        for (r, round) in s.chunks(cells * e.workloads.len()).enumerate() {
            assert!(round.iter().all(|p| p.repeat == r as u32 + 1), "round {r}: {:?}", keys(round));
            for (wi, group) in round.chunks(cells).enumerate() {
                assert!(group.iter().all(|p| p.workload == wi), "workloads keep the file's order");
                let mut got: Vec<String> = group.iter().map(|p| p.cell.key()).collect();
                let mut want: Vec<String> = e
                    .targets
                    .iter()
                    .flat_map(|t| matrix(&e, &t.label))
                    .filter(|p| p.repeat == 1 && p.workload == wi)
                    .map(|p| p.cell.key())
                    .collect();
                got.sort();
                want.sort();
                assert_eq!(got, want, "every cell once per round");
            }
        }
        // Shuffled: not every group in the plain order.
        let plain: Vec<String> = e
            .targets
            .iter()
            .flat_map(|t| matrix(&e, &t.label))
            .filter(|p| p.repeat == 1 && p.workload == 0)
            .map(|p| p.cell.key())
            .collect();
        assert!(s.chunks(cells).any(|g| g.iter().map(|p| p.cell.key()).collect::<Vec<_>>() != plain));
    }

    #[test]
    fn the_seed_reproduces_the_order_and_another_seed_changes_it() {
        assert_eq!(keys(&schedule(&exp("interleaved", 42))), keys(&schedule(&exp("interleaved", 42))));
        assert_ne!(keys(&schedule(&exp("interleaved", 42))), keys(&schedule(&exp("interleaved", 43))));
    }

    #[test]
    fn two_targets_on_one_device_cannot_interleave() {
        let mut e = exp("interleaved", 1);
        let dev = TargetSpec::Device("/dev/sdz".into());
        e.targets[0].spec = dev.clone();
        e.targets[2].spec = dev;
        let c = device_conflicts(&e);
        assert_eq!(c.len(), 1, "{c:?}");
        assert!(c[0].contains("'a' and 'c'") && c[0].contains("order = \"sequential\""), "{}", c[0]);
        e.order = Order::Sequential;
        assert!(device_conflicts(&e).is_empty());
    }
}
