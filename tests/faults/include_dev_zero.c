/* kproof fault: include_dev_zero
 * class: #include "/dev/zero" (a compiler that reads forever)
 * expect: ERROR
 * exit: 3
 * check: build
 * detail: memory limit
 *
 * cc1 reads zeros into memory until something stops it. Defence: the
 * compiler's address space is limited (2 GiB for the host compiler), so
 * it fails in a couple of seconds and the build log says why.
 */
#include "/dev/zero"
