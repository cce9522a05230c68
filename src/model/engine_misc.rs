//! Options of the engines that do no plain data I/O (file and directory
//! operations, cpuio, exec, net): one sub-struct of `EngineOptions`, so the
//! engines' values stay together and out of `JobSpec`'s own fields.

use serde::Serialize;
use std::time::Duration;

/// Which stat call filestat and dirstat make (fio `stat_type`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum StatType {
    #[default]
    Stat,
    Lstat,
    Statx,
}

/// What cpuio runs while it burns (fio `cpumode`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CpuMode {
    /// A tight loop of no-operations.
    #[default]
    Noop,
    /// Sorting an array again and again (more work per cycle, more energy).
    Qsort,
}

/// Transport of the net engines (fio `protocol`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum NetProtocol {
    #[default]
    Tcp,
    Tcpv6,
    Udp,
    Udpv6,
    Unix,
}

impl NetProtocol {
    pub fn is_udp(self) -> bool {
        matches!(self, NetProtocol::Udp | NetProtocol::Udpv6)
    }
    pub fn is_v6(self) -> bool {
        matches!(self, NetProtocol::Tcpv6 | NetProtocol::Udpv6)
    }
}

/// The values, with fio's defaults.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct MiscEngineOptions {
    pub stat_type: StatType,
    /// cpuio: percent of the time spent burning (1-100); 0 = not given.
    pub cpuload: u32,
    /// cpuio: length of one burn-and-rest cycle (fio `cpuchunks`, `cpucycle`).
    #[serde(rename = "cpuchunks_us", serialize_with = "micros")]
    pub cpuchunks: Duration,
    pub cpumode: CpuMode,
    /// exec: the program and its arguments, split on spaces as fio does,
    /// with `%r` and `%n` already replaced.
    pub program: Option<String>,
    pub arguments: Option<String>,
    /// exec: between SIGTERM and SIGKILL when the job ends.
    #[serde(rename = "grace_time_s", serialize_with = "secs")]
    pub grace_time: Duration,
    /// exec: stdout and stderr go to `<job>.stdout` / `<job>.stderr` in the
    /// current directory (fio's names); `redirect_name` is the job name.
    pub std_redirect: bool,
    pub redirect_name: String,
    /// net: where the sender connects (and a UDP reader's multicast group).
    pub hostname: Option<String>,
    /// net: 0 = not given.
    pub port: u16,
    pub protocol: NetProtocol,
    /// net: accept a connection rather than make one.
    pub listen: bool,
    /// net: the reader sends each message back; the writer waits for it.
    pub pingpong: bool,
    pub nodelay: bool,
    /// net: socket buffer sizes (SO_SNDBUF/SO_RCVBUF); 0 = the system's.
    pub window_size: u32,
    /// net: TCP_MAXSEG; 0 = the system's.
    pub mss: u32,
    /// net: multicast time-to-live.
    pub ttl: u32,
    /// Most files open at once (fio `openfiles`); 0 = not given. Only the
    /// engines that keep no file open accept a value below nrfiles.
    pub openfiles: u32,
}

impl Default for MiscEngineOptions {
    fn default() -> Self {
        MiscEngineOptions {
            stat_type: StatType::Stat,
            cpuload: 0,
            cpuchunks: Duration::from_micros(50_000),
            cpumode: CpuMode::Noop,
            program: None,
            arguments: None,
            grace_time: Duration::from_secs(1),
            std_redirect: true,
            redirect_name: String::new(),
            hostname: None,
            port: 0,
            protocol: NetProtocol::Tcp,
            listen: false,
            pingpong: false,
            nodelay: false,
            window_size: 0,
            mss: 0,
            ttl: 1,
            openfiles: 0,
        }
    }
}

impl MiscEngineOptions {
    /// cpuio's pause after each burn that makes the thread busy `cpuload`
    /// percent of the time: a cycle is `cpuchunks` busy, then
    /// `cpuchunks * (100 - cpuload) / cpuload` idle (fio's arithmetic).
    pub fn cpu_rest(&self) -> Duration {
        let load = self.cpuload.clamp(1, 100) as u128;
        Duration::from_nanos((self.cpuchunks.as_nanos() * (100 - load) / load) as u64)
    }
}

fn micros<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_u64(d.as_micros() as u64)
}

fn secs<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(d.as_secs_f64())
}
