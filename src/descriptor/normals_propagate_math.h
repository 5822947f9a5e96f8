/* normals_propagate_math.h -- the decisions of the normal propagation (normals_propagate.h), as static inline
 * functions shared by the CPU twin (normals_propagate.c) and the CUDA kernels (cuda/descriptor/normals_propagate.cu),
 * so that both take them bit for bit alike: which oriented neighbour a point follows, whether it turns, which point
 * seeds a round and whether the seed turns. Every float operation is rounded on its own (math/rounded.h), in the
 * order written here; the choices are integer comparisons of keys, so the order in which candidates are met (a
 * loop on the CPU, atomicMax on the GPU) changes nothing. */
#ifndef GRIP_DESCRIPTOR_NORMALS_PROPAGATE_MATH_H
#define GRIP_DESCRIPTOR_NORMALS_PROPAGATE_MATH_H

#include <float.h>
#include <math.h>
#include <stdint.h>

#include "math/libm_float.h" /* grip_lf_bits: of a float >= 0 (or +0), they order as the values do */
#include "math/rounded.h"

/* The graph walks at most this many neighbours per point: the k + 1 nearest are searched (the point itself among
 * them) and the GPU search keeps at most 64 (GRIP_NEIGHBORHOODS_CUDA_MAX_K). */
#define GRIP_NORMALS_PROPAGATE_MAX_K 63

/* A state for a point not oriented yet (or never: its normal is undefined). Oriented points hold the level of the
 * breadth-first walk that reached them. */
#define GRIP_PROPAGATE_UNSET UINT32_MAX

/* Whether three floats are finite (a NaN fails every comparison). */
static inline GRIP_HD int grip_propagate_finite3(const float *v)
{
    return fabsf(v[0]) <= FLT_MAX && fabsf(v[1]) <= FLT_MAX && fabsf(v[2]) <= FLT_MAX;
}

/* Whether a point takes part in the walk: its coordinates p and its normal row n (nx, ny, nz, ...) are finite. The
 * others (NaN normals, points a file gave a normal but no position) are left as they are. */
static inline GRIP_HD int grip_propagate_defined(const float *p, const float *n)
{
    return grip_propagate_finite3(p) && grip_propagate_finite3(n);
}

/* n_i . n_j, left to right, each product rounded on its own. */
static inline GRIP_HD float grip_propagate_dot(const float *ni, const float *nj)
{
    return GRIP_FADD(GRIP_FADD(GRIP_FMUL(ni[0], nj[0]), GRIP_FMUL(ni[1], nj[1])), GRIP_FMUL(ni[2], nj[2]));
}

/* The key of the edge from the oriented point j to the point i (ni: i's normal as it is, nj: j's oriented one):
 * |n_i . n_j| in the high word, so that the most parallel neighbour wins, and ~j in the low word, so that among equal
 * ones the lowest index wins. Never 0 (j < UINT32_MAX), so 0 can mean "no candidate". */
static inline GRIP_HD uint64_t grip_propagate_edge_key(const float *ni, const float *nj, uint32_t j)
{
    return (uint64_t)grip_lf_bits(fabsf(grip_propagate_dot(ni, nj))) << 32 | (uint64_t)(UINT32_MAX - j);
}

/* The oriented neighbour an edge key names. */
static inline GRIP_HD uint32_t grip_propagate_edge_source(uint64_t key)
{
    return UINT32_MAX - (uint32_t)(key & 0xffffffffu);
}

/* A round orients its component in stages: first over the edges whose |n_i . n_j| reaches the first stage's bound
 * (nearly parallel neighbours: a smooth stretch of surface), then, from everything oriented so far, over poorer
 * ones, and last over any edge. So an unreliable edge (across a thin part, a crease or a noisy patch) is used only
 * where no reliable path reaches a point: Hoppe's preference for the most parallel edges, in a few global steps
 * instead of a spanning tree's one edge at a time. */
#define GRIP_PROPAGATE_STAGES 4
static inline GRIP_HD float grip_propagate_stage_accept(int stage)
{
    return stage == 0 ? 0.9f : stage == 1 ? 0.7f : stage == 2 ? 0.4f : 0.0f;
}

/* Whether the edge between the points pi and pj (normals ni, nj) runs along the surface: the step d = pj - pi is
 * nearly perpendicular to both normals ((n . d)^2 <= 0.09 d . d: within about 17 degrees of the tangent planes).
 * Across a part thinner than the neighbourhood the step runs along the normals, which are then nearly antiparallel:
 * as parallel as a good edge, but the wrong way round. */
static inline GRIP_HD int grip_propagate_tangent(const float *pi, const float *pj, const float *ni, const float *nj)
{
    const float d[3] = {GRIP_FSUB(pj[0], pi[0]), GRIP_FSUB(pj[1], pi[1]), GRIP_FSUB(pj[2], pi[2])};
    const float dd = grip_propagate_dot(d, d), a = grip_propagate_dot(ni, d), b = grip_propagate_dot(nj, d);
    const float bound = GRIP_FMUL(0.09f, dd);
    return GRIP_FMUL(a, a) <= bound && GRIP_FMUL(b, b) <= bound;
}

/* Whether a stage of bound `accept` takes an edge of this key: |n_i . n_j| >= accept, and -- but in the last stage,
 * which takes any edge -- along the surface (tangent: grip_propagate_tangent). */
static inline GRIP_HD int grip_propagate_accepts(uint64_t key, float accept, int tangent)
{
    return (uint32_t)(key >> 32) >= grip_lf_bits(accept) && (tangent || accept == 0.0f);
}

/* Whether i turns to agree with its oriented neighbour j: when n_i . n_j < 0 (0 keeps it). */
static inline GRIP_HD int grip_propagate_turns(const float *ni, const float *nj)
{
    return grip_propagate_dot(ni, nj) < 0.0f;
}

/* The key of a candidate seed p (point xyz, not yet oriented, normal defined): its squared distance to the centroid c
 * in the high word ((dx dx + dy dy) + dz dz, dx = p.x - c.x), ~p in the low word: the farthest point wins, ties to the
 * lowest index. Never 0. */
static inline GRIP_HD uint64_t grip_propagate_seed_key(const float *xyz, const float c[3], uint32_t p)
{
    const float dx = GRIP_FSUB(xyz[0], c[0]), dy = GRIP_FSUB(xyz[1], c[1]), dz = GRIP_FSUB(xyz[2], c[2]);
    const float d2 = GRIP_FADD(GRIP_FADD(GRIP_FMUL(dx, dx), GRIP_FMUL(dy, dy)), GRIP_FMUL(dz, dz));
    return (uint64_t)grip_lf_bits(d2) << 32 | (uint64_t)(UINT32_MAX - p);
}

/* Whether a seed's normal n at xyz turns to point away from the centroid c: when (c - p) . n > 0, computed as
 * flipNormalTowardsViewpoint computes it (normals.c), so that a normal already pointed outward (flipped toward c,
 * then turned around: (c - p) . n <= 0 exactly) keeps its sign. */
static inline GRIP_HD int grip_propagate_seed_turns(const float *xyz, const float c[3], const float *n)
{
    const float vx = GRIP_FSUB(c[0], xyz[0]), vy = GRIP_FSUB(c[1], xyz[1]), vz = GRIP_FSUB(c[2], xyz[2]);
    return GRIP_FADD(GRIP_FADD(GRIP_FMUL(vx, n[0]), GRIP_FMUL(vy, n[1])), GRIP_FMUL(vz, n[2])) > 0.0f;
}

#endif
