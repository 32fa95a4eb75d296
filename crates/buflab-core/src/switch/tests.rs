//! The router node on its own: a hand-checked slot sequence, VOQ limits, cells, lazy slots,
//! the output-queued mode against speedup N, and OQ emulation's Theorem 2.1 bound.
//!
//! Read first: [`super`]. Owns the router node's own tests; must not be compiled outside tests.

use super::*;
use crate::packet::Kind;
use crate::rng::{Rng, Stream};
use proptest::prelude::*;

/// 1000 B cells at 8 Mb/s: a slot is 1 ms.
const RATE: Rate = Rate::mbps(8);
const MS: u64 = 1_000_000_000;

fn config(ports: usize, fabric: Fabric, voq_limit: Option<u32>) -> SwitchConfig {
    SwitchConfig { ports, rate: RATE, cell: 1000, fabric, voq_limit, output_buffer: None }
}

fn cioq(scheduler: SchedulerKind, speedup: Speedup) -> Fabric {
    Fabric::Cioq { scheduler, speedup }
}

fn window(end_ms: u64) -> MeasuredWindow {
    MeasuredWindow { start: Time::ZERO, end: Time(end_ms * MS) }
}

/// An arrival: time (ps), input, output, size (B). The packet's `seq` is its index in the
/// list and its `flow` its output, so a hand-over can be checked.
type Arrival = (u64, u32, u32, u32);

/// What a run handed to the output links: (time, seq, output), in hand-over order.
type Handed = Vec<(Time, u32, u32)>;

fn packet(seq: u32, output: u32, size: u32) -> Packet {
    Packet::for_test(Kind::Data, output, seq, size)
}

/// Drives `sw` through `arrivals` (each delivered by an event at its time, as the simulator
/// does) until `end_ms`; returns the hand-overs and the slot events that ran.
fn drive(sw: &mut Switch, arrivals: &[Arrival], end_ms: u64) -> (Handed, u64) {
    let mut q = EventQueue::new();
    sw.start(&mut q, 0);
    for (k, a) in arrivals.iter().enumerate() {
        q.schedule(Time(a.0), Event::Arrival(k as u32));
    }
    let (mut handed, mut ran, mut out) = (Vec::new(), 0, Vec::new());
    while let Some((now, ev)) = q.pop() {
        if now.0 >= end_ms * MS {
            break;
        }
        match ev {
            Event::Arrival(k) => {
                let (_, i, j, size) = arrivals[k as usize];
                sw.arrive(now, packet(k, j, size), i, j, &mut q, 0);
            }
            Event::SwitchSlot(_) => {
                if sw.on_slot(now, &mut out, &mut q, 0) {
                    ran += 1;
                }
                handed.extend(out.drain(..).map(|p| (now, p.seq, p.flow)));
            }
            other => unreachable!("{other:?}"),
        }
    }
    (handed, ran)
}

fn switch(cfg: &SwitchConfig, end_ms: u64) -> Switch {
    Switch::new(cfg, Rng::stream(1, Stream::Fabric, 0), window(end_ms))
}

#[test]
fn hand_checked_two_by_two_islip_sequence() {
    // iSLIP, 1 iteration, speedup 1, one packet per VOQ; all pointers start at 0.
    let cfg = config(2, cioq(SchedulerKind::Islip { iterations: 1 }, Speedup::ONE), Some(1));
    let mut sw = switch(&cfg, 10);
    let arrivals = [
        (MS / 2, 0, 0, 1000),     // a: slot 1
        (MS / 2, 1, 0, 1000),     // b: slot 1
        (3 * MS / 2, 1, 0, 1000), // c: slot 2, VOQ(1, 0) still holds b: dropped
        (3 * MS / 2, 0, 1, 1000), // d: slot 2
        (5 * MS, 1, 1, 1000),     // e: exactly on boundary 5, so slot 6
    ];
    let (handed, ran) = drive(&mut sw, &arrivals, 10);
    // Slot 1: output 0 grants input 0 (g0 = 0), input 0 accepts (a0 = 0): a crosses; then
    // a0 = 1, g0 = 1. Slot 2: output 0 grants input 1 (g0 = 1), output 1 grants input 0
    // (g1 = 0); both accepted: b and d cross, handed over in arrival order (b before d).
    // Slots 3-5 are empty and do not run; e crosses in slot 6.
    let expect = vec![(Time(MS), 0, 0), (Time(2 * MS), 1, 0), (Time(2 * MS), 3, 1), (Time(6 * MS), 4, 1)];
    assert_eq!(handed, expect);
    assert_eq!(ran, 3, "only slots 1, 2 and 6 run");
    assert_eq!((sw.drops, sw.held()), (1, 0));
    let s = &sw.stats;
    assert_eq!((s.inputs[0].arrivals, s.inputs[1].arrivals), (2, 3));
    assert_eq!((s.inputs[0].drops, s.inputs[1].drops), (0, 1));
    // VOQ packets after each arrival phase: input 0 holds 1 in slots 1 and 2; input 1 holds
    // 1 in slots 1, 2 and 6.
    assert_eq!((s.inputs[0].occupancy_slots, s.inputs[1].occupancy_slots), (2, 3));
    assert_eq!((s.busy_slots, s.matchings, s.cells), (3, 3, 4));
    assert_eq!(sw.window_slots(), 9, "boundaries 1 ms … 9 ms lie in [0, 10 ms)");
}

#[test]
fn voq_limit_drops_tail_and_never_exceeds_the_limit() {
    // Three packets per slot from three inputs to output 0, speedup 1: output 0 takes one per
    // slot, so the VOQs fill to their limit of 2 and drop the rest.
    let cfg = config(3, cioq(SchedulerKind::Mwm, Speedup::ONE), Some(2));
    let mut sw = switch(&cfg, 100);
    let arrivals: Vec<Arrival> =
        (0..30u64).flat_map(|k| (0..3).map(move |i| (k * MS + MS / 2, i, 0, 1000))).collect();
    let (handed, _) = drive(&mut sw, &arrivals, 100);
    assert!(sw.stats.inputs.iter().all(|s| s.max_voq_ever == 2), "{:?}", sw.stats);
    // One out per slot: 30 while arrivals last; slot 30's arrival phase leaves the VOQs full
    // (3 × 2), one of those leaves in slot 30 and five drain after: 35 out of 90.
    assert_eq!(handed.len(), 35);
    assert_eq!(sw.drops, 90 - 35);
    assert_eq!(sw.held(), 0);
    // One per slot, in slots 1 … 35.
    assert!(handed.iter().enumerate().all(|(k, h)| h.0 == Time((k as u64 + 1) * MS)));
}

#[test]
fn a_packet_of_three_cells_takes_three_slots_and_a_control_packet_one() {
    let cfg = config(2, cioq(SchedulerKind::Mwm, Speedup::ONE), None);
    let mut sw = switch(&cfg, 20);
    // 2500 B = 3 cells; 40 B = 1 padded cell behind it in the same VOQ.
    let (handed, _) = drive(&mut sw, &[(MS / 2, 0, 1, 2500), (MS / 2 + 1, 0, 1, 40)], 20);
    assert_eq!(handed, vec![(Time(3 * MS), 0, 1), (Time(4 * MS), 1, 1)]);
    assert_eq!(sw.stats.cells, 4);
}

#[test]
fn an_arrival_handed_in_ahead_of_time_waits_for_its_slot() {
    // The simulator may hand an arrival in before its time; a later event may then bring an
    // earlier one at another input. The earlier slot is armed, the first event goes stale.
    let cfg = config(2, cioq(SchedulerKind::Mwm, Speedup::ONE), None);
    let mut sw = switch(&cfg, 20);
    let mut q = EventQueue::new();
    sw.arrive(Time(5 * MS + 1), packet(0, 0, 1000), 0, 0, &mut q, 0); // slot 6
    sw.arrive(Time(MS + 1), packet(1, 1, 1000), 1, 1, &mut q, 0); // slot 2
    let (mut out, mut handed, mut ran) = (Vec::new(), Vec::new(), 0);
    while let Some((now, _)) = q.pop() {
        ran += sw.on_slot(now, &mut out, &mut q, 0) as u32;
        handed.extend(out.drain(..).map(|p: Packet| (now, p.seq)));
    }
    assert_eq!(handed, vec![(Time(2 * MS), 1), (Time(6 * MS), 0)]);
    assert_eq!(ran, 2);
}

/// Random arrivals for `n` inputs over `slots` slots: each input at most one cell-size packet
/// per slot (at line rate), at a random offset within the slot, to a random output.
fn random_arrivals(n: u32, slots: u64, load: f64, seed: u64) -> Vec<Arrival> {
    let mut rng = Rng::stream(seed, Stream::Source, 0);
    let mut v = Vec::new();
    for k in 0..slots {
        for i in 0..n {
            if rng.bernoulli(load) {
                let t = k * MS + rng.range_u64(0, MS - 1);
                v.push((t, i, rng.range_u64(0, n as u64 - 1) as u32, 1000));
            }
        }
    }
    v.sort_by_key(|a| a.0);
    v
}

const KINDS: [SchedulerKind; 5] = [
    SchedulerKind::Mwm,
    SchedulerKind::Islip { iterations: 1 },
    SchedulerKind::Islip { iterations: 3 },
    SchedulerKind::Pim { iterations: 2 },
    SchedulerKind::OqEmulation,
];

proptest! {
    #![proptest_config(ProptestConfig { cases: 40, ..ProptestConfig::default() })]

    /// Running every slot gives the same hand-overs, drops and statistics as skipping the
    /// empty ones, for every scheduler and speedup (MWM's tie rotation and the speedup clock
    /// are caught up on waking).
    #[test]
    fn skipping_empty_slots_changes_nothing(
        n in 2u32..=5,
        load_pct in 5u32..=95,
        speedup in prop::sample::select(vec![(1u32, 1u32), (6, 5), (2, 1), (7, 3)]),
        kind in 0usize..5,
        limit in prop::option::of(1u32..4),
        seed in 0u64..1000,
    ) {
        let speedup = Speedup::ratio(speedup.0, speedup.1).unwrap();
        let kind = KINDS[kind];
        let limit = if kind == SchedulerKind::OqEmulation { None } else { limit };
        let mut cfg = config(n as usize, cioq(kind, speedup), limit);
        cfg.output_buffer = Some(3);
        let arrivals = random_arrivals(n, 300, load_pct as f64 / 100.0, seed);
        let (mut lazy, mut eager) = (switch(&cfg, 400), switch(&cfg, 400));
        eager.set_eager(true);
        let (a, ran_lazy) = drive(&mut lazy, &arrivals, 400);
        let (b, ran_eager) = drive(&mut eager, &arrivals, 400);
        prop_assert_eq!(a, b);
        prop_assert_eq!(&lazy.stats, &eager.stats);
        prop_assert_eq!(lazy.drops, eager.drops);
        prop_assert_eq!(ran_eager, 399);
        prop_assert!(ran_lazy <= ran_eager);
    }

    /// With at most one cell per input per slot, speedup N and a maximal scheduler clear every
    /// VOQ each slot, so the switch hands over exactly what the output-queued mode does, when
    /// it does, in the same order.
    #[test]
    fn speedup_n_is_the_output_queued_switch(
        n in 1u32..=6,
        load_pct in 10u32..=100,
        kind in prop::sample::select(vec![SchedulerKind::Mwm, SchedulerKind::Islip { iterations: 6 }]),
        seed in 0u64..1000,
    ) {
        let arrivals = random_arrivals(n, 200, load_pct as f64 / 100.0, seed);
        let mut oq = switch(&config(n as usize, Fabric::OutputQueued, None), 300);
        let speedup = Speedup::ratio(n, 1).unwrap();
        let mut cioq_sw = switch(&config(n as usize, cioq(kind, speedup), Some(1)), 300);
        let (a, _) = drive(&mut oq, &arrivals, 300);
        let (b, _) = drive(&mut cioq_sw, &arrivals, 300);
        prop_assert_eq!(a.len(), arrivals.len());
        prop_assert_eq!(a, b);
        prop_assert_eq!(cioq_sw.drops, 0);
    }

    /// OQ emulation with speedup 2 sends every packet in its shadow slot (none late), drops
    /// what the shadow OQ switch drops, and no input ever holds more than 2B packets
    /// (Theorem 2.1; here even B + 1, the shadow's buffer, as the cell harness shows).
    #[test]
    fn oq_emulation_at_speedup_two_is_never_late_and_within_theorem_2_1(
        n in 2u32..=6,
        b in 1u32..=8,
        load_pct in 50u32..=100,
        seed in 0u64..1000,
    ) {
        let mut cfg = config(n as usize, cioq(SchedulerKind::OqEmulation, Speedup::ratio(2, 1).unwrap()), None);
        cfg.output_buffer = Some(b);
        let mut sw = switch(&cfg, 400);
        let arrivals = random_arrivals(n, 300, load_pct as f64 / 100.0, seed);
        let (handed, _) = drive(&mut sw, &arrivals, 400);
        prop_assert_eq!(sw.stats.late.iter().sum::<u64>(), 0);
        prop_assert_eq!(handed.len() as u64 + sw.drops, arrivals.len() as u64);
        // Theorem 2.1 with the shadow's buffer B' = B + 1 (see the module doc).
        let shadow = b as u64 + 1;
        for s in &sw.stats.inputs {
            prop_assert!(s.max_pkts_ever <= 2 * shadow, "{:?}", s);
            prop_assert!(s.max_pkts_ever <= shadow, "{:?}", s);
        }
        // At most one departure per output per slot.
        let mut per_slot = std::collections::HashMap::new();
        for h in &handed {
            *per_slot.entry((h.0, h.2)).or_insert(0) += 1;
        }
        prop_assert!(per_slot.values().all(|&c| c == 1));
    }
}

#[test]
fn oq_emulation_below_speedup_two_sends_some_packets_late() {
    // The check has teeth: at speedup 1 and full load the switch cannot keep up with the
    // shadow OQ switch.
    let cfg = config(4, cioq(SchedulerKind::OqEmulation, Speedup::ONE), None);
    let mut sw = switch(&cfg, 2000);
    drive(&mut sw, &random_arrivals(4, 1500, 1.0, 3), 2000);
    assert!(sw.stats.late.iter().sum::<u64>() > 0, "{:?}", sw.stats.late);
}
