/* cleanup.h: an interrupted kproof leaves nothing running and nothing on disk.
 *
 * Workers and compilers run in process groups of their own, so a
 * terminal's Ctrl-C never reaches them, and each has files of ours: a
 * worker's private copy of the build, a build's output before its rename.
 * Each live one is listed here; on SIGINT, SIGTERM or SIGHUP a handler
 * kills the listed groups, removes the listed files and folders (with
 * whatever the child wrote in them), and then lets the signal end the
 * process as it would have (status 128 + the signal).
 * SIGKILL runs no handler: for it, a child made with kp_die_with_parent
 * dies with this process (Linux). */
#ifndef KP_CLEANUP_H
#define KP_CLEANUP_H

#include <sys/types.h>

/* Lists a child's file and folder (either may be NULL), removed in that
 * order if a signal ends this process, the folder with everything in it
 * (kp_rm_tree). Returns a slot, or -1 when none is
 * free or a path does not fit (then nothing is listed; every function
 * here ignores slot -1). The first call installs the handler for each of
 * the three signals whose action is still the default: a signal that
 * whoever started kproof ignored (nohup) or handles stays so. List a
 * file before it is made, or make and list it under kp_cleanup_defer. */
int kp_cleanup_add(const char *file, const char *dir);
/* 1: hold SIGINT, SIGTERM and SIGHUP back (in this thread) while a file
 * or folder is made and then listed; 0: let them in again. */
void kp_cleanup_defer(int on);
/* The child's process group once it has one; 0 once the child is reaped
 * (its number may then be reused). */
void kp_cleanup_group(int slot, pid_t pgid);
/* The child is reaped and its file and folder removed: forget them. */
void kp_cleanup_drop(int slot);

/* Removes the folder dir and everything in it (folders 8 levels down at most; symbolic links removed, never followed), with
 * async-signal-safe calls only: the signal handler uses it. Where it is
 * not empty yet (a killed child finishing a call that makes a file), it
 * looks again for up to settle_ms. 0 when dir is gone. */
int kp_rm_tree(const char *dir, int settle_ms);

/* Waits for a group leader `pid` (block 0: only if it has already
 * ended) and reaps it, killing its whole group first: while the leader is
 * a zombie its number still names the group, so nothing that took the
 * number since can be hit. Its group is forgotten in cleanup slot `slot`
 * (-1: none) before the zombie is reaped. 1 with its wait status in
 * *status, 0 if it is still running (block 0 only), -1 if waiting for it
 * failed (errno says why: not our child, or already reaped). */
int kp_reap_group(pid_t pid, int slot, int *status, int block);

/* In a child, right after fork: get `sig` when `parent` dies, and if it
 * already has, die now. Linux only (PR_SET_PDEATHSIG; elsewhere only the
 * check). The signal comes when the thread that forked ends, so fork from
 * the main thread, as kproof does. */
void kp_die_with_parent(pid_t parent, int sig);

#endif
