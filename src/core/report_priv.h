/* report_priv.h: what report.c shares with the other printers of a
 * result (report_html.c), so that every format shows the same cells. */
#ifndef KP_REPORT_PRIV_H
#define KP_REPORT_PRIV_H

#include <stddef.h>
#include <stdio.h>

#include "kproof/kproof.h"

#define KP_REPORT_NCOLS 11 /* the table's columns, shape .. baseline */
#define KP_REPORT_CELL 192 /* bytes per cell */

/* Column titles, and one shape's row, as the console table has them
 * (control characters already replaced). */
void kp_report_titles(const kp_result *r, char cells[KP_REPORT_NCOLS][KP_REPORT_CELL]);
void kp_report_row(const kp_result *r, const kp_shape_result *sr, char cells[KP_REPORT_NCOLS][KP_REPORT_CELL]);
/* Writes the byte-0x80-or-above character at s[i] if it is printable
 * UTF-8, '?' if not; returns the bytes it consumed. */
size_t kp_report_put_high(FILE *f, const char *s, size_t i, size_t len);

#endif
