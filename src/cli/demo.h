/* demo.h: the demo matrix (demo.c), the command `kproof demo`. */
#ifndef KP_CLI_DEMO_H
#define KP_CLI_DEMO_H

int kp_cli_demo(int argc, char **argv);

#endif
