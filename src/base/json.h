/* Internal: the JSON parser of the safetensors reader (json.c). */
#ifndef NMT_JSON_H
#define NMT_JSON_H

#include <stddef.h>
#include <stdint.h>

/* Bounds that keep a hostile header from costing much memory or stack:
 * nesting depth, items of one array, members of one object, and the bytes
 * all item and member arrays of one document may take (a real header needs a
 * few kilobytes; strings are bounded by the text's own length). */
#define JSON_MAX_DEPTH 16
#define JSON_MAX_ARRAY 64
#define JSON_MAX_MEMBERS 1000000
#define JSON_BUDGET (64u << 20)

/* Only what a safetensors header holds: objects, arrays, strings, whole
 * numbers (and the three literals, so that a valid JSON header with them is
 * refused by meaning, not by syntax). */
typedef enum { J_NULL, J_BOOL, J_INT, J_STR, J_ARR, J_OBJ } jtype;

typedef struct jmember jmember;
typedef struct jval {
    jtype type;
    int64_t i;        /* J_INT, J_BOOL */
    char *s;          /* J_STR: NUL-terminated UTF-8 (no NUL inside) */
    size_t n;         /* J_ARR items, J_OBJ members */
    struct jval *items;
    jmember *members;
} jval;

struct jmember {
    char *key;
    jval val;
};

/* Parses one JSON value filling all of text[0, n) but for whitespace after
 * it (the padding of a safetensors header). On failure returns
 * NMT_ERR_FORMAT (NMT_ERR_NOMEM) with "NAME: malformed header at byte K:
 * what" as the message; *root must then still be freed with nmt_jval_free. */
int nmt_json_parse(jval *root, const unsigned char *text, size_t n, const char *name);
void nmt_jval_free(jval *v);

#endif
