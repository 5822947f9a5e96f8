/* plausibility.c -- see plausibility.h. */
#include "plausibility.h"
#include "common/param_value.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* What is known of one cloud: its extent always, its resolution once measured. */
typedef struct cloud_facts {
    const host_cloud *cloud;
    int index;        /* the model's place on the command line; -1 for the scene */
    double diagonal;  /* of the bounding box of the finite points */
    size_t n_finite;
    double resolution; /* 0: not measured yet */
} cloud_facts;

static void measure_extent(cloud_facts *f)
{
    float lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    f->n_finite = 0;
    for (size_t i = 0; i < f->cloud->n; i++) {
        const float *q = f->cloud->xyz + 3 * i;
        if (!isfinite(q[0]) || !isfinite(q[1]) || !isfinite(q[2]))
            continue;
        f->n_finite++;
        for (int d = 0; d < 3; d++) {
            lo[d] = fminf(lo[d], q[d]);
            hi[d] = fmaxf(hi[d], q[d]);
        }
    }
    f->diagonal = 0;
    for (int d = 0; f->n_finite && d < 3; d++)
        f->diagonal += ((double)hi[d] - lo[d]) * ((double)hi[d] - lo[d]);
    f->diagonal = sqrt(f->diagonal);
}

/* Whether a support radius r may lie below the cloud's resolution, without measuring it. A scan samples a surface
 * of area A inside its bounding box; a convex one has A <= the box's faces' area <= 2 diagonal^2, and n points on
 * it lie a mean nearest-neighbour distance <= sqrt(A / n) apart (a grid; random points are closer). So the
 * resolution is below 1.5 diagonal / sqrt(n), and a radius above twice that can hold no fewer neighbours than a
 * resolution-spaced cloud gives it: measuring (a k-NN over the cloud) is only worth it below. */
static int may_hold_no_neighbour(const cloud_facts *f, double r)
{
    return f->n_finite >= 2 && r < 2.0 * f->diagonal / sqrt((double)f->n_finite);
}

static void cloud_name(const cloud_facts *f, char *buf, size_t n)
{
    const char *path = f->cloud->path ? f->cloud->path : "";
    if (f->index < 0)
        snprintf(buf, n, "the scene %s", path);
    else
        snprintf(buf, n, "model %d %s", f->index, path);
}

/* Which comparisons a length key gets: support radii both, the other lengths that span the cloud (leaves, bins,
 * ICP pairing distances) only the whole-cloud one; tolerances (RMSE, drift, duplicates) neither, as a large one
 * just means "no limit". */
static int is_radius(const char *key)
{
    return strstr(key, "radius") != NULL;
}

static int spans_cloud(const char *key)
{
    return is_radius(key) || strstr(key, "leaf") || strstr(key, "bin_size") || strstr(key, "correspondence_distance") ||
           strcmp(key, "icp_distance") == 0;
}

/* Keys named model_* / scene_* (grip's convention) apply to those clouds alone. */
static int applies_to(const char *key, const cloud_facts *f)
{
    if (strncmp(key, "model_", 6) == 0)
        return f->index >= 0;
    if (strncmp(key, "scene_", 6) == 0)
        return f->index < 0;
    return 1;
}

/* One length of stage kind k: its warning, if any, for the first cloud it is implausible on. */
static void check_length(const grip_pipeline *p, const char *section, const char *key, const char *value,
                         cloud_facts *facts, int n_facts, grip_diag *warnings)
{
    char *end;
    double v = strtod(value, &end);
    if (end == value || !(v > 0)) /* 0 is every table's "derive it" */
        return;
    char name[4200];
    for (int c = 0; c < n_facts; c++) {
        cloud_facts *f = &facts[c];
        if (!applies_to(key, f) || f->n_finite == 0)
            continue;
        cloud_name(f, name, sizeof name);
        if (spans_cloud(key) && v > f->diagonal) {
            grip_diag_add(warnings,
                          "%s.%s = %s (cloud unit) is larger than the whole of %s (diagonal "
                          "%.3g): %s",
                          section, key, value, name, f->diagonal,
                          is_radius(key) ? "every support is the whole cloud"
                                         : "it spans the whole cloud (wrong unit?)");
            return;
        }
        if (is_radius(key) && may_hold_no_neighbour(f, v)) {
            if (!(f->resolution > 0))
                f->resolution = pipeline_cloud_resolution(p, f->cloud);
            if (f->resolution > 0 && v < f->resolution) {
                grip_diag_add(warnings,
                              "%s.%s = %s (cloud unit) is smaller than the resolution of %s "
                              "(%.3g): it holds no neighbour (wrong unit?)",
                              section, key, value, name, f->resolution);
                return;
            }
        }
    }
}

void plausibility_check(const grip_pipeline *p, const grip_config *cfg, const host_cloud *scene,
                        const host_cloud *models, int n_models, const double *known_model_res, grip_diag *warnings)
{
    cloud_facts *facts = calloc((size_t)n_models + 1, sizeof *facts);
    if (!facts)
        return; /* a warning is advice: without memory for it the run goes on */
    int n = 0;
    if (scene)
        facts[n++] = (cloud_facts){scene, -1, 0, 0, cfg->resolution};
    for (int i = 0; i < n_models; i++)
        facts[n++] = (cloud_facts){&models[i], i, 0, 0, known_model_res ? known_model_res[i] : 0};
    for (int c = 0; c < n; c++)
        measure_extent(&facts[c]);
    for (uint32_t k = 0; k < GRIP_STAGE_KIND_COUNT; k++) {
        const grip_stage_impl *impl = p->impl[k];
        uint32_t n_kv = 0;
        const grip_kv *kv = grip_config_stage_kv(cfg, k, &n_kv);
        for (uint32_t i = 0; impl && i < impl->n_params; i++) {
            const grip_param_info *info = &impl->params[i];
            if (!grip_param_is_length(info))
                continue;
            const char *value = info->default_value ? info->default_value : "";
            for (uint32_t j = 0; j < n_kv; j++)
                if (strcmp(kv[j].key, info->key) == 0)
                    value = kv[j].value;
            check_length(p, grip_loader_kind_name(k), info->key, value, facts, n, warnings);
        }
    }
    free(facts);
}
