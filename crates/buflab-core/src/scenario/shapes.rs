//! The named shapes, each a [`Graph`] made by a rule: the dumbbell, the parking lot, the tree
//! of thesis Fig 5.1 and the layered network standing for Fig 5.2. One builder
//! (`topology/graph.rs`) builds every graph, so a shape is only its rule.
//!
//! Read first: [`super::graph`] (what a graph is). Owns the rules and the names they give
//! nodes and links; must not read keys (`network.rs` reads them and calls these).
//!
//! Every shape gives each of its links an ACK link the other way, uncongested (the link's
//! rate and delay, no buffer limit, drop-tail) and not monitored, as the dumbbell's reverse
//! path always was: entries are in pairs, a link then its way back. Unmonitored, they are
//! express links the simulator passes through without events.

use super::graph::{Graph, GraphLink};
use super::network::LinkSpec;
use super::queue::QueueSpec;
use crate::units::BufferLimit;

/// Most routers of a tree or a layered network (each router's links are two entries).
pub const MAX_ROUTERS: u64 = 2_500;
/// Most default routes of a layered network (width × 2^stages).
pub const MAX_LAYERED_ROUTES: u64 = 65_536;

/// A shape's graph and the routes of its ingress: where the flows of an entry that names no
/// route of its own go, flow k on route k mod their number (empty: the shape has its own
/// placement keys, the dumbbell's `path` and the parking lot's `hops`).
pub struct Shape {
    pub graph: Graph,
    pub ingress: Vec<Vec<u32>>,
}

/// The way back of a link made of `spec`: the same rate and delay, no buffer limit, drop-tail.
fn uncongested(spec: &LinkSpec) -> LinkSpec {
    LinkSpec {
        rate: spec.rate,
        buffer: BufferLimit::Unlimited,
        delay: spec.delay,
        queue: QueueSpec::drop_tail(),
    }
}

/// Adds the link `name` from `from` to `to` and its ACK link back; returns the first's index.
fn pair(g: &mut Graph, name: String, from: u32, to: u32, spec: &LinkSpec, loss: f64, monitored: bool) -> u32 {
    let back = GraphLink {
        name: format!("{name} back"),
        from: to,
        to: from,
        spec: uncongested(spec),
        loss: 0.0,
        monitored: false,
    };
    let id = g.add_link(GraphLink { name, from, to, spec: spec.clone(), loss, monitored });
    g.add_link(back);
    id
}

/// The dumbbell: nodes `left` and `right`, the monitored `bottleneck` between them (link 0,
/// its way back link 1); with `cross`, a node `cross` and the unmonitored link `cross` from
/// `left` to it (link 2, back 3), which cross traffic leaves by.
pub fn dumbbell(bottleneck: &LinkSpec, loss: f64, cross: Option<&LinkSpec>) -> Shape {
    let mut g = Graph::default();
    let (left, right) = (g.add_node("left".into()), g.add_node("right".into()));
    pair(&mut g, "bottleneck".into(), left, right, bottleneck, loss, true);
    if let Some(spec) = cross {
        let node = g.add_node("cross".into());
        pair(&mut g, "cross".into(), left, node, spec, 0.0, false);
    }
    Shape { graph: g, ingress: Vec::new() }
}

/// The parking lot: routers `r0` … `rk` in a line, hop j the monitored link `hopj` from
/// r(j−1) to rj (link 2(j−1), its way back the next).
pub fn parking_lot(hops: &[LinkSpec], loss: f64) -> Shape {
    let mut g = Graph::default();
    let mut prev = g.add_node("r0".into());
    for (j, spec) in hops.iter().enumerate() {
        let next = g.add_node(format!("r{}", j + 1));
        pair(&mut g, format!("hop{}", j + 1), prev, next, spec, loss, true);
        prev = next;
    }
    Shape { graph: g, ingress: Vec::new() }
}

/// Routers in a complete tree of `depth` levels, each with `fanout` children: (f^d − 1)/(f − 1).
pub fn tree_routers(depth: u64, fanout: u64) -> u64 {
    (0..depth)
        .fold((0u64, 1u64), |(sum, level), _| (sum.saturating_add(level), level.saturating_mul(fanout)))
        .0
}

/// The tree of thesis Fig 5.1: routers `r1` (the root) … `rN` numbered level by level, the
/// children of router i being routers f·(i − 1) + 2 … f·i + 1; each router's one output link
/// (monitored, made of `link`) goes to its parent, the root's to the node `exit`. Traffic
/// enters at the leaves: the ingress routes go from each leaf, in order, to `exit`, crossing
/// `depth` routers. Router i's link is entry 2(i − 1), so the links table lists the routers
/// in order, the root first.
pub fn tree(depth: u64, fanout: u64, link: &LinkSpec, loss: f64) -> Shape {
    let n = tree_routers(depth, fanout);
    let mut g = Graph::default();
    let exit = g.add_node("exit".into());
    let first = exit + 1;
    for i in 1..=n {
        g.add_node(format!("r{i}"));
    }
    let parent = |i: u64| if i == 1 { exit } else { first + ((i - 2) / fanout) as u32 };
    for i in 1..=n {
        let (from, to) = (first + (i - 1) as u32, parent(i));
        let name = format!("{}->{}", g.nodes[from as usize], g.nodes[to as usize]);
        pair(&mut g, name, from, to, link, loss, true);
    }
    // The last level: f^(d − 1) routers.
    let leaves = (1..depth).fold(1u64, |x, _| x * fanout);
    let ingress = (n - leaves + 1..=n)
        .map(|leaf| {
            let mut route = Vec::new();
            let mut i = leaf;
            loop {
                route.push(2 * (i - 1) as u32);
                if i == 1 {
                    break route;
                }
                i = (i - 2) / fanout + 1;
            }
        })
        .collect();
    Shape { graph: g, ingress }
}

/// A general network standing for thesis Fig 5.2 ("flows can share a part of their routes and
/// then diverge"): `stages` columns of `width` routers, `r1.1` … `rS.W`, and egress nodes
/// `e1` … `eW`. Router s.i has two output links (both monitored, made of `link`): straight
/// to router s+1.i and across to router s+1.(i+1 mod W), the last column's to the egress
/// nodes e.i and e.(i+1 mod W). Traffic enters at the first column: from each row, one
/// ingress route per way of choosing straight or across at each of the S columns (2^S per
/// row, rows in order, the choice at column s the bit s − 1 of the route's number), so that
/// every link carries 2^(S−1) of the W·2^S routes, flows that share a link diverge at the
/// next router, and each link merges flows from two routers. Each route crosses `stages`
/// routers.
pub fn layered(stages: u64, width: u64, link: &LinkSpec, loss: f64) -> Shape {
    let (s_n, w_n) = (stages as u32, width as u32);
    let mut g = Graph::default();
    for s in 1..=s_n {
        for i in 1..=w_n {
            g.add_node(format!("r{s}.{i}"));
        }
    }
    for i in 1..=w_n {
        g.add_node(format!("e{i}"));
    }
    let router = |s: u32, row: u32| (s - 1) * w_n + row; // row from 0
    let next = |s: u32, row: u32| if s == s_n { s_n * w_n + row } else { router(s + 1, row) };
    for s in 1..=s_n {
        for row in 0..w_n {
            let from = router(s, row);
            for to in [next(s, row), next(s, (row + 1) % w_n)] {
                let name = format!("{}->{}", g.nodes[from as usize], g.nodes[to as usize]);
                pair(&mut g, name, from, to, link, loss, true);
            }
        }
    }
    // Router r's straight link is entry 4r, its link across 4r + 2.
    let mut ingress = Vec::with_capacity((width << stages) as usize);
    for first_row in 0..w_n {
        for choice in 0..(1u32 << s_n) {
            let mut row = first_row;
            let route = (1..=s_n)
                .map(|s| {
                    let across = (choice >> (s - 1)) & 1;
                    let l = 4 * router(s, row) + 2 * across;
                    row = (row + across) % w_n;
                    l
                })
                .collect();
            ingress.push(route);
        }
    }
    Shape { graph: g, ingress }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::{Rate, Time};

    fn spec() -> LinkSpec {
        LinkSpec {
            rate: Rate::mbps(10),
            buffer: BufferLimit::Packets(20),
            delay: Time::from_ms(1),
            queue: QueueSpec::drop_tail(),
        }
    }

    #[test]
    fn a_binary_tree_of_depth_six_has_63_routers_and_32_leaves_each_six_routers_from_the_exit() {
        assert_eq!(tree_routers(6, 2), 63);
        assert_eq!(tree_routers(3, 3), 13);
        assert_eq!(tree_routers(4, 1), 4);
        let t = tree(6, 2, &spec(), 0.0);
        assert_eq!(t.graph.monitored().len(), 63);
        assert_eq!(t.graph.links.len(), 126, "each router's link and its way back");
        assert_eq!(t.ingress.len(), 32);
        assert!(t.ingress.iter().all(|r| r.len() == 6));
        // Leaf r32 → r16 → r8 → r4 → r2 → r1 → exit.
        assert_eq!(t.graph.describe(&t.ingress[0]), "r32 → r16 → r8 → r4 → r2 → r1 → exit");
        assert_eq!(t.graph.links[0].name, "r1->exit");
        // A line (fanout 1) has one leaf; a ternary tree's leaves are its last 9 routers.
        assert_eq!(tree(4, 1, &spec(), 0.0).ingress, vec![vec![6, 4, 2, 0]]);
        let ternary = tree(3, 3, &spec(), 0.0);
        assert_eq!(ternary.ingress.len(), 9);
        assert_eq!(ternary.graph.describe(&ternary.ingress[8]), "r13 → r4 → r1 → exit");
    }

    #[test]
    fn every_link_of_the_layered_network_carries_half_its_routes_at_each_column() {
        let l = layered(3, 4, &spec(), 0.0);
        assert_eq!(l.graph.monitored().len(), 3 * 4 * 2);
        assert_eq!(l.ingress.len(), 4 * 8);
        let mut carried = vec![0; l.graph.links.len()];
        for route in &l.ingress {
            assert_eq!(route.len(), 3);
            // Consecutive links meet at a router: the route is connected.
            for w in route.windows(2) {
                assert_eq!(l.graph.links[w[0] as usize].to, l.graph.links[w[1] as usize].from);
            }
            route.iter().for_each(|&x| carried[x as usize] += 1);
        }
        for m in l.graph.monitored() {
            assert_eq!(carried[m as usize], 4, "2^(S−1) routes on {}", l.graph.links[m as usize].name);
        }
        assert_eq!(l.graph.describe(&l.ingress[0b101]), "r1.1 → r2.2 → r3.2 → e3");
    }

    #[test]
    fn the_dumbbell_and_the_parking_lot_put_each_link_before_its_way_back() {
        let d = dumbbell(&spec(), 0.01, Some(&spec()));
        let names: Vec<&str> = d.graph.links.iter().map(|l| l.name.as_str()).collect();
        assert_eq!(names, ["bottleneck", "bottleneck back", "cross", "cross back"]);
        assert_eq!(d.graph.monitored(), vec![0]);
        assert_eq!(d.graph.links[1].spec.buffer, BufferLimit::Unlimited);
        let p = parking_lot(&[spec(), spec(), spec()], 0.0);
        assert_eq!(p.graph.monitored(), vec![0, 2, 4]);
        assert_eq!(p.graph.describe(&[0, 2, 4]), "r0 → r1 → r2 → r3");
        assert_eq!(p.graph.way_back(&[2, 4]), Ok(vec![5, 3]));
    }
}
