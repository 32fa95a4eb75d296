//! `buflab-traffic`: long-lived TCP flows over real sockets, for `buflab emulate`.
//!
//! - `buflab-traffic sink --listen IP:PORT [--window-clamp BYTES] [--quickack]`: accepts
//!   connections and reads and discards everything (with `--quickack`, acknowledging every
//!   segment at once: no delayed ACKs), until SIGTERM; then prints the bytes received per
//!   connection as one JSON object.
//! - `buflab-traffic send --to IP:PORT --starts S1,S2,… --duration SECONDS --cc NAME
//!   [--mss BYTES] [--pacing-bps BITS] [--port-base PORT]`: one connection per start time
//!   (seconds after launch), flow i from source port `--port-base` + i (so that the datapath
//!   knows its flows by port, default 40000), each writing as fast as its socket takes data, with congestion control `--cc`
//!   (`TCP_CONGESTION`), the MSS `--mss` (`TCP_MAXSEG`) and, if given, Linux's internal
//!   pacing capped at `--pacing-bps` (`SO_MAX_PACING_RATE`). SIGUSR1 marks the start of the
//!   measured window (the end of the warm-up). With `--trace FLOWS --trace-interval SECONDS
//!   --trace-to PATH`, the listed flows' `TCP_INFO` is sampled every interval into a CSV file.
//!   At `--duration` it prints each flow's `TCP_INFO`, and its counters over the window, as
//!   one JSON object and exits.
//!
//! Read first: the crate doc. One thread and one epoll set for every flow: thousands of flows
//! cost file descriptors, not threads.

use std::io;
use std::net::SocketAddrV4;
use std::os::fd::RawFd;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use buflab_emu::sys::{check as os, set_opt as setsockopt};
use buflab_emu::{clock, tcp_info};

static STOP: AtomicBool = AtomicBool::new(false);
static MARK: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    STOP.store(true, Ordering::Relaxed);
}

extern "C" fn on_mark(_: libc::c_int) {
    MARK.store(true, Ordering::Relaxed);
}

fn sockaddr(a: SocketAddrV4) -> libc::sockaddr_in {
    libc::sockaddr_in {
        sin_family: libc::AF_INET as u16,
        sin_port: a.port().to_be(),
        sin_addr: libc::in_addr { s_addr: u32::from(*a.ip()).to_be() },
        sin_zero: [0; 8],
    }
}

/// A non-blocking TCP socket.
fn tcp_socket() -> io::Result<RawFd> {
    // SAFETY: socket has no pointer arguments.
    os(
        unsafe {
            libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC, 0)
        },
        "socket",
    )
}

fn epoll_add(ep: RawFd, fd: RawFd, events: u32, data: u64) -> io::Result<()> {
    let mut ev = libc::epoll_event { events, u64: data };
    // SAFETY: epoll_ctl reads the event it is given.
    os(unsafe { libc::epoll_ctl(ep, libc::EPOLL_CTL_ADD, fd, &mut ev) }, "epoll_ctl").map(|_| ())
}

fn arg(args: &[String], key: &str) -> Option<String> {
    args.iter().position(|a| a == key).and_then(|i| args.get(i + 1)).cloned()
}

fn need(args: &[String], key: &str) -> Result<String, String> {
    arg(args, key).ok_or(format!("{key}: missing"))
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    // Die with the process that started us (`buflab emulate`), even if it is killed with
    // SIGKILL: a busy-polling datapath must never outlive its run.
    // SAFETY: prctl with PR_SET_PDEATHSIG takes a signal number; getppid has no arguments.
    unsafe {
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM);
        if libc::getppid() == 1 {
            eprintln!("error: started by a process that is already gone");
            return ExitCode::FAILURE;
        }
    }
    // SAFETY: the handler only stores to an atomic.
    unsafe {
        libc::signal(libc::SIGINT, on_signal as *const () as libc::sighandler_t);
        libc::signal(libc::SIGTERM, on_signal as *const () as libc::sighandler_t);
    }
    let result = match args.first().map(String::as_str) {
        Some("sink") => sink(&args[1..]),
        Some("send") => send(&args[1..]),
        _ => Err("usage: buflab-traffic sink|send …".to_string()),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn sink(args: &[String]) -> Result<(), String> {
    let listen: SocketAddrV4 = need(args, "--listen")?.parse().map_err(|_| "--listen: expected IP:PORT")?;
    let clamp: Option<i32> =
        arg(args, "--window-clamp").map(|v| v.parse().map_err(|_| "--window-clamp: bytes")).transpose()?;
    // Linux has no switch for delayed ACKs; TCP_QUICKACK turns them off until the stack next
    // decides otherwise, so it is set again after every read (what `delayed_ack = false` asks).
    let quickack = args.iter().any(|a| a == "--quickack");
    let run = || -> io::Result<Vec<u64>> {
        let l = tcp_socket()?;
        setsockopt(l, libc::SOL_SOCKET, libc::SO_REUSEADDR, &1i32, "SO_REUSEADDR")?;
        if let Some(c) = clamp {
            setsockopt(l, libc::IPPROTO_TCP, libc::TCP_WINDOW_CLAMP, &c, "TCP_WINDOW_CLAMP")?;
        }
        let sa = sockaddr(listen);
        // SAFETY: bind reads the sockaddr_in of the size given.
        os(
            unsafe {
                libc::bind(l, &sa as *const _ as *const libc::sockaddr, std::mem::size_of_val(&sa) as u32)
            },
            "bind",
        )?;
        // SAFETY: listen has no pointer arguments.
        os(unsafe { libc::listen(l, 4096) }, "listen")?;
        // SAFETY: epoll_create1 has no pointer arguments.
        let ep = os(unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) }, "epoll_create1")?;
        epoll_add(ep, l, libc::EPOLLIN as u32, u64::MAX)?;
        eprintln!("sink: listening on {listen}");
        let mut conns: Vec<(RawFd, u64)> = Vec::new();
        let mut buf = vec![0u8; 1 << 16];
        let mut events = vec![libc::epoll_event { events: 0, u64: 0 }; 256];
        while !STOP.load(Ordering::Relaxed) {
            // SAFETY: epoll_wait writes at most events.len() entries.
            let n = unsafe { libc::epoll_wait(ep, events.as_mut_ptr(), events.len() as i32, 100) };
            for ev in &events[..n.max(0) as usize] {
                if ev.u64 == u64::MAX {
                    loop {
                        // SAFETY: accept4 may take null address pointers.
                        let c = unsafe {
                            libc::accept4(
                                l,
                                std::ptr::null_mut(),
                                std::ptr::null_mut(),
                                libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC,
                            )
                        };
                        if c < 0 {
                            break;
                        }
                        epoll_add(ep, c, (libc::EPOLLIN | libc::EPOLLET) as u32, conns.len() as u64)?;
                        conns.push((c, 0));
                    }
                    continue;
                }
                let (fd, bytes) = &mut conns[ev.u64 as usize];
                loop {
                    // SAFETY: read writes at most buf.len() bytes into buf.
                    let r = unsafe { libc::read(*fd, buf.as_mut_ptr() as *mut libc::c_void, buf.len()) };
                    if r <= 0 {
                        break;
                    }
                    *bytes += r as u64;
                    if quickack {
                        setsockopt(*fd, libc::IPPROTO_TCP, libc::TCP_QUICKACK, &1i32, "TCP_QUICKACK")?;
                    }
                }
            }
        }
        Ok(conns.iter().map(|c| c.1).collect())
    };
    let received = run().map_err(|e| e.to_string())?;
    println!("{}", serde_json::json!({ "received": received }));
    Ok(())
}

/// One sending flow.
struct Flow {
    start: Duration,
    fd: Option<RawFd>,
    error: Option<String>,
    /// Its counters when the measured window began (zero if it had not started yet).
    at_window: Counters,
}

/// The cumulative counters of a connection that the flows table reports over the window.
#[derive(Clone, Copy, Default)]
struct Counters {
    bytes_acked: u64,
    data_segs_out: u64,
    total_retrans: u64,
    total_rto: u64,
    delivered_ce: u64,
}

impl Counters {
    fn of(info: &tcp_info::TcpInfo) -> Counters {
        Counters {
            bytes_acked: info.bytes_acked,
            data_segs_out: u64::from(info.data_segs_out),
            total_retrans: u64::from(info.total_retrans),
            total_rto: u64::from(info.total_rto),
            delivered_ce: u64::from(info.delivered_ce),
        }
    }
}

/// Traced flows' `TCP_INFO`, sampled every `interval` into a CSV file (the simulator's traces
/// table's columns).
struct Tracer {
    flows: Vec<usize>,
    interval: Duration,
    next: Duration,
    out: io::BufWriter<std::fs::File>,
    /// Whether the flows pace (`--pacing-bps`): Linux computes a pacing rate either way, but
    /// applies it only then; the table says 0 for a flow that does not pace.
    paces: bool,
}

impl Tracer {
    const HEADER: &'static str = "time_s,flow,cwnd_pkts,ssthresh_pkts,srtt_s,pacing_rate_bps,acked_bytes\n";

    fn sample(&mut self, now: Duration, flows: &[Flow]) -> io::Result<()> {
        use std::io::Write;
        for &i in &self.flows {
            let Some(fd) = flows.get(i).and_then(|f| f.fd) else { continue };
            let Ok(r) = tcp_info::read(fd) else { continue };
            let x = r.info;
            // u64::MAX until the first RTT sample: no rate yet.
            let pacing_bps =
                if self.paces && x.pacing_rate != u64::MAX { x.pacing_rate.saturating_mul(8) } else { 0 };
            writeln!(
                self.out,
                "{:.6},{i},{},{},{:.6},{},{}",
                now.as_secs_f64(),
                x.snd_cwnd,
                x.snd_ssthresh,
                f64::from(x.rtt) * 1e-6,
                pacing_bps,
                x.bytes_acked
            )?;
        }
        self.next = now + self.interval;
        Ok(())
    }
}

fn send(args: &[String]) -> Result<(), String> {
    let to: SocketAddrV4 = need(args, "--to")?.parse().map_err(|_| "--to: expected IP:PORT")?;
    let starts: Vec<f64> = need(args, "--starts")?
        .split(',')
        .map(|s| s.parse::<f64>().ok().filter(|x| x.is_finite() && *x >= 0.0))
        .collect::<Option<_>>()
        .ok_or("--starts: expected seconds, comma-separated")?;
    let duration: f64 = need(args, "--duration")?.parse().map_err(|_| "--duration: expected seconds")?;
    let cc = need(args, "--cc")?;
    let mss: Option<i32> = arg(args, "--mss").map(|v| v.parse().map_err(|_| "--mss: bytes")).transpose()?;
    let port_base: u16 =
        arg(args, "--port-base").map_or(Ok(40_000), |v| v.parse().map_err(|_| "--port-base: a port"))?;
    if starts.len() > usize::from(u16::MAX - port_base) {
        return Err(format!("--starts: {} flows do not fit in the ports from {port_base}", starts.len()));
    }
    let pacing: Option<u64> =
        arg(args, "--pacing-bps").map(|v| v.parse().map_err(|_| "--pacing-bps: bits/s")).transpose()?;
    let mut tracer = match arg(args, "--trace") {
        None => None,
        Some(list) => {
            let flows = list
                .split(',')
                .map(|x| x.parse::<usize>().ok())
                .collect::<Option<Vec<_>>>()
                .ok_or("--trace: expected flow numbers, comma-separated")?;
            let secs: f64 = need(args, "--trace-interval")?
                .parse()
                .ok()
                .filter(|x: &f64| x.is_finite() && *x > 0.0)
                .ok_or("--trace-interval: expected seconds above 0")?;
            let path = need(args, "--trace-to")?;
            let mut out =
                io::BufWriter::new(std::fs::File::create(&path).map_err(|e| format!("{path}: {e}"))?);
            io::Write::write_all(&mut out, Tracer::HEADER.as_bytes()).map_err(|e| format!("{path}: {e}"))?;
            Some(Tracer {
                flows,
                interval: Duration::from_secs_f64(secs),
                next: Duration::ZERO,
                out,
                paces: pacing.is_some(),
            })
        }
    };
    // SAFETY: the handler only stores to an atomic.
    unsafe {
        libc::signal(libc::SIGUSR1, on_mark as *const () as libc::sighandler_t);
    }
    let mut flows: Vec<Flow> = starts
        .iter()
        .map(|&s| Flow {
            start: Duration::from_secs_f64(s),
            fd: None,
            error: None,
            at_window: Counters::default(),
        })
        .collect();
    let open = |f: &mut Flow, ep: RawFd, id: usize| -> io::Result<()> {
        let fd = tcp_socket()?;
        f.fd = Some(fd);
        let name = std::ffi::CString::new(cc.clone()).expect("no NUL");
        // SAFETY: setsockopt reads the name's bytes.
        os(
            unsafe {
                libc::setsockopt(
                    fd,
                    libc::IPPROTO_TCP,
                    libc::TCP_CONGESTION,
                    name.as_ptr() as *const libc::c_void,
                    cc.len() as u32,
                )
            },
            "TCP_CONGESTION",
        )?;
        if let Some(m) = mss {
            setsockopt(fd, libc::IPPROTO_TCP, libc::TCP_MAXSEG, &m, "TCP_MAXSEG")?;
        }
        if let Some(p) = pacing {
            // SO_MAX_PACING_RATE is in bytes per second.
            setsockopt(fd, libc::SOL_SOCKET, libc::SO_MAX_PACING_RATE, &(p / 8), "SO_MAX_PACING_RATE")?;
        }
        setsockopt(fd, libc::SOL_SOCKET, libc::SO_REUSEADDR, &1i32, "SO_REUSEADDR")?;
        let local = sockaddr(SocketAddrV4::new(std::net::Ipv4Addr::UNSPECIFIED, port_base + id as u16));
        // SAFETY: bind reads the sockaddr_in of the size given.
        let r = unsafe {
            libc::bind(fd, &local as *const _ as *const libc::sockaddr, std::mem::size_of_val(&local) as u32)
        };
        os(r, "bind to the flow's source port")?;
        let sa = sockaddr(to);
        // SAFETY: connect reads the sockaddr_in of the size given.
        let r = unsafe {
            libc::connect(fd, &sa as *const _ as *const libc::sockaddr, std::mem::size_of_val(&sa) as u32)
        };
        if r < 0 && io::Error::last_os_error().raw_os_error() != Some(libc::EINPROGRESS) {
            return Err(io::Error::last_os_error());
        }
        epoll_add(ep, fd, (libc::EPOLLOUT | libc::EPOLLET) as u32, id as u64)
    };
    // SAFETY: epoll_create1 has no pointer arguments.
    let ep = os(unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) }, "epoll_create1")
        .map_err(|e| e.to_string())?;
    let data = vec![0u8; 1 << 16];
    let mut events = vec![libc::epoll_event { events: 0, u64: 0 }; 256];
    // The scenario's time 0, on the monotonic clock the datapath's log is stamped with.
    let began_clock = clock::now();
    let began = Instant::now();
    // Time 0, for the datapath (`epoch` on its control channel).
    eprintln!("sender: began at {} ps", began_clock.ps());
    let end = Duration::from_secs_f64(duration);
    let mut window_start: Option<Duration> = None;
    let mut order: Vec<usize> = (0..flows.len()).collect();
    order.sort_by_key(|&i| flows[i].start);
    let mut next = 0;
    while !STOP.load(Ordering::Relaxed) {
        let now = began.elapsed();
        if now >= end {
            break;
        }
        if MARK.swap(false, Ordering::Relaxed) {
            window_start = Some(now);
            for f in flows.iter_mut() {
                f.at_window =
                    f.fd.and_then(|fd| tcp_info::read(fd).ok())
                        .map_or_else(Counters::default, |r| Counters::of(&r.info));
            }
        }
        while next < order.len() && flows[order[next]].start <= now {
            let id = order[next];
            if let Err(e) = open(&mut flows[id], ep, id) {
                flows[id].error = Some(e.to_string());
            }
            next += 1;
        }
        if let Some(t) = tracer.as_mut().filter(|t| now >= t.next) {
            t.sample(now, &flows).map_err(|e| format!("--trace-to: {e}"))?;
        }
        let mut until = order.get(next).map_or(end, |&i| flows[i].start.min(end));
        if let Some(t) = &tracer {
            until = until.min(t.next);
        }
        let wait_ms = until.saturating_sub(now).as_millis().clamp(0, 50) as i32;
        // SAFETY: epoll_wait writes at most events.len() entries.
        let n = unsafe { libc::epoll_wait(ep, events.as_mut_ptr(), events.len() as i32, wait_ms) };
        for ev in &events[..n.max(0) as usize] {
            let f = &mut flows[ev.u64 as usize];
            let Some(fd) = f.fd else { continue };
            if ev.events & (libc::EPOLLERR | libc::EPOLLHUP) as u32 != 0 && f.error.is_none() {
                f.error = Some("the connection failed".into());
            }
            loop {
                // SAFETY: write reads at most data.len() bytes from data.
                let r = unsafe { libc::write(fd, data.as_ptr() as *const libc::c_void, data.len()) };
                if r <= 0 {
                    break;
                }
            }
        }
    }
    // The end of the measured window, before the sockets are read and closed.
    let ended_clock = clock::now();
    if let Some(t) = tracer.as_mut() {
        io::Write::flush(&mut t.out).map_err(|e| format!("--trace-to: {e}"))?;
    }
    let mut rto_known = true;
    let rows: Vec<serde_json::Value> = flows
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let r = f.fd.and_then(|fd| tcp_info::read(fd).ok()).unwrap_or_default();
            rto_known &= r.has_total_rto || f.fd.is_none();
            let (info, now, then) = (r.info, Counters::of(&r.info), f.at_window);
            serde_json::json!({
                "flow": i, "start_s": f.start.as_secs_f64(), "error": f.error,
                "bytes_acked": info.bytes_acked, "bytes_acked_window": now.bytes_acked - then.bytes_acked,
                "data_segs_out_window": now.data_segs_out - then.data_segs_out,
                "retransmits_window": now.total_retrans - then.total_retrans,
                "timeouts_window": now.total_rto - then.total_rto,
                "delivered_ce_window": now.delivered_ce - then.delivered_ce,
                "bytes_sent": info.bytes_sent, "bytes_retrans": info.bytes_retrans,
                "total_retrans": info.total_retrans,
                "cwnd_pkts": info.snd_cwnd, "ssthresh_pkts": info.snd_ssthresh,
                "srtt_s": f64::from(info.rtt) * 1e-6, "min_rtt_s": f64::from(info.min_rtt) * 1e-6,
                "snd_mss": info.snd_mss,
            })
        })
        .collect();
    println!(
        "{}",
        serde_json::json!({
            "flows": rows, "elapsed_s": began.elapsed().as_secs_f64(),
            "began_clock_ps": began_clock.ps(), "ended_clock_ps": ended_clock.ps(),
            "window_start_s": window_start.map(|w| w.as_secs_f64()),
            "timeouts_known": rto_known,
        })
    );
    Ok(())
}
