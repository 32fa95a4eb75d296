//! Property tests of every discipline in the list, held as the emulator's datapath holds them,
//! behind a serializer driven as a link drives it, under random overload: packets are
//! conserved (each arrival is dropped, sent, purged or still held, exactly once, and the
//! backlog a discipline reports is what it holds), the buffer limit is never exceeded once an
//! arrival has been dealt with (and FQ-CoDel's memory limit never), and a packet sent marked
//! was ECN-capable. These are the contract's promises (`lib.rs`), checked against every
//! discipline at once, so that a new one is checked the moment it is listed.

use std::collections::HashSet;

use buflab_base::rng::{Rng, Stream};
use buflab_base::units::{Rate, Time};
use buflab_queue::describe::LinkInfo;
use buflab_queue::{fits, kinds, Arrival, Dequeue, Discipline, Flowing, Limit, Queued, Verdict};
use proptest::prelude::*;

/// A test packet: a unique id, its flow, size and ECN state.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Pkt {
    id: u32,
    flow: u32,
    size: u32,
    ect: bool,
    ce: bool,
}

impl Queued for Pkt {
    fn size(&self) -> u32 {
        self.size
    }
    fn ect(&self) -> bool {
        self.ect
    }
    fn mark_ce(&mut self) {
        self.ce = true;
    }
}

impl Flowing for Pkt {
    fn flow(&self) -> u32 {
        self.flow
    }
    fn is_control(&self) -> bool {
        false
    }
}

const RATE: Rate = Rate(100_000_000);

/// Settings that make each AQM act within a short run (short targets and intervals, a small
/// FQ-CoDel memory limit and few queues, so that flows collide), or the defaults.
fn settings(name: &str) -> Vec<(String, String)> {
    let pairs: &[(&str, &str)] = match name {
        "codel" => &[("codel_target", "500us"), ("codel_interval", "5ms"), ("codel_ecn", "true")],
        "fq_codel" => &[
            ("fq_codel_target", "500us"),
            ("fq_codel_interval", "5ms"),
            ("fq_codel_flows", "8"),
            ("fq_codel_memory_limit", "12KB"),
        ],
        "pie" => {
            &[("pie_target", "1ms"), ("pie_tupdate", "2ms"), ("pie_max_burst", "4ms"), ("pie_ecn", "true")]
        }
        "step" => &[("mark_threshold", "1pkt")],
        "red" => &[("red_min_th", "0"), ("red_max_th", "1")],
        _ => &[],
    };
    pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

/// What happened to the arrivals.
#[derive(Default)]
struct Fates {
    dropped: Vec<u32>,
    sent: Vec<u32>,
    purged: Vec<u32>,
}

/// Drives `q` with `n` Poisson arrivals at `load` times the link's rate (sizes 40–1500 B, 12
/// flows, two thirds ECN-capable), checking the limits after each; returns the fates.
fn drive(
    q: &mut dyn Discipline<Pkt>,
    limit: Limit,
    memory: Option<u64>,
    seed: u64,
    load: f64,
    n: u32,
) -> Fates {
    let mut r = Rng::stream(seed, Stream::Topology, 0);
    let mut fates = Fates::default();
    let (mut busy_until, mut ask_at) = (Time::ZERO, Time::ZERO);
    let mut purged = Vec::new();
    let (mut t, mut floor) = (Time::ZERO, Time::ZERO);
    let mean_gap = RATE.serialization(770).ps() as f64 / load;
    // Serves every service due by `now` (a service at t before an arrival at t): the
    // serializer asks when it frees up, when the discipline said to, and never before the
    // last arrival (`floor`), which found it idle if it had freed up earlier.
    let serve = |q: &mut dyn Discipline<Pkt>,
                 now: Time,
                 floor: Time,
                 busy: &mut Time,
                 ask: &mut Time,
                 f: &mut Fates,
                 purged: &mut Vec<Pkt>| loop {
        if q.backlog().0 == 0 {
            return;
        }
        let at = (*busy).max(*ask).max(floor);
        if at > now {
            return;
        }
        let d = q.dequeue(at, purged);
        f.purged.extend(purged.drain(..).map(|p| p.id));
        match d {
            Dequeue::Send(p) | Dequeue::Marked(p) => {
                if matches!(d, Dequeue::Marked(_)) {
                    assert!(p.ect && p.ce, "a packet sent marked is ECN-capable and carries CE");
                }
                f.sent.push(p.id);
                *busy = at + RATE.serialization(p.size as u64);
            }
            Dequeue::Wait(w) => {
                assert!(w > at, "a discipline asked to wait until a time not after now");
                *ask = w;
            }
            Dequeue::Idle => return,
        }
    };
    for id in 0..n {
        if !r.bernoulli(0.05) {
            t += Time(r.exponential(mean_gap) as u64);
        }
        serve(q, t, floor, &mut busy_until, &mut ask_at, &mut fates, &mut purged);
        floor = t;
        let size = r.range_u64(40, 1500) as u32;
        let p = Pkt { id, flow: r.range_u64(0, 11) as u32, size, ect: !r.bernoulli(1.0 / 3.0), ce: false };
        let (w, b) = q.backlog();
        let mut a = Arrival::new(t, w, b, busy_until, limit, size, p.ect);
        if w > 0 {
            a.full = !fits(limit, w, b, size); // held packets wait, busy or not (link/held.rs)
        }
        let verdict = q.enqueue(&a, p, &mut purged);
        fates.purged.extend(purged.drain(..).map(|p| p.id));
        if verdict == Verdict::Drop {
            fates.dropped.push(id);
        }
        serve(q, t, floor, &mut busy_until, &mut ask_at, &mut fates, &mut purged);
        let (w, b) = q.backlog();
        let within = match limit {
            Limit::Packets(l) => w <= l,
            Limit::Bytes(l) => b <= l,
            Limit::Unlimited => true,
        };
        assert!(within, "{w} packets, {b} bytes held under a limit of {limit}");
        if let Some(m) = memory {
            assert!(b <= m, "{b} bytes held over a memory limit of {m}");
        }
    }
    fates
}

fn limits() -> impl Strategy<Value = Limit> {
    prop_oneof![
        prop::sample::select(vec![1u64, 7, 15, 31, 63, 100]).prop_map(Limit::Packets),
        prop::sample::select(vec![1500u64, 6000, 40_000]).prop_map(Limit::Bytes),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(160))]

    /// Every discipline, any limit its checks accept, loads from half to twice the link's
    /// rate: 3,000 arrivals each, enough to fill the largest buffer here many times over.
    #[test]
    fn every_discipline_conserves_packets_and_keeps_its_limits(
        which in 0usize..64, limit in limits(), seed in any::<u64>(), load in 0.5f64..2.0,
    ) {
        let all = kinds::<Pkt>();
        let kind = &all[which % all.len()];
        let given = settings(kind.name);
        let values = kind.values_from_text(&given, limit).or_else(|_| kind.values_from_text(&[], limit));
        prop_assume!(values.is_ok()); // a limit the discipline refuses (the optical FIFO's N − 1)
        let values = values.unwrap();
        let link = LinkInfo { rate: RATE, delay: Time::ZERO, limit, packet: 1500, largest: 1500 };
        let mut q = kind.build_held(&values, link, Rng::stream(seed, Stream::Queue, 0));
        let memory = (kind.name == "fq_codel").then(|| values.bytes("fq_codel_memory_limit"));
        let n = 3000;
        let f = drive(q.as_mut(), limit, memory, seed, load, n);
        let (held, _) = q.backlog();
        let total = f.dropped.len() + f.sent.len() + f.purged.len() + held as usize;
        prop_assert_eq!(total, n as usize, "{}: every arrival dropped, sent, purged or held", kind.name);
        let mut seen = HashSet::new();
        for id in f.dropped.iter().chain(&f.sent).chain(&f.purged) {
            prop_assert!(seen.insert(*id), "{}: packet {} has two fates", kind.name, id);
        }
        let mut visited = Vec::new();
        if q.in_send_order(&mut |p: &Pkt| visited.push(p.id)) {
            prop_assert_eq!(visited.len() as u64, held, "{}: visits what it holds", kind.name);
            prop_assert!(visited.iter().all(|id| seen.insert(*id)), "{}: a held packet also had a fate", kind.name);
        }
    }
}
