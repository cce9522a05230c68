//! Postmark as a workload family: `fsbench postmark [FILE] [-c CMD]...`
//! reads the command file (Postmark's first argument), then the `-c`
//! commands, then standard input (with the `pm>` prompt on a terminal)
//! until `quit`; every `run` is a plan run at once. In an experiment,
//! `[[workload]] postmark = "config.pm"` or `postmark = ["set number 1000",
//! "set transactions 5000"]` is one run in the target's directory.

use super::{PostmarkError, Session, Step as PmStep, COMMAND_LINE, STDIN};
use crate::frontend::confine::in_target;
use crate::frontend::experiment::{expand, ExperimentError, WorkloadDef};
use crate::frontend::{input_error, Frontend, FrontendError, Step};
use crate::model::postmark::PostmarkPlan;
use crate::model::recipe::{Lowered, Placement, Recipe, RecipeError};
use crate::model::{Plan, Workload};
use std::io::{BufRead, IsTerminal, Write};
use std::path::PathBuf;
use std::sync::Arc;

/// The layout Postmark runs are shown in.
pub const LAYOUT: &str = "postmark";

fn lowered(plan: PostmarkPlan) -> Lowered {
    Lowered { plan: Plan::new(Workload::Postmark(plan), LAYOUT), warnings: Vec::new() }
}

/// The session's steps, reading standard input once the queued commands
/// are done.
struct Steps {
    session: Session,
    stdin: Option<std::io::StdinLock<'static>>,
    tty: bool,
    line: u32,
}

impl Iterator for Steps {
    type Item = Result<Step, FrontendError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            match self.session.next_step() {
                Some(Ok(PmStep::Quit)) => return None,
                Some(Ok(PmStep::Run { plan, append_report_to })) => {
                    return Some(Ok(Step::Run { lowered: Box::new(lowered(plan)), append_report_to }))
                }
                Some(Ok(PmStep::Print { text, append_to })) => return Some(Ok(Step::Print { text, append_to })),
                Some(Err(e)) => return Some(Err(input_error(e))),
                None => {
                    let stdin = self.stdin.as_mut()?;
                    if self.tty {
                        eprint!("pm> ");
                        let _ = std::io::stderr().flush();
                    }
                    let mut text = String::new();
                    match stdin.read_line(&mut text) {
                        Ok(n) if n > 0 => {
                            self.line += 1;
                            self.session.push_text(STDIN, self.line, &text);
                        }
                        _ => self.stdin = None,
                    }
                }
            }
        }
    }
}

pub struct Postmark;

impl Frontend for Postmark {
    fn name(&self) -> &'static str {
        "postmark"
    }
    fn about(&self) -> &'static str {
        "Run Postmark's small-file workload from its commands: a file (`fsbench postmark config.pm`), -c strings, or the pm> prompt"
    }
    fn reads(&self) -> &'static str {
        "Postmark's commands (set size/number/seed/transactions/location/subdirectories/read/write/buffering/bias/report, run, show, load, help, quit) \
         from a file, from -c, then from standard input"
    }
    fn command(&self) -> clap::Command {
        use clap::{value_parser, Arg, ArgAction};
        clap::Command::new("postmark")
            .about(self.about())
            .arg(
                Arg::new("file")
                    .value_parser(value_parser!(PathBuf))
                    .help("A file of Postmark commands, read first (as Postmark's argument)"),
            )
            .arg(
                Arg::new("command")
                    .short('c')
                    .long("command")
                    .value_name("CMD")
                    .action(ArgAction::Append)
                    .help("A Postmark command, e.g. -c 'set number 5000' -c run (repeatable; read after the file)"),
            )
    }
    fn lower_cli(&self, m: &clap::ArgMatches, _raw: &[String]) -> Result<crate::frontend::Session, FrontendError> {
        let mut session = Session::new();
        let commands: Vec<&String> = m.get_many::<String>("command").into_iter().flatten().collect();
        if !commands.is_empty() {
            let text: Vec<&str> = commands.iter().map(|s| s.as_str()).collect();
            session.push_text(COMMAND_LINE, 1, &text.join("\n"));
        }
        if let Some(f) = m.get_one::<PathBuf>("file") {
            session.push_file(f).map_err(input_error)?;
        }
        let stdin = std::io::stdin();
        let tty = stdin.is_terminal();
        Ok(Box::new(Steps { session, stdin: Some(stdin.lock()), tty, line: 0 }))
    }
    fn workload_keys(&self) -> &'static [&'static str] {
        &["postmark"]
    }
    fn lower_workload(&self, w: &WorkloadDef) -> Result<Arc<dyn Recipe>, ExperimentError> {
        let (source, text) = match w.string("postmark") {
            Ok(Some(_)) => {
                let path = w.existing_file("postmark", "command file")?.expect("a string");
                let text = crate::input::read_text(&path, "Postmark command file")
                    .map_err(|e| w.error("postmark", format!("cannot read {}: {e}", path.display())))?;
                (path.display().to_string(), text)
            }
            _ => {
                let lines =
                    w.strings("postmark").map_err(|_| w.error("postmark", "expected a command file or an array of Postmark commands"))?;
                ("experiment".to_string(), lines.join("\n"))
            }
        };
        let recipe = PostmarkRecipe { label: w.label.clone(), source, text };
        // Without `${…}` the commands can be checked now; where the
        // locations are is checked per target (everything is inside `/`).
        if !recipe.text.contains("${") {
            let dummy = std::collections::BTreeMap::new();
            let at = Placement { target: "/".into(), is_device: false, params: &dummy };
            recipe.plan(&at).map_err(|e| w.error("postmark", e.message))?;
        }
        Ok(Arc::new(recipe))
    }
}

/// A Postmark workload of an experiment: its commands, `${…}` unexpanded.
#[derive(Debug)]
struct PostmarkRecipe {
    label: String,
    /// The command file, or "experiment" for an inline list.
    source: String,
    text: String,
}

impl Recipe for PostmarkRecipe {
    /// One run: the configuration after the commands (at most one `run`),
    /// in the target's directory unless the commands set a location in it.
    fn plan(&self, at: &Placement) -> Result<Lowered, RecipeError> {
        let err = |message: String| RecipeError { workload: self.label.clone(), message };
        if at.is_device {
            return Err(err("Postmark needs a directory or a managed file system, not a raw device".into()));
        }
        let text = expand(&self.text, at.params, Some(&at.target)).map_err(err)?;
        let mut session = Session::in_target();
        session.push_text(&self.source, 1, &text);
        let mut runs = Vec::new();
        while let Some(step) = session.next_step() {
            match step.map_err(|e: PostmarkError| err(e.to_string()))? {
                PmStep::Run { plan, .. } => runs.push(plan),
                PmStep::Quit => break,
                PmStep::Print { .. } => {}
            }
        }
        if runs.len() > 1 {
            return Err(err(format!("{} `run` commands: an experiment workload is one run (the matrix repeats it)", runs.len())));
        }
        let mut plan = runs.pop().unwrap_or_else(|| session.plan().clone());
        if plan.locations == PostmarkPlan::default().locations {
            plan.locations[0].path = at.target.clone();
        }
        for l in &mut plan.locations {
            l.path = in_target(at, "set location ", &l.path).map_err(err)?;
        }
        Ok(lowered(plan))
    }
}
