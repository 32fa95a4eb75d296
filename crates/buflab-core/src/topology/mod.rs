//! Topology builders: scenario → links, routes and flows in a [`crate::sim::Sim`].

pub mod dumbbell;
