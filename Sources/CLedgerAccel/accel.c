// Hardware CRC32C (SSE4.2) and SHA-256 (x86 SHA extensions), selected at run time,
// and two Linux file calls that Swift's Glibc module does not expose.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include "CLedgerAccel.h"
#if defined(__GLIBC__)
#include <malloc.h>
#endif

int hl_fix_mmap_threshold(int bytes) {
#if defined(__GLIBC__)
    return mallopt(M_MMAP_THRESHOLD, bytes);
#else
    (void)bytes;
    return 0;
#endif
}

int hl_begin_writeback(int fd, int64_t offset, int64_t length) {
#if defined(__linux__)
    return sync_file_range(fd, (off_t)offset, (off_t)length, SYNC_FILE_RANGE_WRITE);
#else
    (void)fd; (void)offset; (void)length;
    return 0;
#endif
}

int hl_allocate(int fd, int64_t offset, int64_t length) {
#if defined(__linux__)
    if (fallocate(fd, 0, (off_t)offset, (off_t)length) == 0) return 0;
    if (errno != EOPNOTSUPP && errno != ENOSYS) return errno;
#endif
    return posix_fallocate(fd, (off_t)offset, (off_t)length);
}


#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#include <immintrin.h>

int hl_cpu_has_crc32c(void) {
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d)) return 0;
    return (c & bit_SSE4_2) ? 1 : 0;
}

int hl_cpu_has_sha256(void) {
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d)) return 0;
    int sse41 = (c & bit_SSE4_1) && (c & bit_SSSE3);
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return 0;
    return (sse41 && (b & (1u << 29))) ? 1 : 0;   // CPUID.7.0:EBX bit 29 = SHA
}

__attribute__((target("sse4.2")))
uint32_t hl_crc32c_update_hw(uint32_t crc, const void *data, size_t length) {
    const uint8_t *p = (const uint8_t *)data;
    uint64_t c = crc;
    // One stream, 8 bytes per instruction (about 8 GB/s here): plenty for a log
    // read at disk speed, so no multi-stream combining.
    while (length >= 32) {
        uint64_t w0, w1, w2, w3;
        __builtin_memcpy(&w0, p, 8);
        __builtin_memcpy(&w1, p + 8, 8);
        __builtin_memcpy(&w2, p + 16, 8);
        __builtin_memcpy(&w3, p + 24, 8);
        c = _mm_crc32_u64(c, w0);
        c = _mm_crc32_u64(c, w1);
        c = _mm_crc32_u64(c, w2);
        c = _mm_crc32_u64(c, w3);
        p += 32;
        length -= 32;
    }
    while (length >= 8) {
        uint64_t w;
        __builtin_memcpy(&w, p, 8);
        c = _mm_crc32_u64(c, w);
        p += 8;
        length -= 8;
    }
    uint32_t c32 = (uint32_t)c;
    while (length--) c32 = _mm_crc32_u8(c32, *p++);
    return c32;
}

static const uint32_t K256[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

// The SHA extensions keep the eight working variables as two vectors, ABEF and
// CDGH; four rounds take one vector of message words plus constants: two
// SHA256RNDS2 (two rounds each, the second on the high half). The schedule
// W[t..t+3] for t >= 16 is msg2(msg1(W[t-16..], W[t-12..]) + W[t-7..t-4], W[t-4..]).
// Fully unrolled so the message vectors stay in registers.
#define HL_ROUNDS(m, g) do { \
        __m128i k_ = _mm_add_epi32((m), _mm_loadu_si128((const __m128i *)&K256[4 * (g)])); \
        state1 = _mm_sha256rnds2_epu32(state1, state0, k_); \
        k_ = _mm_shuffle_epi32(k_, 0x0E); \
        state0 = _mm_sha256rnds2_epu32(state0, state1, k_); \
    } while (0)
// Computes the next schedule vector into w0 (which held W[t-16..t-13]).
#define HL_SCHEDULE(w0, w1, w2, w3) do { \
        w0 = _mm_sha256msg1_epu32(w0, w1); \
        w0 = _mm_add_epi32(w0, _mm_alignr_epi8(w3, w2, 4)); \
        w0 = _mm_sha256msg2_epu32(w0, w3); \
    } while (0)

__attribute__((target("sha,sse4.1,ssse3")))
void hl_sha256_blocks_hw(uint32_t state[8], const uint8_t *data, size_t blocks) {
    const __m128i byteswap = _mm_set_epi64x(0x0c0d0e0f08090a0bULL, 0x0405060700010203ULL);
    __m128i tmp = _mm_loadu_si128((const __m128i *)&state[0]);     // A B C D (A lowest)
    __m128i state1 = _mm_loadu_si128((const __m128i *)&state[4]);  // E F G H
    tmp = _mm_shuffle_epi32(tmp, 0xB1);        // B A D C
    state1 = _mm_shuffle_epi32(state1, 0x1B);  // H G F E
    __m128i state0 = _mm_alignr_epi8(tmp, state1, 8);     // ABEF
    state1 = _mm_blend_epi16(state1, tmp, 0xF0);          // CDGH

    while (blocks--) {
        const __m128i abef = state0, cdgh = state1;
        __m128i w0 = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(data + 0)), byteswap);
        __m128i w1 = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(data + 16)), byteswap);
        __m128i w2 = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(data + 32)), byteswap);
        __m128i w3 = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(data + 48)), byteswap);
        HL_ROUNDS(w0, 0); HL_ROUNDS(w1, 1); HL_ROUNDS(w2, 2); HL_ROUNDS(w3, 3);
        HL_SCHEDULE(w0, w1, w2, w3); HL_ROUNDS(w0, 4);
        HL_SCHEDULE(w1, w2, w3, w0); HL_ROUNDS(w1, 5);
        HL_SCHEDULE(w2, w3, w0, w1); HL_ROUNDS(w2, 6);
        HL_SCHEDULE(w3, w0, w1, w2); HL_ROUNDS(w3, 7);
        HL_SCHEDULE(w0, w1, w2, w3); HL_ROUNDS(w0, 8);
        HL_SCHEDULE(w1, w2, w3, w0); HL_ROUNDS(w1, 9);
        HL_SCHEDULE(w2, w3, w0, w1); HL_ROUNDS(w2, 10);
        HL_SCHEDULE(w3, w0, w1, w2); HL_ROUNDS(w3, 11);
        HL_SCHEDULE(w0, w1, w2, w3); HL_ROUNDS(w0, 12);
        HL_SCHEDULE(w1, w2, w3, w0); HL_ROUNDS(w1, 13);
        HL_SCHEDULE(w2, w3, w0, w1); HL_ROUNDS(w2, 14);
        HL_SCHEDULE(w3, w0, w1, w2); HL_ROUNDS(w3, 15);
        state0 = _mm_add_epi32(state0, abef);
        state1 = _mm_add_epi32(state1, cdgh);
        data += 64;
    }

    tmp = _mm_shuffle_epi32(state0, 0x1B);
    state1 = _mm_shuffle_epi32(state1, 0xB1);
    state0 = _mm_blend_epi16(tmp, state1, 0xF0);
    state1 = _mm_alignr_epi8(state1, tmp, 8);
    _mm_storeu_si128((__m128i *)&state[0], state0);
    _mm_storeu_si128((__m128i *)&state[4], state1);
}

int hl_cpu_has_avx2(void) {
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d)) return 0;
    if (!(c & bit_OSXSAVE) || !(c & bit_AVX)) return 0;
    unsigned lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    if ((lo & 6) != 6) return 0;                     // the OS saves XMM and YMM state
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return 0;
    return (b & bit_AVX2) ? 1 : 0;
}

// ChaCha20 (RFC 8439 §2.3–2.4), eight blocks at once: each 256-bit register holds one
// of the 16 state words of blocks counter … counter + 7, so a quarter round works on
// eight blocks; the rotations by 16 and 8 are byte shuffles.
#define HL_ROTL(x, n) _mm256_or_si256(_mm256_slli_epi32((x), (n)), _mm256_srli_epi32((x), 32 - (n)))
#define HL_QR(a, b, c, d)                                                     \
    a = _mm256_add_epi32(a, b); d = _mm256_shuffle_epi8(_mm256_xor_si256(d, a), rot16); \
    c = _mm256_add_epi32(c, d); b = HL_ROTL(_mm256_xor_si256(b, c), 12);                \
    a = _mm256_add_epi32(a, b); d = _mm256_shuffle_epi8(_mm256_xor_si256(d, a), rot8);  \
    c = _mm256_add_epi32(c, d); b = HL_ROTL(_mm256_xor_si256(b, c), 7);

__attribute__((target("avx2")))
static void hl_transpose8(__m256i a[8]) {
    __m256i t0 = _mm256_unpacklo_epi32(a[0], a[1]), t1 = _mm256_unpackhi_epi32(a[0], a[1]);
    __m256i t2 = _mm256_unpacklo_epi32(a[2], a[3]), t3 = _mm256_unpackhi_epi32(a[2], a[3]);
    __m256i t4 = _mm256_unpacklo_epi32(a[4], a[5]), t5 = _mm256_unpackhi_epi32(a[4], a[5]);
    __m256i t6 = _mm256_unpacklo_epi32(a[6], a[7]), t7 = _mm256_unpackhi_epi32(a[6], a[7]);
    __m256i u0 = _mm256_unpacklo_epi64(t0, t2), u1 = _mm256_unpackhi_epi64(t0, t2);
    __m256i u2 = _mm256_unpacklo_epi64(t1, t3), u3 = _mm256_unpackhi_epi64(t1, t3);
    __m256i u4 = _mm256_unpacklo_epi64(t4, t6), u5 = _mm256_unpackhi_epi64(t4, t6);
    __m256i u6 = _mm256_unpacklo_epi64(t5, t7), u7 = _mm256_unpackhi_epi64(t5, t7);
    a[0] = _mm256_permute2x128_si256(u0, u4, 0x20); a[4] = _mm256_permute2x128_si256(u0, u4, 0x31);
    a[1] = _mm256_permute2x128_si256(u1, u5, 0x20); a[5] = _mm256_permute2x128_si256(u1, u5, 0x31);
    a[2] = _mm256_permute2x128_si256(u2, u6, 0x20); a[6] = _mm256_permute2x128_si256(u2, u6, 0x31);
    a[3] = _mm256_permute2x128_si256(u3, u7, 0x20); a[7] = _mm256_permute2x128_si256(u3, u7, 0x31);
}

__attribute__((target("avx2")))
void hl_chacha20_xor_avx2(const uint32_t state[16], const uint8_t *in, uint8_t *out, size_t blocks) {
    const __m256i rot16 = _mm256_set_epi8(13, 12, 15, 14, 9, 8, 11, 10, 5, 4, 7, 6, 1, 0, 3, 2,
                                          13, 12, 15, 14, 9, 8, 11, 10, 5, 4, 7, 6, 1, 0, 3, 2);
    const __m256i rot8 = _mm256_set_epi8(14, 13, 12, 15, 10, 9, 8, 11, 6, 5, 4, 7, 2, 1, 0, 3,
                                         14, 13, 12, 15, 10, 9, 8, 11, 6, 5, 4, 7, 2, 1, 0, 3);
    __m256i input[16];
    for (int i = 0; i < 16; i++) input[i] = _mm256_set1_epi32((int)state[i]);
    input[12] = _mm256_add_epi32(input[12], _mm256_set_epi32(7, 6, 5, 4, 3, 2, 1, 0));
    const __m256i eight = _mm256_set1_epi32(8);
    for (size_t done = 0; done + 8 <= blocks; done += 8) {
        __m256i x0 = input[0], x1 = input[1], x2 = input[2], x3 = input[3];
        __m256i x4 = input[4], x5 = input[5], x6 = input[6], x7 = input[7];
        __m256i x8 = input[8], x9 = input[9], x10 = input[10], x11 = input[11];
        __m256i x12 = input[12], x13 = input[13], x14 = input[14], x15 = input[15];
        for (int round = 0; round < 10; round++) {
            HL_QR(x0, x4, x8, x12) HL_QR(x1, x5, x9, x13) HL_QR(x2, x6, x10, x14) HL_QR(x3, x7, x11, x15)
            HL_QR(x0, x5, x10, x15) HL_QR(x1, x6, x11, x12) HL_QR(x2, x7, x8, x13) HL_QR(x3, x4, x9, x14)
        }
        __m256i lo[8] = {
            _mm256_add_epi32(x0, input[0]), _mm256_add_epi32(x1, input[1]), _mm256_add_epi32(x2, input[2]),
            _mm256_add_epi32(x3, input[3]), _mm256_add_epi32(x4, input[4]), _mm256_add_epi32(x5, input[5]),
            _mm256_add_epi32(x6, input[6]), _mm256_add_epi32(x7, input[7]),
        };
        __m256i hi[8] = {
            _mm256_add_epi32(x8, input[8]), _mm256_add_epi32(x9, input[9]), _mm256_add_epi32(x10, input[10]),
            _mm256_add_epi32(x11, input[11]), _mm256_add_epi32(x12, input[12]), _mm256_add_epi32(x13, input[13]),
            _mm256_add_epi32(x14, input[14]), _mm256_add_epi32(x15, input[15]),
        };
        hl_transpose8(lo);
        hl_transpose8(hi);
        // Block j: words 0–7 in lo[j], 8–15 in hi[j] (little-endian, as x86 stores them).
        for (int j = 0; j < 8; j++) {
            const uint8_t *src = in + (done + (size_t)j) * 64;
            uint8_t *dst = out + (done + (size_t)j) * 64;
            __m256i p0 = _mm256_loadu_si256((const __m256i *)src);
            __m256i p1 = _mm256_loadu_si256((const __m256i *)(src + 32));
            _mm256_storeu_si256((__m256i *)dst, _mm256_xor_si256(p0, lo[j]));
            _mm256_storeu_si256((__m256i *)(dst + 32), _mm256_xor_si256(p1, hi[j]));
        }
        input[12] = _mm256_add_epi32(input[12], eight);
    }
}
#undef HL_QR
#undef HL_ROTL

#else
int hl_cpu_has_crc32c(void) { return 0; }
int hl_cpu_has_sha256(void) { return 0; }
uint32_t hl_crc32c_update_hw(uint32_t crc, const void *data, size_t length) { (void)data; (void)length; return crc; }
void hl_sha256_blocks_hw(uint32_t state[8], const uint8_t *data, size_t blocks) { (void)state; (void)data; (void)blocks; }
int hl_cpu_has_avx2(void) { return 0; }
void hl_chacha20_xor_avx2(const uint32_t state[16], const uint8_t *in, uint8_t *out, size_t blocks) {
    (void)state; (void)in; (void)out; (void)blocks;
}
#endif
