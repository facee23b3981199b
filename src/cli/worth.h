/* worth.h: reading results and profiles (worth.c), the commands
 * `kproof worth`, `kproof compare` and `kproof report`. */
#ifndef KP_CLI_WORTH_H
#define KP_CLI_WORTH_H

int kp_cli_worth(int argc, char **argv);
int kp_cli_compare(int argc, char **argv);
int kp_cli_report(int argc, char **argv);

#endif
