/* cli.h: what the kproof command's files share. */
#ifndef KP_CLI_H
#define KP_CLI_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "kproof/kproof.h"

#define KP_EXIT_USAGE 64    /* bad usage or input (missing file, unknown op, bad shape) */
#define KP_EXIT_INTERNAL 70 /* the harness itself failed */

int kp_cli_exit_code(kp_verdict v);
int kp_cli_parse_double(const char *flag, const char *s, double lo, double hi, double *out);
int kp_cli_parse_u64(const char *flag, const char *s, uint64_t *out);
const kp_op *kp_cli_op(const char *name, const char *dtype);
/* 1 when the cuda worker is built and a GPU answers. */
int kp_cli_cuda_usable(const char *root, const char *cache);
int kp_cli_demo(int argc, char **argv);
/* A file written whole or not at all (a temporary file beside it, synced,
 * renamed): open gives NULL with why set; close returns 0 or -1 with why. */
FILE *kp_cli_atomic_open(const char *path, char *tmp, size_t tmplen, char *why, size_t len);
int kp_cli_atomic_close(FILE *f, const char *tmp, const char *path, char *why, size_t len);
/* worth.c: reading results and profiles. */
int kp_cli_worth(int argc, char **argv);
int kp_cli_compare(int argc, char **argv);
int kp_cli_report(int argc, char **argv);

#endif
