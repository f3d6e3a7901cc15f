// aes: AES-256 encryption in counter (CTR) mode of a plaintext buffer, the
// MGMark/HeteroMark AES workload (MGSim paper, Sec. V-B: "Partitioned Data"
// pattern, sub-dword addressing). One work-item encrypts one 16-byte counter
// block (nonce || 64-bit big-endian block number) with the full 14 AES-256
// rounds and XORs it into its plaintext block. The S-box and the expanded key
// are staged in LDS per workgroup; SubBytes/ShiftRows are byte lookups,
// MixColumns works on packed 32-bit columns.
//
// Usage: aes [--small] [--size BYTES] [--gpus N]
//   default size 256 KiB per GPU requested (MGSim Table II: 256 KB on 1 GPU,
//   1 MB on 4), --small 16 KiB per GPU; BYTES is rounded up to 16.
//   With --gpus N the plaintext is split into N contiguous chunks, one per
//   device (hipSetDevice + hipMalloc on each), each device encrypting its own
//   chunk with its own counter range: no device touches another's memory.
// The ciphertext is checked against OpenSSL's EVP_aes_256_ctr.
#include <hip/hip_runtime.h>
#include <openssl/evp.h>
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define CHECK(x) do { hipError_t e_ = (x); if (e_ != hipSuccess) { \
    fprintf(stderr, "aes: %s:%d: %s: %s\n", __FILE__, __LINE__, #x, hipGetErrorString(e_)); \
    exit(2); } } while (0)

#define BLOCK 256
#define ROUNDS 14           /* AES-256 */
#define RK_WORDS (4 * (ROUNDS + 1))

/* ---- command line (same options in every MGMark-style workload) ---------- */
static void usage(const char *prog)
{
    fprintf(stderr, "usage: %s [--small] [--size N] [--gpus N]\n", prog);
    exit(2);
}

/* Parse --small / --size / --gpus; check that enough devices exist. The
 * default size is `base` (or `small`) per GPU requested. */
static void parse_args(int argc, char **argv, long base, long small, long *size, int *gpus)
{
    long sz = -1;
    int use_small = 0;
    *gpus = 1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--small"))
            use_small = 1;
        else if (!strcmp(argv[i], "--size") && i + 1 < argc)
            sz = strtol(argv[++i], NULL, 0);
        else if (!strcmp(argv[i], "--gpus") && i + 1 < argc)
            *gpus = atoi(argv[++i]);
        else
            usage(argv[0]);
    }
    if (*gpus < 1 || (sz != -1 && sz < 1))
        usage(argv[0]);
    int ndev = 0;
    hipError_t e = hipGetDeviceCount(&ndev);
    if (e != hipSuccess || ndev < *gpus) {
        fprintf(stderr, "aes: %d GPU(s) requested but %d HIP device(s) visible%s%s\n", *gpus,
                e == hipSuccess ? ndev : 0, e == hipSuccess ? "" : ": ",
                e == hipSuccess ? "" : hipGetErrorString(e));
        exit(2);
    }
    *size = sz != -1 ? sz : (use_small ? small : base) * *gpus;
}

/* ---- device code --------------------------------------------------------- */
__device__ __forceinline__ unsigned xtime4(unsigned w)  /* x*2 in GF(2^8), 4 bytes at once */
{
    return ((w & 0x7f7f7f7fu) << 1) ^ (((w >> 7) & 0x01010101u) * 0x1bu);
}
__device__ __forceinline__ unsigned rotr(unsigned w, int n) { return (w >> n) | (w << (32 - n)); }
/* MixColumns of one column, row r in byte r: b0 = 2a0 ^ 3a1 ^ a2 ^ a3, ... */
__device__ __forceinline__ unsigned mix(unsigned w)
{
    unsigned t = xtime4(w);
    return t ^ rotr(w ^ t, 8) ^ rotr(w, 16) ^ rotr(w, 24);
}
__device__ __forceinline__ unsigned bswap(unsigned w)
{
    return (w >> 24) | ((w >> 8) & 0xff00u) | ((w << 8) & 0xff0000u) | (w << 24);
}

/* in/out: nblocks 16-byte blocks; tables: 256-byte S-box then the 240-byte
 * expanded key; first: counter of block 0; nonce: the first 8 IV bytes. */
__global__ void aes256_ctr(const uint4 *in, uint4 *out, const unsigned char *tables,
                           unsigned nblocks, unsigned long long first, uint2 nonce)
{
    __shared__ unsigned char sbox[256];
    __shared__ unsigned rk[RK_WORDS];
    for (unsigned i = threadIdx.x; i < 256; i += blockDim.x)
        sbox[i] = tables[i];
    for (unsigned i = threadIdx.x; i < RK_WORDS; i += blockDim.x)
        rk[i] = ((const unsigned *)(tables + 256))[i];
    __syncthreads();
    unsigned b = blockIdx.x * blockDim.x + threadIdx.x;
    if (b >= nblocks)
        return;
    unsigned long long ctr = first + b;
    unsigned s0 = nonce.x ^ rk[0], s1 = nonce.y ^ rk[1];
    unsigned s2 = bswap((unsigned)(ctr >> 32)) ^ rk[2], s3 = bswap((unsigned)ctr) ^ rk[3];
#define SB(w, r) ((unsigned)sbox[((w) >> (8 * (r))) & 0xffu] << (8 * (r)))
    for (int r = 1; r <= ROUNDS; r++) {
        /* SubBytes + ShiftRows: row r of column c comes from column c + r */
        unsigned t0 = SB(s0, 0) | SB(s1, 1) | SB(s2, 2) | SB(s3, 3);
        unsigned t1 = SB(s1, 0) | SB(s2, 1) | SB(s3, 2) | SB(s0, 3);
        unsigned t2 = SB(s2, 0) | SB(s3, 1) | SB(s0, 2) | SB(s1, 3);
        unsigned t3 = SB(s3, 0) | SB(s0, 1) | SB(s1, 2) | SB(s2, 3);
        if (r < ROUNDS) {
            t0 = mix(t0), t1 = mix(t1), t2 = mix(t2), t3 = mix(t3);
        }
        s0 = t0 ^ rk[4 * r], s1 = t1 ^ rk[4 * r + 1];
        s2 = t2 ^ rk[4 * r + 2], s3 = t3 ^ rk[4 * r + 3];
    }
#undef SB
    uint4 p = in[b];
    out[b] = make_uint4(p.x ^ s0, p.y ^ s1, p.z ^ s2, p.w ^ s3);
}

/* ---- host ---------------------------------------------------------------- */
static uint8_t rotl8(uint8_t x, int n) { return (uint8_t)((x << n) | (x >> (8 - n))); }

/* The AES S-box from its definition (FIPS-197 Sec. 5.1.1): multiplicative
 * inverse in GF(2^8), walking the field with generator 3, then the affine map. */
static void make_sbox(uint8_t sbox[256])
{
    uint8_t p = 1, q = 1;
    do {
        p = (uint8_t)(p ^ (p << 1) ^ (p & 0x80 ? 0x1b : 0));    /* p * 3 */
        q ^= (uint8_t)(q << 1);                                  /* q / 3 */
        q ^= (uint8_t)(q << 2);
        q ^= (uint8_t)(q << 4);
        if (q & 0x80)
            q ^= 0x09;
        sbox[p] = (uint8_t)(q ^ rotl8(q, 1) ^ rotl8(q, 2) ^ rotl8(q, 3) ^ rotl8(q, 4) ^ 0x63);
    } while (p != 1);
    sbox[0] = 0x63;
}

/* AES-256 key expansion (FIPS-197 Sec. 5.2, Nk = 8): 60 words = 240 bytes. */
static void expand_key(const uint8_t key[32], const uint8_t sbox[256], uint8_t rk[4 * RK_WORDS])
{
    memcpy(rk, key, 32);
    uint8_t rcon = 1;
    for (int i = 8; i < RK_WORDS; i++) {
        uint8_t t[4];
        memcpy(t, rk + 4 * (i - 1), 4);
        if (i % 8 == 0) {
            uint8_t t0 = t[0];
            t[0] = (uint8_t)(sbox[t[1]] ^ rcon), t[1] = sbox[t[2]], t[2] = sbox[t[3]], t[3] = sbox[t0];
            rcon = (uint8_t)((rcon << 1) ^ (rcon & 0x80 ? 0x1b : 0));
        } else if (i % 8 == 4) {
            for (int k = 0; k < 4; k++)
                t[k] = sbox[t[k]];
        }
        for (int k = 0; k < 4; k++)
            rk[4 * i + k] = rk[4 * (i - 8) + k] ^ t[k];
    }
}

int main(int argc, char **argv)
{
    long size;
    int ngpu;
    parse_args(argc, argv, 256 * 1024, 16 * 1024, &size, &ngpu);
    size_t nblocks = ((size_t)size + 15) / 16, bytes = nblocks * 16;
    if (nblocks > 0xffffffffu) {
        fprintf(stderr, "aes: size %ld too large\n", size);
        return 2;
    }

    std::vector<uint8_t> plain(bytes), cipher(bytes), want(bytes);
    uint32_t x = 0x2545f491u;                       /* xorshift32 plaintext */
    for (size_t i = 0; i < bytes; i++) {
        x ^= x << 13, x ^= x >> 17, x ^= x << 5;
        plain[i] = (uint8_t)(x >> 11);
    }
    uint8_t key[32], iv[16] = {0};
    for (int i = 0; i < 32; i++)
        key[i] = (uint8_t)(0x1f * i + 7);
    for (int i = 0; i < 8; i++)
        iv[i] = (uint8_t)(0xa5 ^ (i * 0x3b));       /* nonce; iv[8..15] = counter 0 */
    uint8_t tables[256 + 4 * RK_WORDS];
    make_sbox(tables);
    expand_key(key, tables, tables + 256);
    uint2 nonce;
    memcpy(&nonce, iv, 8);

    size_t per = (nblocks + ngpu - 1) / ngpu;
    std::vector<uint4 *> din(ngpu), dout(ngpu);
    std::vector<unsigned char *> dtab(ngpu);
    for (int d = 0; d < ngpu; d++) {                /* scatter the chunks and launch */
        size_t lo = std::min(nblocks, d * per), cnt = std::min(nblocks, lo + per) - lo;
        CHECK(hipSetDevice(d));
        CHECK(hipMalloc(&din[d], std::max<size_t>(cnt, 1) * 16));
        CHECK(hipMalloc(&dout[d], std::max<size_t>(cnt, 1) * 16));
        CHECK(hipMalloc(&dtab[d], sizeof tables));
        CHECK(hipMemcpy(dtab[d], tables, sizeof tables, hipMemcpyHostToDevice));
        CHECK(hipMemcpy(din[d], plain.data() + lo * 16, cnt * 16, hipMemcpyHostToDevice));
        if (cnt == 0)
            continue;
        hipLaunchKernelGGL(aes256_ctr, dim3((unsigned)((cnt + BLOCK - 1) / BLOCK)), dim3(BLOCK), 0, 0,
                           din[d], dout[d], dtab[d], (unsigned)cnt, (unsigned long long)lo, nonce);
        CHECK(hipGetLastError());
    }
    for (int d = 0; d < ngpu; d++) {                /* gather the ciphertext */
        size_t lo = std::min(nblocks, d * per), cnt = std::min(nblocks, lo + per) - lo;
        CHECK(hipSetDevice(d));
        CHECK(hipDeviceSynchronize());
        CHECK(hipMemcpy(cipher.data() + lo * 16, dout[d], cnt * 16, hipMemcpyDeviceToHost));
        CHECK(hipFree(din[d]));
        CHECK(hipFree(dout[d]));
        CHECK(hipFree(dtab[d]));
    }

    /* Reference: OpenSSL AES-256-CTR (128-bit big-endian counter in the IV). */
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    int n1 = 0, n2 = 0;
    if (!ctx || EVP_EncryptInit_ex(ctx, EVP_aes_256_ctr(), NULL, key, iv) != 1 ||
        EVP_EncryptUpdate(ctx, want.data(), &n1, plain.data(), (int)bytes) != 1 ||
        EVP_EncryptFinal_ex(ctx, want.data() + n1, &n2) != 1 || (size_t)(n1 + n2) != bytes) {
        fprintf(stderr, "aes: OpenSSL EVP_aes_256_ctr failed\n");
        return 2;
    }
    EVP_CIPHER_CTX_free(ctx);

    size_t bad = 0;
    for (size_t i = 0; i < bytes; i++)
        if (cipher[i] != want[i] && bad++ < 5)
            fprintf(stderr, "aes: byte %zu (block %zu): got 0x%02x, OpenSSL 0x%02x\n", i, i / 16,
                    cipher[i], want[i]);
    printf("aes bytes=%zu gpus=%d: %s\n", bytes, ngpu, bad ? "FAIL" : "PASS");
    return bad ? 1 : 0;
}
