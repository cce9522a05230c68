//! Postmark's `show`: the configuration as Postmark prints it.

use crate::model::postmark::{PostmarkPlan, ReportStyle};
use std::fmt::Write;
use std::path::Path;

/// A size as Postmark's `show` prints it (thresholds inclusive there).
fn show_size(bytes: u64) -> String {
    if bytes >= 1_048_576 {
        format!("{:.2} megabytes", bytes as f32 / 1_048_576.0)
    } else if bytes >= 1024 {
        format!("{:.2} kilobytes", bytes as f32 / 1024.0)
    } else {
        format!("{bytes} bytes")
    }
}

/// Postmark's `show` layout. `working_dir`: the directory to name when no
/// location was set (Postmark prints its current directory then); `None`
/// lists `plan.locations` with their weights.
pub fn show(plan: &PostmarkPlan, working_dir: Option<&Path>) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "Current configuration is:");
    let _ = writeln!(s, "The base number of files is {}", plan.number);
    let _ = writeln!(s, "Transactions: {}", plan.transactions);
    if plan.size_low == plan.size_high {
        let _ = writeln!(s, "Files are {} in size", show_size(plan.size_low));
    } else {
        let _ = writeln!(s, "Files range between {} and {} in size", show_size(plan.size_low), show_size(plan.size_high));
    }
    if let Some(dir) = working_dir {
        let _ = writeln!(s, "Working directory: {}", dir.display());
    } else {
        let _ = writeln!(s, "Working director{}: ", if plan.locations.len() > 1 { "ies" } else { "y" });
        for l in &plan.locations {
            let _ = writeln!(s, "\t{} (weight={})", l.path.display(), l.weight);
        }
    }
    match plan.subdirectories {
        0 => {}
        1 => s.push_str("1 subdirectory will be used\n"),
        n => {
            let _ = writeln!(s, "{n} subdirectories will be used");
        }
    }
    let _ = writeln!(s, "Block sizes are: read={} bytes, write={} bytes", plan.read_block, plan.write_block);
    let _ = writeln!(s, "Biases are: read/append={}, create/delete={}", plan.bias_read, plan.bias_create);
    let _ = writeln!(s, "{}sing Unix buffered file I/O", if plan.buffering { "U" } else { "Not u" });
    let _ = writeln!(s, "Random number generator seed is {}", plan.seed);
    let _ = writeln!(s, "Report format is {}.", if plan.report == ReportStyle::Verbose { "verbose" } else { "terse" });
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::postmark::Location;
    use std::path::PathBuf;

    #[test]
    fn show_matches_postmark_layout() {
        let cwd = PathBuf::from("/tmp/pm");
        let want = "Current configuration is:\nThe base number of files is 500\nTransactions: 500\n\
            Files range between 500 bytes and 9.77 kilobytes in size\nWorking directory: /tmp/pm\n\
            Block sizes are: read=512 bytes, write=512 bytes\nBiases are: read/append=5, create/delete=5\n\
            Using Unix buffered file I/O\nRandom number generator seed is 42\nReport format is verbose.\n";
        assert_eq!(show(&PostmarkPlan::default(), Some(&cwd)), want);
        let p = PostmarkPlan {
            size_low: 1024,
            size_high: 1024,
            locations: vec![Location { path: "a".into(), weight: 1 }, Location { path: "b".into(), weight: 3 }],
            subdirectories: 3,
            buffering: false,
            bias_read: -1,
            report: ReportStyle::Terse,
            ..PostmarkPlan::default()
        };
        let want = "Current configuration is:\nThe base number of files is 500\nTransactions: 500\n\
            Files are 1.00 kilobytes in size\nWorking directories: \n\ta (weight=1)\n\tb (weight=3)\n\
            3 subdirectories will be used\nBlock sizes are: read=512 bytes, write=512 bytes\n\
            Biases are: read/append=-1, create/delete=5\nNot using Unix buffered file I/O\n\
            Random number generator seed is 42\nReport format is terse.\n";
        assert_eq!(show(&p, None), want);
        let one = PostmarkPlan {
            size_low: 1023,
            size_high: 1_048_576,
            locations: vec![Location { path: "a".into(), weight: 2 }],
            subdirectories: 1,
            ..PostmarkPlan::default()
        };
        let s = show(&one, None);
        assert!(s.contains("Files range between 1023 bytes and 1.00 megabytes in size\n"), "{s}");
        assert!(s.contains("Working directory: \n\ta (weight=2)\n1 subdirectory will be used\n"), "{s}");
    }
}
