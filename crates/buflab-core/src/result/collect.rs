//! Reading a network at the end of its run into a [`RunResult`].
//!
//! Read first: [`super`] (which link is "the bottleneck" on each topology). This file owns
//! the order in which monitors are taken from their links and what the summary makes of the
//! tables' rows (totals and means over the switch's outputs, fairness, the losses that
//! retransmissions answer). Each table's rows are read by its own file; no column is
//! described here.

use super::aqm::AqmRow;
use super::bumps::bump_rows;
use super::flows::FlowRecord;
use super::links::{ratio, switch_ports, LinkRow};
use super::optical::optical_rows;
use super::rates::rate_rows;
use super::series::series;
use super::summary::{Summary, SwitchFigures};
use super::transfers::TransferRow;
use super::{EventsQueue, RunResult};
use crate::monitor::QueueMonitor;
use crate::scenario::Scenario;
use crate::topology::Network;
use crate::units::PS_PER_S;

pub fn collect(s: &Scenario, net: &mut Network) -> RunResult {
    let sim = &mut net.sim;
    let measured = sim.window.len();
    let measured_s = measured.secs_f64();
    let mut links = Vec::with_capacity(net.monitored.len());
    let mut summary_monitor = None;
    let mut queue_bytes = Vec::with_capacity(net.monitored.len());
    let mut aqm = Vec::new();
    for (i, m) in net.monitored.iter().enumerate() {
        let link = &mut sim.links[m.link as usize];
        let mon = link.take_monitor().expect("a monitored link has a monitor");
        links.push(LinkRow::new(i as u32 + 1, m.name.clone(), link.limit(), &mon, measured_s));
        if let Some(counts) = link.aqm_counts() {
            // Monitored links are the hops in path order wherever a discipline can be set.
            let queue = s.network.hops.get(i).map_or("", |h| h.queue.name);
            aqm.push(AqmRow::new(&m.name, queue, counts, &mon));
        }
        queue_bytes.push(mon.mean_queue_bytes());
        if i == net.summary {
            summary_monitor = Some(mon);
        }
    }
    let (ports, fig) = match &net.switch {
        Some(info) => switch_ports(sim, info, &links),
        None => (Vec::new(), SwitchFigures::default()),
    };
    let mut mon = summary_monitor.expect("the summary link is monitored");
    // The event log is the summary link's, or a bump's (`monitor.events_at`).
    let (log, events_queue) = match &net.events_bump {
        None => {
            let name = links[net.summary].name.clone();
            let link = &sim.links[net.monitored[net.summary].link as usize];
            let fifo = link.keeps_arrival_order();
            (mon.log.take(), EventsQueue { name, rate: link.rate, buffer: link.limit(), fifo })
        }
        Some((id, name)) => {
            let link = &mut sim.links[*id as usize];
            // Finished with every link at the end of the run.
            let mut bump_monitor = link.take_monitor().expect("the recorded bump is monitored");
            (
                bump_monitor.log.take(),
                EventsQueue {
                    name: name.clone(),
                    rate: link.rate,
                    buffer: link.limit(),
                    fifo: link.keeps_arrival_order(),
                },
            )
        }
    };
    let (events, events_written, events_error) = match log {
        None => (None, 0, None),
        Some(log) if log.is_streaming() => (None, log.written, log.error),
        Some(log) => (Some(log.pending), 0, None),
    };
    let mut row = links[net.summary].clone();
    let link = &sim.links[net.monitored[net.summary].link as usize];
    let buffer = link.limit();
    let mut departures = link.departures;
    let mut mean_queue_bytes = mon.mean_queue_bytes();
    if net.switch.is_some() {
        // Every output counts: means of utilization, throughput and queue, totals of drops
        // and arrivals, the largest queue (module doc).
        let k = links.len() as f64;
        row.utilization = links.iter().map(|l| l.utilization).sum::<f64>() / k;
        row.throughput_bps = links.iter().map(|l| l.throughput_bps).sum::<f64>() / k;
        row.drops = links.iter().map(|l| l.drops).sum();
        row.arrivals = links.iter().map(|l| l.arrivals).sum();
        row.drop_rate = if row.arrivals > 0 { row.drops as f64 / row.arrivals as f64 } else { 0.0 };
        row.marks = links.iter().map(|l| l.marks).sum();
        row.mark_rate = ratio(row.marks, row.arrivals);
        row.mean_queue_pkts = links.iter().map(|l| l.mean_queue_pkts).sum::<f64>() / k;
        row.max_queue_pkts = links.iter().map(|l| l.max_queue_pkts).max().unwrap_or(0);
        row.max_queue_ever = links.iter().map(|l| l.max_queue_ever).max().unwrap_or((0, 0));
        mean_queue_bytes = queue_bytes.iter().sum::<f64>() / k;
        departures = net.monitored.iter().map(|m| sim.links[m.link as usize].departures).sum();
    }

    let (optical, optical_lines) = optical_rows(sim, &net.monitored);
    let flow_ports = net.switch.as_ref().map(|w| &w.flow_ports);
    let port_of = |f: usize| flow_ports.and_then(|p| p.get(f)).map(|&(i, j)| (i as i64 + 1, j as i64 + 1));
    let flows: Vec<FlowRecord> =
        sim.flows.iter().enumerate().map(|(i, f)| FlowRecord::new(i, f, measured_s, port_of(i))).collect();
    let (mut retransmits, mut timeouts, mut goodput_sum) = (0u64, 0u64, 0.0f64);
    let mut ecn_reactions = 0u64;
    for rec in &flows {
        retransmits += rec.retransmits;
        timeouts += rec.timeouts;
        ecn_reactions += rec.ecn_reactions;
        goodput_sum += rec.goodput_bps;
    }
    let sq: f64 = flows.iter().map(|f| f.goodput_bps * f.goodput_bps).sum();
    let jain = if sq > 0.0 { goodput_sum * goodput_sum / (flows.len() as f64 * sq) } else { 0.0 };

    let timeseries = series(&mon, row.rate_bps, s.duration);

    // Retransmissions are every flow's, so the losses they answer are every monitored queue's
    // (on the dumbbell, the bottleneck's alone).
    let drops_total = links.iter().map(|l| l.drops).sum::<u64>()
        + sim.loss_drops_window
        + ports.iter().map(|p| p.in_drops + p.mux_drops).sum::<u64>();
    let rtt_mean_s =
        sim.flows.iter().map(|f| f.info.rtt.secs_f64()).sum::<f64>() / sim.flows.len().max(1) as f64;
    let summary = Summary {
        goodput_bps: goodput_sum,
        departures,
        loss_drops: sim.loss_drops_window,
        mean_queue_bytes,
        jain_fairness: jain,
        retransmits,
        timeouts,
        ecn_reactions,
        retransmits_per_drop: if drops_total > 0 { retransmits as f64 / drops_total as f64 } else { 0.0 },
        flows: flows.len() as u64,
        events: sim.sched.executed(),
        wall_s: sim.wall.as_secs_f64(),
        autosize_buffer_pkts: sim.autosize.as_ref().and_then(|a| a.answer()).map(|b| b as i64),
        rtt_mean_s,
        switch: fig,
        ..queue_summary(s, &row, &mon)
    };
    // In the order they began: requests run ahead of the global clock (`sim/requests.rs`)
    // are recorded when they run, which for users behind different links is not always the
    // order of their times. A stable sort keeps the order of requests made at one time.
    let mut began: Vec<_> = sim.transfers.iter().collect();
    began.sort_by_key(|t| t.start);
    let transfers = began.into_iter().map(TransferRow::from).collect();
    RunResult {
        summary,
        flows,
        transfers,
        links,
        ports,
        timeseries,
        autosize: sim.autosize.as_ref().map_or(Vec::new(), |a| a.steps.clone()),
        traces: sim.tracer.take().map_or_else(Vec::new, |t| t.finish()),
        bumps: bump_rows(sim, &s.network.bumps),
        rates: rate_rows(sim, &s.network.bumps),
        optical,
        optical_lines,
        aqm,
        events_queue,
        events,
        events_written,
        events_error,
        conservation: sim.counts,
        max_queue_ever: row.max_queue_ever,
        buffer,
    }
}

/// The summary's figures of the queue that `mon` watched (its links row `row`) in the run of
/// `s`; the figures of flows, the run's own and the switch's are left at zero for the caller.
/// A run's summary and one rebuilt from a queue's event log (`replayed.rs`) both come from it.
pub(super) fn queue_summary(s: &Scenario, row: &LinkRow, mon: &QueueMonitor) -> Summary {
    let ps = PS_PER_S as f64;
    Summary {
        name: s.name.clone(),
        seed: s.seed,
        duration_s: s.duration.secs_f64(),
        warmup_s: s.warmup.secs_f64(),
        measured_s: mon.window.len().secs_f64(),
        utilization: row.utilization,
        throughput_bps: row.throughput_bps,
        drop_rate: row.drop_rate,
        drops: row.drops,
        first_drop_s: mon.first_drop.map(|t| t.secs_f64()),
        marks: row.marks,
        mark_rate: row.mark_rate,
        arrivals: row.arrivals,
        departures: mon.totals.departures,
        mean_queue_pkts: row.mean_queue_pkts,
        max_queue_pkts: row.max_queue_pkts,
        mean_queue_bytes: mon.mean_queue_bytes(),
        queue_delay_mean_s: row.queue_delay_mean_s,
        queue_delay_p50_s: mon.delay.quantile(0.5) / ps,
        queue_delay_p99_s: mon.delay.quantile(0.99) / ps,
        iat_mean_s: mon.mix.interarrival.mean() / ps,
        iat_p10_s: mon.mix.interarrival.quantile(0.1) / ps,
        iat_p50_s: mon.mix.interarrival.quantile(0.5) / ps,
        iat_p90_s: mon.mix.interarrival.quantile(0.9) / ps,
        iat_faster_than_line: mon.mix.faster_than_line_fraction(),
        burst_mean_pkts: mon.mix.bursts.mean(),
        burst_p99_pkts: mon.mix.bursts.quantile(0.99),
        same_flow_fraction: mon.mix.same_flow_fraction(),
        bottleneck_rate_bps: row.rate_bps,
        buffer_pkts: row.buffer_pkts,
        buffer_bytes: row.buffer_bytes,
        autosize_buffer_pkts: None,
        ..Summary::default()
    }
}
