//! Source routes: the hops a flow's packets cross, computed once when the network is built.
//!
//! Read first: [`super`]. This file owns the storage of routes (flattened, a packet names its
//! route and the index of its hop); how each hop is handled is `plan.rs`'s business.
//!
//! A route's id is the position of its first hop in the flat table, so that the position of
//! hop h is the id plus h with no lookup: every hop a packet takes reads the plan's step at
//! that position, and on a large network (a 32-port switch, 31,000 routes) a table of route
//! starts read first was one more cache miss in that chain.

/// One element of a route.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hop {
    Link(u32),
    Loss(u32),
    /// A router node's (input, output) pair; see [`super::Sim::switch_hop`].
    Switch(u32),
    /// The reverse side of the bump on link `l`: a packet going back through it (an ACK) is
    /// shown to it and passes on at once (see [`crate::link::Link::on_reverse`]).
    Tap(u32),
}

/// Source routes, flattened.
#[derive(Default)]
pub(super) struct Routes {
    hops: Vec<Hop>,
    /// Per position in `hops`: the length of the route that starts there (0 inside a route).
    len_at: Vec<u8>,
    /// The routes' ids (their first positions), in the order they were added.
    ids: Vec<u32>,
}

impl Routes {
    /// Adds a route of 1 to 255 hops that ends on a link; returns its id (the position of its
    /// first hop).
    pub fn add(&mut self, hops: &[Hop]) -> u32 {
        assert!(!hops.is_empty() && hops.len() < 256, "a route has 1 to 255 hops");
        assert!(matches!(hops.last(), Some(Hop::Link(_))), "a route ends with a link");
        let id = u32::try_from(self.hops.len()).expect("fewer than 2^32 route hops in all");
        self.ids.push(id);
        self.len_at.push(hops.len() as u8);
        self.len_at.resize(self.len_at.len() + hops.len() - 1, 0);
        self.hops.extend_from_slice(hops);
        id
    }

    #[inline]
    pub fn hop(&self, route: u32, hop: u8) -> Hop {
        self.hops[self.index(route, hop)]
    }

    /// The position of hop `hop` of `route` among all hops (the plan keeps one step each).
    #[inline]
    pub fn index(&self, route: u32, hop: u8) -> usize {
        route as usize + hop as usize
    }

    #[inline]
    pub fn len(&self, route: u32) -> u8 {
        self.len_at[route as usize]
    }

    /// How many routes there are.
    pub fn count(&self) -> usize {
        self.ids.len()
    }

    /// The ids of the routes added from the `first`-th on, in order.
    pub fn ids_from(&self, first: usize) -> &[u32] {
        &self.ids[first..]
    }

    /// One above every route id: the size of a table indexed by route id.
    pub fn id_bound(&self) -> usize {
        self.hops.len()
    }

    /// Whether `route` crosses link `link` anywhere.
    pub fn uses(&self, route: u32, link: u32) -> bool {
        (0..self.len(route)).any(|h| self.hop(route, h) == Hop::Link(link))
    }

    /// Whether link `link` is the last hop of `route`.
    pub fn ends_on(&self, route: u32, link: u32) -> bool {
        self.hop(route, self.len(route) - 1) == Hop::Link(link)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes_are_stored_flat_and_read_back_hop_by_hop() {
        let mut r = Routes::default();
        let a = r.add(&[Hop::Link(3), Hop::Loss(0), Hop::Link(7)]);
        let b = r.add(&[Hop::Switch(2), Hop::Link(9)]);
        assert_eq!((a, b, r.count(), r.id_bound()), (0, 3, 2, 5), "an id is its first hop's position");
        assert_eq!(r.ids_from(1), &[3]);
        assert_eq!((r.len(a), r.len(b)), (3, 2));
        assert_eq!(r.hop(a, 1), Hop::Loss(0));
        assert_eq!(r.hop(b, 0), Hop::Switch(2));
        assert_eq!(r.index(b, 1), 4, "hops of all routes in one array");
        assert!(r.uses(a, 3) && r.uses(a, 7) && !r.uses(a, 9));
        assert!(r.ends_on(a, 7) && !r.ends_on(a, 3) && r.ends_on(b, 9));
    }

    #[test]
    #[should_panic(expected = "a route ends with a link")]
    fn a_route_must_end_on_a_link() {
        Routes::default().add(&[Hop::Link(1), Hop::Loss(0)]);
    }
}
