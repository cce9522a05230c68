//! Options of the engines that do no plain data I/O (filecreate, filestat,
//! filedelete, dircreate, dirstat, dirdelete, cpuio, exec, net, netsplice)
//! and the file options their example jobs use (`filesize`, `openfiles`,
//! `thread`), plus the checks that need the whole job (`finish`).

use super::options::Kind::*;
use super::options::{expected, opt, JobState, OptDef, SEC, USEC};
use crate::model::engine::FileUse;
use crate::model::engine_misc::{CpuMode, NetProtocol, StatType};
use crate::model::job::JobSpec;
use crate::units::{clip, parse_size};
use std::time::Duration;

/// exec checks in on its program this often (fio's 50 ms).
const EXEC_PACE: Duration = Duration::from_millis(50);

fn set_stat_type(j: &mut JobState, v: &str) -> Result<(), String> {
    j.spec.engine.misc.stat_type = match v.to_ascii_lowercase().as_str() {
        "stat" => StatType::Stat,
        "lstat" => StatType::Lstat,
        "statx" => StatType::Statx,
        _ => return Err(expected("one of stat, lstat, statx", v)),
    };
    Ok(())
}

fn set_cpumode(j: &mut JobState, v: &str) -> Result<(), String> {
    j.spec.engine.misc.cpumode = match v.to_ascii_lowercase().as_str() {
        "noop" => CpuMode::Noop,
        "qsort" => CpuMode::Qsort,
        _ => return Err(expected("noop or qsort", v)),
    };
    Ok(())
}

fn set_protocol(j: &mut JobState, v: &str) -> Result<(), String> {
    j.spec.engine.misc.protocol = match v.to_ascii_lowercase().as_str() {
        "tcp" => NetProtocol::Tcp,
        "tcpv6" => NetProtocol::Tcpv6,
        "udp" => NetProtocol::Udp,
        "udpv6" => NetProtocol::Udpv6,
        "unix" => NetProtocol::Unix,
        _ => return Err(expected("one of tcp, tcpv6, udp, udpv6, unix", v)),
    };
    Ok(())
}

fn set_exit_on_io_done(_j: &mut JobState, v: &str) -> Result<(), String> {
    match crate::units::parse_bool(v)? {
        false => Ok(()),
        true => Err(format!(
            "expected 0, got '{}': exit_on_io_done=1 is not supported (cpuio jobs run for their runtime; give them the I/O jobs' runtime)",
            clip(v)
        )),
    }
}

fn set_window_size(j: &mut JobState, v: &str) -> Result<(), String> {
    let b = parse_size(v, j.kb_base)?;
    j.spec.engine.misc.window_size = u32::try_from(b).map_err(|_| format!("expected a socket buffer size below 4g, got '{}'", clip(v)))?;
    Ok(())
}

pub static ENGINES_MISC: &[OptDef] = &[
    opt!(
        "openfiles",
        ["open_files"],
        "most files open at once; the file-operation engines keep none open",
        Uint(1, u32::MAX, |j, n| j.spec.engine.misc.openfiles = n)
    ),
    opt!("stat_type", [], "filestat/dirstat: stat, lstat or statx", Value(set_stat_type)),
    opt!("cpuload", [], "cpuio: percent of the time to burn CPU (1-100)", Uint(1, 100, |j, n| j.spec.engine.misc.cpuload = n)),
    opt!(
        "cpuchunks",
        ["cpucycle"],
        "cpuio: length of one burn cycle (default unit us; default 50ms)",
        Time(USEC, |j, d| j.spec.engine.misc.cpuchunks = d)
    ),
    opt!("cpumode", [], "cpuio: noop or qsort", Value(set_cpumode)),
    opt!("exit_on_io_done", [], "cpuio: end with the I/O jobs (not supported; 0 only)", Value(set_exit_on_io_done)),
    opt!("program", [], "exec: the program to run", Text(|j, v| j.spec.engine.misc.program = Some(v.to_string()))),
    opt!(
        "arguments",
        [],
        "exec: its arguments, split on spaces; %r = runtime in s, %n = job name",
        Text(|j, v| j.spec.engine.misc.arguments = Some(v.to_string()))
    ),
    opt!(
        "grace_time",
        [],
        "exec: time between SIGTERM and SIGKILL at the end (default unit s; default 1)",
        Time(SEC, |j, d| j.spec.engine.misc.grace_time = d)
    ),
    opt!(
        "std_redirect",
        [],
        "exec: program output to JOB.stdout/JOB.stderr (0/1, default 1)",
        Bool(|j, b| j.spec.engine.misc.std_redirect = b)
    ),
    opt!("hostname", [], "net: host to send to (or a UDP multicast group)", Text(|j, v| j.spec.engine.misc.hostname = Some(v.to_string()))),
    opt!("port", [], "net: TCP/UDP port (1-65535)", Uint(1, 65535, |j, n| j.spec.engine.misc.port = n as u16)),
    opt!("protocol", ["proto"], "net: tcp, tcpv6, udp, udpv6 or unix", Value(set_protocol)),
    opt!("listen", [], "net: accept the connection instead of making it (0/1)", Bool(|j, b| j.spec.engine.misc.listen = b)),
    opt!("pingpong", [], "net: the reader sends every block back (0/1)", Bool(|j, b| j.spec.engine.misc.pingpong = b)),
    opt!("nodelay", [], "net: TCP_NODELAY (0/1)", Bool(|j, b| j.spec.engine.misc.nodelay = b)),
    opt!("window_size", [], "net: socket buffer size, such as 256k", Value(set_window_size)),
    opt!("mss", [], "net: TCP maximum segment size", Uint(1, 65535, |j, n| j.spec.engine.misc.mss = n)),
    opt!("ttl", [], "net: multicast time-to-live (default 1)", Uint(0, 255, |j, n| j.spec.engine.misc.ttl = n)),
];

/// Checks and settings that need the whole job; the error names the option
/// to blame. Like fio, cpuio and exec pace themselves through thinktime.
pub(super) fn finish(spec: &mut JobSpec) -> Result<(), (&'static str, String)> {
    let engine = spec.ioengine.clone();
    let m = &mut spec.engine.misc;
    let needs_runtime = |what: &str| format!("ioengine={engine} {what} until its runtime ends: expected runtime=DURATION as well");
    match engine.as_str() {
        "cpuio" => {
            if m.cpuload == 0 {
                return Err(("ioengine", "ioengine=cpuio needs cpuload=PERCENT (1-100)".into()));
            }
            if spec.runtime.is_none() {
                return Err(("ioengine", needs_runtime("burns CPU")));
            }
            spec.thinktime = m.cpu_rest();
        }
        "exec" => {
            if m.program.is_none() {
                return Err(("ioengine", "ioengine=exec needs program=PATH".into()));
            }
            let Some(runtime) = spec.runtime else { return Err(("ioengine", needs_runtime("runs its program"))) };
            if let Some(a) = &m.arguments {
                m.arguments = Some(a.replace("%r", &runtime.as_secs().to_string()).replace("%n", &spec.name));
            }
            m.redirect_name = spec.name.clone();
            spec.thinktime = EXEC_PACE;
        }
        "net" | "netsplice" => {
            if spec.rw.reads() == spec.rw.writes() {
                return Err(("rw", format!("ioengine={engine} either sends (rw=write) or receives (rw=read), not both")));
            }
            if m.protocol == NetProtocol::Unix {
                if spec.filenames.is_empty() {
                    return Err(("protocol", "protocol=unix needs filename=PATH, the socket's path".into()));
                }
            } else if m.port == 0 {
                return Err(("ioengine", format!("ioengine={engine} needs port=N")));
            } else if m.listen && m.protocol.is_udp() {
                return Err(("listen", "listen applies to TCP; a UDP reader (rw=read) binds its port without it".into()));
            } else if m.listen && m.hostname.is_some() {
                return Err(("hostname", "a listening job takes no hostname: remove hostname= or listen".into()));
            } else if !m.listen && !m.protocol.is_udp() && m.hostname.is_none() {
                return Err(("ioengine", "a TCP job connects to hostname=HOST unless it has listen".into()));
            } else if m.protocol.is_udp() && spec.rw.writes() && m.hostname.is_none() {
                return Err(("ioengine", "a UDP writer sends to hostname=HOST".into()));
            } else if m.protocol.is_udp() && spec.rw.reads() {
                let multicast = m.hostname.as_deref().map(|h| h.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_multicast()));
                if multicast == Some(false) {
                    return Err(("hostname", "a UDP reader binds its port: hostname= is only for a multicast group it joins".into()));
                }
            }
            if spec.size.is_none() && spec.runtime.is_none() {
                return Err(("ioengine", format!("ioengine={engine} needs size= (bytes to transfer) or runtime=")));
            }
        }
        _ => {}
    }
    let uses = crate::model::engine::find(&engine).map_or(FileUse::Data, |e| e.caps.files);
    let data = uses == FileUse::Data;
    let m = &spec.engine.misc;
    if data && m.openfiles > 0 && m.openfiles < spec.nrfiles {
        return Err((
            "openfiles",
            format!(
                "openfiles={} is below nrfiles={}: fsbench keeps all of a job's files open, so it cannot limit them; remove openfiles=",
                m.openfiles, spec.nrfiles
            ),
        ));
    }
    if !data && uses != FileUse::None && spec.misc.filesize.is_none() && spec.size.is_none() {
        return Err(("ioengine", format!("ioengine={engine} needs filesize= (or size=): each file counts filesize/bs I/Os, as in fio")));
    }
    Ok(())
}
