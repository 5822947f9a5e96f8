/* kdtree3d_pcl.c -- searches in PCL 1.13's order: a replay of FLANN 1.9's KDTreeSingleIndex search (searchLevel,
 * computeInitialDistances) with its result sets (KNNSimpleResultSet for k nearest, RadiusResultSet unsorted
 * for radius), on a tree of the same shape (kdtree3d_build.c). The answers hold the same points as the exact
 * searches in kdtree3d.c; only the order differs (radius), or the choice among points at the k-th distance
 * (kNN), where FLANN keeps the points its traversal meets first.
 *
 * FLANN's traversal: at each split, the child on the query's side of the mid-gap ((q - div_low) +
 * (q - div_high) < 0 picks the left one) first; the other child afterwards, if its incremental lower bound
 * (the parent's, with this axis's term replaced by the squared gap to the far child's edge, in float) is <= the
 * current worst distance (the k-th so far, or radius^2). FLANN recurses; the explicit stack below holds, for
 * each pending other child, the bound and per-axis terms FLANN would compute, and pops them in FLANN's order. */
#include "spatial/kdtree3d_internal.h"

#include <float.h>

typedef struct pcl_pending {
    uint32_t node;
    float mindist;  /* FLANN's mindistsq */
    float dists[3]; /* FLANN's per-axis terms of mindistsq */
} pcl_pending;

/* FLANN's result set: for kNN (nb == NULL) the k best so far in idx/sqdist, sorted, equal distances in the
 * order met (KNNSimpleResultSet); for radius search every point closer than r2, in the order met. */
typedef struct pcl_result {
    uint32_t *idx;
    float *sqdist;
    size_t k, count;
    float worst; /* kNN: FLT_MAX until k points are held, then the k-th distance; radius: r2 */
    grip_neighbors *nb;
    int failed; /* radius: the buffer could not grow */
} pcl_result;

static void knn_add(pcl_result *r, float d, uint32_t id)
{
    if (d >= r->worst)
        return;
    if (r->count < r->k)
        ++r->count;
    size_t i = r->count - 1;
    for (; i > 0 && r->sqdist[i - 1] > d; --i) {
        r->sqdist[i] = r->sqdist[i - 1];
        r->idx[i] = r->idx[i - 1];
    }
    r->sqdist[i] = d;
    r->idx[i] = id;
    if (r->count == r->k)
        r->worst = r->sqdist[r->k - 1];
}

/* FLANN's leaf loop: the worst distance is read once, before the leaf. */
static void scan_leaf(const grip_kdtree3d *t, const kd_node *nd, const float q[3], pcl_result *r)
{
    float worst = r->worst;
    for (uint32_t i = nd->begin; i < nd->end && !r->failed; ++i) {
        float d = kd_point_sqdist(t->pts + (size_t)i * 3, q);
        if (d < worst) {
            if (r->nb)
                r->failed = kd_neighbors_push(r->nb, t->ids[i], d) != GRIP_OK;
            else
                knn_add(r, d, t->ids[i]);
        }
    }
}

/* computeInitialDistances: the query's squared gap to the root box, per axis and summed. */
static float initial_distances(const kd_node *root, const float q[3], float dists[3])
{
    float sum = 0.0f;
    for (int a = 0; a < 3; ++a) {
        dists[a] = 0.0f;
        if (q[a] < root->lo[a]) {
            dists[a] = (q[a] - root->lo[a]) * (q[a] - root->lo[a]);
            sum += dists[a];
        }
        if (q[a] > root->hi[a]) {
            dists[a] = (q[a] - root->hi[a]) * (q[a] - root->hi[a]);
            sum += dists[a];
        }
    }
    return sum;
}

/* FLANN's findNeighbors. */
static void pcl_search(const grip_kdtree3d *t, const float q[3], pcl_result *r)
{
    pcl_pending stack[KD_STACK_MAX];
    size_t top = 0;
    pcl_pending cur = {0, 0.0f, {0.0f, 0.0f, 0.0f}};
    cur.mindist = initial_distances(&t->nodes[0], q, cur.dists);
    for (;;) {
        const kd_node *nd = &t->nodes[cur.node];
        while (nd->child != 0) {
            uint32_t a = nd->axis;
            float v = q[a], diff1 = v - nd->div_low, diff2 = v - nd->div_high;
            int left_first = diff1 + diff2 < 0.0f;
            float edge = left_first ? nd->div_high : nd->div_low;
            pcl_pending other = cur;
            other.node = left_first ? nd->child + 1 : nd->child;
            other.dists[a] = (v - edge) * (v - edge);
            other.mindist = cur.mindist + other.dists[a] - cur.dists[a];
            stack[top++] = other;
            nd = &t->nodes[left_first ? nd->child : nd->child + 1];
        }
        scan_leaf(t, nd, q, r);
        do { /* FLANN's test for the other child, made once its sibling's subtree is done */
            if (top == 0 || r->failed)
                return;
            cur = stack[--top];
        } while (!(cur.mindist <= r->worst));
    }
}

size_t grip_kdtree3d_knn_pcl(const grip_kdtree3d *tree, const float q[3], size_t k, uint32_t *idx, float *sqdist)
{
    if (!tree || tree->count == 0 || k == 0 || !q || !idx || !sqdist || !kd_point_is_finite(q))
        return 0;
    pcl_result r = {idx, sqdist, k > tree->count ? tree->count : k, 0, FLT_MAX, NULL, 0};
    pcl_search(tree, q, &r);
    return r.count;
}

grip_status grip_kdtree3d_radius_pcl(const grip_kdtree3d *tree, const float q[3], float radius, grip_neighbors *out)
{
    if (!out)
        return GRIP_EINVAL;
    out->count = 0;
    if (!tree || !q || !(radius >= 0.0f))
        return GRIP_EINVAL;
    if (tree->count == 0 || !kd_point_is_finite(q))
        return GRIP_OK;
    /* as PCL: the radius is squared in double, then rounded to float */
    pcl_result r = {NULL, NULL, 0, 0, (float)((double)radius * (double)radius), out, 0};
    pcl_search(tree, q, &r);
    if (r.failed) {
        out->count = 0;
        return GRIP_ENOMEM;
    }
    return GRIP_OK;
}
