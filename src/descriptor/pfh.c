/* pfh.c -- see pfh.h. Each keypoint counts its pairs per bin, then turns the counts into PCL's float sums of equal
 * votes (grip_repeat_add), which is what adding the vote pair by pair gives. */
#include "descriptor/pfh.h"
#include "descriptor/pfh_support.h"
#include "descriptor/keypoint_support.h"

typedef struct pfh_job {
    const float *xyz, *normals;
    float *out;
} pfh_job;

static void pfh_one(size_t i, const float keypoint[3], grip_neighbors *support, void *user)
{
    const pfh_job *job = user;
    float *row = job->out + (size_t)GRIP_PFH_DIM * i;
    (void)keypoint;
    if (support->count == 0) {
        grip_pfh_nan_row(row, GRIP_PFH_DIM);
        return;
    }
    uint64_t counts[GRIP_PFH_DIM] = {0};
    for (size_t a = 1; a < support->count; ++a) {
        size_t p = support->idx[a];
        for (size_t b = 0; b < a; ++b) {
            size_t q = support->idx[b];
            ++counts[grip_pfh_pair_bin(job->xyz + 3 * p, job->normals + 4 * p, job->xyz + 3 * q, job->normals + 4 * q)];
        }
    }
    float incr = grip_pfh_increment(support->count);
    for (int d = 0; d < GRIP_PFH_DIM; ++d)
        row[d] = grip_repeat_add(incr, counts[d]);
}

grip_status grip_pfh_describe(grip_ctx *ctx, const float *surface_xyz, const float *surface_normals, size_t n,
                              const grip_kdtree3d *tree, const float *keypoint_xyz, size_t k, float radius,
                              float *out)
{
    grip_status s = grip_pfh_check_args(ctx, "pfh", surface_xyz, surface_normals, n, tree, keypoint_xyz, k, radius,
                                        out);
    if (s || k == 0)
        return s;
    pfh_job job = {surface_xyz, surface_normals, out};
    return grip_keypoint_support_for_each(ctx, "pfh", tree, keypoint_xyz, k, radius, 0, pfh_one, &job);
}
