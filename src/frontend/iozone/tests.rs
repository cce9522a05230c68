use super::*;
use crate::model::iozone::Units;

fn p(s: &str) -> Result<IozonePlan, IozoneError> {
    let words: Vec<String> = s.split_whitespace().map(str::to_string).collect();
    parse(&words)
}

fn flag_of(s: &str) -> String {
    p(s).expect_err(s).flag
}

#[test]
fn sizes_are_kb_or_suffixed() {
    assert_eq!(size_kb("-s", "512").unwrap(), 512);
    assert_eq!(size_kb("-s", "64k").unwrap(), 64);
    assert_eq!(size_kb("-s", "16M").unwrap(), 16384);
    assert_eq!(size_kb("-s", "1g").unwrap(), 1 << 20);
    assert!(size_kb("-s", "1t").is_err());
    assert!(size_kb("-s", "x").unwrap_err().message.contains("expected a size"));
}

#[test]
fn defaults_outside_auto_mode_are_one_512k_file_in_4k_records_and_tests_0_to_7() {
    let plan = p("").unwrap();
    assert!(!plan.auto);
    assert_eq!(plan.cells, vec![(512, 4)]);
    assert_eq!(plan.tests, Test::ALL[..8].to_vec());
    assert_eq!(plan.file, PathBuf::from("iozone.tmp"));
    assert_eq!(plan.stride, 17);
}

#[test]
fn full_auto_mode_has_the_default_ranges_and_the_crossover() {
    let plan = p("-a").unwrap();
    assert!(plan.auto);
    assert_eq!(plan.record_axis_kb, doublings(4, 16384));
    // Files up to 16 MiB take every record that fits; above, records start at 64 kB.
    let small: usize = (6..=14).map(|e| (2..=e).count()).sum();
    assert_eq!(plan.cells.len(), small + 5 * 9);
    assert!(plan.cells.contains(&(16384, 4)));
    assert!(!plan.cells.contains(&(32768, 32)));
    assert!(plan.cells.contains(&(32768, 64)));
    assert!(plan.cells.iter().all(|&(f, r)| r <= f));
    // -z keeps every record; so do explicit record flags.
    assert!(p("-a -z").unwrap().cells.contains(&(32768, 4)));
    assert!(p("-a -y 4k").unwrap().cells.contains(&(32768, 4)));
    // -n/-g keep the crossover.
    let ranged = p("-a -n 16m -g 32m -i 0").unwrap();
    assert!(ranged.cells.contains(&(16384, 4)) && !ranged.cells.contains(&(32768, 4)));
}

#[test]
fn a_is_az_with_tests_0_and_1() {
    let plan = p("-A").unwrap();
    assert_eq!(plan.tests, vec![Test::Write, Test::Read]);
    assert!(plan.cells.contains(&(524288, 4)));
}

#[test]
fn repeated_sizes_make_a_matrix_of_just_those() {
    let plan = p("-s 1m -s 4m -r 4k -r 64k -i 0").unwrap();
    assert!(plan.auto);
    assert_eq!(plan.cells, vec![(1024, 4), (1024, 64), (4096, 4), (4096, 64)]);
    assert_eq!(plan.record_axis_kb, vec![4, 64]);
    // One -s with -a: every record at that file size.
    let one = p("-a -s 1m").unwrap();
    assert_eq!(one.cells.len(), 9);
    assert!(one.cells.iter().all(|c| c.0 == 1024));
}

#[test]
fn clustered_and_attached_flags_read_as_getopt_reads_them() {
    // -I takes no value, so "foo" after it is a cluster: -f with "oo".
    let plan = p("-Ifoo").unwrap();
    assert!(plan.direct);
    assert_eq!(plan.file, PathBuf::from("oo"));
    let plan = p("-Rez -s64m -r1m -i0 -i 1 -+n -+u -j 5 -O -w -f /x/f").unwrap();
    assert!(plan.excel && plan.fsync_in_timing && plan.no_retest && plan.cpu && plan.keep_files);
    assert_eq!(plan.cells, vec![(65536, 1024)]);
    assert_eq!(plan.tests, vec![Test::Write, Test::Read]);
    assert_eq!(plan.stride, 5);
    assert_eq!(plan.units, Units::OpsPerSec);
    assert_eq!(plan.file, PathBuf::from("/x/f"));
    assert!(plan.command_line.starts_with("iozone -Rez -s64m"));
    assert_eq!(
        plan.option_lines[..4],
        [
            "Excel chart generation enabled",
            "Include fsync in write timing",
            "Cross over of record size disabled.",
            "File size set to 65536 kB"
        ]
    );
}

#[test]
fn test_order_is_iozones_and_e_adds_the_pwrite_tests() {
    let plan = p("-i 2 -i 0 -i 1 -i 0").unwrap();
    assert_eq!(plan.tests, vec![Test::Write, Test::Read, Test::Random]);
    let e = p("-E").unwrap();
    assert!(e.tests.contains(&Test::Pwrite) && e.tests.contains(&Test::Preadv));
    assert!(!e.tests.contains(&Test::Mixed));
}

#[test]
fn throughput_mode_children_files_and_stonewall() {
    let plan = p("-t 2 -s 1m -r 64k -i 0 -i 1 -F a b").unwrap();
    let t = plan.throughput.unwrap();
    assert_eq!(t.children, vec![2]);
    assert!(t.stonewall);
    assert_eq!(t.files, vec![PathBuf::from("a"), PathBuf::from("b")]);
    let sweep = p("-l 1 -u 3 -x -s 1m").unwrap().throughput.unwrap();
    assert_eq!(sweep.children, vec![1, 2, 3]);
    assert!(!sweep.stonewall);
    // With no -i, throughput mode runs the mixed workload too.
    assert!(p("-t 2").unwrap().tests.contains(&Test::Mixed));
}

#[test]
fn bad_input_names_the_flag() {
    assert_eq!(flag_of("-t 2 -a"), "-t");
    assert_eq!(flag_of("-a -q 32m"), "-q");
    assert_eq!(flag_of("-r 128k -s 64k"), "-r");
    assert_eq!(flag_of("-i 99"), "-i");
    assert!(p("-i 99").unwrap_err().message.contains("no such test"));
    assert_eq!(flag_of("-i 8"), "-i");
    assert_eq!(flag_of("-t 0"), "-t");
    assert_eq!(flag_of("-t 2000"), "-t");
    assert_eq!(flag_of("-t 3 -F a b"), "-F");
    assert_eq!(flag_of("-F a b"), "-F");
    assert_eq!(flag_of("-s"), "-s");
    assert_eq!(flag_of("-B"), "-B");
    assert!(p("-B").unwrap_err().message.contains("not supported by fsbench"));
    assert_eq!(flag_of("-%"), "-%");
    assert!(p("-%").unwrap_err().message.contains("not an IOzone flag"));
    assert_eq!(flag_of("file.txt"), "file.txt");
    assert_eq!(flag_of("-t 2 -U /mnt"), "-U");
    assert_eq!(flag_of("-a -n 1g -g 1m"), "-n");
}

#[test]
fn remount_needs_a_mount_point() {
    let plan = p("-U /proc/self").unwrap();
    let e = check_host(&plan).unwrap_err();
    assert_eq!(e.flag, "-U");
    assert!(e.message.contains("not a mount point"), "{e}");
}
