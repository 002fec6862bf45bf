//! Who decides each choice of a weak run: a seeded generator (a run replays from its seed), or
//! an exhaustive enumeration of every sequence of choices (small programs only).

/// Picks one of `n` possibilities at every choice point of a run.
pub trait Chooser {
    /// A number below `n` (`n` is at least 1).
    fn choose(&mut self, n: usize) -> usize;
}

/// Choices drawn from a seeded generator: the same seed gives the same run.
#[derive(Clone, Debug)]
pub struct Seeded {
    state: u64,
}

impl Seeded {
    /// The generator of run `run` of a sequence seeded with `seed`: every run has its own,
    /// so any one replays alone.
    pub fn new(seed: u64, run: u64) -> Seeded {
        Seeded {
            state: mix(seed ^ mix(run.wrapping_add(0x9e37_79b9_7f4a_7c15))),
        }
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        mix(self.state)
    }
}

impl Chooser for Seeded {
    fn choose(&mut self, n: usize) -> usize {
        if n <= 1 {
            return 0;
        }
        // Multiply-shift: unbiased enough for n this small.
        ((u128::from(self.next_u64()) * n as u128) >> 64) as usize
    }
}

/// SplitMix64's finalizer.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Every sequence of choices, one run after another, depth first: run the program, then
/// [`next_run`](Self::next_run) until it returns `false`. The program must make the same
/// choices (with the same `n`) whenever the earlier choices were the same.
#[derive(Clone, Debug, Default)]
pub struct Exhaustive {
    /// The choices of the current run: (taken, out of).
    stack: Vec<(usize, usize)>,
    depth: usize,
    runs: u64,
}

impl Exhaustive {
    /// The enumeration's first run.
    pub fn new() -> Exhaustive {
        Exhaustive::default()
    }

    /// Moves to the next sequence of choices; `false` when every sequence has been run.
    pub fn next_run(&mut self) -> bool {
        self.stack.truncate(self.depth);
        self.depth = 0;
        self.runs += 1;
        while let Some((taken, of)) = self.stack.pop() {
            if taken + 1 < of {
                self.stack.push((taken + 1, of));
                return true;
            }
        }
        false
    }

    /// Runs finished so far.
    pub fn runs(&self) -> u64 {
        self.runs
    }
}

impl Chooser for Exhaustive {
    fn choose(&mut self, n: usize) -> usize {
        let taken = match self.stack.get(self.depth) {
            Some(&(taken, of)) if of == n => taken,
            _ => {
                // A new choice point (or a program that chose differently on the same path,
                // which restarts the subtree here).
                self.stack.truncate(self.depth);
                self.stack.push((0, n));
                0
            }
        };
        self.depth += 1;
        taken
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exhaustive_visits_every_sequence_once() {
        // A program choosing among 2, then among 3 if the first was 1, else among 1.
        let mut ch = Exhaustive::new();
        let mut seen = Vec::new();
        loop {
            let a = ch.choose(2);
            let b = if a == 1 { ch.choose(3) } else { ch.choose(1) };
            seen.push((a, b));
            if !ch.next_run() {
                break;
            }
        }
        seen.sort();
        assert_eq!(seen, vec![(0, 0), (1, 0), (1, 1), (1, 2)]);
        assert_eq!(ch.runs(), 4);
    }

    #[test]
    fn seeded_runs_replay_and_differ() {
        let draw = |seed, run| {
            let mut s = Seeded::new(seed, run);
            (0..16).map(|_| s.choose(7)).collect::<Vec<_>>()
        };
        assert_eq!(draw(5, 9), draw(5, 9));
        assert_ne!(draw(5, 9), draw(5, 10));
        assert_ne!(draw(5, 9), draw(6, 9));
        let mut s = Seeded::new(1, 1);
        let mut counts = [0u32; 3];
        for _ in 0..3000 {
            counts[s.choose(3)] += 1;
        }
        assert!(
            counts.iter().all(|&c| (800..1200).contains(&c)),
            "{counts:?}"
        );
    }
}
