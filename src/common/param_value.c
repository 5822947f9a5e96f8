/* param_value.c -- see param_value.h. */
#include "common/param_value.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

const grip_param_info *grip_param_at(const grip_param_info *table, size_t i)
{
    size_t stride = table[0].struct_size ? table[0].struct_size : sizeof *table;
    return (const grip_param_info *)((const char *)table + i * stride);
}

const grip_param_info *grip_param_find(const grip_param_info *table, size_t n, const char *key)
{
    for (size_t i = 0; i < n; i++) {
        const grip_param_info *p = grip_param_at(table, i);
        if (strcmp(p->key, key) == 0)
            return p;
    }
    return NULL;
}

int grip_param_choice_index(const char *choices, const char *word)
{
    if (!choices || !word)
        return -1;
    size_t len = strlen(word);
    int index = 0;
    for (const char *p = choices;; index++) {
        const char *bar = strchr(p, '|');
        size_t n = bar ? (size_t)(bar - p) : strlen(p);
        if (n == len && strncmp(p, word, len) == 0)
            return index;
        if (!bar)
            return -1;
        p = bar + 1;
    }
}

const char *grip_param_type_name(uint32_t type)
{
    switch (type) {
    case GRIP_PARAM_BOOL: return "bool";
    case GRIP_PARAM_INT: return "int";
    case GRIP_PARAM_FLOAT: return "float";
    case GRIP_PARAM_ENUM: return "enum";
    case GRIP_PARAM_STRING: return "string";
    }
    return "?";
}

int grip_param_is_length(const grip_param_info *info)
{
    return info->struct_size >= offsetof(grip_param_info, flags) + sizeof info->flags &&
           (info->flags & GRIP_PARAM_FLAG_LENGTH) != 0;
}

int grip_param_split_mr(const char *text, double *multiple)
{
    char *end = NULL;
    errno = 0;
    double v = strtod(text, &end);
    if (errno || end == text || !isfinite(v))
        return 0;
    while (*end == ' ' || *end == '\t')
        end++;
    if (strcmp(end, "mr") != 0)
        return 0;
    *multiple = v;
    return 1;
}

/* Why a number followed by a word is no value: a unit a length cannot have, or `mr` where it cannot be resolved
 * (the host resolves it, for lengths only). */
static void explain_unit(const grip_param_info *info, const char *text, const char *unit, char *err, size_t errlen)
{
    double m;
    int length = grip_param_is_length(info);
    if (!grip_param_split_mr(text, &m))
        snprintf(err, errlen, "'%s': unknown unit '%s' (a length is a number in the cloud's unit, or a multiple of "
                 "the cloud's resolution as 'N mr')", text, unit);
    else if (!length)
        snprintf(err, errlen, "'%s': mr (multiples of the cloud's resolution) is for lengths only, and this is "
                 "not a length", text);
    else
        snprintf(err, errlen, "'%s': a multiple of the cloud's resolution must be resolved to a number by the host "
                 "(grip-host run does: grip_plugin.cloud_resolution) before the stage gets it", text);
}

static int parse_bool(const char *t, int *out)
{
    static const char *yes[] = {"true", "1", "yes", "on"}, *no[] = {"false", "0", "no", "off"};
    for (size_t i = 0; i < 4; i++) {
        if (strcasecmp(t, yes[i]) == 0) { *out = 1; return 0; }
        if (strcasecmp(t, no[i]) == 0) { *out = 0; return 0; }
    }
    return -1;
}

static int check_range(const grip_param_info *info, double v, char *err, size_t errlen)
{
    if (v < info->min || v > info->max) {
        snprintf(err, errlen, "%g is out of range [%g, %g]", v, info->min, info->max);
        return -1;
    }
    return 0;
}

int grip_param_parse(const grip_param_info *info, const char *text, grip_param_value *out, char *err,
                     size_t errlen)
{
    memset(out, 0, sizeof *out);
    out->text = text;
    if (!text || !*text) {
        snprintf(err, errlen, "empty value");
        return -1;
    }
    char *end = NULL;
    switch (info->type) {
    case GRIP_PARAM_BOOL:
        if (parse_bool(text, &out->boolean) != 0) {
            snprintf(err, errlen, "'%s' is not a boolean (true/false)", text);
            return -1;
        }
        return 0;
    case GRIP_PARAM_INT:
        errno = 0;
        out->integer = strtoll(text, &end, 10);
        if (errno || end == text || *end) {
            double multiple;
            if (grip_param_split_mr(text, &multiple))
                explain_unit(info, text, "mr", err, errlen);
            else
                snprintf(err, errlen, "'%s' is not an integer", text);
            return -1;
        }
        out->number = (double)out->integer;
        return check_range(info, out->number, err, errlen);
    case GRIP_PARAM_FLOAT:
        errno = 0;
        out->number = strtod(text, &end);
        if (!errno && end != text && isfinite(out->number) && *end) {
            const char *unit = end;
            while (*unit == ' ' || *unit == '\t')
                unit++;
            double multiple;
            if (isalpha((unsigned char)*unit) && (grip_param_is_length(info) || grip_param_split_mr(text, &multiple))) {
                explain_unit(info, text, unit, err, errlen);
                return -1;
            }
        }
        if (errno || end == text || *end || !isfinite(out->number)) {
            snprintf(err, errlen, "'%s' is not a finite number", text);
            return -1;
        }
        return check_range(info, out->number, err, errlen);
    case GRIP_PARAM_ENUM:
        out->choice = grip_param_choice_index(info->choices, text);
        if (out->choice < 0) {
            snprintf(err, errlen, "'%s' is not one of %s", text, info->choices ? info->choices : "(none)");
            return -1;
        }
        return 0;
    case GRIP_PARAM_STRING:
        return 0;
    }
    snprintf(err, errlen, "parameter has an unknown type %u", info->type);
    return -1;
}
