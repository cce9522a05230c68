//! YCSB's six core workloads, built in by name (`-P workloada`), with the
//! properties of YCSB's own `workloads/workload[a-f]` files (a test
//! compares them with the files of the Java build when it is present).

pub const CORE: &[(&str, &str, &str)] = &[
    (
        "workloada",
        "update heavy: 50% reads, 50% updates, zipfian",
        "recordcount=1000\noperationcount=1000\nworkload=site.ycsb.workloads.CoreWorkload\nreadallfields=true\n\
         readproportion=0.5\nupdateproportion=0.5\nscanproportion=0\ninsertproportion=0\nrequestdistribution=zipfian\n",
    ),
    (
        "workloadb",
        "read mostly: 95% reads, 5% updates, zipfian",
        "recordcount=1000\noperationcount=1000\nworkload=site.ycsb.workloads.CoreWorkload\nreadallfields=true\n\
         readproportion=0.95\nupdateproportion=0.05\nscanproportion=0\ninsertproportion=0\nrequestdistribution=zipfian\n",
    ),
    (
        "workloadc",
        "read only, zipfian",
        "recordcount=1000\noperationcount=1000\nworkload=site.ycsb.workloads.CoreWorkload\nreadallfields=true\n\
         readproportion=1\nupdateproportion=0\nscanproportion=0\ninsertproportion=0\nrequestdistribution=zipfian\n",
    ),
    (
        "workloadd",
        "read latest: 95% reads, 5% inserts, the newest records hottest",
        "recordcount=1000\noperationcount=1000\nworkload=site.ycsb.workloads.CoreWorkload\nreadallfields=true\n\
         readproportion=0.95\nupdateproportion=0\nscanproportion=0\ninsertproportion=0.05\nrequestdistribution=latest\n",
    ),
    (
        "workloade",
        "short ranges: 95% scans of up to 100 records, 5% inserts, zipfian",
        "recordcount=1000\noperationcount=1000\nworkload=site.ycsb.workloads.CoreWorkload\nreadallfields=true\n\
         readproportion=0\nupdateproportion=0\nscanproportion=0.95\ninsertproportion=0.05\nrequestdistribution=zipfian\n\
         maxscanlength=100\nscanlengthdistribution=uniform\n",
    ),
    (
        "workloadf",
        "read-modify-write: 50% reads, 50% read-modify-writes, zipfian",
        "recordcount=1000\noperationcount=1000\nworkload=site.ycsb.workloads.CoreWorkload\nreadallfields=true\n\
         readproportion=0.5\nupdateproportion=0\nscanproportion=0\ninsertproportion=0\nreadmodifywriteproportion=0.5\n\
         requestdistribution=zipfian\n",
    ),
];

/// The built-in workload `-P NAME` means: `workloada`, or a path ending in
/// it (`workloads/workloada`) that does not exist as a file.
pub fn builtin(name: &str) -> Option<&'static str> {
    let base = name.rsplit('/').next().unwrap_or(name);
    CORE.iter().find(|(n, _, _)| *n == base).map(|(_, _, text)| *text)
}
