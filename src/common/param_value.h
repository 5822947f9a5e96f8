/* param_value.h -- parsing one parameter value against its grip_param_info. Written once, linked into both
 * libgrip.so (stage creation) and grip-host (config validation), so both sides agree on what is valid. */
#ifndef GRIP_COMMON_PARAM_VALUE_H
#define GRIP_COMMON_PARAM_VALUE_H

#include <stddef.h>
#include "plugin.h"

typedef struct grip_param_value {
    int boolean;        /* BOOL */
    long long integer;  /* INT */
    double number;      /* FLOAT (and INT, converted) */
    int choice;         /* ENUM: index of the word in `choices` */
    const char *text;   /* the raw text (borrowed) */
} grip_param_value;

/* Parses `text` for `info`. Returns 0 and fills *out, or -1 and writes a one-line reason (without the key)
 * into err, e.g. "0.5x is not a number" or "must be within [0, 1]". */
int grip_param_parse(const grip_param_info *info, const char *text, grip_param_value *out, char *err,
                     size_t errlen);

/* Whether the entry is a length (GRIP_PARAM_FLAG_LENGTH; read only when its struct_size covers `flags`). */
int grip_param_is_length(const grip_param_info *info);

/* A value written as a multiple of the cloud's resolution, "<number> mr" (blanks between optional): returns 1
 * and the number in *multiple; 0 for any other text. */
int grip_param_split_mr(const char *text, double *multiple);

/* Index of `word` among the '|'-separated `choices`, or -1. */
int grip_param_choice_index(const char *choices, const char *word);

/* Finds the entry for `key` in a table of n entries laid out with stride table[0].struct_size; NULL if none. */
const grip_param_info *grip_param_find(const grip_param_info *table, size_t n, const char *key);

/* The i-th entry of a table whose stride is table[0].struct_size (ABI growth rule). */
const grip_param_info *grip_param_at(const grip_param_info *table, size_t i);

/* Name of a parameter type, e.g. "float". */
const char *grip_param_type_name(uint32_t type);

#endif
