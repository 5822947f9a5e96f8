/* cmd_list.c -- `grip-host list`: the plugin's identity, its stages and their parameter tables. */
#include "commands/commands.h"
#include "common/param_value.h"
#include "config.h"
#include "loader.h"

#include <stdio.h>

static void print_params(const grip_param_info *table, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        const grip_param_info *p = grip_param_at(table, i);
        char range[96] = "";
        if (p->type == GRIP_PARAM_INT || p->type == GRIP_PARAM_FLOAT)
            snprintf(range, sizeof range, " [%g, %g]", p->min, p->max);
        else if (p->type == GRIP_PARAM_ENUM)
            snprintf(range, sizeof range, " {%s}", p->choices ? p->choices : "");
        printf("    %-28s %-6s = %-8s%s%s\n", p->key, grip_param_is_length(p) ? "length" : grip_param_type_name(p->type),
               p->default_value, range, grip_param_is_length(p) ? " (or N mr: N x the scene's resolution)" : "");
        if (p->doc)
            printf("        %s\n", p->doc);
    }
}

int cmd_list(const host_options *o)
{
    char path[4096], err[1024];
    if (host_plugin_path(o, path, sizeof path) != 0)
        return 1;
    grip_loaded_plugin lp;
    if (grip_loader_open(path, &lp, err, sizeof err) != 0) {
        fprintf(stderr, "grip-host: %s\n", err);
        return 1;
    }
    const grip_plugin *t = &lp.table;
    printf("plugin %s %s (ABI %u.%u) at %s\n", t->name, t->version, t->abi_major, t->abi_minor, path);
    printf("capabilities: %s\n", (t->capabilities & GRIP_CAP_CUDA) ? "CUDA kernels built in" : "CPU only build");
    uint32_t n_pipeline = 0;
    const grip_param_info *pipeline = grip_config_pipeline_params(&n_pipeline);
    printf("\n[pipeline]\n");
    print_params(pipeline, n_pipeline);
    for (uint32_t k = 0; k < GRIP_STAGE_KIND_COUNT; k++) {
        for (uint32_t i = 0; i < t->n_stages; i++) {
            const grip_stage_impl *s = t->stages[i];
            if (s->kind != k)
                continue;
            printf("\n[%s] impl = %s  (%s%s)\n    %s\n", grip_loader_kind_name(k), s->name,
                   (s->backends & GRIP_BACKEND_CPU) ? "cpu" : "",
                   (s->backends & GRIP_BACKEND_CUDA) ? " cuda" : "", s->summary ? s->summary : "");
            print_params(s->params, s->n_params);
        }
    }
    grip_loader_close(&lp);
    return 0;
}
