//! The names a scenario gives the variants of a field-less enum, kept beside the enum.
//!
//! Read first: nothing; this is a leaf. Owns the [`Named`] trait and the `names!` macro that
//! implements it, so that every such enum (`Recovery`, `CcKind`, `Pacing`, `Topology`, a
//! virtual queue's `Action`, …)
//! carries its names the same way: `ALL` and `NAMES` in one order (the order the scenario
//! reader lists them in its errors), `name()` and `from_name()`. The reader asks for one with
//! the scenario reader's `Table::named`; whoever needs a name back (a result table) calls
//! `name()`. Must not know any scenario, key or enum.

/// A field-less enum a scenario names; implemented by `names!`.
pub trait Named: Copy + 'static {
    /// The names a scenario may give, in the order errors list them.
    const NAMES: &'static [&'static str];
    /// The variant of one of [`Named::NAMES`].
    fn from_name(name: &str) -> Option<Self>;
}

/// Gives a field-less enum its names:
/// `names!(Recovery { NewReno = "newreno", Reno = "reno", Sack = "sack" });`
/// defines `Recovery::ALL`, `Recovery::NAMES` (both in this order), `Recovery::name()`,
/// `Recovery::from_name()` and [`Named`]. Variants after a `;` have a name but are not a
/// scenario's choice (the engine sets them itself): `name()` knows them, `NAMES`, `ALL` and
/// `from_name()` do not.
#[macro_export]
macro_rules! names {
    ($ty:ident { $($v:ident = $n:literal),+ $(,)? $(; $($iv:ident = $in:literal),+ $(,)?)? }) => {
        impl $ty {
            /// Every variant a scenario can name, in the order of `NAMES`.
            pub const ALL: &'static [$ty] = &[$($ty::$v),+];
            /// The scenario's names, in the order its errors list them.
            pub const NAMES: &'static [&'static str] = &[$($n),+];

            /// The name a scenario gives this variant.
            pub fn name(self) -> &'static str {
                match self {
                    $($ty::$v => $n,)+
                    $($($ty::$iv => $in,)+)?
                }
            }

            /// The variant of a scenario name, if it is one of `NAMES`.
            pub fn from_name(name: &str) -> Option<$ty> {
                match name {
                    $($n => Some($ty::$v),)+
                    _ => None,
                }
            }
        }

        impl $crate::names::Named for $ty {
            const NAMES: &'static [&'static str] = $ty::NAMES;
            fn from_name(name: &str) -> Option<$ty> {
                $ty::from_name(name)
            }
        }
    };
}

// The macro is exported at the crate's root; this puts it beside the trait as well, where
// its users name it (`names::names!`).
pub use crate::names;

#[cfg(test)]
mod tests {
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    enum Pick {
        A,
        B,
        Engine,
    }

    names!(Pick { B = "b", A = "a"; Engine = "engine" });

    #[test]
    fn names_round_trip_in_their_listed_order() {
        assert_eq!(Pick::NAMES, ["b", "a"]);
        assert_eq!(Pick::ALL, [Pick::B, Pick::A]);
        for (&v, &n) in Pick::ALL.iter().zip(Pick::NAMES) {
            assert_eq!((v.name(), Pick::from_name(n)), (n, Some(v)));
        }
        // A variant the engine sets has a name but is no scenario's choice.
        assert_eq!((Pick::Engine.name(), Pick::from_name("engine")), ("engine", None));
    }
}
