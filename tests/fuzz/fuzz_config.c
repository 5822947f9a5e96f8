/* fuzz_config.c -- libFuzzer harness of grip-host's config: the INI parser, --set overrides and the validation
 * against the real plugin's parameter tables.
 *
 * Input: an INI file; a line that is exactly "%%" ends it, and every line after that is one --set argument
 * ("section.key=value"). The plugin is loaded once, from $GRIP_PLUGIN or else the libgrip.so built beside
 * this harness (GRIP_FUZZ_PLUGIN); its tables are what grip-host validates against. */
#include "config.h"
#include "loader.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static grip_loaded_plugin plugin;
static const grip_loaded_plugin *plugins[GRIP_STAGE_KIND_COUNT];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    const char *path = getenv("GRIP_PLUGIN");
    if (!path || !*path)
        path = GRIP_FUZZ_PLUGIN;
    char err[1024] = "";
    if (grip_loader_open(path, &plugin, err, sizeof err) != 0) {
        fprintf(stderr, "fuzz_config: cannot load the plugin whose tables it validates against: %s\n", err);
        exit(1);
    }
    for (uint32_t k = 0; k < GRIP_STAGE_KIND_COUNT; k++)
        plugins[k] = &plugin;
    return 0;
}

static void require(int ok, const char *what, const grip_diag *d)
{
    if (ok)
        return;
    fprintf(stderr, "contract broken: %s\n", what);
    grip_diag_print(d, stderr);
    abort();
}

/* Every message names where it comes from and is one line. */
static void check_messages(const grip_diag *d)
{
    for (size_t i = 0; i < d->count; i++) {
        const char *m = d->messages[i];
        require(strncmp(m, "fuzz.ini:", 9) == 0 || strncmp(m, "--set:", 6) == 0, "a message names its origin", d);
        require(strchr(m, '\n') == NULL, "a message is one line", d);
    }
}

/* Reads what a successful validation hands the stages, as the runner would. */
static void touch_result(const grip_config *cfg)
{
    grip_pipeline_settings ps;
    grip_config_pipeline(cfg, &ps);
    volatile size_t sum = strlen(ps.device);
    for (uint32_t k = 0; k < GRIP_STAGE_KIND_COUNT; k++) {
        char buf[256];
        if (grip_config_stage_plugin(cfg, k, buf, sizeof buf))
            sum += strlen(buf);
        uint32_t n = 0;
        const grip_kv *kv = grip_config_stage_kv(cfg, k, &n);
        for (uint32_t i = 0; i < n; i++)
            sum += strlen(kv[i].key) + strlen(kv[i].value);
    }
    (void)sum;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    size_t ini_len = size, sets_at = size;
    for (size_t at = 0; at < size;) { /* the first line that is exactly "%%" */
        const char *nl = memchr(text + at, '\n', size - at);
        size_t n = nl ? (size_t)(nl - (text + at)) : size - at;
        if (n == 2 && text[at] == '%' && text[at + 1] == '%') {
            ini_len = at;
            sets_at = nl ? at + n + 1 : size;
            break;
        }
        at += n + 1;
    }
    grip_config cfg = {0};
    grip_diag diag = {0};
    grip_config_load_mem("fuzz.ini", text, ini_len, &cfg, &diag);
    for (size_t at = sets_at; at < size;) {
        const char *nl = memchr(text + at, '\n', size - at);
        size_t n = nl ? (size_t)(nl - (text + at)) : size - at;
        char *arg = malloc(n + 1);
        if (!arg)
            break;
        memcpy(arg, text + at, n);
        arg[n] = '\0';
        grip_config_set(&cfg, arg, &diag);
        free(arg);
        at += n + 1;
    }
    /* without plugins (none loaded: stage keys unchecked), then again with the real one's tables */
    grip_config_validate(&cfg, NULL, &diag);
    size_t before = grip_diag_count(&diag);
    if (grip_config_validate(&cfg, plugins, &diag) == 0) {
        require(grip_diag_count(&diag) == before, "success adds no message", &diag);
        touch_result(&cfg);
    }
    check_messages(&diag);
    grip_diag_free(&diag);
    grip_config_free(&cfg);
    return 0;
}
