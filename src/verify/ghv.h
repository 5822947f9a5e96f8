/* ghv.h -- global hypotheses verification (Aldoma, Tombari, Di Stefano, Vincze: "A Global Hypotheses Verification
 * Method for 3D Object Recognition", ECCV 2012; PCL 1.13's pcl::GlobalHypothesesVerification is the reference for
 * its semantics): the CPU twin of the `ghv` verifier. Instead of accepting each hypothesis on its own, it picks the
 * subset of hypotheses that together explain the scene best.
 *
 * The scene (grip_ghv_scene_prepare):
 *   - its resolution r is the mean distance of each finite point to its nearest other point;
 *   - unset lengths (0) are derived from r: leaf = GRIP_GHV_LEAF_PER_RES r, inlier threshold t =
 *     GRIP_GHV_INLIER_PER_RES r, clutter radius = GRIP_GHV_CLUTTER_PER_RES r, occlusion threshold =
 *     GRIP_GHV_OCCLUSION_PER_RES r. On PCL's tutorial scene (r = 1.79 mm) that is 5.4, 5.4, 16 and 10.7 mm, near
 *     the 5, 5, 30 and 10 mm of PCL's GHV tutorial; data in millimetres gets the same geometry in its own unit;
 *   - the scene is sampled to one point per voxel of the leaf (uniform sampling: the point nearest the voxel
 *     centre), so that a count of scene points measures area as a count of model points does (PCL's VoxelGrid);
 *   - each sampled point's GRIP_GHV_NEIGHBORS nearest sampled points (itself first) are its neighbourhood.
 * Each model is sampled the same way (grip_ghv_model_sample).
 *
 * The terms of one hypothesis (a model moved by a pose; grip_ghv_terms_compute):
 *   - visible model points: with an organized scene whose camera fits a pinhole (verify/free_space.h), the model
 *     points that project onto a pixel with data and lie at most the occlusion threshold behind it (PCL's
 *     occlusion_reasoning::filter); every point for an unorganized scene. Only visible points count below;
 *   - outliers: visible model points whose nearest scene point is farther than t;
 *   - explained scene points: among the GRIP_GHV_EXPLAIN_K nearest scene points of each visible model point, those
 *     within t; each with the smallest squared distance at which a model point explains it, d2, and the weight
 *     1 - d2 / t^2 (PCL weighs by the same falloff and by the agreement of normals, left out here);
 *   - clutter: scene points in the neighbourhood of an explained point, within the clutter radius rc of it, that
 *     the hypothesis does not explain; each with the smallest squared distance to such an explained point, d2, and
 *     the weight clutter_regularizer (1 - d2 / rc^2). The neighbourhood caps the clutter radius in effect at about
 *     3 leaves on a surface. PCL weighs clutter on the same smooth surface by clutter_regularizer and other
 *     clutter by distance and normals; without a segmentation, every clutter point is weighed the same way here.
 *
 * The cost of a subset A of the hypotheses (lower is better), as PCL's (hv_go.h):
 *     - sum over h in A of the weights of the points h explains
 *     + regularizer * (outliers of the hypotheses in A)
 *     + sum over scene points explained by no hypothesis of A of the clutter weights the hypotheses of A give them
 *     + sum over scene points explained by n > 1 hypotheses of A of n                 (overlap)
 *     + |A|.
 * PCL's term for complete models that occupy the same voxels is left out. Weights are fixed-point integers
 * (GRIP_GHV_UNIT per unit), so a cost is exact and does not depend on the order it was summed in.
 *
 * The search (grip_ghv_search), on the host: greedy from the empty set (the hypotheses in the order of their cost
 * alone, best first, ties to the lower index, each added when it lowers the cost), then either local search
 * (passes of single flips, each flip kept when it lowers the cost, until a pass changes nothing) or simulated
 * annealing (seeded random flips, Metropolis acceptance under a linearly cooled temperature, the best set seen,
 * then local search from it). Deterministic given the terms and the seed. Each flip costs the length of the
 * flipped hypothesis's lists, so the search is cheap next to the terms.
 *
 * The terms are computed the same way on the GPU (verify/ghv_cuda.h): the same sampled scene, the same nearest
 * neighbours, integer counts and minimum distances, so both backends give the same terms and the same subset. */
#ifndef GRIP_VERIFY_GHV_H
#define GRIP_VERIFY_GHV_H

#include <stddef.h>
#include <stdint.h>
#include "core/ctx.h"
#include "spatial/kdtree3d.h"
#include "verify/free_space.h"

/* Derived lengths, in scene resolutions (mean nearest-neighbour distance). */
#define GRIP_GHV_LEAF_PER_RES 3.0
#define GRIP_GHV_INLIER_PER_RES 3.0
#define GRIP_GHV_CLUTTER_PER_RES 9.0
#define GRIP_GHV_OCCLUSION_PER_RES 6.0
/* Nearest scene points a model point may explain, and the neighbourhood of a scene point (itself included). */
#define GRIP_GHV_EXPLAIN_K 4
#define GRIP_GHV_NEIGHBORS 32
/* One unit of cost in fixed point. */
#define GRIP_GHV_UNIT 65536

typedef enum grip_ghv_search_kind { GRIP_GHV_SEARCH_LOCAL = 0, GRIP_GHV_SEARCH_ANNEALING = 1 } grip_ghv_search_kind;

typedef struct grip_ghv_params {
    double leaf;                /* sampling voxel of scene and models (cloud units); 0: derived */
    double inlier_threshold;    /* t: a model point is supported, a scene point explained, within this; 0: derived */
    double clutter_radius;      /* rc; 0: derived */
    double occlusion_threshold; /* a model point this far behind the scene surface is hidden; 0: derived */
    double regularizer;         /* cost of one outlier (>= 0) */
    double clutter_regularizer; /* cost of one clutter point next to an explained point (>= 0) */
    uint32_t search;            /* grip_ghv_search_kind */
    uint32_t annealing_iterations;
    double initial_temperature; /* annealing, in cost units */
    uint64_t seed;              /* annealing */
} grip_ghv_params;

/* The scene as GHV reads it. Made by grip_ghv_scene_prepare (CPU) or inside a grip_ghv_scene_cuda; the arrays are
 * owned by the struct and freed by grip_ghv_scene_free. */
typedef struct grip_ghv_scene {
    double resolution;       /* mean nearest-neighbour distance of the finite points (0 with fewer than 2) */
    grip_ghv_params params;  /* every length resolved (> 0) */
    float leaf;              /* params.leaf as the sampling uses it */
    float inlier2, clutter2; /* t^2 and rc^2 in float, as squared distances are compared */
    size_t n;                /* sampled points */
    uint32_t *rows;          /* n: their rows in the full cloud, ascending */
    float *xyz;              /* n x 3 */
    uint32_t *neighbors;     /* n x GRIP_GHV_NEIGHBORS (CPU twin; NULL in the GPU scene's host part) */
    float *neighbor_sqdist;  /* idem */
    grip_kdtree3d *tree;     /* over xyz (CPU twin; the GPU scene builds it on demand, for ICP) */
    /* visibility: the full cloud, borrowed (it must outlive the scene), and its camera */
    const float *full_xyz;
    uint32_t width, height;
    grip_pinhole camera; /* camera.valid == 0: every model point counts as visible */
} grip_ghv_scene;

/* A model sampled at the scene's leaf: finite points only, n x 3. */
typedef struct grip_ghv_model {
    const float *xyz;
    size_t n;
} grip_ghv_model;

/* A hypothesis: model index and pose (row-major top 3 rows of the 4x4, model -> scene, float as transformed). */
typedef struct grip_ghv_hypothesis {
    uint32_t model;
    float pose[12];
} grip_ghv_hypothesis;

/* The terms of a batch of hypotheses, lists concatenated (CSR): hypothesis h's explained points are entries
 * [explained_offsets[h], explained_offsets[h + 1]) of explained_ids / explained_sqdist, ascending by id (a sampled
 * scene point). Clutter alike. All arrays malloc'd by the computing function, freed by grip_ghv_terms_free. */
typedef struct grip_ghv_terms {
    size_t count;
    uint32_t *visible;         /* visible model points */
    uint32_t *outliers;        /* of those, with no scene point within t */
    uint64_t *inlier_sq_fixed; /* sum over the others of floor(d2 / t^2 * 2^32), d2 to the nearest scene point */
    uint64_t *explained_offsets, *clutter_offsets; /* count + 1 */
    uint32_t *explained_ids, *clutter_ids;
    float *explained_sqdist, *clutter_sqdist;
} grip_ghv_terms;

/* GRIP_ECONFIG naming the key ("verify.<key>") for a negative length or regularizer, NaN, an unknown search. */
grip_status grip_ghv_params_check(grip_ctx *ctx, const grip_ghv_params *p);

/* Fills the derived lengths of *s from s->resolution and p, and the float thresholds. GRIP_EINVAL when a length
 * would be 0 (a scene without two distinct finite points and no lengths given). */
grip_status grip_ghv_scene_resolve(grip_ctx *ctx, const grip_ghv_params *p, grip_ghv_scene *s);

/* The CPU twin's scene: resolution, sampling, neighbourhoods, kd-tree and camera of xyz (n x 3, NaN rows allowed;
 * organized width x height when width * height == n and height > 1, else pass width = n, height = 1). xyz is
 * borrowed for visibility and must outlive *out. On failure *out is left freed (zeroed). */
grip_status grip_ghv_scene_prepare(grip_ctx *ctx, const float *xyz, size_t n, uint32_t width, uint32_t height,
                                   const grip_ghv_params *p, grip_ghv_scene *out);
/* Builds s->tree over s->xyz when it has none (the GPU scene's host part, for ICP). */
grip_status grip_ghv_scene_tree(grip_ctx *ctx, grip_ghv_scene *s);
void grip_ghv_scene_free(grip_ghv_scene *s);

/* A model sampled at the scene's leaf: *xyz (malloc'd, freed by the caller with free()) holds *count finite points. */
grip_status grip_ghv_model_sample(grip_ctx *ctx, const grip_ghv_scene *s, const float *xyz, size_t n, float **out_xyz,
                                  size_t *count);

/* The terms of the h hypotheses on the CPU. models[hyps[i].model] must exist (n_models of them). On failure *out is
 * left zeroed. */
grip_status grip_ghv_terms_compute(grip_ctx *ctx, const grip_ghv_scene *s, const grip_ghv_model *models,
                                   uint32_t n_models, const grip_ghv_hypothesis *hyps, size_t h, grip_ghv_terms *out);
void grip_ghv_terms_free(grip_ghv_terms *t);
/* 1 when a and b hold the same terms, bit for bit. */
int grip_ghv_terms_equal(const grip_ghv_terms *a, const grip_ghv_terms *b);

/* The search over subsets of the hypotheses of t, whose lists index s's sampled points: accepted (t->count entries,
 * the caller's) gets 1 for the hypotheses of the best subset found, 0 for the others, and *cost (optional) its
 * cost in GRIP_GHV_UNIT units (0 for the empty set). GRIP_ENOMEM. */
grip_status grip_ghv_search(grip_ctx *ctx, const grip_ghv_params *p, const grip_ghv_scene *s, const grip_ghv_terms *t,
                            uint32_t *accepted, int64_t *cost);

#endif
