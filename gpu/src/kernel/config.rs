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

/// The shape of one launch: `<<<grid, block, shared_bytes>>>`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LaunchConfig {
    /// Blocks in the grid.
    pub grid: Dim3,
    /// Threads in each block.
    pub block: Dim3,
    /// Bytes of dynamic shared memory per block.
    pub shared_bytes: u32,
}

impl LaunchConfig {
    /// A 1-D launch of `grid` blocks of `block` threads, no dynamic shared memory.
    pub const fn linear(grid: u32, block: u32) -> LaunchConfig {
        LaunchConfig {
            grid: Dim3::x(grid),
            block: Dim3::x(block),
            shared_bytes: 0,
        }
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
