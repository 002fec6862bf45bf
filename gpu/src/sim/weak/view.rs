//! Views: for each location, the oldest write a thread may still read.

/// A memory location of the weak machine: an address, or a litmus test's location index.
pub type Loc = u64;

/// A write's position in its location's coherence order (larger is later). Stamps leave gaps,
/// so a store may be placed between two earlier ones, as the model allows.
pub type Stamp = u64;

/// For each location, a stamp: the oldest write its owner may read there, or — in a message —
/// the writes a reader that synchronizes with it must not read before.
///
/// A location missing from the view is at stamp 0, its initial write. Views are joined (the
/// larger stamp per location wins): that is how synchronization moves knowledge between threads.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct View {
    /// Sorted by location; tests have a handful, kernels a few dozen.
    stamps: Vec<(Loc, Stamp)>,
}

impl View {
    /// The empty view: every location at its initial write.
    pub const fn new() -> View {
        View { stamps: Vec::new() }
    }

    /// The stamp of `loc` (0 if the view does not name it).
    pub fn get(&self, loc: Loc) -> Stamp {
        match self.stamps.binary_search_by_key(&loc, |&(l, _)| l) {
            Ok(i) => self.stamps[i].1,
            Err(_) => 0,
        }
    }

    /// Raises `loc` to at least `stamp`.
    pub fn raise(&mut self, loc: Loc, stamp: Stamp) {
        match self.stamps.binary_search_by_key(&loc, |&(l, _)| l) {
            Ok(i) => self.stamps[i].1 = self.stamps[i].1.max(stamp),
            Err(i) => self.stamps.insert(i, (loc, stamp)),
        }
    }

    /// Raises every location to at least its stamp in `other`.
    pub fn join(&mut self, other: &View) {
        for &(loc, stamp) in &other.stamps {
            self.raise(loc, stamp);
        }
    }

    /// This view joined with `{loc: stamp}`.
    pub fn with(&self, loc: Loc, stamp: Stamp) -> View {
        let mut v = self.clone();
        v.raise(loc, stamp);
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn join_keeps_the_later_stamp_of_each_location() {
        let mut a = View::new();
        a.raise(3, 10);
        a.raise(1, 5);
        let mut b = View::new();
        b.raise(1, 7);
        b.raise(2, 1);
        b.raise(3, 4);
        a.join(&b);
        assert_eq!((a.get(1), a.get(2), a.get(3), a.get(9)), (7, 1, 10, 0));
        a.raise(1, 2);
        assert_eq!(a.get(1), 7, "raise never lowers");
    }
}
