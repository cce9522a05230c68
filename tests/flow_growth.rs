//! The growth bound of Filebench's append and create flowops
//! (`runner::flow::growth`), on the shipped personalities as an experiment
//! plans them. Here rather than in the module: planning a personality needs
//! the frontend, which the runner never reaches.

use fsbench::model::flow::FlowPlan;
use fsbench::runner::flow::growth::{bound, FlowopGrowth};

/// A shipped personality planned as an experiment plans it.
fn personality(name: &str, runtime: u64) -> FlowPlan {
    let text = format!(
        "name = \"t\"\n[[target]]\nlabel = \"d\"\ndirectory = \"/tmp\"\n[[workload]]\nlabel = \"w\"\nfilebench = \"{name}\"\nruntime = {runtime}\n"
    );
    let e = fsbench::frontend::experiment::parse(&text, std::path::Path::new("exp.toml"), &[]).unwrap();
    let at = fsbench::model::recipe::Placement { target: "/nonexistent/fsbench-growth".into(), is_device: false, params: &e.params };
    match e.workloads[0].recipe.plan(&at).unwrap().plan.workload {
        fsbench::model::Workload::Flow(f) => f,
        _ => panic!("a flow"),
    }
}

#[test]
fn webserver_log_appends_are_bounded_by_its_loop() {
    let g = bound(&personality("webserver", 5), 2);
    let log = g.flowops.iter().find(|f| f.flowop == "appendlog").expect("the log append");
    assert_eq!((log.kind, log.bytes_per_op), ("appendfilerand", 16 << 10));
    // Ten opens, reads and closes per append: a 2-CPU bound of
    // 2 / (31 µs + bytes) iterations per second, under 2M/31.
    assert!(log.ops_per_s < 2e6 / 31.0 && log.ops_per_s > 20_000.0, "{log:?}");
    assert_eq!(g.seconds, 5);
    assert!(g.bytes() >= log.bytes && log.bytes > 1 << 30, "{g:?}");
    // Twice the run, twice the bound; one CPU, half.
    assert!(bound(&personality("webserver", 10), 2).bytes() > g.bytes() * 19 / 10);
    assert!(bound(&personality("webserver", 5), 1).bytes() < g.bytes() * 6 / 10);
}

#[test]
fn deletes_from_the_same_fileset_level_what_appends_add() {
    // varmail and fileserver delete a file per pass from the fileset
    // they append to: their bound stops growing with the run.
    for name in ["varmail", "fileserver"] {
        let short = bound(&personality(name, 5), 2);
        let long = bound(&personality(name, 600), 2);
        let appends: Vec<&FlowopGrowth> = long.flowops.iter().filter(|f| f.kind == "appendfilerand").collect();
        assert!(!appends.is_empty() && appends.iter().all(|f| f.deletes_bound.is_some()), "{name}: {long:?}");
        assert_eq!(short.bytes(), long.bytes(), "{name}: {short:?} {long:?}");
        assert!(long.bytes() < 4 << 30, "{name}: {long:?}");
    }
    // webserver's log is never deleted: its bound grows with the run.
    let web = bound(&personality("webserver", 5), 2);
    assert!(web.flowops.iter().all(|f| f.deletes_bound.is_none()), "{web:?}");
}

#[test]
fn a_read_only_personality_cannot_grow() {
    let g = bound(&personality("randomread", 5), 4);
    assert_eq!(g.bytes(), 0, "{g:?}");
}
