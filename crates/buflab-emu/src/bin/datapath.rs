//! `buflab-datapath`: the router of an emulation. It bridges interfaces of its network
//! namespace: frames from the senders' side (`--left`, one interface per sender machine,
//! comma-separated) cross the links in front of the bottleneck that the flows file gives them
//! (`--flows PATH`, see the `flows` module: each flow's access link, or its machine's class
//! queue and NIC link, and the cross link), then the bottleneck (a serializer at `--rate`
//! behind a buffer of `--buffer` run by the discipline `--queue`, default `droptail`, with its
//! parameters `--param KEY=VALUE` for frames of typically `--packet` bytes, drawing from
//! `--seed`'s stream; `--loss P` loses data frames before it); frames from the receivers'
//! side (`--right`) cross a delay line only and go back out of their flow's machine's
//! interface. Flow i (its sending end at its flow address, see the `address` module) gets half
//! its round-trip time each way: the way there between its host's links and the bottleneck,
//! as the simulator's access links carry it (cross traffic: in a delay line after its cross
//! link); other frames get `--delay-fwd` and `--delay-rev` (default 0) in delay lines and skip
//! the links. With `--events PATH`, the bottleneck's event log of the whole
//! run goes to PATH (rows of `LogRow::BYTES`, times on the monotonic clock; the report's
//! `epoch_ps` is the run's time 0 on it); with `--capture PATH` too, every frame that reaches
//! the bottleneck's queue (the log's enqueues and drops) goes to PATH with its first bytes
//! (the `capture` module's raw format).
//! With `--offloads`, the interfaces are taken to keep their offloads: frames are super-packets
//! of up to 64 KB, read and sent with their vnet headers (`PACKET_VNET_HDR`); with `--segment`
//! too, a flow's TCP super-packets are cut into MTU segments where they enter its access link,
//! as a NIC's TSO puts them on the wire (the `segment` module).
//! With `--scenario PATH` (the validated scenario, JSON), its `[[network.bump]]` entries run
//! as links of the pipeline (see the `bumps` module), their counts reported as the rows of the
//! simulator's `bumps` and `rates` tables, over the measured window up to the scenario's
//! duration after the run's time 0.
//! With `--control PATH`, a Unix socket takes commands (`counts`, `buffer LIMIT`, `mark`;
//! see the `control` module).
//! It busy-polls until SIGINT or SIGTERM, then prints its counts as one JSON object: over the
//! whole run, and over the measured window, which SIGUSR1 starts (the end of the warm-up).
//!
//! Read first: the crate doc. `buflab emulate` starts it; it is not meant to be run by hand,
//! but can be: `buflab-datapath --left r0 --right r1 --rate 100Mbps --buffer 100pkt
//! --flows flows.json`.

#![recursion_limit = "256"]

use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};

use buflab_base::rng::{Rng, Stream};
use buflab_base::units::{parse_buffer, parse_rate, parse_time, BufferLimit, Rate, Time};
use buflab_core::result::table::row_json;
use buflab_core::scenario::Scenario;
use buflab_emu::afpacket::PacketSocket;
use buflab_emu::bottleneck::{Bottleneck, LogRow};
use buflab_emu::bumps::Bumps;
use buflab_emu::capture::Capture;
use buflab_emu::control::{self as commands, Command, Control};
use buflab_emu::delay_line::DelayLines;
use buflab_emu::fidelity::Lateness;
use buflab_emu::flows::Flows;
use buflab_emu::pipeline::Pipeline;
use buflab_emu::pool::{Frame, Pool, SLOT, SUPER_SLOT};
use buflab_emu::segment::{self, Vnet};
use buflab_emu::{address, clock, ip};

static STOP: AtomicBool = AtomicBool::new(false);
static MARK: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    STOP.store(true, Ordering::Relaxed);
}

extern "C" fn on_mark(_: libc::c_int) {
    MARK.store(true, Ordering::Relaxed);
}

/// Frames read from one side per turn of the loop, so that neither side starves the other.
const BATCH: usize = 32;

/// The longest a returning frame (an ACK) is held back so that a bottleneck frame due in the
/// meantime leaves on time. A send costs about 10 µs here (the veth hands the frame to the far
/// host's kernel in our context), so a send started just before a bottleneck frame's time
/// would make it that late; the bottleneck's timing is the one the emulation must keep, and
/// 50 µs on a path of milliseconds is below anything TCP can tell.
const MAX_HOLD: Time = Time::from_us(50);

struct Args {
    /// The senders' interfaces, one per machine in machine order.
    left: Vec<String>,
    right: String,
    rate: Rate,
    buffer: BufferLimit,
    delay_fwd: Time,
    delay_rev: Time,
    /// The flows file (`--flows`), read.
    flows: serde_json::Value,
    /// The scenario (`--scenario`), for its bumps and duration.
    scenario: Option<Scenario>,
    /// The CPU to busy-poll on (`--cpu`), alone if the others are kept off it.
    cpu: Option<usize>,
    events: Option<String>,
    /// Where the raw capture of the bottleneck's arrivals goes (`--capture`, with `--events`).
    capture: Option<String>,
    control: Option<String>,
    slots: u32,
    /// The bottleneck's discipline (`--queue`, a scenario's `queue`) and its parameters
    /// (`--param KEY=VALUE`, the scenario's keys), for frames of typically `--packet` bytes.
    queue: String,
    params: Vec<(String, String)>,
    packet: u32,
    /// The scenario's seed: the discipline's and the random loss's streams, as the simulator
    /// draws them for the dumbbell's bottleneck.
    seed: u64,
    /// The probability that an arriving data frame is lost before the bottleneck (`--loss`).
    loss: f64,
    /// The interfaces keep their offloads (`--offloads`): frames are super-packets of up to
    /// 64 KB with vnet headers, each counted, serialized and dropped as one.
    offloads: bool,
    /// With offloads: a flow's TCP super-packets are cut into MTU segments as they enter its
    /// access link (`--segment`, a NIC's TSO; see the `segment` module).
    segment: bool,
}

fn parse(args: &[String]) -> Result<Args, String> {
    let get = |key: &str| -> Result<String, String> {
        let i = args.iter().position(|a| a == key).ok_or(format!("{key}: missing"))?;
        args.get(i + 1).cloned().ok_or(format!("{key}: missing its value"))
    };
    let time = |key: &str, v: String| parse_time(&v).map_err(|e| format!("{key}: got {v:?}; {}", e.0));
    let buffer = get("--buffer")?;
    let opt = |key: &str| args.iter().position(|a| a == key).and_then(|i| args.get(i + 1)).cloned();
    let flows = match opt("--flows") {
        None => serde_json::json!({
            "rtt_s": [], "machine": [], "class": [], "cross": [],
            "access": { "rate": "10Gbps", "buffer": "unlimited", "machines": 0, "classes": 1 },
        }),
        Some(path) => {
            let text = std::fs::read_to_string(&path).map_err(|e| format!("--flows: {path}: {e}"))?;
            serde_json::from_str(&text).map_err(|e| format!("--flows: {path}: {e}"))?
        }
    };
    let slots = match args.iter().position(|a| a == "--slots") {
        Some(i) => args.get(i + 1).and_then(|v| v.parse().ok()).ok_or("--slots: expected a whole number")?,
        None => 32_768,
    };
    let scenario = match opt("--scenario") {
        None => None,
        Some(path) => {
            let text = std::fs::read_to_string(&path).map_err(|e| format!("--scenario: {path}: {e}"))?;
            let v: serde_json::Value =
                serde_json::from_str(&text).map_err(|e| format!("--scenario: {path}: {e}"))?;
            Some(Scenario::from_value(&v).map_err(|e| format!("--scenario: {path}: {e}"))?)
        }
    };
    Ok(Args {
        scenario,
        left: get("--left")?.split(',').map(str::to_string).collect(),
        right: get("--right")?,
        rate: {
            let v = get("--rate")?;
            parse_rate(&v).map_err(|e| format!("--rate: got {v:?}; {}", e.0))?
        },
        buffer: parse_buffer(&buffer).map_err(|e| format!("--buffer: got {buffer:?}; {}", e.0))?,
        delay_fwd: opt("--delay-fwd").map_or(Ok(Time::ZERO), |v| time("--delay-fwd", v))?,
        delay_rev: opt("--delay-rev").map_or(Ok(Time::ZERO), |v| time("--delay-rev", v))?,
        flows,
        events: opt("--events"),
        capture: opt("--capture"),
        control: opt("--control"),
        cpu: match opt("--cpu") {
            None => None,
            Some(v) => Some(v.parse().map_err(|_| format!("--cpu: got {v:?}; expected a CPU number"))?),
        },
        slots,
        queue: opt("--queue").unwrap_or_else(|| "droptail".to_string()),
        params: args
            .iter()
            .enumerate()
            .filter(|(_, a)| *a == "--param")
            .map(|(i, _)| {
                let kv = args.get(i + 1).ok_or("--param: missing its KEY=VALUE")?;
                let (k, v) = kv.split_once('=').ok_or(format!("--param: got {kv:?}; expected KEY=VALUE"))?;
                Ok((k.to_string(), v.to_string()))
            })
            .collect::<Result<_, String>>()?,
        packet: match opt("--packet") {
            None => 1500,
            Some(v) => v.parse().map_err(|_| format!("--packet: got {v:?}; expected bytes"))?,
        },
        seed: match opt("--seed") {
            None => 1,
            Some(v) => v.parse().map_err(|_| format!("--seed: got {v:?}; expected a whole number"))?,
        },
        offloads: args.iter().any(|x| x == "--offloads"),
        segment: args.iter().any(|x| x == "--segment"),
        loss: match opt("--loss") {
            None => 0.0,
            Some(v) => v
                .parse()
                .ok()
                .filter(|p: &f64| (0.0..=1.0).contains(p))
                .ok_or(format!("--loss: got {v:?}; expected a probability"))?,
        },
    })
}

/// The bottleneck's discipline named `--queue`, built by `buflab-queue` as the simulator
/// builds it (the same parameters and random stream), holding its frames itself.
fn discipline(a: &Args) -> Result<Box<dyn buflab_queue::Discipline<Frame>>, String> {
    let kinds = buflab_queue::kinds::<Frame>();
    let names: Vec<&str> = kinds.iter().map(|k| k.name).collect();
    let kind = kinds.iter().find(|k| k.name == a.queue).ok_or(format!(
        "--queue: got {:?}; expected one of {}",
        a.queue,
        names.join(", ")
    ))?;
    let values = kind.values_from_text(&a.params, a.buffer)?;
    // The frames it holds are of up to `--packet` bytes (FQ-CoDel's quantum must take one).
    let frames = [buflab_queue::describe::PacketSource { entry: 0, size: a.packet, uniform: false }];
    (kind.check_traffic)(&values, &frames)
        .map_err(|e| format!("{}: got {}; expected {}", e.key, e.got, e.expected))?;
    // Frames carry no BJP time stamp: each is at its first BJP router, whatever the delay after.
    let link = buflab_queue::describe::LinkInfo {
        rate: a.rate,
        delay: Time::ZERO,
        limit: a.buffer,
        packet: a.packet,
        largest: a.packet,
    };
    Ok(kind.build_held(&values, link, Rng::stream(a.seed, Stream::Queue, 0)))
}

/// Counts of the whole run, printed at the end.
#[derive(Default)]
struct Totals {
    received: [u64; 2],
    /// Frames that found no free slot (the datapath could not keep up), and sends the
    /// interface refused for a while (retried, not lost).
    overruns: u64,
    /// Turns of the loop, and those that moved a frame: the share of the pinned core the
    /// datapath needs (the rest it spends polling).
    turns: u64,
    busy_turns: u64,
    /// Turns in which returning frames were held back for a bottleneck frame (`MAX_HOLD`).
    held_back: u64,
}

impl Totals {
    /// Frames read so far, either way.
    fn moved(&self) -> u64 {
        self.received[0] + self.received[1]
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let a = match parse(&args).and_then(|a| discipline(&a).map(|_| a)) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    match run(a) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(a: Args) -> std::io::Result<()> {
    // With offloads on, frames are super-packets of up to 64 KB, each with its vnet header.
    let frame_max = if a.offloads { SUPER_SLOT } else { SLOT };
    let mut left = a
        .left
        .iter()
        .map(|name| PacketSocket::open(name, frame_max, a.offloads))
        .collect::<std::io::Result<Vec<_>>>()?;
    let mut right = PacketSocket::open(&a.right, frame_max, a.offloads)?;
    // Die with the process that started us (`buflab emulate`), even if it is killed with
    // SIGKILL: a busy-polling datapath must never outlive its run.
    // SAFETY: prctl with PR_SET_PDEATHSIG takes a signal number; getppid has no arguments.
    unsafe {
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM);
        if libc::getppid() == 1 {
            return Err(std::io::Error::other("started by a process that is already gone"));
        }
    }
    // SAFETY: the handler only stores to an atomic.
    unsafe {
        libc::signal(libc::SIGINT, on_signal as *const () as libc::sighandler_t);
        libc::signal(libc::SIGTERM, on_signal as *const () as libc::sighandler_t);
        libc::signal(libc::SIGUSR1, on_mark as *const () as libc::sighandler_t);
    }
    if let Some(cpu) = a.cpu {
        pin_to(cpu)?;
    }
    // As many bytes for super-packets as for 32,768 ordinary frames' worth of slots, at most.
    let slots = if a.offloads { a.slots.min(4096) } else { a.slots };
    let mut pool = Pool::new(slots, frame_max);
    let mut bottleneck = Bottleneck::new(a.rate, a.buffer, discipline(&a).map_err(std::io::Error::other)?);
    // The simulator's random loss (`loss.rs` of buflab-core): each arriving data frame of a
    // flow is lost with probability `--loss`, before the bottleneck's queue sees it.
    let mut loss = Rng::stream(a.seed, Stream::Loss, 0);
    let (mut lost, mut lost_at_window) = (0u64, 0u64);
    // The links in front of the bottleneck, and each flow's route through them.
    let mut front = Pipeline::default();
    let flows = Flows::read(&a.flows, &mut front).map_err(std::io::Error::other)?;
    if flows.machines != left.len() {
        let expected = format!("--left: {} interfaces for {} machines", left.len(), flows.machines);
        return Err(std::io::Error::other(expected));
    }
    let n = flows.len();
    // The scenario's bumps, as links of the pipeline on the flows' routes.
    let bumps = match &a.scenario {
        Some(s) => Bumps::build(s, &flows, &mut front).map_err(std::io::Error::other)?,
        None => Bumps::default(),
    };
    // Half of each flow's RTT on the way there, the rest on the way back. The way there is
    // crossed where the simulator's access links carry it, between the sender and the
    // bottleneck (and its bumps); cross traffic's, which skips the bottleneck, after its
    // cross link, in its delay line.
    let there: Vec<Time> = flows.rtts.iter().map(|r| Time(r.ps() / 2)).collect();
    let back: Vec<Time> = flows.rtts.iter().zip(&there).map(|(r, t)| *r - *t).collect();
    let (before, after): (Vec<Time>, Vec<Time>) = (0..n)
        .map(|i| match flows.through_bottleneck[flows.route[i] as usize] {
            true => (there[i], Time::ZERO),
            false => (Time::ZERO, there[i]),
        })
        .unzip();
    front.set_propagation(before);
    let (mut fwd, mut rev) = (DelayLines::new(&after, a.delay_fwd), DelayLines::new(&back, a.delay_rev));
    // A frame's flow: its source address going to the receiver, its destination coming back.
    let flow_of = |addr: u32| address::flow(addr).filter(|&i| i < n);
    let (mut out, mut dropped, mut done) = (Vec::new(), Vec::new(), Vec::new());
    // Frames of no flow, which skip the links and the bottleneck (none is expected), and
    // cross traffic's, which leave by the cross link instead of the bottleneck.
    let (mut other_frames, mut cross_frames) = (0u64, 0u64);
    let mut scratch = vec![0u8; frame_max];
    // A super-packet being cut (`--segment`), how many were, and the segments they made.
    let (mut cut, mut cut_count, mut segments) = (Vec::with_capacity(frame_max), 0u64, 0u64);
    // A frame as the links, the bottleneck and the log see it: its flow (of its source
    // address), ECN capability, sequence number, and whether it carries data.
    let described = |pool: &Pool, f: Frame, flow: Option<usize>| {
        let bytes = pool.slot(f.slot);
        let (ect, ect1) = ip::ect(bytes);
        let seq = ip::tcp_seq(bytes).unwrap_or(0);
        let payload = ip::is_udp(bytes) || ip::tcp_payload_len(bytes).is_some_and(|n| n > 0);
        Frame { ect, ect1, seq, data: flow.is_some() && payload, flow: flow.unwrap_or(n) as u32, ..f }
    };
    let mut out_side = Departures { vnet: a.offloads, ..Departures::default() };
    let mut totals = Totals::default();
    let start = clock::now();
    let mut events = match &a.events {
        Some(path) => Some(std::io::BufWriter::with_capacity(1 << 20, std::fs::File::create(path)?)),
        None => None,
    };
    // The capture lists the frames the log lists as arriving: it runs when the log does.
    let mut capture_file = match (&a.capture, events.is_some()) {
        (Some(path), true) => Some(std::io::BufWriter::with_capacity(1 << 20, std::fs::File::create(path)?)),
        _ => None,
    };
    let mut capture = Capture::default();
    let (mut rows, mut logged) = (Vec::with_capacity(1 << 16), 0u64);
    // The log covers the whole run, as the simulator's does: a reader pairs each service with
    // its arrival, and the window's first services are of frames that came before it.
    if events.is_some() {
        bottleneck.start_log();
    }
    // The measured window: from SIGUSR1 (or the start) on.
    let (mut window_start, mut window_counts) = (start, bottleneck.counts);
    // Lateness in the measured window: of the bottleneck's frames (forward), and of the
    // returning ones (ACKs), which no serializer spaces and so leave in bunches.
    let mut carry_in = Time::ZERO;
    let mut ring_wait = RingWait::new();
    let mut control = match &a.control {
        Some(path) => Some(Control::bind(std::path::Path::new(path))?),
        None => None,
    };
    // The control channel is polled about every millisecond, not on every turn of the loop.
    let mut next_poll = start;
    // The run's time 0 (`epoch` on the control channel: the traffic's start), the datapath's
    // start until told. The log keeps the monotonic clock; what is reported counts from here.
    let mut epoch = start;
    let mut snapshot_epoch = Time::ZERO;

    eprintln!("datapath: {} -> {} at {}, buffer {}, ready", a.left.join(","), a.right, a.rate, a.buffer);
    while !STOP.load(Ordering::Relaxed) {
        let moved_before = totals.moved() + out_side.sent[0] + out_side.sent[1];
        // Senders' side: each frame, stamped as it is read, onto its flow's route to the
        // bottleneck (or the cross link).
        for sock in left.iter_mut() {
            let mut overruns = 0;
            let got = read_batch(
                sock,
                &mut pool,
                &mut scratch,
                &mut totals.overruns,
                (&mut ring_wait, 0),
                |pool, f, t| {
                    let bytes = pool.slot(f.slot);
                    let flow = ip::ipv4_addrs(bytes).and_then(|(src, _)| flow_of(src));
                    // A super-packet of a flow, with `--segment`: its MTU segments enter the flow's
                    // access link one after another, as a NIC would send them.
                    let vnet = Vnet::read(pool.vnet(f.slot));
                    let cuts = flow.filter(|_| a.segment).and(segment::count(&bytes[..f.len as usize], vnet));
                    let Some(cuts) = cuts else {
                        let f = described(pool, f, flow);
                        match flow {
                            Some(i) => front.enter(t, f, flows.route[i], &mut done, &mut dropped),
                            None => {
                                other_frames += 1;
                                fwd.push(None, t, f);
                            }
                        }
                        return;
                    };
                    cut.clear();
                    cut.extend_from_slice(&bytes[..f.len as usize]);
                    pool.give(f.slot);
                    cut_count += 1;
                    for k in 0..cuts {
                        let Some(slot) = pool.take() else {
                            overruns += (cuts - k) as u64;
                            break;
                        };
                        let len = segment::write(&cut, vnet, k, pool.slot_mut(slot)) as u32;
                        segments += 1;
                        // Checksums done: it asks nothing of the far side.
                        pool.vnet_mut(slot).fill(0);
                        let f = described(pool, Frame { slot, len, ..Frame::default() }, flow);
                        front.enter(
                            t,
                            f,
                            flows.route[flow.expect("cut only frames of flows")],
                            &mut done,
                            &mut dropped,
                        );
                    }
                },
            )?;
            totals.received[0] += got;
            totals.overruns += overruns;
        }
        let now = clock::now();
        front.run(now, &mut done, &mut dropped);
        // Frames leaving the links in front by now reach the bottleneck in the order they left
        // (cross traffic, off its cross link, goes on to its delay line).
        for (t, f) in done.drain(..) {
            if !flows.through_bottleneck[f.route as usize] {
                cross_frames += 1;
                fwd.push(Some(f.flow as usize), t, f);
            } else if a.loss > 0.0 && f.data && loss.bernoulli(a.loss) {
                lost += 1;
                dropped.push(f);
            } else {
                if capture_file.is_some() {
                    capture.record(t, f.len, &pool.slot(f.slot)[..f.len as usize]);
                }
                bottleneck.arrive(t, f, &mut out, &mut dropped);
            }
        }
        // The measured window starts here, once every frame that reached the bottleneck by
        // `now` has (those leaving their access links included): marked earlier, the
        // bottleneck would log services up to the mark and then arrivals from access links
        // that fell due before it, and the log would go back in time.
        if MARK.swap(false, Ordering::Relaxed) {
            window_start = now;
            bottleneck.advance(window_start, &mut out, &mut dropped);
            bottleneck.settle(window_start);
            bottleneck.reset_maxima();
            window_counts = bottleneck.counts;
            lost_at_window = lost;
            bumps.count_from(&mut front, window_start);
            // The part of the frame in service that falls in the window.
            carry_in = bottleneck.busy_until().max(window_start) - window_start;
            out_side.window = [Lateness::default(), Lateness::default()];
            ring_wait.window = [Lateness::default(), Lateness::default()];
        }
        bottleneck.advance(now, &mut out, &mut dropped);
        // Polled after the bottleneck has been advanced to `now`: its counts then hold every
        // service due by now (a service is counted when it starts, and after a stall several
        // start at once), so a reading's busy time and clock agree.
        if let Some(c) = control.as_mut().filter(|_| now >= next_poll) {
            next_poll = now + Time::from_ms(1);
            c.poll(|line| match commands::parse(line) {
                Ok(Command::Counts) => {
                    let k = bottleneck.counts;
                    let (waiting, _) = bottleneck.waiting();
                    // The serializer's busy time and the queue's integral (frame·ps) let a
                    // live reader (`buflab serve --emulate`, the auto-sizer of `buflab
                    // autosize --emulate`) work out an interval's utilization and mean queue
                    // as the simulator's monitor does: busy time up to now, the frame in
                    // service cut there, as the monitor's running totals cut it.
                    let overhang = bottleneck.busy_until().max(now) - now;
                    let busy_ps = k.busy_ps.saturating_sub(overhang.ps() as u128);
                    serde_json::json!({
                        "arrivals": k.arrivals, "drops": k.drops, "departures": k.departures,
                        "waiting": waiting, "buffer": bottleneck.limit().to_string(),
                        "busy_ps": busy_ps as f64, "waiting_integral": k.waiting_integral as f64,
                        "clock_ps": now.ps().saturating_sub(epoch.ps()),
                    })
                    .to_string()
                }
                Ok(Command::Epoch(ps)) => {
                    epoch = Time(ps);
                    "{}".to_string()
                }
                Ok(Command::Buffer(limit)) => match parse_buffer(&limit) {
                    Ok(l) => {
                        bottleneck.set_limit(l);
                        // When, from the run's time 0 (the event log's clock once read).
                        let at = now.ps().saturating_sub(epoch.ps());
                        serde_json::json!({ "buffer": l.to_string(), "time_ps": at }).to_string()
                    }
                    Err(e) => serde_json::json!({ "error": format!("buffer {limit}: {}", e.0) }).to_string(),
                },
                Ok(Command::Mark) => {
                    MARK.store(true, Ordering::Relaxed);
                    "{}".to_string()
                }
                Err(e) => serde_json::json!({ "error": e }).to_string(),
            })?;
        }
        // The bumps' counts end with the measured window: the scenario's duration after time 0.
        if let Some(s) = a.scenario.as_ref().filter(|_| epoch != snapshot_epoch) {
            snapshot_epoch = epoch;
            front.snapshot_at(epoch + s.duration);
        }
        for f in dropped.drain(..) {
            pool.give(f.slot);
        }
        for (f, exit) in out.drain(..) {
            if f.ce {
                ip::set_ce(pool.slot_mut(f.slot));
            }
            fwd.push(Some(f.flow as usize).filter(|&i| i < n), exit, f);
        }
        if let Some(file) = events.as_mut() {
            logged += write_log(file, &mut rows, bottleneck.take_log())?;
        }
        if let Some(file) = capture_file.as_mut() {
            capture.write_out(file)?;
        }
        // Receivers' side: into the reverse delay line.
        let got = read_batch(
            &mut right,
            &mut pool,
            &mut scratch,
            &mut totals.overruns,
            (&mut ring_wait, 1),
            |pool, f, t| {
                let flow = ip::ipv4_addrs(pool.slot(f.slot)).and_then(|(_, dst)| flow_of(dst));
                // An ACK passes its flow's bumps on its way back where the simulator's tap sees
                // it: on the network's side of the flow's propagation delay, as the data.
                if let Some(i) = flow.filter(|&i| bumps.hears_acks(i)) {
                    bumps.on_ack(&mut front, t, i, ip::tcp_ece(pool.slot(f.slot)));
                }
                rev.push(flow, t, Frame { flow: flow.unwrap_or(n) as u32, ..f });
            },
        )?;
        totals.received[1] += got;
        // Whatever is due leaves: bottleneck frames first; then returning frames (ACKs), each
        // unless a bottleneck frame falls due before its send would be over (it waits then, at
        // most `MAX_HOLD`).
        while out_side.send_next(&mut fwd, std::slice::from_ref(&right), |_| 0, &mut pool, 0)? {}
        loop {
            let now = clock::now();
            let Some(due) = rev.next_due().filter(|&d| d <= now) else { break };
            let soon = fwd.next_due().is_some_and(|d| d < now + out_side.guard);
            if soon && now - due < MAX_HOLD {
                totals.held_back += 1;
                break;
            }
            // A returning frame goes back out of its flow's machine's interface.
            let machine = |f: &Frame| flows.machine.get(f.flow as usize).map_or(0, |&m| m as usize);
            if !out_side.send_next(&mut rev, &left, machine, &mut pool, 1)? {
                break;
            }
        }
        totals.turns += 1;
        if totals.moved() + out_side.sent[0] + out_side.sent[1] != moved_before {
            totals.busy_turns += 1;
        }
    }
    let end = clock::now();
    // Frames the kernel could not put in a ring because it was full: overruns too.
    let mut ring_drops = right.ring_drops()?;
    for sock in &left {
        ring_drops += sock.ring_drops()?;
    }
    totals.overruns += ring_drops;
    bottleneck.advance(end, &mut out, &mut dropped);
    bottleneck.settle(end);
    if let Some(mut file) = events {
        logged += write_log(&mut file, &mut rows, bottleneck.take_log())?;
        std::io::Write::flush(&mut file)?;
    }
    if let Some(mut file) = capture_file {
        capture.write_out(&mut file)?;
        std::io::Write::flush(&mut file)?;
    }
    let elapsed = end - start;
    // The bumps' rows, over the measured window (the snapshot at its end, taken as the
    // pipeline ran past it; else their counts up to it).
    let window_end = a.scenario.as_ref().map_or(end, |s| end.min(epoch + s.duration));
    let measured = window_end.max(window_start) - window_start;
    let bump_rows: Vec<_> = bumps.rows(&mut front, window_end, measured).iter().map(row_json).collect();
    let rate_rows: Vec<_> = bumps.rate_rows(&mut front, epoch, window_end).iter().map(row_json).collect();
    let (access_drops, bump_drops) = front.drops();
    let c = bottleneck.counts;
    let w = c.since(&window_counts);
    let window_s = (end - window_start).secs_f64();
    // Busy time in the window, services cut at its two ends, as the simulator counts it.
    let overhang = bottleneck.busy_until().max(end) - end;
    let busy_ps = w.busy_ps + carry_in.ps() as u128 - overhang.ps() as u128;
    let (waiting, waiting_bytes) = bottleneck.waiting();
    let report = serde_json::json!({
        "elapsed_s": elapsed.secs_f64(),
        "clock_start_ps": start.ps(),
        "epoch_ps": epoch.ps(),
        "rate_bps": a.rate.bits_per_s(),
        "buffer": a.buffer.to_string(),
        "buffer_at_end": bottleneck.limit().to_string(),
        "cpu_s": cpu_seconds(),
        "turns": totals.turns, "busy_turns": totals.busy_turns, "held_back": totals.held_back,
        "received_fwd": totals.received[0], "received_rev": totals.received[1],
        "sent_fwd": out_side.sent[0], "sent_rev": out_side.sent[1],
        "arrivals": c.arrivals, "drops": c.drops, "marks": c.marks, "departures": c.departures,
        "departed_bytes": c.departed_bytes, "lost": lost,
        "queue": a.queue,
        "max_waiting": c.max_waiting, "max_waiting_bytes": c.max_waiting_bytes,
        "waiting_at_end": waiting, "waiting_bytes_at_end": waiting_bytes,
        "in_delay_lines_at_end": fwd.len() + rev.len(),
        "in_access_links_at_end": front.len(),
        "access_drops": access_drops, "bump_drops": bump_drops,
        "bumps": bump_rows, "rates": rate_rows,
        "qcn_sent": front.qcn.sent, "qcn_unheard": front.qcn.unheard,
        "other_frames": other_frames, "cross_frames": cross_frames,
        "super_packets_cut": cut_count, "segments": segments,
        "overruns": totals.overruns, "ring_drops": ring_drops, "send_retries": out_side.retries,
        "read_before_written": ring_wait.read_before_written,
        "late_count": out_side.late.count, "late_within_1us": out_side.late.within_us(1),
        "late_within_10us": out_side.late.within_us(10), "late_p99_s": out_side.late.quantile_s(0.99),
        "late_mean_s": out_side.late.mean_s(), "late_max_s": out_side.late.max.secs_f64(),
        "events": logged,
        "captured": capture.frames,
        "send_p50_s": out_side.cost[0].quantile_s(0.5), "send_p99_s": out_side.cost[0].quantile_s(0.99),
        "rev_send_p50_s": out_side.cost[1].quantile_s(0.5), "rev_send_p99_s": out_side.cost[1].quantile_s(0.99),
        "window": {
            "start_ps": window_start.ps().saturating_sub(epoch.ps()), "end_ps": end.ps().saturating_sub(epoch.ps()),
            "seconds": window_s,
            "arrivals": w.arrivals, "drops": w.drops, "marks": w.marks, "departures": w.departures,
            "lost": lost - lost_at_window,
            "departed_bytes": w.departed_bytes,
            "utilization": busy_ps as f64 / (end - window_start).ps() as f64,
            "mean_queue_pkts": w.waiting_integral as f64 / ((end - window_start).ps() as f64),
            "max_queue_pkts": w.max_waiting, "max_queue_bytes": w.max_waiting_bytes,
            "late_within_1us": out_side.window[0].within_us(1), "late_within_5us": out_side.window[0].within_us(5),
            "late_within_10us": out_side.window[0].within_us(10), "late_p99_s": out_side.window[0].quantile_s(0.99),
            "late_mean_s": out_side.window[0].mean_s(),
            "rev_late_within_1us": out_side.window[1].within_us(1),
            "rev_late_within_10us": out_side.window[1].within_us(10),
            "rev_late_p99_s": out_side.window[1].quantile_s(0.99),
            "ring_wait_within_1us": ring_wait.window[0].within_us(1),
            "ring_wait_within_10us": ring_wait.window[0].within_us(10),
            "ring_wait_p50_s": ring_wait.window[0].quantile_s(0.5),
            "ring_wait_p99_s": ring_wait.window[0].quantile_s(0.99),
            "ring_wait_mean_s": ring_wait.window[0].mean_s(),
            "rev_ring_wait_within_10us": ring_wait.window[1].within_us(10),
            "rev_ring_wait_p99_s": ring_wait.window[1].quantile_s(0.99),
        },
    });
    println!("{report}");
    Ok(())
}

/// Reads up to `BATCH` frames from `sock` into slots of `pool`, handing each, stamped with the
/// time it was read, to `take`; returns how many. How long each waited in the socket's ring
/// (read time against the kernel's stamp) goes to `waited`, on its side (0: the senders'). A frame that finds no free slot,
/// or that was too long for the socket's ring, is counted in `overruns` (the datapath could
/// not take it) and given back at once, never left to block the ring.
fn read_batch(
    sock: &mut PacketSocket,
    pool: &mut Pool,
    scratch: &mut [u8],
    overruns: &mut u64,
    (waited, side): (&mut RingWait, usize),
    mut take: impl FnMut(&mut Pool, Frame, Time),
) -> std::io::Result<u64> {
    let mut got = 0;
    for _ in 0..BATCH {
        let mut frame = None;
        let more = sock.receive(scratch, |bytes, truncated, vnet, written| match pool.take() {
            Some(slot) if !truncated && bytes.len() <= pool.slot_size() => {
                pool.slot_mut(slot)[..bytes.len()].copy_from_slice(bytes);
                if let Some(header) = vnet {
                    pool.vnet_mut(slot).copy_from_slice(header);
                }
                frame = Some((Frame { slot, len: bytes.len() as u32, ..Frame::default() }, written));
            }
            other => {
                if let Some(slot) = other {
                    pool.give(slot);
                }
                *overruns += 1;
            }
        })?;
        if !more {
            break;
        }
        if let Some((f, written)) = frame {
            got += 1;
            let t = clock::now();
            if let Some(ns) = written {
                waited.record(side, ns, t);
            }
            take(pool, f, t);
        }
    }
    Ok(got)
}

/// How long frames waited in the receive rings between the kernel writing them and the loop
/// reading them: the error in the times the loop stamps them with (every frame enters its
/// route at the time it was read). Over the measured window, each way (0: from the senders).
struct RingWait {
    /// The real-time clock's lead over the monotonic one (the kernel stamps in real time),
    /// read again every millisecond: a real-time clock being slewed moves it.
    realtime_ahead_ps: i128,
    /// How far off that may be (the clocks were read around each other, not at once).
    ahead_error_ps: i128,
    ahead_read_at: Time,
    window: [Lateness; 2],
    /// Frames whose stamp came more than 1 µs (and the difference's possible error) after
    /// they were read: none, unless the stamps are not what this takes them for.
    read_before_written: u64,
}

impl RingWait {
    fn new() -> RingWait {
        let (realtime_ahead_ps, ahead_error_ps) = clock::realtime_ahead_ps();
        RingWait {
            realtime_ahead_ps,
            ahead_error_ps,
            ahead_read_at: clock::now(),
            window: [Lateness::default(), Lateness::default()],
            read_before_written: 0,
        }
    }

    fn record(&mut self, side: usize, written_ns: u64, read: Time) {
        if read - self.ahead_read_at > Time::from_ms(1) {
            (self.realtime_ahead_ps, self.ahead_error_ps) = clock::realtime_ahead_ps();
            self.ahead_read_at = read;
        }
        let written = (written_ns as i128 * 1_000 - self.realtime_ahead_ps).max(0) as u64;
        if written as i128 > read.ps() as i128 + 1_000_000 + self.ahead_error_ps {
            self.read_before_written += 1;
        }
        self.window[side].record(Time(written), read);
    }
}

/// The sending side of the loop: each frame handed to its interface when due, and how late
/// and how costly that was, each way (0: the bottleneck's frames, 1: the returning ones).
struct Departures {
    /// Lateness over the whole run (both ways), and over the measured window, each way.
    late: Lateness,
    window: [Lateness; 2],
    /// How long a send takes, each way: the veth delivers in our context, so a send costs
    /// what handing the frame to the far host's kernel costs (a frame due meanwhile waits).
    cost: [Lateness; 2],
    /// Twice a typical send's cost (an average over the last 16 sends): how soon a
    /// bottleneck frame must fall due for a returning one to wait for it.
    guard: Time,
    sent: [u64; 2],
    /// Sends the interface refused for a while (retried, not lost).
    retries: u64,
    /// Frames go out with their vnet header (offloads on).
    vnet: bool,
}

impl Default for Departures {
    fn default() -> Self {
        Departures {
            late: Lateness::default(),
            window: [Lateness::default(), Lateness::default()],
            cost: [Lateness::default(), Lateness::default()],
            guard: Time::from_us(10),
            sent: [0; 2],
            retries: 0,
            vnet: false,
        }
    }
}

impl Departures {
    /// Sends the first frame of `line` if it is due, through the socket of `socks` that `pick`
    /// chooses for it; false if none is due or the interface is busy (the frame then stays
    /// first, for the next turn).
    fn send_next(
        &mut self,
        line: &mut DelayLines,
        socks: &[PacketSocket],
        pick: impl Fn(&Frame) -> usize,
        pool: &mut Pool,
        side: usize,
    ) -> std::io::Result<bool> {
        let now = clock::now();
        let Some(due) = line.next_due().filter(|&d| d <= now) else { return Ok(false) };
        let (_, f) = line.pop_due(now).expect("due");
        // A frame leaves when it is handed to the interface: the send call may go on to run
        // the receiving host's stack (veth delivers in the sender's context).
        let sent = clock::now();
        let bytes = if self.vnet {
            pool.with_vnet(f.slot, f.len as usize)
        } else {
            &pool.slot(f.slot)[..f.len as usize]
        };
        if !socks[pick(&f)].send(bytes)? {
            self.retries += 1;
            line.unpop(due, f);
            return Ok(false);
        }
        let took = clock::now() - sent;
        self.late.record(due, sent);
        self.window[side].record(due, sent);
        self.cost[side].record(sent, sent + took);
        self.guard = Time((self.guard.ps() * 15 + 2 * took.ps()) / 16);
        self.sent[side] += 1;
        pool.give(f.slot);
        Ok(true)
    }
}

/// CPU time this process used, user and system, seconds.
fn cpu_seconds() -> f64 {
    // SAFETY: getrusage writes the rusage it is given.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) };
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    secs(u.ru_utime) + secs(u.ru_stime)
}

/// Keeps this thread on `cpu`: the busy loop's timing then does not depend on where the
/// scheduler moves it.
fn pin_to(cpu: usize) -> std::io::Result<()> {
    // SAFETY: cpu_set_t is plain data; CPU_SET writes within it; sched_setaffinity reads it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
            return Err(std::io::Error::other(format!("--cpu {cpu}: {}", std::io::Error::last_os_error())));
        }
    }
    Ok(())
}

/// Writes `log` (times on the monotonic clock) to `file` through the reused buffer `rows`;
/// returns how many rows.
fn write_log(file: &mut impl std::io::Write, rows: &mut Vec<u8>, log: Vec<LogRow>) -> std::io::Result<u64> {
    rows.clear();
    for r in &log {
        r.write_to(rows);
    }
    file.write_all(rows)?;
    Ok(log.len() as u64)
}
