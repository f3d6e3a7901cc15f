# MGMark-style workloads (benchmarks/aes.hip, bitonic.hip, fir.hip, gd.hip)
# aes checks its ciphertext against OpenSSL (libssl-dev).
HIPLIBS_aes := -lcrypto
