/* kproof fault: compile_kill9
 * class: kill -9 of kproof while the compiler runs (orphaned cc1)
 * expect: killed
 * exit: 137
 * check: -
 * kill9: 1
 *
 * The runner kills kproof with SIGKILL while cc1 expands this bomb, and
 * checks that no compiler process is left. Defence: the compiler runs in
 * a pid namespace under a keeper that dies with kproof (without the
 * namespace, the keeper kills the compiler's group).
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
int y = 1, A9;
