/* common.h: what the kproof command's files share (common.c): exit codes,
 * argument parsing, the op lookup, whether a GPU answers, files written
 * whole. Each command's file includes it; none includes another's. */
#ifndef KP_CLI_COMMON_H
#define KP_CLI_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "kproof/kproof.h"

#define KP_EXIT_USAGE 64    /* bad usage or input (missing file, unknown op, bad shape) */
#define KP_EXIT_INTERNAL 70 /* the harness itself failed */

int kp_cli_parse_double(const char *flag, const char *s, double lo, double hi, double *out);
int kp_cli_parse_u64(const char *flag, const char *s, uint64_t *out);
const kp_op *kp_cli_op(const char *name, const char *dtype);
/* The backend when none is named: cuda when its worker is built and a GPU
 * answers, else host. -1 after saying why on stderr ("kproof CMD: ...")
 * when the GPU's device lock cannot be opened or had: whether a GPU
 * answers is then unknown, and the command ends with KP_EXIT_INTERNAL. */
int kp_cli_auto_backend(const char *cmd, const char *root, const char *cache, kp_backend *be);
/* 1 when the cache folder may be believed (kp_cache_check); else 0, with
 * one line on stderr saying why (the caller exits KP_EXIT_USAGE). A NULL
 * cache (kp_default_cache without a usable temporary folder) passes: the
 * command's kp_cli_tmp_usable, which comes before any use of the cache,
 * refuses the run. */
int kp_cli_cache_ok(const char *cmd, const char *cache);
/* The folder part of a path ("." when it has none). */
void kp_cli_dir_of(const char *path, char *dir, size_t len);
/* A file written whole or not at all (a temporary file beside it, synced,
 * renamed): open gives NULL with why set; close returns 0 or -1 with why. */
FILE *kp_cli_atomic_open(const char *path, char *tmp, size_t tmplen, char *why, size_t len);
int kp_cli_atomic_close(FILE *f, const char *tmp, const char *path, char *why, size_t len);
/* Do two paths name one file? The same device and inode where both exist;
 * where neither does, the same absolute path (folders resolved). */
int kp_cli_same_file(const char *a, const char *b);
/* An output path that names an input (the candidate, a result read) is
 * refused before anything runs: says so on stderr as "kproof CMD: FLAG OUT
 * is the WHAT ..." and returns -1; 0 when they are different files. */
int kp_cli_out_clash(const char *cmd, const char *flag, const char *out, const char *what, const char *input);
/* Is kproof's temporary folder usable (kp_tmp_dir)? -1 after saying why
 * on stderr: the command then ends with 70 before it runs anything. */
int kp_cli_tmp_usable(const char *cmd);

#endif
