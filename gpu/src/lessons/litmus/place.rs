//! Where each thread of a round plays: its instance and role, from the placement, the SMs'
//! registrations and the round's random choices — and the order of the SMs that forms the
//! instances across SMs.

use super::{
    LITMUS_BLOCK_THREADS, LITMUS_MAX_THREADS, LitmusLaunch, PLACE_DIFFERENT_GPUS,
    PLACE_DIFFERENT_SMS, PLACE_SAME_BLOCK, PLACE_SAME_SM, PLACE_SAME_WARP, SM_ORDER_SHUFFLED,
    SM_ORDER_SPREAD,
};
use crate::access::load_weak;
use crate::index::thread_rank_in_block;

/// SplitMix's finalizer, 32 bits: the round's random numbers.
#[inline(always)]
pub(super) fn mix(mut z: u32) -> u32 {
    z = (z ^ (z >> 16)).wrapping_mul(0x7feb_352d);
    z = (z ^ (z >> 15)).wrapping_mul(0x846c_a68b);
    z ^ (z >> 16)
}

/// One round's choices, the same in every thread.
#[derive(Clone, Copy)]
pub(super) struct Round {
    /// Rotates roles among lanes, warps or blocks, and pairs different thread indices.
    pub(super) rot: u32,
    /// The location permutation `slot ↦ (a·slot + b) mod 2^slot_bits` (`a` odd: a bijection).
    pub(super) a: u32,
    pub(super) b: u32,
}

impl Round {
    /// Round `it` of a launch seeded with `seed`.
    #[inline(always)]
    pub(super) fn of(seed: u32, it: u32) -> Round {
        let h = mix(seed ^ mix(it.wrapping_add(0x632b_e5ab)));
        Round {
            rot: h & 0xff,
            a: mix(h ^ 0x5bd1_e995) | 1,
            b: mix(h.wrapping_add(1)),
        }
    }
}

/// The inverse of odd `a` modulo 2³²: Newton's iteration, each step doubling the correct low
/// bits (an odd `a` is its own inverse modulo 8, so four steps give 48 ≥ 32).
#[inline(always)]
fn inverse(a: u32) -> u32 {
    let mut x = a;
    for _ in 0..4 {
        x = x.wrapping_mul(2u32.wrapping_sub(a.wrapping_mul(x)));
    }
    x
}

/// The launch's order of the SMs at [`PLACE_DIFFERENT_SMS`]: SM `s` stands at position
/// [`position(s)`](Self::position), and the SMs at positions `g·threads .. (g+1)·threads` form
/// group `g`, whose blocks of one ticket hold instances together (role = position mod
/// `threads`, turned every round).
///
/// - [`SM_ORDER_ADJACENT`](super::SM_ORDER_ADJACENT): position = `%smid`, so an instance's SMs
///   have consecutive ids — on NVIDIA GPUs mostly the two SMs of one TPC.
/// - [`SM_ORDER_SPREAD`]: the SMs of a group are `sms / threads` ids apart (far across the
///   chip); the ids past `threads · (sms / threads)` only stress.
/// - [`SM_ORDER_SHUFFLED`]: a new random permutation of the SMs every launch (the
///   literature's shuffled workgroups, which it draws for every launch):
///   `x ↦ a₂·xs(a₁·x + b₁) + b₂` on the next power of two at or above `sms` (odd `a`, and
///   `xs(y) = y ^ (y >> ⌈bits/2⌉)`, its own inverse), walked until it lands below `sms` — a
///   bijection of `0..sms`.
///
/// The kernel makes it once a launch, before the rounds: inside them it would cost registers,
/// and eight blocks of the kernel fit on an SM only at 64 registers or fewer.
#[derive(Clone, Copy, Debug)]
pub struct SmGroups {
    kind: u32,
    sms: u32,
    threads: u32,
    /// The permutation's domain, a power of two, minus one; and the xor-shift.
    mask: u32,
    shift: u32,
    a1: u32,
    b1: u32,
    a2: u32,
    b2: u32,
}

impl SmGroups {
    /// The order `l.sm_order` of `l.sms` SMs for a test of `threads` threads, drawn from the
    /// launch's seed `l.seed`.
    #[inline(always)]
    pub fn of(l: &LitmusLaunch, threads: u32) -> SmGroups {
        let bits = 32 - l.sms.max(2).saturating_sub(1).leading_zeros();
        let h = mix(l.seed ^ 0x27d4_eb2f);
        SmGroups {
            kind: l.sm_order,
            sms: l.sms,
            threads: threads.max(1),
            mask: ((1u64 << bits) - 1) as u32,
            shift: bits.div_ceil(2),
            a1: mix(h) | 1,
            b1: mix(h ^ 0x85eb_ca6b),
            a2: mix(h ^ 0xc2b2_ae35) | 1,
            b2: mix(h ^ 0x1656_67b1),
        }
    }

    /// Positions that form groups: `0..positions()` (a multiple of `threads`, or `sms`).
    #[inline(always)]
    pub fn positions(&self) -> u32 {
        match self.kind {
            SM_ORDER_SPREAD => self.sms / self.threads * self.threads,
            _ => self.sms,
        }
    }

    /// Where SM `s` (`< sms`) stands; `None` if it is in no group.
    #[inline(always)]
    pub fn position(&self, s: u32) -> Option<u32> {
        let per = (self.sms / self.threads).max(1);
        let p = match self.kind {
            // The ids past the last whole group would land on taken positions.
            SM_ORDER_SPREAD if s >= self.positions() => return None,
            SM_ORDER_SPREAD => (s % per) * self.threads + s / per,
            SM_ORDER_SHUFFLED => self.walk(s, |x| {
                let y = (self.a1.wrapping_mul(x).wrapping_add(self.b1)) & self.mask;
                let y = y ^ (y >> self.shift);
                (self.a2.wrapping_mul(y).wrapping_add(self.b2)) & self.mask
            }),
            _ => s,
        };
        (p < self.positions()).then_some(p)
    }

    /// The SM at position `p` (`< positions()`): the inverse of [`position`](Self::position).
    #[inline(always)]
    pub fn at(&self, p: u32) -> u32 {
        let per = (self.sms / self.threads).max(1);
        match self.kind {
            SM_ORDER_SPREAD => (p % self.threads) * per + p / self.threads,
            SM_ORDER_SHUFFLED => {
                let (i1, i2) = (inverse(self.a1), inverse(self.a2));
                self.walk(p, |y| {
                    let x = i2.wrapping_mul(y.wrapping_sub(self.b2)) & self.mask;
                    let x = x ^ (x >> self.shift);
                    i1.wrapping_mul(x.wrapping_sub(self.b1)) & self.mask
                })
            }
            _ => p,
        }
    }

    /// `step` applied to `x` (`< sms`) until it lands below `sms`: a permutation of the power of
    /// two restricted to `0..sms` (cycle walking). The cycle through `x` returns below `sms` at
    /// the latest at `x` itself, so the bound of `mask + 1` steps is never reached.
    #[inline(always)]
    fn walk(&self, x: u32, step: impl Fn(u32) -> u32) -> u32 {
        let mut y = step(x);
        let mut steps = 1;
        while y >= self.sms && steps <= self.mask {
            y = step(y);
            steps += 1;
        }
        y
    }
}

/// A block that holds no instance at [`PLACE_DIFFERENT_SMS`] this launch ([`sm_slot`]).
const NO_SLOT: u32 = u32::MAX;

/// Where the block of `ticket` on SM `smid` stands at [`PLACE_DIFFERENT_SMS`] for the whole
/// launch: its SM's position in the launch's [order of the SMs](SmGroups), if every SM of its
/// group has a block of the same ticket; else [`NO_SLOT`] (it stresses). Made once, before the
/// rounds: neither the order nor the registrations change between them.
///
/// # Safety
/// `l.sm_tickets` is complete (read after the registration's grid barrier).
#[inline(always)]
pub(super) unsafe fn sm_slot(l: &LitmusLaunch, threads: u32, smid: u32, ticket: u32) -> u32 {
    if l.placement != PLACE_DIFFERENT_SMS
        || smid >= l.sms
        || ticket >= l.test_blocks_per_sm
        || threads == 0
        || threads > LITMUS_MAX_THREADS
    {
        return NO_SLOT;
    }
    let order = SmGroups::of(l, threads);
    let Some(pos) = order.position(smid) else {
        return NO_SLOT;
    };
    let first = pos / threads * threads;
    let complete = first + threads <= order.positions()
        && (first..first + threads).all(|p| {
            let s = order.at(p);
            // SAFETY: `s < l.sms`, inside the table of this GPU; complete (contract).
            s < l.sms
                && unsafe { load_weak(l.sm_tickets.add((l.gpu * l.sms + s) as usize)) } > ticket
        });
    if complete { pos } else { NO_SLOT }
}

/// The instance and role of this thread in this round, or `None` for a stress thread. `site`
/// is the block's SM, `%smid` — or at [`PLACE_DIFFERENT_SMS`] its [`sm_slot`] (one value in
/// the rounds' loop, not two: registers are tight).
///
/// # Safety
/// `l.sm_tickets` is complete (read after the registration's grid barrier).
#[inline(always)]
pub(super) unsafe fn place(
    l: &LitmusLaunch,
    threads: u32,
    site: u32,
    ticket: u32,
    r: Round,
) -> Option<(u32, u32)> {
    let tt = l.test_blocks_per_sm;
    // A slot is below `l.sms` too; [`NO_SLOT`] is not.
    let smid = site;
    if smid >= l.sms || ticket >= tt || threads == 0 || threads > LITMUS_MAX_THREADS {
        return None;
    }
    let tid = thread_rank_in_block();
    let (warp, lane) = (tid / 32, tid % 32);
    let warps = LITMUS_BLOCK_THREADS / 32;
    let group = smid * tt + ticket;
    // Blocks registered on SM `s` of GPU `g`.
    let tickets_of = |g: u32, s: u32| {
        if g >= l.gpus || s >= l.sms {
            return 0;
        }
        // SAFETY: `g < l.gpus` and `s < l.sms`: inside the table, which is complete (contract).
        unsafe { load_weak(l.sm_tickets.add((g * l.sms + s) as usize)) }
    };
    let tickets = |s: u32| tickets_of(l.gpu, s);
    let (instance, role) = match l.placement {
        PLACE_SAME_WARP => {
            let per = 32 / threads;
            let turned = (lane + r.rot) % 32;
            ((group * warps + warp) * per + turned % per, turned / per)
        }
        PLACE_SAME_BLOCK => {
            let per = warps / threads;
            let turned = (warp + r.rot) % warps;
            (group * per * 32 + (turned % per) * 32 + lane, turned / per)
        }
        PLACE_SAME_SM => {
            let per = tt / threads;
            let g = ticket / threads;
            if g >= per || tickets(smid) < (g + 1) * threads {
                return None;
            }
            let role = (ticket + r.rot) % threads;
            let pair = (tid + role * r.rot) % LITMUS_BLOCK_THREADS;
            ((smid * per + g) * LITMUS_BLOCK_THREADS + pair, role)
        }
        PLACE_DIFFERENT_SMS => {
            let slot = site;
            let role = (slot + r.rot) % threads;
            let pair = (tid + role * r.rot) % LITMUS_BLOCK_THREADS;
            (
                ((slot / threads) * tt + ticket) * LITMUS_BLOCK_THREADS + pair,
                role,
            )
        }
        PLACE_DIFFERENT_GPUS => {
            // Role `r` on GPU `(r + rot) mod gpus`; a GPU's roles on consecutive SMs.
            let gpus = l.gpus.max(1);
            // At least 1 (`threads >= 1`), spelled so that no division can panic.
            let per_gpu = threads.div_ceil(gpus).max(1);
            let first = smid / per_gpu * per_gpu;
            if first + per_gpu > l.sms
                || (0..gpus).any(|g| (first..first + per_gpu).any(|s| tickets_of(g, s) <= ticket))
            {
                return None;
            }
            let role = (l.gpu + gpus - r.rot % gpus) % gpus + (smid - first) * gpus;
            let pair = (tid + role * r.rot) % LITMUS_BLOCK_THREADS;
            (
                ((smid / per_gpu) * tt + ticket) * LITMUS_BLOCK_THREADS + pair,
                role,
            )
        }
        _ => return None,
    };
    (role < threads && instance < l.max_instances).then_some((instance, role))
}
