/* kdtree3d_internal.h -- the layout of grip_kdtree3d, shared by its build (kdtree3d_build.c), the exact
 * searches (kdtree3d.c) and the PCL-order search (kdtree3d_pcl.c). Not for use outside src/spatial. */
#ifndef GRIP_SPATIAL_KDTREE3D_INTERNAL_H
#define GRIP_SPATIAL_KDTREE3D_INTERNAL_H

#include <math.h>
#include "spatial/kdtree3d.h"

/* FLANN's KDTreeSingleIndex as PCL's KdTreeFLANN configures it: at most 15 points per leaf. */
#define KD_LEAF_MAX 15
/* Room for the pending nodes of one search: at most one per level. The build refuses deeper trees (middle
 * splits halve a float span per level, so real clouds stay far below: about 30 levels for 300k points). */
#define KD_STACK_MAX 512

typedef struct kd_node {
    float lo[3], hi[3];        /* bounding box of the node's points */
    uint32_t begin, end;       /* the node's run in tree->pts / tree->ids */
    uint32_t child;            /* left child; the right one is child + 1; 0 for a leaf (the root is never a child) */
    uint32_t axis;             /* split axis (FLANN's divfeat) */
    float div_low, div_high;   /* largest coordinate on `axis` in the left child, smallest in the right one */
} kd_node;

struct grip_kdtree3d {
    size_t count;   /* finite points */
    float *pts;     /* count x 3, in tree order */
    uint32_t *ids;  /* index into the caller's xyz of each point in tree order (FLANN's vind_) */
    kd_node *nodes; /* nodes[0] is the root; children come after their parent */
    size_t node_count;
};

static inline int kd_point_is_finite(const float *p)
{
    return isfinite(p[0]) && isfinite(p[1]) && isfinite(p[2]);
}

/* Squared distance as PCL's FLANN computes it (L2_Simple: dx*dx + dy*dy + dz*dz, left to right, in float). */
static inline float kd_point_sqdist(const float *p, const float q[3])
{
    float dx = p[0] - q[0], dy = p[1] - q[1], dz = p[2] - q[2];
    return dx * dx + dy * dy + dz * dz;
}

/* Appends (id, d) to nb, growing it (doubling) when full. GRIP_ENOMEM leaves nb as it was. */
grip_status kd_neighbors_push(grip_neighbors *nb, uint32_t id, float d);

#endif
