/* backend.h: what a worker needs from a device. One implementation per
 * backend folder: src/host/backend.c (the CPU) and src/cuda/backend.cu.
 * The worker loop (worker.c) is the same for both; it links exactly one.
 *
 * "Device memory" means host memory on the host backend. Every function
 * returns 0 on success and non-zero on failure unless it says otherwise;
 * on failure kp_dev_error() describes the last error. Buffers given to
 * fill, pattern, checksum and the copies may be aligned to their element
 * type only (kp_setup_req.misalign): none may assume more.
 */
#ifndef KP_BACKEND_H
#define KP_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include "kproof/kproof.h"
#include "proto/proto.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The backend this worker was built with. */
extern const kp_backend kp_dev_kind;

/* Creates the context and the stream handed to candidates. */
int kp_dev_init(char *err, size_t len);
/* Device facts and current clocks (fills what it knows, leaves the rest). */
void kp_dev_env(kp_env *e);
/* Text of the last error ("" if none). */
const char *kp_dev_error(void);

void *kp_dev_alloc(size_t bytes); /* NULL on failure */
void kp_dev_free(void *p);
int kp_dev_to_dev(void *dst, const void *src, size_t n);   /* device -> device */
int kp_dev_to_host(void *dst, const void *src, size_t n);  /* device -> host */
int kp_dev_from_host(void *dst, const void *src, size_t n);/* host -> device */
/* Fills n elements with the counter-based generator (gen.h), in dtype t. */
int kp_dev_fill(void *dst, kp_dtype t, const kp_gen *g, uint64_t seed, uint32_t stream, int64_t n);
/* Fills n bytes with a repeating 1/2/4-byte pattern (poison, canaries). */
int kp_dev_pattern(void *dst, uint32_t pattern, int pattern_bytes, size_t n);
/* kp_cksum (gen.h) of n bytes, computed on the device. */
uint64_t kp_dev_checksum(const void *p, size_t n);

/* Evicts caches: resets L2 persistence and writes a buffer of at least
 * twice the last-level cache. */
int kp_dev_flush(void);
/* Device-wide synchronize (host: nothing). Returns the deferred error. */
int kp_dev_sync(void);
/* The stream handed to the candidate (NULL on host). */
void *kp_dev_stream(void);
/* Events on the given stream around the call (host: host clock). */
int kp_dev_event_start(void);
int kp_dev_event_stop(void);
double kp_dev_event_elapsed(void); /* seconds, after kp_dev_sync */
/* The stream blocker (cuda; host: none, returns 1): begin holds the given
 * stream with a kernel that waits for end (or KP_BLOCK_TIMEOUT_S), so the
 * start event and everything the candidate enqueues run back to back on
 * the device, and its time is the device's, not the host's launch latency.
 * The kernel fills every SM, so nothing on another stream runs meanwhile.
 * After kp_dev_sync, kp_dev_block_state says 1 (released by end) or 2 (it
 * timed out: the candidate waited on the device inside its call). */
#define KP_BLOCK_TIMEOUT_S 1.0
int kp_dev_block_begin(void);
void kp_dev_block_end(void);
int kp_dev_block_state(void);
/* After a call: error left by the candidate (cudaGetLastError); 0 none. */
int kp_dev_check_error(char *text, size_t len);

/* The device-work tracer (cuda: CUPTI activity records and API callbacks;
 * host: none). Started once, before the candidate is loaded, and on until
 * the worker exits, so every kernel, copy and memset the process causes
 * is seen, by any thread on any stream. The worker brackets what it does:
 *   kp_dev_trace_load(1) ... dlopen ... kp_dev_trace_load(0)
 *   per call: kp_dev_trace_begin()       before the stream hold is enqueued
 *             kp_dev_trace_mark(held)    after it (unheld: puts a start mark on the stream)
 *             (the start event)
 *             kp_dev_trace_enter()       right before the entry point
 *             kp_dev_trace_leave()       right after it returns, before the stop event
 *             kp_dev_trace_end()         after the stop event (puts the stop mark on the stream)
 *             kp_dev_trace_event(s)      once the events' time is known (RUN only)
 *   kp_dev_trace_account(rep)            device sync, flush, judge every record since the last one
 * kp_dev_trace_start returns 0 when tracing runs; otherwise why says why
 * and the other calls do nothing. */
int kp_dev_trace_start(char *why, size_t len);
void kp_dev_trace_load(int loading);
void kp_dev_trace_begin(void);
void kp_dev_trace_mark(int held);
void kp_dev_trace_enter(void);
void kp_dev_trace_leave(void);
void kp_dev_trace_end(void);
/* After a RUN's device sync: the events' time of the call just ended. */
void kp_dev_trace_event(double event_s);
int kp_dev_trace_account(kp_acct_rep *rep);

int kp_dev_calibrate(kp_calib_rep *rep);
/* The naive one-input flaw only: the op's result computed on this device,
 * in the worker, the way a naive harness computes its reference next to
 * the candidate (out: the output buffer's dtype). Used when the parent
 * holds no full reference to stage (large matmul is checked by sampling).
 * 0 done, 1 not offered for this op, -1 failed. */
int kp_dev_reference(const kp_op *op, const kp_shape *s, void *const *bufs, void *out);

/* After a call: 1 when the candidate left L2 persistence set up (a
 * persisting-L2 limit above 0 or an access-policy window on the given
 * stream), 0 otherwise. Host: 0. */
int kp_dev_persist_state(void);
/* Device memory in use now, in bytes (cuda: total - free; host: resident
 * set size), to see what a call kept for itself. */
int64_t kp_dev_mem_used(void);

/* kp_now_ns (kproof.h) is the worker's clock too. */

#ifdef __cplusplus
}
#endif

#endif
