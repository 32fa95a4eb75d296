//! `buflab-traffic`: a scenario's traffic on real sockets, for `buflab emulate`; one process
//! and one epoll loop per host namespace (see the `traffic` module).
//!
//! - `buflab-traffic host --plan PATH --machine M [--trace-to PATH] [--control PATH]`: sender
//!   machine M's part: its long-lived flows' senders, its UDP sources, and the servers of
//!   every user's files (they answer on any flow address of the host). With `--control`, a
//!   live run's long-lived flows are opened (the plan's spare slots) and closed on command on
//!   that Unix socket (`traffic::control`).
//! - `buflab-traffic receiver --plan PATH`: the receiver's part: the long-lived flows' sink,
//!   the users' clients and the open-loop arrivals, the UDP sink.
//!
//! Each reads the plan (JSON, written by the front end: see `traffic::Plan`), sets up its
//! sockets, says `ready` on stderr, and waits for one line on stdin, `go EPOCH`: the run's
//! time 0 on the monotonic clock, in picoseconds, the same for every host, so that every
//! start time, the measured window (from the warm-up on) and the end (the scenario's
//! duration) are the same instants everywhere. At the end it prints its report as one JSON
//! object on stdout and exits; SIGINT or SIGTERM end it early the same way.
//!
//! Read first: the `traffic` module.

use std::io::BufRead;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};

use buflab_base::units::Time;
use buflab_core::scenario::Traffic;
use buflab_emu::clock;
use buflab_emu::control::Control;
use buflab_emu::fidelity::Lateness;
use buflab_emu::traffic::clients::{self, Clients};
use buflab_emu::traffic::control::{self as commands, Command};
use buflab_emu::traffic::net;
use buflab_emu::traffic::reactor::{Reactor, Ready, Token};
use buflab_emu::traffic::senders::{self, Senders};
use buflab_emu::traffic::servers::{self, Servers};
use buflab_emu::traffic::sink::{self, Sink};
use buflab_emu::traffic::trace::Tracer;
use buflab_emu::traffic::udp::{self, Sources};
use buflab_emu::traffic::{Plan, Window, TCP_PORT};
use serde_json::{json, Value};

static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    STOP.store(true, Ordering::Relaxed);
}

/// The reactor's kinds of this binary's own timers: the measured window's start, and the
/// tracer's samples.
const WINDOW: u8 = 10;
const TRACE: u8 = 11;

fn arg(args: &[String], key: &str) -> Option<String> {
    args.iter().position(|a| a == key).and_then(|i| args.get(i + 1)).cloned()
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    // Die with the process that started us (`buflab emulate`), even if it is killed with
    // SIGKILL.
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
    let result = read_plan(&args).and_then(|plan| match args.first().map(String::as_str) {
        Some("host") => {
            let machine =
                arg(&args, "--machine").and_then(|m| m.parse().ok()).ok_or("--machine: expected a number")?;
            host(&plan, machine, arg(&args, "--trace-to"), arg(&args, "--control"))
        }
        Some("receiver") => receiver(&plan),
        _ => Err("usage: buflab-traffic host|receiver --plan PATH …".to_string()),
    });
    match result {
        Ok(report) => {
            println!("{report}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn read_plan(args: &[String]) -> Result<Plan, String> {
    let path = arg(args, "--plan").ok_or("--plan: missing")?;
    let text = std::fs::read_to_string(&path).map_err(|e| format!("--plan: {path}: {e}"))?;
    let v: Value = serde_json::from_str(&text).map_err(|e| format!("--plan: {path}: {e}"))?;
    Plan::read(&v)
}

/// Says `ready` and waits for `go EPOCH` on stdin; returns the epoch, and waits for it.
fn go() -> Result<Time, String> {
    eprintln!("traffic: ready");
    let mut line = String::new();
    std::io::stdin().lock().read_line(&mut line).map_err(|e| format!("stdin: {e}"))?;
    let epoch = line
        .strip_prefix("go ")
        .and_then(|ps| ps.trim().parse::<u64>().ok())
        .map(Time)
        .ok_or(format!("stdin: got {line:?}; expected go EPOCH"))?;
    Ok(epoch)
}

/// The flows of the plan of traffic kinds `kinds` (on machine `machine`, if given), as
/// (flow, entry) and their start times.
fn flows_of(plan: &Plan, machine: Option<u32>, kinds: fn(&Traffic) -> bool) -> (Vec<(u32, usize)>, Vec<f64>) {
    plan.flows
        .iter()
        .filter(|f| kinds(&plan.scenario.traffic[f.traffic]) && machine.is_none_or(|m| m == f.machine))
        .map(|f| ((f.flow, f.traffic), f.start_s))
        .unzip()
}

fn seconds(s: f64) -> Time {
    Time((s * 1e12).round() as u64)
}

/// The loop's timing: how late its timers fired (µs shares and quantiles), its CPU time.
fn timing(late: &Lateness) -> Value {
    json!({
        "timers": late.count, "late_within_1ms": late.within_us(1000),
        "late_p50_s": late.quantile_s(0.5), "late_p99_s": late.quantile_s(0.99),
        "late_max_s": late.max.secs_f64(), "cpu_s": net::cpu_seconds(),
    })
}

fn host(
    plan: &Plan,
    machine: u32,
    trace_to: Option<String>,
    control: Option<String>,
) -> Result<Value, String> {
    let io = |e: std::io::Error| e.to_string();
    let mut reactor = Reactor::new().map_err(io)?;
    let (long_lived, long_starts) = flows_of(plan, Some(machine), |t| matches!(t, Traffic::LongLived(_)));
    let (udp_flows, udp_starts) = flows_of(plan, Some(machine), |t| matches!(t, Traffic::Udp(_)));
    let users =
        plan.scenario.traffic.iter().any(|t| matches!(t, Traffic::ClosedLoop(_) | Traffic::OpenLoop(_)));
    // A live run's spare slots send from machine 0 (flows change only without machines).
    let spare: Vec<(u32, usize)> = match plan.spare {
        Some((entry, first, slots)) if machine == 0 => (first..first + slots).map(|f| (f, entry)).collect(),
        _ => Vec::new(),
    };
    let mut senders = Senders::new(&long_lived, &spare);
    let mut control = match &control {
        Some(path) => {
            let c = Control::bind(std::path::Path::new(path)).map_err(|e| format!("--control: {e}"))?;
            reactor.add(c.fd(), libc::EPOLLIN as u32, Token::new(commands::KIND, 0)).map_err(io)?;
            Some(c)
        }
        None => None,
    };
    let mut servers = if users { Some(Servers::listen(&plan.tcp, &reactor).map_err(io)?) } else { None };
    let mut sources = Sources::new(plan, &udp_flows);
    sources.open(plan.receiver).map_err(io)?;
    let mut tracer = match (&plan.trace, trace_to) {
        (Some((flows, interval)), Some(path)) => Some(
            Tracer::create(&path, flows.clone(), *interval, plan.tcp.pacing_bps.is_some())
                .map_err(|e| format!("--trace-to: {e}"))?,
        ),
        _ => None,
    };
    let epoch = go()?;
    let end = epoch + plan.duration;
    let mut window = Window { start: epoch + plan.warmup, end, begun: false };
    for (i, &s) in long_starts.iter().enumerate() {
        senders.schedule(i, epoch + seconds(s), &mut reactor);
    }
    for (i, &s) in udp_starts.iter().enumerate() {
        sources.schedule(i, epoch + seconds(s), &mut reactor);
    }
    reactor.at(window.start, Token::new(WINDOW, 0));
    if tracer.is_some() {
        reactor.at(epoch, Token::new(TRACE, 0));
    }
    let sink = plan.receiver_at(TCP_PORT);
    let mut ready = Vec::new();
    while !STOP.load(Ordering::Relaxed) && clock::now() < end {
        reactor.poll(end, &mut ready).map_err(io)?;
        for r in ready.drain(..) {
            match r {
                Ready::Timer(Token { kind: senders::KIND, index }, _) => {
                    senders.start(index as usize, &plan.tcp, sink, &window, &reactor);
                }
                Ready::Io(Token { kind: senders::KIND, index }, events) => {
                    senders.writable(index as usize, events)
                }
                Ready::Io(Token { kind: servers::LISTENER, .. }, _) => {
                    if let Some(s) = servers.as_mut() {
                        s.accept(&plan.tcp, &window, &reactor).map_err(io)?;
                    }
                }
                Ready::Io(Token { kind: servers::CONNECTION, index }, events) => {
                    if let Some(s) = servers.as_mut() {
                        s.ready(index as usize, events, &reactor);
                    }
                }
                Ready::Timer(Token { kind: udp::SOURCE, index }, due) => {
                    sources.send(index as usize, due, epoch, &mut reactor);
                }
                Ready::Timer(Token { kind: WINDOW, .. }, _) => {
                    window.begun = true;
                    senders.window_begins();
                    if let Some(s) = servers.as_mut() {
                        s.window_begins();
                    }
                }
                Ready::Timer(Token { kind: TRACE, .. }, due) => {
                    if let Some(t) = tracer.as_mut() {
                        let open = senders.sockets().chain(servers.iter().flat_map(Servers::sockets));
                        t.sample((due - epoch).secs_f64(), open).map_err(|e| format!("--trace-to: {e}"))?;
                        reactor.at(due + t.interval, Token::new(TRACE, 0));
                    }
                }
                Ready::Io(Token { kind: commands::KIND, .. }, _) => {
                    if let Some(c) = control.as_mut() {
                        let since = |t: Time| t.ps().saturating_sub(epoch.ps());
                        let clients = c
                            .poll(|line| {
                                let now = clock::now();
                                let reply = match commands::parse(line) {
                                    Ok(Command::Flows) => Ok(json!({
                                        "open": senders.open_flows(), "spare_left": senders.spare_left(),
                                    })),
                                    Ok(Command::Open) => {
                                        senders.open_spare(now, &plan.tcp, sink, &window, &reactor).map(
                                            |(f, t)| json!({ "flow": f, "traffic": t, "at_ps": since(now) }),
                                        )
                                    }
                                    Ok(Command::Close(f)) => senders
                                        .close(f, now, &reactor)
                                        .map(|()| json!({ "flow": f, "at_ps": since(now) })),
                                    Err(e) => Err(e),
                                };
                                reply.unwrap_or_else(|e| json!({ "error": e })).to_string()
                            })
                            .map_err(io)?;
                        for fd in clients {
                            reactor
                                .add(fd, libc::EPOLLIN as u32, Token::new(commands::KIND, 1))
                                .map_err(io)?;
                        }
                    }
                }
                other => return Err(format!("unexpected {other:?}")),
            }
        }
    }
    // The end of the measured window, before the sockets are read and closed.
    let ended = clock::now();
    if let Some(t) = tracer.as_mut() {
        t.flush().map_err(|e| format!("--trace-to: {e}"))?;
    }
    let (flows, mut rto_known) = senders.report();
    let served = servers.as_mut().map(Servers::report);
    rto_known &= served.as_ref().is_none_or(|s| s["timeouts_known"].as_bool().unwrap_or(false));
    let from_epoch = |list: Vec<(u32, Time)>| {
        list.into_iter().map(|(f, t)| json!([f, t.ps().saturating_sub(epoch.ps())])).collect::<Vec<_>>()
    };
    Ok(json!({
        "machine": machine, "flows": flows, "servers": served, "udp": sources.report(),
        "opened": from_epoch(senders.opened()), "closed": from_epoch(senders.closed()),
        "epoch_ps": epoch.ps(), "ended_clock_ps": ended.ps(),
        "window_begun": window.begun, "timeouts_known": rto_known,
        "timing": timing(&reactor.late),
    }))
}

fn receiver(plan: &Plan) -> Result<Value, String> {
    let io = |e: std::io::Error| e.to_string();
    let mut reactor = Reactor::new().map_err(io)?;
    let any = |kinds: fn(&Traffic) -> bool| plan.scenario.traffic.iter().any(kinds);
    let mut sink = if any(|t| matches!(t, Traffic::LongLived(_))) {
        Some(Sink::listen(plan.receiver_at(TCP_PORT), &plan.tcp, &reactor).map_err(io)?)
    } else {
        None
    };
    let mut udp_sink = if any(|t| matches!(t, Traffic::Udp(_))) {
        Some(udp::Sink::listen(&reactor).map_err(io)?)
    } else {
        None
    };
    let (users, starts) = flows_of(plan, None, |t| matches!(t, Traffic::ClosedLoop(_)));
    let mut clients = Clients::new(plan, &users);
    let epoch = go()?;
    let end = epoch + plan.duration;
    let window = Window { start: epoch + plan.warmup, end, begun: false };
    for (i, &s) in starts.iter().enumerate() {
        clients.schedule(i, epoch + seconds(s), &mut reactor);
    }
    clients.schedule_arrivals(epoch, &mut reactor);
    let mut ready = Vec::new();
    while !STOP.load(Ordering::Relaxed) && clock::now() < end {
        reactor.poll(end, &mut ready).map_err(io)?;
        for r in ready.drain(..) {
            match r {
                Ready::Io(Token { kind: sink::LISTENER, .. }, _) => {
                    if let Some(s) = sink.as_mut() {
                        s.accept(&reactor).map_err(io)?;
                    }
                }
                Ready::Io(Token { kind: sink::CONNECTION, index }, _) => {
                    if let Some(s) = sink.as_mut() {
                        s.readable(index as usize);
                    }
                }
                Ready::Timer(Token { kind: clients::USER, index }, due) => {
                    clients.timer(index as usize, due, &mut reactor)
                }
                Ready::Io(Token { kind: clients::USER, index }, events) => {
                    clients.ready(index as usize, events, &mut reactor);
                }
                Ready::Timer(Token { kind: clients::ARRIVAL, .. }, due) => {
                    clients.arrive(due, &plan.scenario.traffic, &mut reactor);
                }
                Ready::Io(Token { kind: udp::SINK, .. }, _) => {
                    if let Some(s) = udp_sink.as_mut() {
                        s.readable(&window);
                    }
                }
                other => return Err(format!("unexpected {other:?}")),
            }
        }
    }
    Ok(json!({
        "received": sink.as_ref().map_or_else(Vec::new, Sink::received),
        "clients": clients.report(), "udp": udp_sink.as_ref().map(udp::Sink::report),
        "epoch_ps": epoch.ps(), "ended_clock_ps": clock::now().ps(),
        "timing": timing(&reactor.late),
    }))
}
