/* explain.c -- see explain.h. */
#include "explain.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

uint32_t explain_verdict_reason(const grip_verdict *v)
{
    if (v->struct_size >= offsetof(grip_verdict, reason) + sizeof v->reason) {
        if (v->accepted)
            return GRIP_VERDICT_ACCEPTED;
        return v->reason == GRIP_VERDICT_ACCEPTED || v->reason >= EXPLAIN_REASONS ? GRIP_VERDICT_UNSPECIFIED
                                                                                  : v->reason;
    }
    return v->accepted ? GRIP_VERDICT_ACCEPTED : GRIP_VERDICT_UNSPECIFIED;
}

const char *explain_reason_key(uint32_t reason)
{
    static const char *const keys[EXPLAIN_REASONS] = {
        [GRIP_VERDICT_ACCEPTED] = "",
        [GRIP_VERDICT_UNSPECIFIED] = "unspecified",
        [GRIP_VERDICT_CAP] = "max_hypotheses",
        [GRIP_VERDICT_ICP_FAILED] = "max_correspondence_distance",
        [GRIP_VERDICT_FITNESS] = "min_fitness",
        [GRIP_VERDICT_RMSE] = "max_rmse",
        [GRIP_VERDICT_DRIFT] = "max_drift",
        [GRIP_VERDICT_FREE_SPACE] = "max_violation",
        [GRIP_VERDICT_DUPLICATE] = "duplicate_distance",
        [GRIP_VERDICT_GHV] = "ghv",
        [GRIP_VERDICT_SUPPORT] = "max_sunk",
    };
    return reason < EXPLAIN_REASONS ? keys[reason] : keys[GRIP_VERDICT_UNSPECIFIED];
}

void explain_rejection(char *buf, size_t n, uint32_t reason, float fitness, float rmse, float violation,
                       const explain_settings *s)
{
    const char *key = explain_reason_key(reason);
    const char *value = reason < EXPLAIN_REASONS ? s->value[reason] : "";
    const char *sep = *value ? " " : "";
    switch (reason) {
    case GRIP_VERDICT_CAP:
        snprintf(buf, n, "not verified: fewer votes than the best %s%s%s", key, sep, value);
        break;
    case GRIP_VERDICT_ICP_FAILED:
        snprintf(buf, n, "ICP failed (no finite update): check %s%s%s", key, sep, value);
        break;
    case GRIP_VERDICT_FITNESS:
        snprintf(buf, n, "fitness %.3f < %s%s%s", fitness, key, sep, value);
        break;
    case GRIP_VERDICT_RMSE:
        snprintf(buf, n, "RMSE %.4g > %s%s%s", rmse, key, sep, value);
        break;
    case GRIP_VERDICT_DRIFT:
        snprintf(buf, n, "ICP moved it farther than %s%s%s from the grouped pose", key, sep, value);
        break;
    case GRIP_VERDICT_FREE_SPACE:
        snprintf(buf, n, "free-space violation %.3f > %s%s%s", violation, key, sep, value);
        break;
    case GRIP_VERDICT_DUPLICATE:
        snprintf(buf, n,
                 "duplicate: within %s%s%s (or duplicate_center_distance) of a better pose of the same model, or "
                 "sharing its space with a better pose (max_overlap)",
                 key, sep, value);
        break;
    case GRIP_VERDICT_SUPPORT:
        snprintf(buf, n,
                 "sunk into the support plane: more than %s%s%s of it beneath the plane by more than "
                 "support_margin",
                 key, sep, value);
        break;
    case GRIP_VERDICT_GHV:
        snprintf(buf, n, "not in the subset GHV found to explain the scene best");
        break;
    case GRIP_VERDICT_ACCEPTED:
        snprintf(buf, n, "accepted");
        break;
    default:
        snprintf(buf, n, "the verify stage gave no reason");
    }
}

static int finite_point(const float *p)
{
    return isfinite(p[0]) && isfinite(p[1]) && isfinite(p[2]);
}

double explain_cloud_resolution(const host_cloud *c)
{
    enum { SAMPLES = 64 };
    const size_t step = c->n > SAMPLES ? c->n / SAMPLES : 1;
    double sum = 0;
    size_t counted = 0;
    for (size_t i = 0; i < c->n; i += step) {
        const float *p = c->xyz + 3 * i;
        if (!finite_point(p))
            continue;
        double best = INFINITY;
        for (size_t j = 0; j < c->n; j++) {
            const float *q = c->xyz + 3 * j;
            if (j == i || !finite_point(q))
                continue;
            double dx = (double)q[0] - p[0], dy = (double)q[1] - p[1], dz = (double)q[2] - p[2];
            double d2 = dx * dx + dy * dy + dz * dz;
            if (d2 > 0 && d2 < best)
                best = d2;
        }
        if (isfinite(best)) {
            sum += sqrt(best);
            counted++;
        }
    }
    return counted ? sum / (double)counted : 0.0;
}

/* The likely cause, from the descriptor radius against the clouds' resolutions, appended to buf. */
static void radius_cause(char *buf, size_t n, const host_cloud *models, size_t n_models, const host_cloud *scene,
                         const explain_settings *s, const char *otherwise)
{
    size_t used = strlen(buf);
    const double scene_res = explain_cloud_resolution(scene);
    for (size_t m = 0; m < n_models; m++) {
        const double model_res = explain_cloud_resolution(&models[m]);
        const double ratio = model_res > 0 && scene_res > 0 ? scene_res / model_res : 1.0;
        if (ratio > 20 || ratio < 0.05) {
            snprintf(buf + used, n - used,
                     "; model %zu's resolution %.3g and the scene's %.3g differ %.0fx: are they in the same units?", m,
                     model_res, scene_res, ratio > 1 ? ratio : 1 / ratio);
            return;
        }
    }
    const double radius = *s->descriptor_radius ? strtod(s->descriptor_radius, NULL) : 0.0;
    if (radius > 0 && scene_res > 0 && radius < 3 * scene_res)
        snprintf(buf + used, n - used,
                 "; descriptor.radius %s is %.3g x the scene's resolution %.3g, too small to hold a neighbourhood%s",
                 s->descriptor_radius, radius / scene_res, scene_res,
                 scene_res > 0.1 ? ": is the cloud in millimetres while the radius is in metres?"
                                 : ": raise descriptor.radius");
    else if (radius > 0 && scene_res > 0 && radius > 1000 * scene_res)
        snprintf(buf + used, n - used,
                 "; descriptor.radius %s is %.3g x the scene's resolution %.3g: is the radius in millimetres while "
                 "the cloud is in metres?",
                 s->descriptor_radius, radius / scene_res, scene_res);
    else
        snprintf(buf + used, n - used, "; the scene's resolution is %.3g%s%s: %s", scene_res,
                 *s->descriptor_radius ? ", descriptor.radius " : "", s->descriptor_radius, otherwise);
}

int explain_empty_run(char *buf, size_t n, size_t scene_keypoints, size_t correspondences, size_t hypotheses,
                      const host_cloud *models, size_t n_models, const host_cloud *scene, const explain_settings *s)
{
    buf[0] = '\0';
    const char *otherwise = "check the match stage's distance bound and that normals point to the sensor";
    if (hypotheses == 0 && correspondences > 0)
        otherwise = "check the group stage's vote threshold and bin or consensus size, and that normals point to "
                    "the sensor (frames are built on them)";
    if (scene_keypoints == 0)
        snprintf(buf, n, "the scene gave no keypoint, so no correspondence: check the descriptor's keypoint settings");
    else if (correspondences == 0)
        snprintf(buf, n, "no correspondence between the scene's %zu keypoints and the models", scene_keypoints);
    else if (hypotheses == 0)
        snprintf(buf, n, "%zu correspondences but no hypothesis: the group stage found no consistent set",
                 correspondences);
    else
        return 0;
    radius_cause(buf, n, models, n_models, scene, s, otherwise);
    return 1;
}
