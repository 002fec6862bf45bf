//! The book's O(N²) kernels on a target, and the padded lists they write.

use super::atoms::{DeviceAtoms, per_item};
use super::precision::Precision;
use crate::neighbor::list::NeighborList;
use crate::neighbor::reference::check_entry_count;
use crate::runtime::buffer::Buffer;
use crate::runtime::error::{Error, Result};
use crate::runtime::launch::Target;
use crate::runtime::memory::{Footprint, check_fits};
use gpu::LaunchConfig;
use gpu::lessons::neighbor::{Layout, Rule};
use serde::Serialize;

/// The book's kernels.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BookKernel {
    /// `find_neighbor_atomic`: half the pairs, `atomicAdd`'s result as the slot.
    Atomic,
    /// `find_neighbor_no_atomic`: all pairs, a register count, the transposed layout.
    NoAtomic,
    /// The mistake: the slot read before the `atomicAdd` (`f32` only).
    Wrong,
}

impl BookKernel {
    /// Every kernel, the mistake last.
    pub const ALL: [BookKernel; 3] = [BookKernel::Atomic, BookKernel::NoAtomic, BookKernel::Wrong];

    /// The kernel's name in the device crate, without the precision.
    pub fn name(self) -> &'static str {
        match self {
            BookKernel::Atomic => "find_neighbor_atomic",
            BookKernel::NoAtomic => "find_neighbor_no_atomic",
            BookKernel::Wrong => "find_neighbor_wrong",
        }
    }

    /// The layout the kernel writes (the book's choice for each).
    pub fn layout(self) -> Layout {
        match self {
            BookKernel::NoAtomic => Layout::Transposed,
            _ => Layout::PerAtom,
        }
    }
}

/// What a padded kernel left: every atom's true count and its first `mn` slots.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Padded {
    /// `NN[n]`: atom `n`'s true count (it may exceed `mn`).
    pub nn: Vec<u32>,
    /// `NL`: `atoms * mn` slots in `layout`; slots no kernel wrote hold [`UNWRITTEN`].
    pub nl: Vec<u32>,
    /// Slots per atom.
    pub mn: usize,
    /// Where neighbor `k` of atom `n` is.
    pub layout: Layout,
}

/// What a slot holds before any kernel writes it: no atom has this index.
pub const UNWRITTEN: u32 = u32::MAX;

impl Padded {
    /// The slots of atom `n` that its count says were written (at most `mn`).
    pub fn slots(&self, n: usize) -> impl Iterator<Item = u32> + '_ {
        let atoms = self.nn.len();
        let k = (self.nn[n] as usize).min(self.mn);
        (0..k).map(move |k| {
            self.nl[gpu::lessons::neighbor::slot(self.layout as u32, n, k, atoms, self.mn)]
        })
    }

    /// The first atom with the most neighbors, if that is more than `mn`.
    pub fn overflow(&self) -> Option<(usize, u32)> {
        let (atom, &count) = self
            .nn
            .iter()
            .enumerate()
            .max_by_key(|&(i, &c)| (c, std::cmp::Reverse(i)))?;
        (count as usize > self.mn).then_some((atom, count))
    }

    /// The lists, each sorted.
    ///
    /// # Errors
    /// [`Error::TooManyNeighbors`] if an atom has more than `mn` neighbors;
    /// [`Error::Mismatch`] if a counted slot was never written or names no atom (what the
    /// book's mistake leaves).
    pub fn to_list(&self) -> Result<NeighborList> {
        if let Some((atom, count)) = self.overflow() {
            return Err(Error::TooManyNeighbors {
                atom,
                count,
                max_neighbors: self.mn,
            });
        }
        let atoms = self.nn.len();
        // The offsets are u32: refuse a list they cannot index before building it.
        let total: u64 = self
            .nn
            .iter()
            .map(|&c| (c as usize).min(self.mn) as u64)
            .sum();
        check_entry_count(total)?;
        let mut offsets = Vec::with_capacity(atoms + 1);
        let mut indices = Vec::with_capacity(total as usize);
        offsets.push(0u32);
        for n in 0..atoms {
            for j in self.slots(n) {
                if j as usize >= atoms {
                    return Err(Error::Mismatch(format!(
                        "atom {n}: a counted slot holds {}",
                        if j == UNWRITTEN {
                            "nothing (never written)".to_string()
                        } else {
                            format!("{j}, not an atom")
                        }
                    )));
                }
                indices.push(j);
            }
            offsets.push(indices.len() as u32);
        }
        let mut list = NeighborList::from_parts(offsets, indices)?;
        list.sort_each();
        Ok(list)
    }
}

/// One of the book's kernels over the atoms on a target, with its `NN` and `NL` allocated once,
/// ready to run any number of times.
pub struct BookRun<'a, T: Precision> {
    target: &'a Target,
    atoms: &'a DeviceAtoms<T>,
    rule: Rule<T>,
    kernel: BookKernel,
    mn: usize,
    nn: Buffer<u32>,
    nl: Buffer<u32>,
    cfg: LaunchConfig,
}

impl<'a, T: Precision> BookRun<'a, T> {
    /// Prepares `kernel` with `mn` slots per atom.
    ///
    /// # Errors
    /// [`Error::Unsupported`] for the mistake in `f64`; [`Error::InvalidInput`] if `mn` is 0 or
    /// `atoms * mn` overflows; [`Error::TooLarge`] if the lists do not fit in the target's free
    /// memory; an allocation error.
    pub fn new(
        target: &'a Target,
        atoms: &'a DeviceAtoms<T>,
        rule: Rule<T>,
        kernel: BookKernel,
        mn: usize,
    ) -> Result<BookRun<'a, T>> {
        if kernel == BookKernel::Wrong && T::WRONG.is_none() {
            return Err(Error::Unsupported(
                "the book's mistake is shown in f32 only".into(),
            ));
        }
        if mn == 0 || mn > u32::MAX as usize {
            return Err(Error::InvalidInput(format!(
                "--max-neighbors {mn}: between 1 and {}",
                u32::MAX
            )));
        }
        let slots = atoms
            .len()
            .checked_mul(mn)
            .filter(|&s| s <= u32::MAX as usize * 2);
        let Some(slots) = slots else {
            return Err(Error::InvalidInput(format!(
                "{} atoms × --max-neighbors {mn} slots is too many",
                atoms.len()
            )));
        };
        check_fits(
            target,
            &format!("{} atoms × --max-neighbors {mn} slots", atoms.len()),
            Footprint::per_element(slots as u64 + atoms.len() as u64, 0, 4),
        )?;
        Ok(BookRun {
            target,
            atoms,
            rule,
            kernel,
            mn,
            nn: target.zeros(atoms.len())?,
            nl: target.zeros(slots)?,
            cfg: per_item(target, atoms.len()),
        })
    }

    /// Queues the kernel: `NN` zeroed and every slot marked [`UNWRITTEN`] first.
    ///
    /// # Errors
    /// A launch error.
    pub fn launch(&self) -> Result<()> {
        let t = self.target;
        t.clear(&self.nn)?;
        t.fill_bytes(&self.nl, 0xFF)?;
        let (nn, nl, a) = (self.nn.ptr(), self.nl.ptr(), self.atoms.view());
        let (n, mn, r) = (self.atoms.len() as u32, self.mn as u32, self.rule);
        // SAFETY: `a` holds `n` atoms (z null exactly in 2-D), `nn` `n` counts, `nl` `n * mn`
        // slots, all owned by `self` or borrowed for its life; `result` synchronizes before
        // they are read or freed.
        unsafe {
            match self.kernel {
                BookKernel::Atomic => t.launch_ref(T::ATOMIC, self.cfg, (nn, nl, a, n, mn, r)),
                BookKernel::NoAtomic => {
                    let layout = self.kernel.layout() as u32;
                    t.launch_ref(T::NO_ATOMIC, self.cfg, (nn, nl, a, n, mn, r, layout))
                }
                BookKernel::Wrong => match T::WRONG {
                    Some(wrong) => t.launch_ref(wrong, self.cfg, (nn, nl, a, n, mn, r)),
                    None => Err(Error::Unsupported(
                        "the book's mistake is shown in f32 only".into(),
                    )),
                },
            }
        }
    }

    /// Waits for the kernel and returns what it wrote.
    ///
    /// # Errors
    /// A driver error.
    pub fn result(&self) -> Result<Padded> {
        self.target.synchronize()?;
        Ok(Padded {
            nn: self.target.download(&self.nn)?,
            nl: self.target.download(&self.nl)?,
            mn: self.mn,
            layout: self.kernel.layout(),
        })
    }

    /// Runs the kernel once and returns what it wrote.
    ///
    /// # Errors
    /// As [`BookRun::launch`] and [`BookRun::result`].
    pub fn run(&self) -> Result<Padded> {
        self.launch()?;
        self.result()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_list_past_u32_offsets_is_too_large_before_it_is_built() {
        // Two atoms of 2³² − 1 neighbors each: the counts alone say it, no slot is read.
        let padded = Padded {
            nn: vec![u32::MAX; 2],
            nl: Vec::new(),
            mn: u32::MAX as usize,
            layout: Layout::PerAtom,
        };
        let e = padded.to_list().unwrap_err();
        assert!(
            matches!(e, Error::TooLarge { needed, .. } if needed == 2 * u32::MAX as u64),
            "{e}"
        );
        assert!(e.to_string().contains("4294967295"), "{e}");
    }
}
