use super::*;
use crate::model::postmark::Location;
use std::collections::BTreeMap;

fn plan_in(dir: &Path) -> PostmarkPlan {
    PostmarkPlan {
        locations: vec![Location { path: dir.to_path_buf(), weight: 1 }],
        size_low: 100,
        size_high: 3000,
        number: 200,
        transactions: 1000,
        ..PostmarkPlan::default()
    }
}

fn go(plan: &PostmarkPlan) -> PostmarkOutcome {
    run(plan, &AtomicBool::new(false)).unwrap_or_else(|e| panic!("{e}"))
}

/// Every entry under `dir`, recursively (path, size; directories as None).
fn tree(dir: &Path) -> Vec<(PathBuf, Option<u64>)> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let e = e.unwrap();
        let md = e.metadata().unwrap();
        if md.is_dir() {
            out.push((e.path(), None));
            out.extend(tree(&e.path()));
        } else {
            out.push((e.path(), Some(md.len())));
        }
    }
    out
}

fn op<'a>(o: &'a PostmarkOutcome, name: &str) -> &'a OpStats {
    o.ops.iter().find(|x| x.name == name).unwrap()
}

/// The counters agree with each other and with the op statistics.
fn check_consistent(o: &PostmarkOutcome) {
    let d = &o.details;
    assert_eq!(d.created(), d.deleted(), "every file is deleted");
    assert_eq!(op(o, "create").ops, d.created());
    assert_eq!(op(o, "delete").ops, d.deleted());
    assert_eq!(op(o, "read").ops, d.read);
    assert_eq!(op(o, "append").ops, d.appended);
    assert_eq!(op(o, "read").bytes, d.bytes_read);
    assert_eq!(op(o, "create").bytes + op(o, "append").bytes, d.bytes_written);
    for x in &o.ops {
        assert_eq!(x.lat.count(), x.ops, "{}: one latency per op", x.name);
    }
    assert!(d.t_ns[0] <= d.t_ns[1] && d.t_ns[1] <= d.t_ns[2] && d.t_ns[2] <= d.t_ns[3]);
    assert!(d.t_unix[0] <= d.t_unix[3] && d.t_unix[0] > 1_500_000_000);
    assert_eq!(o.elapsed_ns, d.t_ns[3] - d.t_ns[0]);
}

#[test]
fn counts_follow_postmarks_rules() {
    let dir = tempfile::tempdir().unwrap();
    for buffering in [true, false] {
        let plan = PostmarkPlan { buffering, ..plan_in(dir.path()) };
        let o = go(&plan);
        let d = &o.details;
        check_consistent(&o);
        assert!(!o.partial);
        assert_eq!(d.transactions_done, 1000);
        assert_eq!(d.created_alone, 200);
        assert_eq!(d.created_mixed + d.deleted_mixed, 1000, "bias create 5: each transaction creates or deletes");
        // An append is skipped only when the file reached the high size.
        assert!(d.read + d.appended <= 1000 && d.read + d.appended >= 990, "{d:?}");
        assert!(d.read > 400 && d.appended > 400, "{d:?}");
        assert!(d.created_mixed > 400 && d.deleted_mixed > 400, "{d:?}");
        assert_eq!(d.deleted_alone, d.created() - d.deleted_mixed);
        // Bytes read are whole files: at least the smallest size per read.
        assert!(d.bytes_read >= d.read * 100);
        assert!(tree(dir.path()).is_empty(), "left behind: {:?}", tree(dir.path()));
    }
}

#[test]
fn same_seed_same_run_other_seed_other_run() {
    let dir = tempfile::tempdir().unwrap();
    let plan = plan_in(dir.path());
    let (a, b) = (go(&plan), go(&plan));
    let c = go(&PostmarkPlan { seed: 43, ..plan });
    let key = |o: &PostmarkOutcome| (o.details.created_mixed, o.details.read, o.details.bytes_read, o.details.bytes_written);
    assert_eq!(key(&a), key(&b));
    assert_ne!(key(&a), key(&c));
}

#[test]
fn bias_extremes_and_off() {
    let dir = tempfile::tempdir().unwrap();
    let base = PostmarkPlan { number: 50, transactions: 200, ..plan_in(dir.path()) };
    // Reads only.
    let o = go(&PostmarkPlan { bias_read: 10, ..base.clone() });
    assert_eq!((o.details.read, o.details.appended), (200, 0));
    // Appends only, with fixed sizes: every file is already at the high
    // bound, so every append is skipped (nothing written, nothing counted).
    let o = go(&PostmarkPlan { bias_read: 0, size_low: 700, size_high: 700, ..base.clone() });
    assert_eq!((o.details.read, o.details.appended), (0, 0));
    assert_eq!(o.details.bytes_written, 700 * o.details.created());
    // Creates only: the table of 2×number slots fills and further creates do nothing.
    let o = go(&PostmarkPlan { bias_create: 10, ..base.clone() });
    assert_eq!((o.details.created_mixed, o.details.deleted_mixed, o.details.deleted_alone), (50, 0, 100));
    check_consistent(&o);
    // Deletes only, fewer than the pool.
    let o = go(&PostmarkPlan { bias_create: 0, transactions: 50, ..base.clone() });
    assert_eq!((o.details.created_mixed, o.details.deleted_mixed, o.details.deleted_alone), (0, 50, 0));
    // -1: that half of every transaction is skipped.
    let o = go(&PostmarkPlan { bias_read: -1, ..base.clone() });
    assert_eq!((o.details.read, o.details.appended, o.details.bytes_read), (0, 0, 0));
    assert_eq!(o.details.created_mixed + o.details.deleted_mixed, 200);
    let o = go(&PostmarkPlan { bias_create: -1, ..base.clone() });
    assert_eq!((o.details.created_mixed, o.details.deleted_mixed), (0, 0));
    assert!(o.details.read + o.details.appended >= 195, "{:?}", o.details);
    let o = go(&PostmarkPlan { bias_read: -1, bias_create: -1, ..base.clone() });
    assert_eq!(o.details.transactions_done, 200);
    assert_eq!(o.ops.iter().map(|x| x.ops).sum::<u64>(), 100, "50 creates and 50 deletes");
    assert!(tree(dir.path()).is_empty());
}

#[test]
fn out_of_files_ends_the_run_like_postmark() {
    let dir = tempfile::tempdir().unwrap();
    let base = PostmarkPlan { number: 10, bias_create: 0, bias_read: -1, ..plan_in(dir.path()) };
    // Ten deletes of ten files: the check comes before each transaction.
    let o = go(&PostmarkPlan { transactions: 10, ..base.clone() });
    assert_eq!((o.details.deleted_mixed, o.details.deleted_alone), (10, 0));
    match run(&PostmarkPlan { transactions: 11, ..base }, &AtomicBool::new(false)) {
        Err(PostmarkRunError::OutOfFiles { transaction: 11 }) => {}
        other => panic!("{other:?}"),
    }
    assert!(tree(dir.path()).is_empty());
}

#[test]
fn pool_sizes_stay_within_low_and_high_minus_one() {
    let dir = tempfile::tempdir().unwrap();
    let plan = PostmarkPlan { number: 2000, transactions: 10, size_low: 10, size_high: 50, ..plan_in(dir.path()) };
    let mut sizes = Vec::new();
    let o = run_with_hook(&plan, &AtomicBool::new(false), &mut |p| {
        if p == Phase::PoolCreated {
            sizes = tree(dir.path()).into_iter().filter_map(|(_, s)| s).collect();
        }
    })
    .unwrap();
    assert_eq!(sizes.len(), 2000);
    assert!(sizes.iter().all(|s| (10..=49).contains(s)), "{:?}", sizes.iter().filter(|s| !(10..=49).contains(*s)).collect::<Vec<_>>());
    // Both ends are reached: uniform over [10, 49].
    assert_eq!(*sizes.iter().min().unwrap(), 10);
    assert_eq!(*sizes.iter().max().unwrap(), 49);
    assert!(op(&o, "create").bytes >= sizes.iter().sum::<u64>());
    // Fixed size.
    let plan = PostmarkPlan { size_low: 33, size_high: 33, number: 100, ..plan };
    let mut sizes = Vec::new();
    run_with_hook(&plan, &AtomicBool::new(false), &mut |p| {
        if p == Phase::PoolCreated {
            sizes = tree(dir.path()).into_iter().filter_map(|(_, s)| s).collect();
        }
    })
    .unwrap();
    assert_eq!(sizes, vec![33; 100]);
}

#[test]
fn spread_over_locations_by_weight_and_over_subdirectories() {
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let plan = PostmarkPlan {
        locations: vec![Location { path: a.path().into(), weight: 1 }, Location { path: b.path().into(), weight: 3 }],
        subdirectories: 4,
        number: 4000,
        transactions: 10,
        size_low: 1,
        size_high: 20,
        ..PostmarkPlan::default()
    };
    let mut counts: BTreeMap<String, u64> = BTreeMap::new();
    let mut names = Vec::new();
    run_with_hook(&plan, &AtomicBool::new(false), &mut |p| {
        if p == Phase::PoolCreated {
            for (root, tag) in [(a.path(), "a"), (b.path(), "b")] {
                for (path, size) in tree(root) {
                    if size.is_some() {
                        let sub = path.parent().unwrap().file_name().unwrap().to_string_lossy().into_owned();
                        *counts.entry(format!("{tag}/{sub}")).or_default() += 1;
                        names.push(path.file_name().unwrap().to_string_lossy().into_owned());
                    }
                }
            }
        }
    })
    .unwrap();
    let per_loc = |t: &str| counts.iter().filter(|(k, _)| k.starts_with(t)).map(|(_, v)| v).sum::<u64>();
    let (na, nb) = (per_loc("a/"), per_loc("b/"));
    assert_eq!(na + nb, 4000);
    assert!((850..=1150).contains(&na), "weight 1 of 4: {na}");
    assert_eq!(counts.len(), 8, "s0..s3 in both: {counts:?}");
    for (k, v) in &counts {
        let expect = if k.starts_with('a') { na / 4 } else { nb / 4 };
        assert!(v.abs_diff(expect) * 100 <= expect * 20, "{k}: {v} vs {expect}");
        assert!(["/s0", "/s1", "/s2", "/s3"].iter().any(|s| k.ends_with(s)), "{k}");
    }
    // Names are the creation counter from 1.
    let mut ids: Vec<u64> = names.iter().map(|n| n.parse().unwrap()).collect();
    ids.sort();
    assert_eq!(ids, (1..=4000).collect::<Vec<u64>>());
    assert!(tree(a.path()).is_empty() && tree(b.path()).is_empty(), "subdirectories removed too");
}

#[test]
fn many_subdirectories_use_relative_names() {
    // More location × subdirectory pairs than descriptors kept open.
    let dir = tempfile::tempdir().unwrap();
    let plan = PostmarkPlan { subdirectories: MAX_DIR_FDS as u64 + 10, number: 300, transactions: 300, ..plan_in(dir.path()) };
    let mut dirs = 0;
    let o = run_with_hook(&plan, &AtomicBool::new(false), &mut |p| {
        if p == Phase::PoolCreated {
            dirs = tree(dir.path()).iter().filter(|(_, s)| s.is_none()).count();
        }
    })
    .unwrap();
    // The subdirectories, in the run's own directory.
    assert_eq!(dirs, MAX_DIR_FDS + 10 + 1);
    check_consistent(&o);
    assert!(tree(dir.path()).is_empty());
}

#[test]
fn written_data_is_printable_and_not_constant() {
    let dir = tempfile::tempdir().unwrap();
    let plan = PostmarkPlan { number: 20, transactions: 10, ..plan_in(dir.path()) };
    let mut data = Vec::new();
    run_with_hook(&plan, &AtomicBool::new(false), &mut |p| {
        if p == Phase::TransactionsDone {
            for (path, size) in tree(dir.path()) {
                if size.is_some() {
                    data.push(std::fs::read(path).unwrap());
                }
            }
        }
    })
    .unwrap();
    assert!(!data.is_empty());
    for d in &data {
        assert!(d.iter().all(|b| (32..=126).contains(b)), "printable");
        let distinct = d.iter().collect::<std::collections::BTreeSet<_>>().len();
        assert!(distinct > 50, "random, not constant: {distinct} distinct bytes");
    }
}

#[test]
fn stop_flag_ends_early_partial_and_clean() {
    let dir = tempfile::tempdir().unwrap();
    let plan = plan_in(dir.path());
    let stop = AtomicBool::new(false);
    let o = run_with_hook(&plan, &stop, &mut |p| {
        if p == Phase::PoolCreated {
            stop.store(true, Ordering::Relaxed);
        }
    })
    .unwrap();
    assert!(o.partial);
    assert_eq!((o.details.created_alone, o.details.transactions_done, o.details.deleted_alone), (200, 0, 200));
    assert!(tree(dir.path()).is_empty());
    let o = run(&PostmarkPlan { subdirectories: 3, ..plan.clone() }, &AtomicBool::new(true));
    // Stopped while making subdirectories: an error, and nothing left.
    assert!(matches!(o, Err(PostmarkRunError::Setup { .. })), "{o:?}");
    assert!(tree(dir.path()).is_empty());
    let o = run(&plan, &AtomicBool::new(true)).unwrap();
    assert!(o.partial);
    assert_eq!(o.details.created(), 0);
}

#[test]
fn never_touches_what_it_did_not_create() {
    let dir = tempfile::tempdir().unwrap();
    // A file with a name the run uses, and a subdirectory `s1` with a file
    // in it: the run's files are in a directory of its own, so neither is
    // touched, and nothing else is left.
    std::fs::write(dir.path().join("150"), "mine").unwrap();
    std::fs::create_dir(dir.path().join("s1")).unwrap();
    std::fs::write(dir.path().join("s1/keep"), "x").unwrap();
    let mut before = tree(dir.path());
    before.sort();
    let mut own = Vec::new();
    let o = run_with_hook(&PostmarkPlan { subdirectories: 3, ..plan_in(dir.path()) }, &AtomicBool::new(false), &mut |p| {
        if p == Phase::PoolCreated {
            own = tree(dir.path()).into_iter().filter(|(p, s)| s.is_none() && p.parent() == Some(dir.path())).map(|(p, _)| p).collect();
        }
    })
    .unwrap();
    check_consistent(&o);
    let own: Vec<&PathBuf> = own.iter().filter(|p| p.file_name().unwrap().to_string_lossy().starts_with("fsbench-postmark-")).collect();
    assert_eq!(own.len(), 1, "one directory of the run's own during the run");
    let mut after = tree(dir.path());
    after.sort();
    assert_eq!(after, before);
    assert_eq!(std::fs::read(dir.path().join("150")).unwrap(), b"mine");
}

#[test]
fn the_runs_directory_is_on_record_with_its_identity() {
    use crate::environment::cleanup::{pending, Action};
    let dir = tempfile::tempdir().unwrap();
    let mut listed = Vec::new();
    go_with(&PostmarkPlan { number: 20, transactions: 10, ..plan_in(dir.path()) }, &mut |p| {
        if p == Phase::PoolCreated {
            listed = pending()
                .into_iter()
                .filter_map(|a| match a {
                    Action::RemoveDir(o) if o.path.starts_with(dir.path().canonicalize().unwrap()) => Some(o),
                    _ => None,
                })
                .collect();
        }
    });
    assert_eq!(listed.len(), 1, "{listed:?}");
    assert!(listed[0].id.is_some(), "with its identity: {listed:?}");
    assert!(!pending().iter().any(|a| matches!(a, Action::RemoveDir(o) if o.path == listed[0].path)), "done at the end");
    assert!(!listed[0].path.exists());
}

fn go_with(plan: &PostmarkPlan, hook: &mut dyn FnMut(Phase)) -> PostmarkOutcome {
    run_with_hook(plan, &AtomicBool::new(false), hook).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn duplicate_locations_share_one_directory() {
    let dir = tempfile::tempdir().unwrap();
    let plan = PostmarkPlan {
        locations: vec![Location { path: dir.path().into(), weight: 1 }, Location { path: dir.path().join("."), weight: 2 }],
        subdirectories: 2,
        ..plan_in(dir.path())
    };
    check_consistent(&go(&plan));
    assert!(tree(dir.path()).is_empty());
}

#[test]
fn missing_location_is_a_setup_error() {
    let e = run(&plan_in(Path::new("/no/such/dir")), &AtomicBool::new(false)).unwrap_err();
    assert!(matches!(e, PostmarkRunError::Setup { .. }), "{e}");
}

fn writes(total: u64, block: u64, buffer: Option<usize>) -> Vec<usize> {
    let mut v = Vec::new();
    write_calls(total, block, buffer, |n| {
        v.push(n);
        Ok(())
    })
    .unwrap();
    assert_eq!(v.iter().sum::<usize>() as u64, total);
    v
}

fn reads(size: u64, block: u64, buffer: Option<usize>) -> (Vec<usize>, u64) {
    let mut v = Vec::new();
    let mut left = size as usize;
    let got = read_calls(size, block, buffer, |n| {
        v.push(n);
        let g = n.min(left);
        left -= g;
        Ok(g)
    })
    .unwrap();
    (v, got)
}

#[test]
fn syscall_pattern_matches_stdio_and_raw_io() {
    // What strace shows for Postmark 1.53: a 6853-byte create with 512-byte
    // blocks is two writes buffered, 14 unbuffered.
    assert_eq!(writes(6853, 512, Some(4096)), vec![4096, 2757]);
    let mut raw = vec![512; 13];
    raw.push(197);
    assert_eq!(writes(6853, 512, None), raw);
    assert_eq!(writes(8192, 512, Some(4096)), vec![4096, 4096]);
    assert_eq!(writes(197, 512, Some(4096)), vec![197]);
    // Blocks larger than the buffer: whole buffers go straight out.
    assert_eq!(writes(25_000, 10_000, Some(4096)), vec![8192, 4096, 4096, 4096, 4096, 424]);
    assert_eq!(writes(0, 512, Some(4096)), Vec::<usize>::new());
    // Reads: buffered reads are buffer-sized; the short last one ends it.
    assert_eq!(reads(6853, 512, Some(4096)), (vec![4096, 4096], 6853));
    assert_eq!(reads(8192, 512, Some(4096)), (vec![4096, 4096], 8192));
    assert_eq!(reads(6853, 512, None), (raw, 6853));
    assert_eq!(reads(20_000, 10_000, Some(4096)), (vec![8192, 4096, 4096, 4096], 20_000));
    // A file shorter than expected ends the read early.
    let mut left = 100usize;
    let got = read_calls(6853, 512, Some(4096), |n| {
        let g = n.min(left);
        left -= g;
        Ok(g)
    })
    .unwrap();
    assert_eq!(got, 100);
}

#[test]
fn names_are_written_without_formatting() {
    let mut b = [0u8; 64];
    let end = put_u64(&mut b, 1, 0);
    assert_eq!(&b[1..end], b"0");
    let end = put_u64(&mut b, 0, u64::MAX);
    assert_eq!(&b[..end], u64::MAX.to_string().as_bytes());
}
