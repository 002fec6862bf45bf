//! Launch shapes, shared by the host (to launch) and the simulator (to run).

/// A grid or block size in three dimensions; CUDA's `dim3`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Dim3 {
    /// Extent in x.
    pub x: u32,
    /// Extent in y.
    pub y: u32,
    /// Extent in z.
    pub z: u32,
}

impl Dim3 {
    /// `(1, 1, 1)`: one block per cluster, the shape of a launch that names no cluster.
    pub const ONE: Dim3 = Dim3 { x: 1, y: 1, z: 1 };

    /// `(x, 1, 1)`.
    pub const fn x(x: u32) -> Dim3 {
        Dim3 { x, y: 1, z: 1 }
    }
    /// `x * y * z`, without overflow.
    pub const fn count(self) -> u64 {
        self.x as u64 * self.y as u64 * self.z as u64
    }
}

impl From<u32> for Dim3 {
    fn from(x: u32) -> Dim3 {
        Dim3::x(x)
    }
}

impl From<(u32, u32)> for Dim3 {
    fn from((x, y): (u32, u32)) -> Dim3 {
        Dim3 { x, y, z: 1 }
    }
}

impl From<(u32, u32, u32)> for Dim3 {
    fn from((x, y, z): (u32, u32, u32)) -> Dim3 {
        Dim3 { x, y, z }
    }
}

/// The shape of one launch: `<<<grid, block, shared_bytes>>>`, and the blocks of each thread
/// block cluster.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LaunchConfig {
    /// Blocks in the grid.
    pub grid: Dim3,
    /// Threads in each block.
    pub block: Dim3,
    /// Bytes of dynamic shared memory per block.
    pub shared_bytes: u32,
    /// Blocks in each thread block cluster (sm_90 and later): [`Dim3::ONE`] for a launch
    /// without clusters. Each extent divides the grid's; a cluster's blocks are scheduled
    /// together on one GPC, share the cluster barrier and can reach each other's shared memory
    /// ([`crate::cluster`]). CUDA: `cudaLaunchAttributeClusterDimension`, `__cluster_dims__`.
    pub cluster: Dim3,
}

impl LaunchConfig {
    /// A 1-D launch of `grid` blocks of `block` threads, no dynamic shared memory.
    pub const fn linear(grid: u32, block: u32) -> LaunchConfig {
        LaunchConfig {
            grid: Dim3::x(grid),
            block: Dim3::x(block),
            shared_bytes: 0,
            cluster: Dim3::ONE,
        }
    }

    /// The same launch in thread block clusters of `cluster` blocks.
    pub const fn with_cluster(self, cluster: Dim3) -> LaunchConfig {
        LaunchConfig { cluster, ..self }
    }

    /// Whether the launch names clusters of more than one block.
    pub const fn is_clustered(&self) -> bool {
        self.cluster.count() > 1
    }

    /// The same launch with `bytes` of dynamic shared memory per block.
    pub const fn with_shared_bytes(self, bytes: u32) -> LaunchConfig {
        LaunchConfig {
            shared_bytes: bytes,
            ..self
        }
    }

    /// Threads in the whole grid.
    pub const fn threads(&self) -> u64 {
        self.grid.count() * self.block.count()
    }
}
