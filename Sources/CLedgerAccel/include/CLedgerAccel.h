// Hardware paths for the log's checksums, behind runtime CPU checks.
// Software implementations of both live in Swift (LedgerLog/Checksums); these are
// only used when the CPU has the instructions, and tests check they agree.
#ifndef CLEDGERACCEL_H
#define CLEDGERACCEL_H

#include <stddef.h>
#include <stdint.h>

/// 1 when the CPU has SSE4.2 (the CRC32 instruction, Castagnoli polynomial).
int hl_cpu_has_crc32c(void);
/// 1 when the CPU has the SHA extensions (SHA256RNDS2, SHA256MSG1/2) and SSE4.1.
int hl_cpu_has_sha256(void);

/// Continues a CRC32C over `length` bytes. `crc` is the running value *before*
/// the final inversion (start with 0xFFFFFFFF, invert at the end).
/// Only call when hl_cpu_has_crc32c() returned 1.
uint32_t hl_crc32c_update_hw(uint32_t crc, const void *data, size_t length);

/// Runs the SHA-256 compression function over `blocks` 64-byte blocks.
/// Only call when hl_cpu_has_sha256() returned 1.
void hl_sha256_blocks_hw(uint32_t state[8], const uint8_t *data, size_t blocks);

/// Starts writeback of a file range without waiting (Linux sync_file_range with
/// SYNC_FILE_RANGE_WRITE). Durability still needs fdatasync; this only lets the
/// disk work while the caller goes on. Returns 0, or -1 with errno set.
int hl_begin_writeback(int fd, int64_t offset, int64_t length);

/// Allocates file space up to offset + length, extending the file size and
/// reading as zeros (fallocate mode 0, else posix_fallocate). Returns 0 or an errno.
int hl_allocate(int fd, int64_t offset, int64_t length);

/// 1 when the CPU has AVX2 and the OS saves its registers (0 elsewhere).
int hl_cpu_has_avx2(void);

/// ChaCha20 (RFC 8439 §2.4) with AVX2, eight blocks at a time: `in` XORed with the
/// keystream of `blocks` blocks (a multiple of 8) from the state `state` (its word 12
/// the first block's counter; the caller has checked that counter + blocks − 1 does
/// not pass 2^32 − 1), into `out` (the same as `in`, or apart from it). Only where
/// `hl_cpu_has_avx2()` is 1.
void hl_chacha20_xor_avx2(const uint32_t state[16], const uint8_t *in, uint8_t *out, size_t blocks);

/// Fixes glibc's mmap threshold at `bytes` (mallopt M_MMAP_THRESHOLD), which turns
/// off its dynamic raising: every allocation of at least `bytes` is mapped, and given
/// back to the system when freed. Returns 1 on success (0 where there is no glibc).
int hl_fix_mmap_threshold(int bytes);

/// Atomic byte load (acquire), store (release) and compare-and-swap (acquire-release;
/// 1 when `*p` held `expected` and now holds `desired`): the per-block state of a
/// mapped snapshot column (0 unread, 3 being read, 1 checked, 2 damaged), read on every
/// access, claimed by the one thread that reads and checks the block, set once.
static inline uint8_t hl_atomic_load_u8(const uint8_t *p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
static inline void hl_atomic_store_u8(uint8_t *p, uint8_t v) { __atomic_store_n(p, v, __ATOMIC_RELEASE); }
static inline int hl_atomic_cas_u8(uint8_t *p, uint8_t expected, uint8_t desired) {
    return __atomic_compare_exchange_n(p, &expected, desired, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
}

/// Hints the CPU to fetch the cache line at `address` (no fault if it is invalid).
static inline void hl_prefetch(const void *address) { __builtin_prefetch(address, 0, 3); }

#endif
