/* kproof fault: macro_bomb
 * class: a macro that expands to 10^10 tokens (compiler time)
 * expect: ERROR
 * exit: 3
 * check: build
 * detail: build timed out
 * env: KPROOF_BUILD_TIMEOUT=1
 *
 * Defence: the compiler's wall clock is bounded (KPROOF_BUILD_TIMEOUT,
 * default 120 s for the host compiler, here 1 s), its whole group killed
 * after it, and its memory is bounded too.
 */
#define A0 x x x x x x x x x x
#define A1 A0 A0 A0 A0 A0 A0 A0 A0 A0 A0
#define A2 A1 A1 A1 A1 A1 A1 A1 A1 A1 A1
#define A3 A2 A2 A2 A2 A2 A2 A2 A2 A2 A2
#define A4 A3 A3 A3 A3 A3 A3 A3 A3 A3 A3
#define A5 A4 A4 A4 A4 A4 A4 A4 A4 A4 A4
#define A6 A5 A5 A5 A5 A5 A5 A5 A5 A5 A5
#define A7 A6 A6 A6 A6 A6 A6 A6 A6 A6 A6
#define A8 A7 A7 A7 A7 A7 A7 A7 A7 A7 A7
#define A9 A8 A8 A8 A8 A8 A8 A8 A8 A8 A8
int A9;
