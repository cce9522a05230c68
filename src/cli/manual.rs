//! `fsbench man` and `fsbench completions`: both generated from the same
//! clap definitions that parse the command line (the family subcommands
//! included), so they cannot fall behind the flags.

use std::io::Write;

#[derive(clap::Args, Debug)]
pub struct ManArgs {
    /// The page of one command (e.g. `fio`, `experiment`) instead of fsbench's own page.
    pub command: Option<String>,
}

#[derive(clap::Args, Debug)]
pub struct CompletionsArgs {
    /// The shell to complete for.
    pub shell: clap_complete::Shell,
}

pub fn man(a: ManArgs, cmd: clap::Command) -> i32 {
    let cmd = cmd.version(env!("CARGO_PKG_VERSION"));
    let page = match &a.command {
        None => cmd,
        Some(name) => {
            let names: Vec<String> = visible(&cmd).map(|c| c.get_name().to_string()).collect();
            match visible(&cmd).find(|c| c.get_name() == name) {
                // The page's title names the command as it is typed
                // (fsbench-fio(1), as git-log(1)). clap wants a static
                // name; the process prints one page and exits.
                Some(sub) => {
                    let title: &'static str = Box::leak(format!("fsbench-{name}").into_boxed_str());
                    sub.clone().name(title).version(env!("CARGO_PKG_VERSION"))
                }
                None => {
                    eprintln!("fsbench: error: man: no command '{name}'; expected one of: {}", names.join(", "));
                    return 2;
                }
            }
        }
    };
    let mut out = Vec::new();
    if let Err(e) = clap_mangen::Man::new(page).render(&mut out) {
        eprintln!("fsbench: error: man: {e}");
        return 1;
    }
    write_out(&out)
}

pub fn completions(a: CompletionsArgs, mut cmd: clap::Command) -> i32 {
    let mut out = Vec::new();
    clap_complete::generate(a.shell, &mut cmd, "fsbench", &mut out);
    write_out(&out)
}

fn visible(cmd: &clap::Command) -> impl Iterator<Item = &clap::Command> {
    cmd.get_subcommands().filter(|c| !c.is_hide_set())
}

/// A closed pipe (`fsbench man | head`) ends the output quietly.
fn write_out(bytes: &[u8]) -> i32 {
    let mut stdout = std::io::stdout().lock();
    match stdout.write_all(bytes).and_then(|_| stdout.flush()) {
        Ok(()) => 0,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => 0,
        Err(e) => {
            eprintln!("fsbench: error: writing to stdout: {e}");
            1
        }
    }
}
