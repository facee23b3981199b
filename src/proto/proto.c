/* proto.c: framing for the private channel (see proto.h). */
#include "proto/proto.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* FNV-1a over 8-byte words (then the tail bytes): the frame checksum. It
 * guards against torn or foreign frames, not against an adversary who knows
 * the token; 8 bytes a step keeps it cheap on 64 MiB payloads. */
static uint64_t fnv_step(uint64_t h, const unsigned char *b, size_t n, size_t *used) {
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, b + i, 8);
        h = (h ^ w) * 0x100000001b3ull;
    }
    *used = i;
    return h;
}

uint64_t kp_fnv1a(const void *p, size_t n) {
    const unsigned char *b = (const unsigned char *)p;
    size_t i;
    uint64_t h = fnv_step(0xcbf29ce484222325ull, b, n, &i);
    for (; i < n; i++) h = (h ^ b[i]) * 0x100000001b3ull;
    return h;
}

int kp_write_full(int fd, const void *p, size_t n) {
    const char *c = (const char *)p;
    while (n > 0) {
        ssize_t w = write(fd, c, n);
        if (w < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        c += w;
        n -= (size_t)w;
    }
    return 0;
}

int kp_read_full(int fd, void *p, size_t n) {
    char *c = (char *)p;
    while (n > 0) {
        ssize_t r = read(fd, c, n);
        if (r < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        if (r == 0) return -1;
        c += r;
        n -= (size_t)r;
    }
    return 0;
}

int kp_frame_write2(int fd, uint32_t type, uint64_t token, uint32_t seq, const void *a, uint32_t alen, const void *b,
                    uint32_t blen) {
    kp_frame_hdr h;
    memset(&h, 0, sizeof h);
    h.magic = KP_FRAME_MAGIC;
    h.type = type;
    h.token = token;
    h.seq = seq;
    h.len = alen + blen;
    if (blen) {
        /* One contiguous payload, so the checksum is that of a||b. */
        char *joined = (char *)malloc((size_t)alen + blen);
        if (!joined) return -1;
        if (alen) memcpy(joined, a, alen);
        memcpy(joined + alen, b, blen);
        int rc = kp_frame_write(fd, type, token, seq, joined, alen + blen);
        free(joined);
        return rc;
    }
    h.cksum = kp_fnv1a(a, alen);
    if (kp_write_full(fd, &h, sizeof h)) return -1;
    if (alen && kp_write_full(fd, a, alen)) return -1;
    return 0;
}

int kp_frame_write(int fd, uint32_t type, uint64_t token, uint32_t seq, const void *payload, uint32_t len) {
    return kp_frame_write2(fd, type, token, seq, payload, len, NULL, 0);
}
