/* kproof fault: socket_inet
 * class: open a network socket and reach a host (TCP, UDP, IPv6, io_uring)
 * expect: PASS
 * exit: 0
 * check: -
 *
 * Defence: a network namespace with no device up, and a seccomp filter that
 * allows only AF_UNIX sockets and no io_uring. Where the faults test itself
 * runs in a network namespace (ctest, as root), the datagram to 127.0.0.1
 * fails there too; a socket that opens at all is the breach it reports.
 */
#include "fault.h"
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/syscall.h>

static void fault_attempt(void) {
    static const int fams[2] = {AF_INET, AF_INET6};
    for (int i = 0; i < 2; i++) {
        int s = socket(fams[i], SOCK_DGRAM, 0);
        if (s < 0) continue;
        struct sockaddr_in a;
        memset(&a, 0, sizeof a);
        a.sin_family = AF_INET;
        a.sin_port = htons(53);
        a.sin_addr.s_addr = htonl(0x7f000001);
        if (fams[i] == AF_INET && sendto(s, "x", 1, 0, (struct sockaddr *)&a, sizeof a) == 1)
            fault_report("sent a UDP datagram");
        close(s);
        fprintf(stderr, "fault: a socket of family %d opened\n", fams[i]);
        fault_broke = 1;
    }
#ifdef SYS_io_uring_setup
    char params[120];
    memset(params, 0, sizeof params);
    long fd = syscall(SYS_io_uring_setup, 4, params);
    if (fd >= 0) fault_report("io_uring is open"), close((int)fd);
#endif
}
