//! net and netsplice: a job's I/O goes over a socket instead of a file. A
//! writer (rw=write) sends `bs` bytes per operation, a reader (rw=read)
//! receives them; a listener job and a sender job in one job file run side
//! by side (fio's netio.fio).
//!
//! TCP and unix sockets: the `listen` side accepts one connection in
//! `setup` (waiting up to `ACCEPT_WAIT`), the other connects, retrying while
//! the listener is not up yet. A read receives a whole block (MSG_WAITALL);
//! the peer closing the connection ends the job (`IoEngine::finished`) instead
//! of failing it. UDP: the reader binds `port` (joining `hostname` when it
//! is a multicast group), the writer sends one datagram per operation and,
//! when dropped, an end marker; the reader ends on the marker or after
//! `UDP_IDLE` without a datagram. With `pingpong` the reader sends each
//! block back and the writer waits for it, so latencies are round trips.
//!
//! netsplice moves the data through a pipe: write and splice to send,
//! splice and read to receive (TCP and unix only). fio sends with vmsplice, which
//! lends the buffer's pages; TCP can still hold them when the next block
//! overwrites the buffer, so fsbench copies into the pipe instead.

use super::*;
use crate::model::engine_misc::{MiscEngineOptions, NetProtocol};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, TcpListener, TcpStream, ToSocketAddrs, UdpSocket};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// How long a listener waits for its sender, and a sender for its listener.
const ACCEPT_WAIT: Duration = Duration::from_secs(60);
const CONNECT_WAIT: Duration = Duration::from_secs(10);
/// A UDP reader that gets nothing for this long takes its writer as gone.
const UDP_IDLE: Duration = Duration::from_secs(5);
/// A UDP pingpong writer takes a reply missing this long as the reader gone.
const PONG_WAIT: Duration = Duration::from_secs(1);
/// The UDP end marker; shorter than any block a job may use, so it cannot
/// be mistaken for data.
const END_MARKER: &[u8; 8] = b"fsbEND\0\0";
/// Bytes per splice through the pipe (a pipe's default capacity).
const PIPE_CHUNK: usize = 65536;

pub struct Net {
    opts: MiscEngineOptions,
    splice: bool,
    sock: Option<OwnedFd>,
    /// UDP reader with pingpong: where the last datagram came from.
    peer: libc::sockaddr_storage,
    peer_len: libc::socklen_t,
    /// A UDP writer to a multicast group sends here (its socket is not connected).
    dest: Option<(libc::sockaddr_storage, libc::socklen_t)>,
    /// netsplice: read end, write end.
    pipe: Option<(OwnedFd, OwnedFd)>,
    unix_path: Option<PathBuf>,
    /// A unix socket this engine bound, removed when it is dropped.
    bound_path: Option<PathBuf>,
    writer: bool,
    /// The peer has finished.
    done: bool,
}

fn make(cfg: &EngineConfig, splice: bool) -> io::Result<Box<dyn IoEngine>> {
    let opts = cfg.options.misc.clone();
    if splice && opts.protocol.is_udp() {
        return Err(invalid("netsplice works over TCP or unix sockets; use ioengine=net for UDP"));
    }
    // SAFETY: sockaddr_storage is plain data for which all zeroes is valid.
    let peer = unsafe { std::mem::zeroed() };
    Ok(Box::new(Net {
        opts,
        splice,
        sock: None,
        peer,
        peer_len: 0,
        dest: None,
        pipe: None,
        unix_path: None,
        bound_path: None,
        writer: false,
        done: false,
    }))
}

pub const NET: EngineImpl = EngineImpl { name: "net", make: |c| make(c, false) };
pub const NETSPLICE: EngineImpl = EngineImpl { name: "netsplice", make: |c| make(c, true) };

fn invalid(msg: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, msg.to_string())
}

/// A socket address in the C layout bind takes.
fn sockaddr(addr: SocketAddr) -> (libc::sockaddr_storage, libc::socklen_t) {
    // SAFETY: sockaddr_storage is plain data for which all zeroes is valid.
    let mut st: libc::sockaddr_storage = unsafe { std::mem::zeroed() };
    let len = match addr {
        SocketAddr::V4(a) => {
            let sin = libc::sockaddr_in {
                sin_family: libc::AF_INET as libc::sa_family_t,
                sin_port: a.port().to_be(),
                sin_addr: libc::in_addr { s_addr: u32::from(*a.ip()).to_be() },
                sin_zero: [0; 8],
            };
            // SAFETY: sockaddr_storage is larger than and aligned for sockaddr_in.
            unsafe { std::ptr::write(&mut st as *mut _ as *mut libc::sockaddr_in, sin) };
            std::mem::size_of::<libc::sockaddr_in>()
        }
        SocketAddr::V6(a) => {
            let sin6 = libc::sockaddr_in6 {
                sin6_family: libc::AF_INET6 as libc::sa_family_t,
                sin6_port: a.port().to_be(),
                sin6_flowinfo: a.flowinfo(),
                sin6_addr: libc::in6_addr { s6_addr: a.ip().octets() },
                sin6_scope_id: a.scope_id(),
            };
            // SAFETY: sockaddr_storage is larger than and aligned for sockaddr_in6.
            unsafe { std::ptr::write(&mut st as *mut _ as *mut libc::sockaddr_in6, sin6) };
            std::mem::size_of::<libc::sockaddr_in6>()
        }
    };
    (st, len as libc::socklen_t)
}

fn setopt(fd: i32, level: i32, name: i32, value: i32) -> io::Result<()> {
    // SAFETY: setsockopt reads one c_int from the live local `value`.
    let r = unsafe { libc::setsockopt(fd, level, name, &value as *const i32 as *const libc::c_void, std::mem::size_of::<i32>() as u32) };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

impl Net {
    fn addrs(&self) -> io::Result<Vec<SocketAddr>> {
        let host = self.opts.hostname.as_deref().ok_or_else(|| invalid("hostname is not set: the sender needs one"))?;
        let v6 = self.opts.protocol.is_v6();
        let all: Vec<SocketAddr> = (host, self.opts.port).to_socket_addrs()?.filter(|a| a.is_ipv6() == v6).collect();
        if all.is_empty() {
            return Err(invalid(&format!("{host} has no {} address", if v6 { "IPv6" } else { "IPv4" })));
        }
        Ok(all)
    }

    fn any_addr(&self) -> SocketAddr {
        let ip = if self.opts.protocol.is_v6() { IpAddr::V6(Ipv6Addr::UNSPECIFIED) } else { IpAddr::V4(Ipv4Addr::UNSPECIFIED) };
        SocketAddr::new(ip, self.opts.port)
    }

    /// Retry `f` while the other side is not there yet.
    fn retry<T>(mut f: impl FnMut() -> io::Result<T>) -> io::Result<T> {
        let deadline = Instant::now() + CONNECT_WAIT;
        loop {
            match f() {
                Ok(t) => return Ok(t),
                Err(e) if Instant::now() < deadline && matches!(e.kind(), io::ErrorKind::ConnectionRefused | io::ErrorKind::NotFound) => {
                    std::thread::sleep(Duration::from_millis(10))
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// Wait for one connection on a non-blocking listener.
    fn accept<T>(what: &str, mut f: impl FnMut() -> io::Result<T>) -> io::Result<T> {
        let deadline = Instant::now() + ACCEPT_WAIT;
        loop {
            match f() {
                Ok(t) => return Ok(t),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock && Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(5))
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    return Err(io::Error::new(
                        io::ErrorKind::TimedOut,
                        format!("nobody connected to {what} within {} s", ACCEPT_WAIT.as_secs()),
                    ))
                }
                Err(e) => return Err(e),
            }
        }
    }

    fn tcp(&mut self) -> io::Result<OwnedFd> {
        let s = if self.opts.listen {
            let l = TcpListener::bind(self.any_addr())?;
            l.set_nonblocking(true)?;
            let (s, _) = Self::accept(&format!("port {}", self.opts.port), || l.accept())?;
            s.set_nonblocking(false)?;
            s
        } else {
            let addrs = self.addrs()?;
            Self::retry(|| TcpStream::connect(&addrs[..]))?
        };
        if self.opts.nodelay {
            s.set_nodelay(true)?;
        }
        if self.opts.mss > 0 {
            setopt(s.as_raw_fd(), libc::IPPROTO_TCP, libc::TCP_MAXSEG, self.opts.mss as i32)?;
        }
        Ok(OwnedFd::from(s))
    }

    fn unix(&mut self) -> io::Result<OwnedFd> {
        let path = self.unix_path.clone().ok_or_else(|| invalid("protocol=unix needs filename= (the socket's path)"))?;
        if self.opts.listen {
            if std::fs::symlink_metadata(&path).is_ok_and(|m| std::os::unix::fs::FileTypeExt::is_socket(&m.file_type())) {
                std::fs::remove_file(&path)?;
            }
            let l = UnixListener::bind(&path)?;
            self.bound_path = Some(path.clone());
            l.set_nonblocking(true)?;
            let (s, _) = Self::accept(&path.display().to_string(), || l.accept())?;
            s.set_nonblocking(false)?;
            Ok(OwnedFd::from(s))
        } else {
            Ok(OwnedFd::from(Self::retry(|| UnixStream::connect(&path))?))
        }
    }

    fn udp(&mut self) -> io::Result<OwnedFd> {
        if self.writer {
            let addrs = self.addrs()?;
            let any = if self.opts.protocol.is_v6() { "[::]:0" } else { "0.0.0.0:0" };
            let s = UdpSocket::bind(any)?;
            s.set_read_timeout(Some(PONG_WAIT))?;
            if addrs[0].ip().is_multicast() {
                if addrs[0].ip().is_ipv4() {
                    s.set_multicast_ttl_v4(self.opts.ttl)?;
                }
                // Not connected: a pingpong reply comes from the reader's
                // own address, which a socket connected to the group drops.
                self.dest = Some(sockaddr(addrs[0]));
            } else {
                s.connect(&addrs[..])?;
            }
            return Ok(OwnedFd::from(s));
        }
        let group = match self.opts.hostname.as_deref() {
            Some(h) => h.parse::<IpAddr>().ok().filter(|ip| ip.is_multicast()),
            None => None,
        };
        let s = Self::udp_bind_shared(self.any_addr())?;
        match group {
            Some(IpAddr::V4(g)) => s.join_multicast_v4(&g, &Ipv4Addr::UNSPECIFIED)?,
            Some(IpAddr::V6(g)) => s.join_multicast_v6(&g, 0)?,
            None => {}
        }
        s.set_read_timeout(Some(UDP_IDLE))?;
        Ok(OwnedFd::from(s))
    }

    /// Bind a UDP socket with SO_REUSEADDR, so several readers of one
    /// multicast group can share the port (netio_multicast.fio).
    fn udp_bind_shared(addr: SocketAddr) -> io::Result<UdpSocket> {
        let domain = if addr.is_ipv6() { libc::AF_INET6 } else { libc::AF_INET };
        // SAFETY: socket takes integers; the result is checked before use.
        let fd = unsafe { libc::socket(domain, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `fd` was just created and is owned by nothing else.
        let s = unsafe { UdpSocket::from_raw_fd(fd) };
        setopt(fd, libc::SOL_SOCKET, libc::SO_REUSEADDR, 1)?;
        let (storage, len) = sockaddr(addr);
        // SAFETY: bind reads `len` bytes of the live local `storage`.
        if unsafe { libc::bind(fd, &storage as *const _ as *const libc::sockaddr, len) } < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(s)
    }

    fn fd(&self) -> i32 {
        self.sock.as_ref().map_or(-1, |s| s.as_raw_fd())
    }

    /// Send all `len` bytes at `buf`; Ok(false) when the peer is gone.
    fn send_all(&mut self, buf: *const u8, len: usize) -> io::Result<bool> {
        if self.splice {
            return self.splice_out(buf, len);
        }
        let fd = self.fd();
        let mut done = 0;
        while done < len {
            // SAFETY: `buf` is valid for `len` bytes (the runner's buffer slot for this I/O); `dest` holds its length's
            // bytes of address.
            let n = unsafe {
                let p = buf.add(done) as *const libc::c_void;
                match &self.dest {
                    Some((to, tl)) => libc::sendto(fd, p, len - done, libc::MSG_NOSIGNAL, to as *const _ as *const libc::sockaddr, *tl),
                    None => libc::send(fd, p, len - done, libc::MSG_NOSIGNAL),
                }
            };
            if n < 0 {
                let e = io::Error::last_os_error();
                match e.raw_os_error() {
                    Some(libc::EINTR) => continue,
                    // A UDP reader that is not up yet: its port's refusal
                    // comes back on the next send; send this block again.
                    Some(libc::ECONNREFUSED) if self.opts.protocol.is_udp() => continue,
                    Some(libc::EPIPE | libc::ECONNRESET) => return Ok(false),
                    _ => return Err(e),
                }
            }
            done += n as usize;
        }
        Ok(true)
    }

    /// Receive a whole block into `buf`: Ok(0) when the peer is gone.
    fn recv_block(&mut self, buf: *mut u8, len: usize) -> io::Result<usize> {
        if self.splice {
            return self.splice_in(buf, len);
        }
        let fd = self.fd();
        if self.opts.protocol.is_udp() {
            self.peer_len = std::mem::size_of::<libc::sockaddr_storage>() as libc::socklen_t;
            // SAFETY: `buf` is valid for `len` bytes; `peer` and `peer_len` are fields of `self` sized for any address.
            let n = unsafe {
                libc::recvfrom(fd, buf as *mut libc::c_void, len, 0, &mut self.peer as *mut _ as *mut libc::sockaddr, &mut self.peer_len)
            };
            if n < 0 {
                let e = io::Error::last_os_error();
                return match e.kind() {
                    io::ErrorKind::WouldBlock => Ok(0),
                    _ => Err(e),
                };
            }
            // SAFETY: recvfrom wrote `n` bytes at `buf`.
            let got = unsafe { std::slice::from_raw_parts(buf, n as usize) };
            return Ok(if got == END_MARKER { 0 } else { n as usize });
        }
        loop {
            // SAFETY: `buf` is valid for `len` bytes.
            let n = unsafe { libc::recv(fd, buf as *mut libc::c_void, len, libc::MSG_WAITALL) };
            if n < 0 {
                let e = io::Error::last_os_error();
                match e.raw_os_error() {
                    Some(libc::EINTR) => continue,
                    Some(libc::ECONNRESET) => return Ok(0),
                    _ => return Err(e),
                }
            }
            // Less than a block only when the stream ended mid-block: the
            // sender stopped; the piece is not an operation.
            return Ok(if (n as usize) < len { 0 } else { n as usize });
        }
    }

    /// Send a UDP reply to where the last datagram came from (pingpong).
    fn reply_udp(&mut self, buf: *const u8, len: usize) -> io::Result<()> {
        // SAFETY: `buf` is valid for `len` bytes; `peer` holds `peer_len` bytes of the sender's address.
        let n = unsafe {
            libc::sendto(self.fd(), buf as *const libc::c_void, len, 0, &self.peer as *const _ as *const libc::sockaddr, self.peer_len)
        };
        if n < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    fn pipe(&self) -> (i32, i32) {
        self.pipe.as_ref().map_or((-1, -1), |(r, w)| (r.as_raw_fd(), w.as_raw_fd()))
    }

    fn splice_out(&mut self, buf: *const u8, len: usize) -> io::Result<bool> {
        let (pr, pw) = self.pipe();
        let sock = self.fd();
        let mut done = 0;
        while done < len {
            let chunk = (len - done).min(PIPE_CHUNK);
            // write, not vmsplice: vmsplice lends the buffer's pages to the
            // pipe, and TCP may still hold them when the next block is
            // written into the same buffer.
            // SAFETY: `buf` is valid for `len` bytes and done + chunk <= len; `pw` is our pipe's write end.
            let n = unsafe { libc::write(pw, buf.add(done) as *const libc::c_void, chunk) };
            if n < 0 {
                return Err(io::Error::last_os_error());
            }
            let mut moved = 0;
            while moved < n as usize {
                // SAFETY: splice between two descriptors we own; no memory of ours is involved.
                let m = unsafe {
                    libc::splice(
                        pr,
                        std::ptr::null_mut(),
                        sock,
                        std::ptr::null_mut(),
                        n as usize - moved,
                        libc::SPLICE_F_MOVE | libc::SPLICE_F_MORE,
                    )
                };
                if m < 0 {
                    let e = io::Error::last_os_error();
                    return match e.raw_os_error() {
                        Some(libc::EPIPE | libc::ECONNRESET) => Ok(false),
                        _ => Err(e),
                    };
                }
                moved += m as usize;
            }
            done += n as usize;
        }
        Ok(true)
    }

    fn splice_in(&mut self, buf: *mut u8, len: usize) -> io::Result<usize> {
        let (pr, pw) = self.pipe();
        let sock = self.fd();
        let mut done = 0;
        while done < len {
            // SAFETY: splice between two descriptors we own.
            let n = unsafe {
                libc::splice(sock, std::ptr::null_mut(), pw, std::ptr::null_mut(), (len - done).min(PIPE_CHUNK), libc::SPLICE_F_MOVE)
            };
            if n < 0 {
                let e = io::Error::last_os_error();
                return match e.raw_os_error() {
                    Some(libc::ECONNRESET) => Ok(0),
                    _ => Err(e),
                };
            }
            if n == 0 {
                return Ok(done);
            }
            let mut read = 0;
            while read < n as usize {
                // SAFETY: `buf` is valid for `len` bytes and done + n <= len.
                let r = unsafe { libc::read(pr, buf.add(done + read) as *mut libc::c_void, n as usize - read) };
                if r <= 0 {
                    return Err(io::Error::last_os_error());
                }
                read += r as usize;
            }
            done += n as usize;
        }
        Ok(done)
    }
}

impl Net {
    /// The peer is gone: a short result the runner takes as the end.
    fn end(&mut self) -> Queued {
        self.done = true;
        Queued::Done(0)
    }
}

impl IoEngine for Net {
    fn finished(&self) -> bool {
        self.done
    }

    fn setup_paths(&mut self, files: &[EnginePath]) -> io::Result<()> {
        self.unix_path = files.first().map(|f| f.path.to_path_buf());
        Ok(())
    }

    fn setup(&mut self, files: &[EngineFile], _bufs: &[EngineBuf]) -> io::Result<()> {
        self.writer = files.first().is_some_and(|f| f.writable);
        let is_unix = self.opts.protocol == NetProtocol::Unix;
        if !is_unix && self.opts.port == 0 {
            return Err(invalid("port is not set"));
        }
        let sock = match self.opts.protocol {
            NetProtocol::Unix => self.unix()?,
            p if p.is_udp() => self.udp()?,
            _ => self.tcp()?,
        };
        if self.opts.window_size > 0 {
            setopt(sock.as_raw_fd(), libc::SOL_SOCKET, libc::SO_SNDBUF, self.opts.window_size as i32)?;
            setopt(sock.as_raw_fd(), libc::SOL_SOCKET, libc::SO_RCVBUF, self.opts.window_size as i32)?;
        }
        self.sock = Some(sock);
        if self.splice {
            let mut fds = [0i32; 2];
            // SAFETY: pipe2 writes two descriptors into the live local array.
            if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } < 0 {
                return Err(io::Error::last_os_error());
            }
            // SAFETY: both descriptors were just created and are owned by nothing else.
            self.pipe = Some(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) });
        }
        Ok(())
    }

    fn queue(&mut self, io: &IoUnit) -> io::Result<Queued> {
        let len = io.len as usize;
        let udp = self.opts.protocol.is_udp();
        match io.op {
            IoOp::Write => {
                if !self.send_all(io.buf, len)? {
                    return Ok(self.end());
                }
                if self.opts.pingpong && self.recv_block(io.buf, len)? == 0 {
                    return Ok(self.end());
                }
                Ok(Queued::Done(len as i64))
            }
            IoOp::Read => {
                let n = self.recv_block(io.buf, len)?;
                if n == 0 {
                    return Ok(self.end());
                }
                if self.opts.pingpong {
                    if udp {
                        self.reply_udp(io.buf, n)?;
                    } else if !self.send_all(io.buf, n)? {
                        return Ok(self.end());
                    }
                }
                Ok(Queued::Done(n as i64))
            }
            _ => Ok(Queued::Done(0)),
        }
    }
}

impl Drop for Net {
    fn drop(&mut self) {
        if self.writer && self.opts.protocol.is_udp() && self.sock.is_some() {
            let _ = self.send_all(END_MARKER.as_ptr(), END_MARKER.len());
        }
        if let Some(p) = self.bound_path.take() {
            let _ = std::fs::remove_file(p);
        }
    }
}
