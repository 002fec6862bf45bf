//! Who a thread is in a launch, and which threads each scope includes.
//!
//! PTX's scopes nest: a block (`.cta`) lies in one cluster (`.cluster`), a cluster in one device
//! (`.gpu`), every device in the system (`.sys`). A scope *instance* is one of them — block 3 of
//! device 0, the whole of device 1 — and "the scope of an operation includes a thread" means
//! the thread lies in the instance of that scope that holds the operation's own thread (PTX ISA,
//! Memory Consistency Model, "Scope").

use crate::LaunchConfig;
use crate::atomic::Scope;
use crate::mbarrier::BarrierScope;
use crate::sim::{Ids, MAX_THREADS, SimError, check_config};

/// A simulated thread's place in a launch, as linear indices (x fastest, as
/// [`launch`](crate::sim::launch) numbers blocks and threads).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ThreadId {
    /// The GPU (0 in a launch on one device).
    pub device: u32,
    /// The block's linear index in its device's grid.
    pub block: u32,
    /// The thread's linear index in its block.
    pub thread: u32,
}

impl ThreadId {
    /// Thread `thread` of block `block` on device 0.
    pub const fn new(block: u32, thread: u32) -> ThreadId {
        ThreadId {
            device: 0,
            block,
            thread,
        }
    }
}

impl std::fmt::Display for ThreadId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.device != 0 {
            write!(f, "device {} ", self.device)?;
        }
        write!(f, "block {} thread {}", self.block, self.thread)
    }
}

/// The set of threads a strong access, a fence or a barrier is performed with respect to: PTX's
/// four scopes, narrowest first (libcu++'s `thread_scope_*`).
///
/// [`Scope`] (the atomics' three) and [`BarrierScope`] (an `mbarrier`'s two) convert into it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ThreadScope {
    /// The threads of one block. PTX `.cta`.
    Block = 0,
    /// The threads of one thread block cluster. PTX `.cluster`.
    Cluster = 1,
    /// The threads of one GPU. PTX `.gpu`.
    Device = 2,
    /// Every thread, of every GPU and the host. PTX `.sys`.
    System = 3,
}

impl ThreadScope {
    /// Every scope, narrowest first.
    pub const ALL: [ThreadScope; 4] = [
        ThreadScope::Block,
        ThreadScope::Cluster,
        ThreadScope::Device,
        ThreadScope::System,
    ];

    /// The PTX qualifier: `cta`, `cluster`, `gpu` or `sys`.
    pub const fn ptx(self) -> &'static str {
        match self {
            ThreadScope::Block => "cta",
            ThreadScope::Cluster => "cluster",
            ThreadScope::Device => "gpu",
            ThreadScope::System => "sys",
        }
    }
}

impl From<Scope> for ThreadScope {
    fn from(s: Scope) -> ThreadScope {
        match s {
            Scope::Block => ThreadScope::Block,
            Scope::Device => ThreadScope::Device,
            Scope::System => ThreadScope::System,
        }
    }
}

impl From<BarrierScope> for ThreadScope {
    fn from(s: BarrierScope) -> ThreadScope {
        match s {
            BarrierScope::Block => ThreadScope::Block,
            BarrierScope::Cluster => ThreadScope::Cluster,
        }
    }
}

/// One instance of a scope: a given block, cluster or device, or the system.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Instance {
    /// Which scope.
    pub level: ThreadScope,
    /// The device (0 for the system).
    pub device: u32,
    /// The block's or the cluster's index on its device (0 for a device or the system).
    pub index: u32,
}

/// The threads of a launch: how many devices, blocks and threads, and which cluster each block
/// belongs to — all that deciding scope inclusion needs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Shape {
    devices: u32,
    blocks: u32,
    block_threads: u32,
    /// The cluster of each block (the same on every device): its own index without clusters.
    cluster_of: Vec<u32>,
}

impl Shape {
    /// `blocks` blocks of `block_threads` threads on one device, without clusters.
    pub fn new(blocks: u32, block_threads: u32) -> Shape {
        Shape {
            devices: 1,
            blocks,
            block_threads,
            cluster_of: (0..blocks).collect(),
        }
    }

    /// The shape of a simulated launch of `cfg`, its clusters numbered as
    /// [`Ids::cluster_linear`] numbers them.
    ///
    /// # Errors
    /// What [`check_config`] refuses.
    pub fn from_config(cfg: &LaunchConfig) -> Result<Shape, SimError> {
        check_config(cfg)?;
        let (g, b, c) = (cfg.grid, cfg.block, cfg.cluster);
        let cluster_of = (0..g.count() as u32)
            .map(|i| {
                let ids = Ids {
                    thread: [0; 3],
                    block: [i % g.x, (i / g.x) % g.y, i / (g.x * g.y)],
                    block_dim: [b.x, b.y, b.z],
                    grid_dim: [g.x, g.y, g.z],
                    cluster_dim: [c.x, c.y, c.z],
                };
                ids.cluster_linear()
            })
            .collect();
        Ok(Shape {
            devices: 1,
            blocks: g.count() as u32,
            block_threads: b.count() as u32,
            cluster_of,
        })
    }

    /// The same grid on each of `devices` GPUs, all running at once (a multi-GPU launch).
    pub fn with_devices(self, devices: u32) -> Shape {
        Shape { devices, ..self }
    }

    /// The same launch with block `b` in cluster `cluster_of[b]`.
    ///
    /// # Errors
    /// [`SimError::Config`] unless there is one cluster index per block.
    pub fn with_clusters(self, cluster_of: Vec<u32>) -> Result<Shape, SimError> {
        if cluster_of.len() != self.blocks as usize {
            return Err(SimError::Config(format!(
                "{} cluster indices for {} blocks",
                cluster_of.len(),
                self.blocks
            )));
        }
        Ok(Shape { cluster_of, ..self })
    }

    /// Checks that the launch is one the checker can follow.
    ///
    /// # Errors
    /// [`SimError::Config`] for an empty launch; [`SimError::TooManyThreads`] past
    /// [`MAX_THREADS`], counting every device's threads.
    pub fn validate(&self) -> Result<(), SimError> {
        if self.devices == 0 || self.blocks == 0 || self.block_threads == 0 {
            return Err(SimError::Config(format!(
                "an empty launch: {} devices of {} blocks of {} threads",
                self.devices, self.blocks, self.block_threads
            )));
        }
        let threads = self.devices as u64 * self.blocks as u64 * self.block_threads as u64;
        if threads > MAX_THREADS {
            return Err(SimError::TooManyThreads {
                threads,
                max: MAX_THREADS,
            });
        }
        Ok(())
    }

    /// Threads in the launch, every device's together.
    pub fn threads(&self) -> u32 {
        self.devices * self.blocks * self.block_threads
    }

    /// The thread's dense index in the launch (its entry in every vector clock), if it is one
    /// of the launch's.
    pub fn slot(&self, id: ThreadId) -> Option<u32> {
        (id.device < self.devices && id.block < self.blocks && id.thread < self.block_threads)
            .then(|| (id.device * self.blocks + id.block) * self.block_threads + id.thread)
    }

    /// The thread of a dense index.
    pub fn thread_of(&self, slot: u32) -> ThreadId {
        let block = slot / self.block_threads;
        ThreadId {
            device: block / self.blocks,
            block: block % self.blocks,
            thread: slot % self.block_threads,
        }
    }

    /// The instance of `scope` that holds thread `id`.
    pub fn instance(&self, id: ThreadId, scope: ThreadScope) -> Instance {
        self.raise(self.block_instance(id), scope)
    }

    /// The block of thread `id`: the narrowest instance that holds it.
    pub fn block_instance(&self, id: ThreadId) -> Instance {
        Instance {
            level: ThreadScope::Block,
            device: id.device,
            index: id.block,
        }
    }

    /// The instance of `level` that holds `inner` (`inner` itself if it is that wide already).
    pub fn raise(&self, inner: Instance, level: ThreadScope) -> Instance {
        if level <= inner.level {
            return inner;
        }
        match level {
            ThreadScope::Block => inner,
            ThreadScope::Cluster => Instance {
                level,
                device: inner.device,
                index: self.cluster_of[inner.index as usize],
            },
            ThreadScope::Device => Instance {
                level,
                device: inner.device,
                index: 0,
            },
            ThreadScope::System => Instance {
                level,
                device: 0,
                index: 0,
            },
        }
    }

    /// Whether every thread of `inner` lies in `outer`.
    pub fn within(&self, inner: Instance, outer: Instance) -> bool {
        inner.level <= outer.level && self.raise(inner, outer.level) == outer
    }

    /// Whether `scope`, taken by thread `of`, includes thread `other`.
    pub fn includes(&self, scope: ThreadScope, of: ThreadId, other: ThreadId) -> bool {
        self.instance(of, scope) == self.instance(other, scope)
    }
}
