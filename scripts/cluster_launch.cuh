// What the cluster launches share, the twin's (twins/cluster.cu) and the reference's
// (reference_cluster.cu): cudaLaunchKernelEx's configuration of a one-dimensional grid in
// clusters, the cluster dimension given as a launch attribute, as gridsync's cuLaunchKernelEx.
#pragma once

#include <cuda_runtime.h>

// `blocks` blocks of `threads` threads in clusters of `cluster` blocks, no dynamic shared memory,
// on `stream`; for cudaLaunchKernelEx and cudaOccupancyMaxActiveClusters (`&launch.config`).
// The configuration points at the attribute beside it, so the object is neither copied nor
// moved.
struct ClusterLaunch {
    cudaLaunchAttribute attr[1];
    cudaLaunchConfig_t config;

    ClusterLaunch(unsigned cluster, unsigned blocks, unsigned threads, cudaStream_t stream = 0)
        : attr{}, config{} {
        attr[0].id = cudaLaunchAttributeClusterDimension;
        attr[0].val.clusterDim.x = cluster;
        attr[0].val.clusterDim.y = 1;
        attr[0].val.clusterDim.z = 1;
        config.gridDim = dim3(blocks, 1, 1);
        config.blockDim = dim3(threads, 1, 1);
        config.dynamicSmemBytes = 0;
        config.stream = stream;
        config.attrs = attr;
        config.numAttrs = 1;
    }
    ClusterLaunch(const ClusterLaunch&) = delete;
    ClusterLaunch& operator=(const ClusterLaunch&) = delete;
};
