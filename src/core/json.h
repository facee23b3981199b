/* json.h: a small JSON reader (RFC 8259), for kproof's own result files,
 * calibration exports and torch.profiler Chrome traces.
 *
 * The whole text becomes a tree of kp_json values. Strict on structure
 * (no trailing commas, comments, NaN literals or trailing garbage), lenient
 * where real files differ without harm (a UTF-8 byte order mark; bytes
 * that are not UTF-8 inside strings are kept as they are). Every failure
 * says what and where in one line: "truncated: the text ends inside a
 * string (line 3, column 17)".
 */
#ifndef KP_JSON_H
#define KP_JSON_H

#include <stddef.h>

typedef enum kp_jtype {
    KP_JSON_NULL = 0,
    KP_JSON_BOOL,
    KP_JSON_NUM,
    KP_JSON_STR,
    KP_JSON_ARR,
    KP_JSON_OBJ
} kp_jtype;

typedef struct kp_json kp_json;
struct kp_json {
    kp_jtype type;
    int b;           /* KP_JSON_BOOL: 0 or 1 */
    double num;      /* KP_JSON_NUM: finite */
    char *str;       /* KP_JSON_STR: decoded, NUL-terminated (len excludes the NUL) */
    size_t len;      /* KP_JSON_STR: bytes; KP_JSON_ARR / KP_JSON_OBJ: members */
    kp_json *items;  /* KP_JSON_ARR: elements; KP_JSON_OBJ: values, in file order */
    char **keys;     /* KP_JSON_OBJ: keys, decoded, parallel to items */
};

/* Failure kinds; kp_json_parse returns 0 or one of these. */
enum {
    KP_JSON_OK = 0,
    KP_JSON_EMPTY = -1,     /* nothing but white space */
    KP_JSON_TRUNCATED = -2, /* the text ends before the value does */
    KP_JSON_SYNTAX = -3,    /* anything else that is not JSON */
    KP_JSON_NOMEM = -4,
    KP_JSON_IO = -5         /* kp_json_read_file: cannot open or read */
};

/* Maximum nesting of arrays and objects: deeper input is refused rather
 * than recursed into. */
#define KP_JSON_MAX_DEPTH 256

/* Parses text[0..len) into a tree (*out, free with kp_json_free). On
 * failure *out is NULL and err holds one line. */
int kp_json_parse(const char *text, size_t len, kp_json **out, char *err, size_t errlen);
/* Reads and parses a whole file (at most max_bytes; 0: 1 GiB). The error
 * line starts with the path. */
int kp_json_read_file(const char *path, size_t max_bytes, kp_json **out, char *err, size_t errlen);
void kp_json_free(kp_json *v);

/* Accessors: NULL-safe, so lookups chain: kp_json_get(kp_json_get(r, "env"), "gpu"). */
const kp_json *kp_json_get(const kp_json *obj, const char *key); /* first member named key, or NULL */
const kp_json *kp_json_at(const kp_json *arr, size_t i);         /* element i of an array, or NULL */
size_t kp_json_count(const kp_json *v);                          /* members of an array or object, else 0 */
/* A number's value; `dflt` for anything else (null, absent, a string). */
double kp_json_num(const kp_json *v, double dflt);
/* A string's text, or NULL for anything else. */
const char *kp_json_text(const kp_json *v);
/* 1 for true, 0 for false, dflt for anything else. */
int kp_json_bool(const kp_json *v, int dflt);

#endif
