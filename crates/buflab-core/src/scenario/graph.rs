//! General topologies: named nodes joined by directed links, and the routes flows take
//! through them.
//!
//! Read first: [`super::network`] (the `network` section, which calls this for
//! `topology = "network"`, and has [`super::shapes`] expand every other shape but the switch
//! into a [`Graph`]). Owns [`Graph`], [`GraphLink`] and [`Route`]; reading `[[network.node]]`,
//! `[[network.link]]` and `network.summary_link`; and routing: an explicit node path checked
//! hop by hop ([`Graph::follow`]), the shortest path between two nodes with its tie-break
//! written once ([`Graph::shortest`]), and the links ACKs come back by ([`Graph::way_back`]).
//! Must not know traffic kinds, nor how the simulator builds a graph.
//!
//! A link is one direction: its own rate, delay, buffer and queue discipline, as a router's
//! output port. Each data packet crosses the links of its route and reaches its receiver at
//! the last node; each ACK crosses, for every link of the route taken backwards, the first
//! link entry from that link's far end to its near end.

use serde_json::Value;

use super::network::LinkSpec;
use super::queue::read_queue;
use super::reader::{error, show, Asked, Result, ScenarioError, Table};
use crate::units::{BufferLimit, Rate, Time};

/// Most nodes and links a graph may have: each link is a queue with its own monitor and time
/// series, and the builder keeps a route per flow.
pub const MAX_NODES: usize = 10_000;
pub const MAX_LINKS: usize = 10_000;
/// Most links on one route: a route holds at most 255 elements, and with random loss and a
/// shared bump each link can be three.
pub const MAX_ROUTE_LINKS: usize = 80;

/// Nodes and the directed links between them.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Graph {
    pub nodes: Vec<String>,
    pub links: Vec<GraphLink>,
}

/// One direction of a link: an output port of its `from` node.
#[derive(Clone, Debug, PartialEq)]
pub struct GraphLink {
    pub name: String,
    pub from: u32,
    pub to: u32,
    pub spec: LinkSpec,
    /// Probability that a packet arriving at it is lost before its queue (random loss).
    pub loss: f64,
    /// Whether it has a row in the `links` table (and a queue monitor). The shapes' ACK links
    /// have none: uncongested, they can neither drop nor queue anything worth reporting, and
    /// the simulator passes through them without events.
    pub monitored: bool,
}

/// The links a flow's packets cross, as indices of [`Graph::links`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Route {
    /// Its data, from its first node to its last.
    pub links: Vec<u32>,
    /// Its ACKs, in the order they cross them (from the last node back to the first); empty
    /// for a flow that sends none (UDP).
    pub back: Vec<u32>,
}

impl Graph {
    pub fn node(&self, name: &str) -> Option<u32> {
        self.nodes.iter().position(|n| n == name).map(|i| i as u32)
    }

    pub fn link_named(&self, name: &str) -> Option<u32> {
        self.links.iter().position(|l| l.name == name).map(|i| i as u32)
    }

    /// The first link entry from `from` to `to`.
    pub fn link_between(&self, from: u32, to: u32) -> Option<u32> {
        self.links.iter().position(|l| l.from == from && l.to == to).map(|i| i as u32)
    }

    /// Adds a node; returns its index.
    pub fn add_node(&mut self, name: String) -> u32 {
        self.nodes.push(name);
        (self.nodes.len() - 1) as u32
    }

    /// Adds a link; returns its index.
    pub fn add_link(&mut self, link: GraphLink) -> u32 {
        self.links.push(link);
        (self.links.len() - 1) as u32
    }

    /// The monitored links, in entry order: the rows of the `links` table.
    pub fn monitored(&self) -> Vec<u32> {
        (0..self.links.len() as u32).filter(|&l| self.links[l as usize].monitored).collect()
    }

    /// One-way propagation delay of `links`.
    pub fn delay(&self, links: &[u32]) -> Time {
        Time(links.iter().map(|&l| self.links[l as usize].spec.delay.0).sum())
    }

    /// The links of an explicit path through `nodes`, the first link entry between each
    /// consecutive pair; Err(i): no link from node i of the path to node i + 1.
    pub fn follow(&self, nodes: &[u32]) -> std::result::Result<Vec<u32>, usize> {
        nodes.windows(2).enumerate().map(|(i, w)| self.link_between(w[0], w[1]).ok_or(i)).collect()
    }

    /// The shortest route from `from` to `to`, None if `to` cannot be reached.
    ///
    /// Shortest means, in this order: the fewest links (the theorems count routers on a
    /// route); then the least propagation delay; then the first in the order of the link
    /// entries, comparing the two routes' link entry numbers from the start. The order is
    /// total, so the route is unique, and it is the same whatever the node names.
    pub fn shortest(&self, from: u32, to: u32) -> Option<Vec<u32>> {
        use std::cmp::Reverse;
        use std::collections::BinaryHeap;
        // Dijkstra over the cost (links, delay, entry numbers): extending a route by a link
        // raises its cost, and two routes to a node keep their order when both are extended
        // by the same link, so the best route to a node extends the best route to the node
        // before it.
        let mut settled = vec![false; self.nodes.len()];
        let mut heap = BinaryHeap::new();
        heap.push(Reverse((0usize, 0u64, Vec::<u32>::new(), from)));
        while let Some(Reverse((hops, delay, path, node))) = heap.pop() {
            if std::mem::replace(&mut settled[node as usize], true) {
                continue;
            }
            if node == to {
                return Some(path);
            }
            for (i, l) in self.links.iter().enumerate() {
                if l.from == node && !settled[l.to as usize] {
                    let mut longer = path.clone();
                    longer.push(i as u32);
                    heap.push(Reverse((hops + 1, delay + l.spec.delay.0, longer, l.to)));
                }
            }
        }
        None
    }

    /// The links ACKs of data crossing `links` come back by: for each data link, last first,
    /// the first link entry from its far end to its near end. Err(l): data link `l` has none.
    pub fn way_back(&self, links: &[u32]) -> std::result::Result<Vec<u32>, u32> {
        links
            .iter()
            .rev()
            .map(|&l| {
                let d = &self.links[l as usize];
                self.link_between(d.to, d.from).ok_or(l)
            })
            .collect()
    }

    /// The nodes a route visits, as text: "a → b → c".
    pub fn describe(&self, links: &[u32]) -> String {
        let Some(&first) = links.first() else { return String::new() };
        let mut names = vec![self.nodes[self.links[first as usize].from as usize].as_str()];
        names.extend(links.iter().map(|&l| self.nodes[self.links[l as usize].to as usize].as_str()));
        names.join(" → ")
    }
}

/// What a `[[network.link]]` entry takes when it does not say: `network.bottleneck`'s keys (its
/// rate only if given: on a network the table and its rate are optional).
pub(super) struct LinkDefaults {
    pub rate: Option<Rate>,
    pub buffer: BufferLimit,
    pub delay: Time,
    pub queue: super::queue::QueueSpec,
}

/// Reads `[[network.node]]` and `[[network.link]]` of `topology = "network"`; each link's keys
/// default to `defaults`.
pub(super) fn read_graph(net: &mut Table, defaults: &LinkDefaults, asked: &mut Asked) -> Result<Graph> {
    let mut graph = Graph::default();
    let node_path = net.key_path("node");
    let nodes = match net.raw("node") {
        Some(Value::Array(items)) if !items.is_empty() => items,
        None => return Err(net.missing("node", "the network's nodes, [[network.node]] entries or names")),
        Some(other) => {
            return Err(error(&node_path, other, "an array of nodes: { name = \"r1\" } tables or names"))
        }
    };
    if nodes.len() > MAX_NODES {
        return Err(error(&node_path, &Value::from(nodes.len()), &format!("at most {MAX_NODES} nodes")));
    }
    for (i, item) in nodes.iter().enumerate() {
        let path = format!("{node_path}.{i}");
        let name = match item {
            Value::String(s) => s.clone(),
            Value::Object(map) => {
                let mut t = Table::entry(path.clone(), "network.node", None, map);
                let name = t.string("name")?;
                t.finish(asked)?;
                name
            }
            other => return Err(error(&path, other, "a node: a name, or a table such as { name = \"r1\" }")),
        };
        if name.is_empty() || graph.node(&name).is_some() {
            let path = if matches!(item, Value::Object(_)) { format!("{path}.name") } else { path };
            return Err(error(&path, &Value::from(name), "a non-empty name no other node has"));
        }
        graph.add_node(name);
    }
    let link_path = net.key_path("link");
    let links = match net.raw("link") {
        Some(Value::Array(items)) if !items.is_empty() => items,
        None => return Err(net.missing("link", "the network's links, [[network.link]] entries")),
        Some(other) => return Err(error(&link_path, other, "an array of tables ([[network.link]] entries)")),
    };
    for (i, item) in links.iter().enumerate() {
        let path = format!("{link_path}.{i}");
        let Value::Object(map) = item else {
            return Err(error(
                &path,
                item,
                "a table such as { from = \"r1\", to = \"r2\", rate = \"100Mbps\" }",
            ));
        };
        let mut t = Table::entry(path, "network.link", None, map);
        read_link(&mut t, &mut graph, defaults)?;
        t.finish(asked)?;
        if graph.links.len() > MAX_LINKS {
            let got = Value::from(graph.links.len());
            return Err(error(
                &link_path,
                &got,
                &format!("at most {MAX_LINKS} links (a duplex entry is two)"),
            ));
        }
    }
    Ok(graph)
}

/// One `[[network.link]]` entry: one direction, or both with `duplex`.
fn read_link(t: &mut Table, graph: &mut Graph, defaults: &LinkDefaults) -> Result<()> {
    let end = |t: &mut Table, key: &'static str| -> Result<u32> {
        let v = t.value(key)?;
        let name = v.as_str().ok_or_else(|| error(&t.key_path(key), &v, "a node's name"))?;
        graph.node(name).ok_or_else(|| {
            let known = graph.nodes.iter().take(8).map(|n| format!("{n:?}")).collect::<Vec<_>>().join(", ");
            let more = if graph.nodes.len() > 8 { ", …" } else { "" };
            error(&t.key_path(key), &v, &format!("a node of network.node ({known}{more})"))
        })
    };
    let (from, to) = (end(t, "from")?, end(t, "to")?);
    if from == to {
        let got = t.value("to")?;
        return Err(error(&t.key_path("to"), &got, "a node other than `from` (a link joins two nodes)"));
    }
    let default_name = || format!("{}->{}", graph.nodes[from as usize], graph.nodes[to as usize]);
    let name = if t.given("name") { t.string("name")? } else { default_name() };
    let rate = match (t.given("rate"), defaults.rate) {
        (true, _) => t.rate("rate")?,
        (false, Some(rate)) => rate,
        (false, None) => {
            let expected = "a rate such as \"100Mbps\" (or network.bottleneck.rate, every link's default)";
            return Err(t.missing("rate", expected));
        }
    };
    let buffer = if t.given("buffer") { t.buffer("buffer")? } else { defaults.buffer };
    let delay = if t.given("delay") { t.time("delay")? } else { defaults.delay };
    let queue = read_queue(t, Some(&defaults.queue), buffer)?;
    let loss = t.fraction("loss")?;
    let monitored = t.boolean("monitor")?;
    let duplex = t.boolean("duplex")?;
    let spec = LinkSpec { rate, buffer, delay, queue };
    let back = if t.present("name") {
        format!("{name} back")
    } else {
        format!("{}->{}", graph.nodes[to as usize], graph.nodes[from as usize])
    };
    let mut add = |name: String, from: u32, to: u32| -> Result<()> {
        if graph.link_named(&name).is_some() {
            return Err(error(&t.key_path("name"), &Value::from(name), "a name no other link has"));
        }
        graph.add_link(GraphLink { name, from, to, spec: spec.clone(), loss, monitored });
        Ok(())
    };
    add(name, from, to)?;
    if duplex {
        add(back, to, from)?;
    }
    Ok(())
}

/// `network.summary_link` of the graph topologies: a monitored link's name, by default the
/// first; returns its row in the links table (from 0).
pub(super) fn read_summary_link(net: &mut Table, graph: &Graph) -> Result<usize> {
    let monitored = graph.monitored();
    if !net.given("summary_link") {
        if monitored.is_empty() {
            let message = "no link is monitored; expected at least one link with monitor = true".to_string();
            return Err(ScenarioError { key: net.key_path("link"), message });
        }
        return Ok(0);
    }
    let v = net.value("summary_link")?;
    let row =
        v.as_str().and_then(|name| monitored.iter().position(|&l| graph.links[l as usize].name == name));
    row.ok_or_else(|| {
        let names: Vec<String> =
            monitored.iter().take(6).map(|&l| format!("{:?}", graph.links[l as usize].name)).collect();
        let more = if monitored.len() > 6 { ", …" } else { "" };
        error(
            &net.key_path("summary_link"),
            &v,
            &format!("the name of a monitored link ({}{more})", names.join(", ")),
        )
    })
}

/// Where a traffic entry's flows go on a graph topology: the nodes of an explicit `route`, or
/// the shortest route from `from` to `to`. Returns its links; None when the entry gives
/// neither (the caller applies the shape's default).
pub(super) fn read_route(t: &mut Table, graph: &Graph) -> Result<Option<Vec<u32>>> {
    let node = |t: &Table, key: &str, v: &Value| -> Result<u32> {
        v.as_str()
            .and_then(|s| graph.node(s))
            .ok_or_else(|| error(&t.key_path(key), v, "the name of a node of the network"))
    };
    match (t.raw("route"), t.raw("from"), t.raw("to")) {
        (None, None, None) => Ok(None),
        (Some(r), None, None) => {
            let key = t.key_path("route");
            let items = r.as_array().filter(|a| a.len() >= 2).ok_or_else(|| {
                error(&key, r, "an array of at least two node names, such as [\"r1\", \"r2\", \"r3\"]")
            })?;
            let mut nodes = Vec::with_capacity(items.len());
            for (i, item) in items.iter().enumerate() {
                let n = item
                    .as_str()
                    .and_then(|s| graph.node(s))
                    .ok_or_else(|| error(&format!("{key}.{i}"), item, "the name of a node of the network"))?;
                if let Some(j) = nodes.iter().position(|&m| m == n) {
                    return Err(ScenarioError {
                        key,
                        message: format!(
                            "got a cycle: node {} comes twice (positions {j} and {i}); expected a path that visits each node once",
                            show(item)
                        ),
                    });
                }
                nodes.push(n);
            }
            let links = graph.follow(&nodes).map_err(|i| ScenarioError {
                key: key.clone(),
                message: format!(
                    "got no link from {:?} to {:?} (positions {i} and {}); expected consecutive nodes joined by a [[network.link]]",
                    graph.nodes[nodes[i] as usize],
                    graph.nodes[nodes[i + 1] as usize],
                    i + 1
                ),
            })?;
            check_length(&key, r, &links)?;
            Ok(Some(links))
        }
        (None, Some(f), Some(to)) => {
            let (a, b) = (node(t, "from", f)?, node(t, "to", to)?);
            if a == b {
                return Err(error(&t.key_path("to"), to, "a node other than `from`"));
            }
            let links = graph.shortest(a, b).ok_or_else(|| ScenarioError {
                key: t.key_path("to"),
                message: format!(
                    "got {}; expected a node reachable from {} (no route joins them: the flow would be disconnected)",
                    show(to),
                    show(f)
                ),
            })?;
            check_length(&t.key_path("to"), to, &links)?;
            Ok(Some(links))
        }
        (Some(r), _, _) => Err(error(&t.key_path("route"), r, "either `route` or `from` and `to`, not both")),
        (None, Some(f), None) => {
            Err(error(&t.key_path("from"), f, "`from` with `to` (the node its flows leave by)"))
        }
        (None, None, Some(to)) => {
            Err(error(&t.key_path("to"), to, "`to` with `from` (the node its flows enter at)"))
        }
    }
}

fn check_length(key: &str, got: &Value, links: &[u32]) -> Result<()> {
    if links.len() > MAX_ROUTE_LINKS {
        let expected = format!("a route of at most {MAX_ROUTE_LINKS} links (this one has {})", links.len());
        return Err(error(key, got, &expected));
    }
    Ok(())
}

/// The ACK links of data route `links`, for a TCP entry at `key`: an error names the first
/// data link with no link back.
pub(super) fn acks_back(graph: &Graph, key: &str, links: &[u32]) -> Result<Vec<u32>> {
    graph.way_back(links).map_err(|l| {
        let d = &graph.links[l as usize];
        ScenarioError {
            key: key.to_string(),
            message: format!(
                "got route {}, with no link back from {:?} to {:?} for its ACKs; expected a [[network.link]] from {:?} to {:?} (or `duplex = true` on link {:?})",
                graph.describe(links),
                graph.nodes[d.to as usize],
                graph.nodes[d.from as usize],
                graph.nodes[d.to as usize],
                graph.nodes[d.from as usize],
                d.name
            ),
        }
    })
}

/// One row of a load matrix: its route's links and its weight.
pub(super) type MatrixRow = (Vec<u32>, f64);

/// Reads a traffic entry's `matrix` (UDP on a graph topology): rows of
/// [from, to, weight] or { from, to, weight }, each one source on the shortest route; returns
/// (route links, weight) per row.
pub(super) fn read_matrix(t: &mut Table, graph: &Graph) -> Result<Option<Vec<MatrixRow>>> {
    let key = t.key_path("matrix");
    let Some(v) = t.raw("matrix") else { return Ok(None) };
    let expected = "an array of rows [from, to, weight] (or { from, to, weight } tables), one source each";
    let rows = v.as_array().filter(|a| !a.is_empty()).ok_or_else(|| error(&key, v, expected))?;
    if rows.len() as u64 > super::MAX_FLOWS {
        return Err(error(&key, v, &format!("at most {} rows", super::MAX_FLOWS)));
    }
    let mut out = Vec::with_capacity(rows.len());
    for (i, row) in rows.iter().enumerate() {
        let path = format!("{key}.{i}");
        let (f, to, w) = match row {
            Value::Array(a) if a.len() == 3 => (&a[0], &a[1], &a[2]),
            Value::Array(a) if a.len() == 2 => (&a[0], &a[1], &Value::Null),
            Value::Object(m) => match (m.get("from"), m.get("to"), m.get("weight")) {
                (Some(f), Some(to), w)
                    if m.keys().all(|k| ["from", "to", "weight"].contains(&k.as_str())) =>
                {
                    (f, to, w.unwrap_or(&Value::Null))
                }
                _ => return Err(error(&path, row, expected)),
            },
            _ => return Err(error(&path, row, expected)),
        };
        let w = if w.is_null() {
            1.0
        } else {
            w.as_f64()
                .filter(|x| x.is_finite() && *x > 0.0)
                .ok_or_else(|| error(&path, w, "a positive weight"))?
        };
        let node = |v: &Value| {
            v.as_str()
                .and_then(|s| graph.node(s))
                .ok_or_else(|| error(&path, v, "the name of a node of the network"))
        };
        let (a, b) = (node(f)?, node(to)?);
        if a == b {
            return Err(error(&path, to, "a node other than the row's `from`"));
        }
        let links = graph.shortest(a, b).ok_or_else(|| ScenarioError {
            key: path.clone(),
            message: format!(
                "got {} to {}; expected nodes a route joins (the flow would be disconnected)",
                show(f),
                show(to)
            ),
        })?;
        check_length(&path, row, &links)?;
        out.push((links, w));
    }
    Ok(Some(out))
}

#[cfg(test)]
mod tests {
    use serde_json::{json, Value};

    use crate::scenario::Scenario;

    /// Four nodes: a and b joined both ways, b to c and back, d to a only.
    fn network() -> Value {
        json!({
            "network": {
                "topology": "network", "rtt": "50ms", "bottleneck": { "rate": "10Mbps" },
                "node": ["a", "b", "c", "d"],
                "link": [
                    { "from": "a", "to": "b", "duplex": true },
                    { "from": "b", "to": "c" },
                    { "from": "c", "to": "b" },
                    { "from": "d", "to": "a" },
                ],
            },
            "traffic": [ { "kind": "long_lived", "from": "a", "to": "c" } ],
        })
    }

    fn err(v: Value) -> String {
        Scenario::from_value(&v).unwrap_err().to_string()
    }

    #[test]
    fn a_route_follows_links_and_acks_come_back_the_other_way() {
        let s = Scenario::from_value(&network()).unwrap();
        let g = &s.network.graph;
        let names: Vec<&str> = g.links.iter().map(|l| l.name.as_str()).collect();
        assert_eq!(names, ["a->b", "b->a", "b->c", "c->b", "d->a"], "a duplex entry is two links");
        let route = &s.placements[0].routes[0];
        assert_eq!((g.describe(&route.links), route.back.clone()), ("a → b → c".to_string(), vec![3, 1]));
        assert_eq!(s.network.hops.len(), 5, "every link is monitored");
    }

    #[test]
    fn the_shortest_route_takes_the_fewest_links_then_the_least_delay_then_the_first_entries() {
        // a → d directly (one link, 9 ms) beats a → b → d and a → c → d (two links, 2 ms).
        let mut v = network();
        v["network"]["node"] = json!(["a", "b", "c", "d"]);
        v["network"]["link"] = json!([
            { "from": "a", "to": "c", "delay": "1ms" }, { "from": "c", "to": "d", "delay": "1ms" },
            { "from": "a", "to": "b", "delay": "1ms" }, { "from": "b", "to": "d", "delay": "1ms" },
            { "from": "a", "to": "d", "delay": "9ms" },
        ]);
        v["traffic"] = json!([{ "kind": "udp_cbr", "rate": "1Mbps", "from": "a", "to": "d" }]);
        let route = |v: &Value| {
            let s = Scenario::from_value(v).unwrap();
            s.network.graph.describe(&s.placements[0].routes[0].links)
        };
        assert_eq!(route(&v), "a → d");
        // Without it, two routes of two links and 2 ms tie: the first link entries win (a→c
        // is entry 0, a→b entry 2), whatever the nodes are called.
        v["network"]["link"].as_array_mut().unwrap().pop();
        assert_eq!(route(&v), "a → c → d");
        // One more microsecond on c → d, and the route through b is the shorter.
        v["network"]["link"][1]["delay"] = json!("1001us");
        assert_eq!(route(&v), "a → b → d");
    }

    #[test]
    fn bad_graphs_and_routes_name_key_value_and_expectation() {
        let edit = |f: &dyn Fn(&mut Value)| {
            let mut v = network();
            f(&mut v);
            err(v)
        };
        assert_eq!(
            edit(&|v| v["network"]["link"].as_array_mut().unwrap().push(json!({ "from": "a", "to": "x" }))),
            "network.link.4.to: got \"x\"; expected a node of network.node (\"a\", \"b\", \"c\", \"d\")"
        );
        assert_eq!(
            edit(&|v| v["traffic"][0]["to"] = json!("d")),
            "traffic.0.to: got \"d\"; expected a node reachable from \"a\" (no route joins them: the flow would be disconnected)"
        );
        let route = |nodes: Value| {
            move |v: &mut Value| v["traffic"][0] = json!({ "kind": "long_lived", "route": nodes.clone() })
        };
        assert_eq!(
            edit(&route(json!(["a", "b", "a"]))),
            "traffic.0.route: got a cycle: node \"a\" comes twice (positions 0 and 2); expected a path that visits each node once"
        );
        assert_eq!(
            edit(&route(json!(["a", "c"]))),
            "traffic.0.route: got no link from \"a\" to \"c\" (positions 0 and 1); expected consecutive nodes joined by a [[network.link]]"
        );
        // TCP needs a way back for its ACKs; UDP does not.
        assert_eq!(
            edit(&|v| {
                v["network"]["link"].as_array_mut().unwrap().remove(2);
            }),
            "traffic.0.to: got route a → b → c, with no link back from \"c\" to \"b\" for its ACKs; expected a \
             [[network.link]] from \"c\" to \"b\" (or `duplex = true` on link \"b->c\")"
        );
        assert_eq!(
            edit(&|v| v["network"]["summary_link"] = json!("zz")),
            "network.summary_link: got \"zz\"; expected the name of a monitored link (\"a->b\", \"b->a\", \"b->c\", \"c->b\", \"d->a\")"
        );
        assert_eq!(
            edit(&|v| v["network"]["link"].as_array_mut().unwrap().push(json!({ "from": "a", "to": "b" }))),
            "network.link.4.name: got \"a->b\"; expected a name no other link has"
        );
        assert_eq!(
            edit(&|v| v["network"]["node"] = json!(["a", "a"])),
            "network.node.1: got \"a\"; expected a non-empty name no other node has"
        );
        assert_eq!(
            edit(&|v| {
                v["traffic"][0].as_object_mut().unwrap().remove("from");
            }),
            "traffic.0.to: got \"c\"; expected `to` with `from` (the node its flows enter at)"
        );
        assert_eq!(
            edit(&|v| v["traffic"][0] = json!({ "kind": "long_lived" })),
            "traffic.0.route: missing; expected `route`, or `from` and `to`: where the flows go on a network"
        );
        assert_eq!(
            edit(&|v| v["traffic"][0]["matrix"] = json!([["a", "c", 1]])),
            "traffic.0.matrix: got an array; expected no matrix on a long_lived entry (a matrix gives UDP sources; \
             TCP flows take `route`, or `from` and `to`)"
        );
        assert_eq!(
            edit(&|v| {
                v["network"].as_object_mut().unwrap().remove("bottleneck");
            }),
            "network.link.0.rate: missing; expected a rate such as \"100Mbps\" (or network.bottleneck.rate, every link's default)"
        );
        assert_eq!(
            edit(&|v| v["network"]["hops"] = json!(3)),
            "network.hops: got 3; expected no `hops` on the network: it is a parking lot key"
        );
    }

    #[test]
    fn a_load_sets_the_rates_that_give_the_most_loaded_link_that_load() {
        // Rows a→c (weight 2) and b→c (weight 1) share b→c at 10 Mb/s, the most loaded link:
        // 3 units there make ρ = 0.6, so one unit is 2 Mb/s.
        let mut v = network();
        v["traffic"] = json!([{ "kind": "udp_poisson", "matrix": [["a", "c", 2], ["b", "c"]], "load": 0.6 }]);
        let s = Scenario::from_value(&v).unwrap();
        let crate::scenario::Traffic::Udp(u) = &s.traffic[0] else { panic!("a UDP entry") };
        assert_eq!((u.flows, u.rate(0).bits_per_s(), u.rate(1).bits_per_s()), (2, 4_000_000, 2_000_000));
        assert!(s.placements[0].routes.iter().all(|r| r.back.is_empty()), "UDP has no ACKs");
        // `flows` sources sharing one route share its load alike.
        v["traffic"] = json!([{ "kind": "udp_poisson", "flows": 4, "from": "a", "to": "b", "load": 0.8 }]);
        let s = Scenario::from_value(&v).unwrap();
        let crate::scenario::Traffic::Udp(u) = &s.traffic[0] else { panic!("a UDP entry") };
        assert_eq!(u.rate(3).bits_per_s(), 2_000_000);
        assert_eq!(
            err(json!({ "network": { "topology": "switch", "switch": { "rate": "1Gbps" } },
                        "traffic": [{ "kind": "udp_poisson", "load": 0.5 }] })),
            "traffic.0.load: got 0.5; expected `rate` on the switch (a load needs the links the sources cross)"
        );
    }
}
