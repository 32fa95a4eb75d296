//! Source routes: the hops a flow's packets cross, computed once when the network is built.
//!
//! Read first: [`super`]. This file owns the storage of routes (flattened, a packet names its
//! route and the index of its hop); how each hop is handled is `plan.rs`'s business.

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
    start: Vec<u32>,
    len: Vec<u8>,
}

impl Routes {
    /// Adds a route of 1 to 255 hops that ends on a link; returns its id.
    pub fn add(&mut self, hops: &[Hop]) -> u32 {
        assert!(!hops.is_empty() && hops.len() < 256, "a route has 1 to 255 hops");
        assert!(matches!(hops.last(), Some(Hop::Link(_))), "a route ends with a link");
        let id = self.start.len() as u32;
        self.start.push(self.hops.len() as u32);
        self.len.push(hops.len() as u8);
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
        (self.start[route as usize] + hop as u32) as usize
    }

    #[inline]
    pub fn len(&self, route: u32) -> u8 {
        self.len[route as usize]
    }

    /// How many routes there are.
    pub fn count(&self) -> usize {
        self.start.len()
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
        assert_eq!((a, b, r.count()), (0, 1, 2));
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
