use super::*;
use crate::model::bonnie::FileKind;

fn host() -> HostFacts {
    HostFacts { ram_mib: 1024, open_files: 1024, hostname: "box".into(), is_root: true, pid: 77, now_unix: 1000 }
}

fn words(s: &str) -> Vec<String> {
    s.split_whitespace().map(str::to_string).collect()
}

fn plan(s: &str) -> BonniePlan {
    match parse(&words(s), &host()) {
        Ok(Invocation::Run { plan, .. }) => plan,
        other => panic!("{s}: {other:?}"),
    }
}

fn error(s: &str) -> BonnieError {
    parse(&words(s), &host()).expect_err(s)
}

#[test]
fn defaults_are_bonnies() {
    let p = plan("-u root");
    // max(300, 2 × 1024) = 2048 MiB, a whole GiB.
    assert_eq!((p.size_mib, p.size_text.as_str()), (2048, "2G"));
    assert_eq!((p.chunk, p.seeks, p.seek_procs, p.char_mib), (8192, 8192, 5, Some(3)));
    let f = p.files.unwrap();
    assert_eq!((f.num_k, f.kind, f.max_size, f.min_size, f.dirs), (16, FileKind::Files, 0, 0, 1));
    assert_eq!((p.machine.as_str(), p.concurrency, p.runs), ("box", 1, 1));
    assert_eq!(p.seed, Seed::Number(77 ^ 1000));
    assert_eq!(p.dir, PathBuf::from("."));
}

#[test]
fn default_size_rounds_up_past_half_a_gib() {
    let h = HostFacts { ram_mib: 1300, ..host() };
    // 2600 MiB: 2 GiB + 552 MiB, over half a GiB: 3 GiB.
    let Ok(Invocation::Run { plan, .. }) = parse(&words("-u root"), &h) else { panic!() };
    assert_eq!(plan.size_mib, 3072);
    let h = HostFacts { ram_mib: 100, ..host() };
    let Ok(Invocation::Run { plan, .. }) = parse(&words("-u root"), &h) else { panic!() };
    assert_eq!((plan.size_mib, plan.size_text.as_str()), (300, "300M"));
}

#[test]
fn size_chunk_seeks_procs_and_file_fields() {
    let p = plan("-u root -r 0 -s 64:4k:100:2 -n 2:4096:1024:3:512 -f20 -qbD -m lab -x 3 -c 4 -z 9");
    assert_eq!((p.size_mib, p.chunk, p.seeks, p.seek_procs, p.char_mib), (64, 4096, 100, 2, Some(20)));
    let f = p.files.unwrap();
    assert_eq!((f.num_k, f.max_size, f.min_size, f.dirs, f.chunk), (2, 4096, 1024, 3, 512));
    assert!(p.quiet && p.fsync && p.direct);
    assert_eq!((p.machine.as_str(), p.runs, p.concurrency, p.seed.clone()), ("lab", 3, 4, Seed::Number(9)));
    assert_eq!(plan("-u root -s 2g -r 0").size_text, "2G");
    assert_eq!(plan("-u root -r 0 -f").char_mib, None);
    assert_eq!(plan("-u root -r 0 -s 0").size_mib, 0);
    assert!(plan("-u root -r 0 -n 0").files.is_none());
    assert_eq!(plan("-u root -r 0 -n 1:-1").files.unwrap().kind, FileKind::HardLinks);
    assert_eq!(plan("-u root -r 0 -n 1:-2").files.unwrap().kind, FileKind::SymLinks);
}

#[test]
fn bad_input_names_the_flag_and_what_was_expected() {
    let e = error("-u root -r 0 -s 64:3000");
    assert_eq!(e.flag, "-s");
    assert!(e.message.contains("power of two from 256 to 1048576"), "{e}");
    let e = error("-u root -r 1024 -s 100");
    assert_eq!(e.flag, "-s");
    assert!(e.message.contains("File size should be double RAM for good results, RAM is 1024M"), "{e}");
    assert!(e.message.contains("at least 2048 MiB"), "{e}");
    let e = error("-u root -r 0 -n 1:10:20");
    assert_eq!(e.flag, "-n");
    assert!(e.message.contains("min 20 is larger than max 10"), "{e}");
    let e = error("-u no-such-user-fsbench -r 0");
    assert_eq!(e.flag, "-u");
    assert!(e.message.contains("Can't find user no-such-user-fsbench"), "{e}");
    let e = error("-r 0");
    assert_eq!(e.flag, "-u");
    assert!(e.message.contains("-u root"), "{e}");
    let e = error("-u root -r 1 -s 0 -n 16");
    assert_eq!(e.flag, "-n");
    assert!(e.message.contains("When testing 16K of files in 1 MiB of RAM"), "{e}");
    assert_eq!(error("-u root -Y").flag, "-Y");
    assert_eq!(error("-u root -k").flag, "-k");
    assert_eq!(error("-u root -f 2").flag, "2");
    assert_eq!(error("-u root -y x").flag, "-y");
    assert_eq!(error("-u root -c 201").flag, "-c");
    assert_eq!(error("-u root -s").message, "needs a value");
}

#[test]
fn ram_suffix_is_honoured_and_the_difference_said() {
    let Ok(Invocation::Run { plan, notes }) = parse(&words("-u root -r 1G -s 4g"), &host()) else { panic!() };
    assert_eq!(plan.ram_mib, 1024);
    assert!(notes.iter().any(|n| n.message.contains("1024 MiB") && n.message.contains("would take 1 MiB")), "{notes:?}");
}

#[test]
fn one_semaphore_flag_is_its_own_invocation() {
    assert_eq!(parse(&words("-u root -p 3"), &host()).unwrap(), Invocation::Semaphores(3));
    assert_eq!(parse(&words("-u root -p -1"), &host()).unwrap(), Invocation::Semaphores(-1));
    assert_eq!(error("-u root -p 0").flag, "-p");
}

#[test]
fn every_number_is_bounded_by_its_meaning_and_the_machine() {
    // (command line, flag, words the message must hold)
    for (line, flag, says) in [
        ("-u root -r 0 -s 64:8192:100:100000", "-s", "1 to 1024 seeker processes"),
        ("-u root -r 0 -s 64:8192:100:0", "-s", "1 to 1024 seeker processes"),
        ("-u root -r 0 -s 64:8192:3000000000", "-s", "at most 2147483647"),
        ("-u root -r 0 -s 9000000000000000000", "-s", "largest file"),
        ("-u root -r 0 -s 64:1024k:100:1024", "-s", "1024 seekers with a 1048576-byte chunk each"),
        ("-u root -r 0 -s 0 -n 99999999999", "-n", "at most 182361"),
        ("-u root -r 0 -s 0 -n 100000", "-n", "on this machine"),
        ("-u root -r 0 -s 0 -n 1:0:0:2000", "-n", "at most the number of files (1024)"),
        ("-u root -r 0 -s 0 -n 2:0:0:2000", "-n", "ulimit -n"),
        ("-u root -r 3000000000 -s 0", "-r", "at most 2147483647"),
        ("-u root -r 0 -x 1001", "-x", "1 to 1000 (as --repeat)"),
        ("-u root -r 0 -s 64 -f100", "-f", "at most the -s size (64 MiB)"),
    ] {
        let e = error(line);
        assert_eq!(e.flag, flag, "{line}: {e}");
        assert!(e.message.contains(says), "{line}: {e}");
    }
    // At the bounds, accepted.
    let p = plan("-u root -r 0 -s 64:8192:2147483647:1024 -n 1:0:0:960 -f64 -x 1000");
    assert_eq!((p.seeks, p.seek_procs, p.files.unwrap().dirs, p.char_mib, p.runs), (2147483647, 1024, 960, Some(64), 1000));
    // -f beyond a skipped IO test is harmless: nothing reads it.
    assert_eq!(plan("-u root -r 0 -s 0 -f100").char_mib, Some(100));
}
