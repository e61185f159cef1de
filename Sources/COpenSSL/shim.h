#ifndef PC_OPENSSL_SHIM_H
#define PC_OPENSSL_SHIM_H
// Typed wrappers for the OpenSSL 3 macros and OSSL_PARAM-building APIs the Crypto target needs.
// OSSL_PARAM arrays are built here in C so that no Swift-bridged temporary string is ever kept by OpenSSL.
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <openssl/evp.h>
#include <openssl/sha.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <openssl/crypto.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/err.h>
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/ec.h>
#include <openssl/core_names.h>
#include <openssl/param_build.h>
#include <openssl/decoder.h>

/// Copies the oldest queued OpenSSL error text of this thread into `buf` and clears the queue.
/// Returns 0 when the queue was empty.
static inline int pc_err_take(char *buf, size_t len) {
    unsigned long code = ERR_get_error();
    if (code == 0) { if (len > 0) buf[0] = 0; return 0; }
    ERR_error_string_n(code, buf, len);
    ERR_clear_error();
    return 1;
}

static inline void pc_err_clear(void) { ERR_clear_error(); }

// MARK: - Digests and MACs

/// 0 = SHA-256, 1 = MD5, 2 = SHA-384, 3 = SHA-512. Fetched by the caller once and kept for the process.
static inline EVP_MD *pc_md_fetch(int which) {
    static const char *const names[] = { "SHA256", "MD5", "SHA384", "SHA512" };
    if (which < 0 || which > 3) return NULL;
    return EVP_MD_fetch(NULL, names[which], NULL);
}

/// One-shot SHA-256 of `len` bytes into `out` (32 bytes) with its state on the stack. `EVP_Digest` allocates a
/// context and the provider's state on every call; the low-level functions are deprecated in OpenSSL 3 but are
/// still what its default provider runs, so the digest is the same.
static inline void pc_sha256_oneshot(const void *data, size_t len, unsigned char *out) {
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    SHA256_CTX context;
    SHA256_Init(&context);
    SHA256_Update(&context, data, len);
    SHA256_Final(out, &context);
    OPENSSL_cleanse(&context, sizeof context);
#pragma GCC diagnostic pop
}

static inline EVP_MAC *pc_mac_fetch_hmac(void) { return EVP_MAC_fetch(NULL, "HMAC", NULL); }

/// Initialises an HMAC context for digest `which` (see pc_md_fetch) with `key`. Returns 1 on success.
static inline int pc_hmac_init(EVP_MAC_CTX *ctx, int which, const unsigned char *key, size_t keylen) {
    static const char *const names[] = { "SHA256", "MD5", "SHA384", "SHA512" };
    if (which < 0 || which > 3) return 0;
    static const unsigned char empty = 0;
    OSSL_PARAM params[2];
    params[0] = OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, (char *)names[which], 0);
    params[1] = OSSL_PARAM_construct_end();
    return EVP_MAC_init(ctx, keylen == 0 ? &empty : key, keylen, params);
}

// MARK: - Keys

/// Bytes and length of a memory BIO's contents (BIO_get_mem_data is a macro).
static inline long pc_bio_mem_data(BIO *bio, const char **out) { return BIO_get_mem_data(bio, (char **)out); }

/// Writes `pkey`'s public half as SPKI PEM into a new memory BIO (caller frees), NULL on failure.
static inline BIO *pc_pkey_public_pem(EVP_PKEY *pkey) {
    BIO *bio = BIO_new(BIO_s_mem());
    if (bio == NULL) return NULL;
    if (PEM_write_bio_PUBKEY(bio, pkey) != 1) { BIO_free(bio); return NULL; }
    return bio;
}

/// Reads a PEM public key: SPKI (`BEGIN PUBLIC KEY`) or PKCS#1 (`BEGIN RSA PUBLIC KEY`).
static inline EVP_PKEY *pc_pkey_read_public(const unsigned char *pem, size_t len) {
    EVP_PKEY *pkey = NULL;
    OSSL_DECODER_CTX *dctx = OSSL_DECODER_CTX_new_for_pkey(&pkey, "PEM", NULL, NULL,
                                                           OSSL_KEYMGMT_SELECT_PUBLIC_KEY, NULL, NULL);
    if (dctx == NULL) return NULL;
    const unsigned char *p = pem;
    size_t left = len;
    int ok = OSSL_DECODER_from_data(dctx, &p, &left);
    OSSL_DECODER_CTX_free(dctx);
    if (ok != 1) { EVP_PKEY_free(pkey); return NULL; }
    return pkey;
}

/// Reads a PEM private key: PKCS#8 (`BEGIN PRIVATE KEY`) or traditional PKCS#1/SEC1 (`BEGIN RSA/EC PRIVATE KEY`).
static inline EVP_PKEY *pc_pkey_read_private(const unsigned char *pem, size_t len) {
    if (len > 0x7fffffff) return NULL;
    BIO *bio = BIO_new_mem_buf(pem, (int)len);
    if (bio == NULL) return NULL;
    EVP_PKEY *pkey = PEM_read_bio_PrivateKey(bio, NULL, NULL, NULL);
    BIO_free(bio);
    return pkey;
}

/// The public key of the first certificate in a PEM text, as a new reference (caller frees).
static inline EVP_PKEY *pc_pkey_from_certificate(const unsigned char *pem, size_t len) {
    if (len > 0x7fffffff) return NULL;
    BIO *bio = BIO_new_mem_buf(pem, (int)len);
    if (bio == NULL) return NULL;
    X509 *cert = PEM_read_bio_X509(bio, NULL, NULL, NULL);
    BIO_free(bio);
    if (cert == NULL) return NULL;
    EVP_PKEY *pkey = X509_get0_pubkey(cert);
    if (pkey != NULL && EVP_PKEY_up_ref(pkey) != 1) pkey = NULL;
    X509_free(cert);
    return pkey;
}

/// A new RSA key of `bits` bits (EVP_PKEY_Q_keygen is variadic).
static inline EVP_PKEY *pc_pkey_generate_rsa(size_t bits) { return EVP_PKEY_Q_keygen(NULL, NULL, "RSA", bits); }

/// A new EC key on curve 0 = P-256, 1 = P-384, 2 = P-521.
static inline EVP_PKEY *pc_pkey_generate_ec(int curve) {
    static const char *const groups[] = { "P-256", "P-384", "P-521" };
    if (curve < 0 || curve > 2) return NULL;
    return EVP_PKEY_Q_keygen(NULL, NULL, "EC", groups[curve]);
}

/// Writes `pkey` as unencrypted PKCS#8 PEM into a new memory BIO (caller frees), NULL on failure.
static inline BIO *pc_pkey_private_pem(EVP_PKEY *pkey) {
    BIO *bio = BIO_new(BIO_s_mem());
    if (bio == NULL) return NULL;
    if (PEM_write_bio_PrivateKey(bio, pkey, NULL, NULL, 0, NULL, NULL) != 1) { BIO_free(bio); return NULL; }
    return bio;
}

/// 1 = RSA, 2 = EC, 0 = anything else.
static inline int pc_pkey_kind(const EVP_PKEY *pkey) {
    switch (EVP_PKEY_get_base_id(pkey)) {
    case EVP_PKEY_RSA: return 1;
    case EVP_PKEY_EC: return 2;
    default: return 0;
    }
}

/// An RSA public key from big-endian modulus and exponent (JWK `n`, `e`).
static inline EVP_PKEY *pc_pkey_from_rsa(const unsigned char *n, size_t nlen, const unsigned char *e, size_t elen) {
    EVP_PKEY *pkey = NULL;
    BIGNUM *bn = BN_bin2bn(n, (int)nlen, NULL);
    BIGNUM *be = BN_bin2bn(e, (int)elen, NULL);
    OSSL_PARAM_BLD *bld = OSSL_PARAM_BLD_new();
    OSSL_PARAM *params = NULL;
    EVP_PKEY_CTX *ctx = NULL;
    if (bn == NULL || be == NULL || bld == NULL) goto done;
    if (OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_N, bn) != 1) goto done;
    if (OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_E, be) != 1) goto done;
    params = OSSL_PARAM_BLD_to_param(bld);
    if (params == NULL) goto done;
    ctx = EVP_PKEY_CTX_new_from_name(NULL, "RSA", NULL);
    if (ctx == NULL || EVP_PKEY_fromdata_init(ctx) != 1) goto done;
    if (EVP_PKEY_fromdata(ctx, &pkey, EVP_PKEY_PUBLIC_KEY, params) != 1) pkey = NULL;
done:
    EVP_PKEY_CTX_free(ctx);
    OSSL_PARAM_free(params);
    OSSL_PARAM_BLD_free(bld);
    BN_free(bn);
    BN_free(be);
    return pkey;
}

/// An EC public key on curve 0 = P-256, 1 = P-384, 2 = P-521 from an uncompressed point (0x04 || X || Y).
/// The point is validated (on the curve) by a public-key check.
static inline EVP_PKEY *pc_pkey_from_ec(int curve, const unsigned char *point, size_t pointlen) {
    static const char *const groups[] = { "P-256", "P-384", "P-521" };
    if (curve < 0 || curve > 2) return NULL;
    EVP_PKEY *pkey = NULL;
    OSSL_PARAM_BLD *bld = OSSL_PARAM_BLD_new();
    OSSL_PARAM *params = NULL;
    EVP_PKEY_CTX *ctx = NULL, *check = NULL;
    if (bld == NULL) goto done;
    if (OSSL_PARAM_BLD_push_utf8_string(bld, OSSL_PKEY_PARAM_GROUP_NAME, groups[curve], 0) != 1) goto done;
    if (OSSL_PARAM_BLD_push_octet_string(bld, OSSL_PKEY_PARAM_PUB_KEY, point, pointlen) != 1) goto done;
    params = OSSL_PARAM_BLD_to_param(bld);
    if (params == NULL) goto done;
    ctx = EVP_PKEY_CTX_new_from_name(NULL, "EC", NULL);
    if (ctx == NULL || EVP_PKEY_fromdata_init(ctx) != 1) goto done;
    if (EVP_PKEY_fromdata(ctx, &pkey, EVP_PKEY_PUBLIC_KEY, params) != 1) { pkey = NULL; goto done; }
    check = EVP_PKEY_CTX_new_from_pkey(NULL, pkey, NULL);
    if (check == NULL || EVP_PKEY_public_check(check) != 1) { EVP_PKEY_free(pkey); pkey = NULL; }
done:
    EVP_PKEY_CTX_free(check);
    EVP_PKEY_CTX_free(ctx);
    OSSL_PARAM_free(params);
    OSSL_PARAM_BLD_free(bld);
    return pkey;
}

/// Converts a DER ECDSA signature to the fixed-width raw R || S form JWS uses (`width` bytes each).
/// Returns 1 on success.
static inline int pc_ecdsa_der_to_raw(const unsigned char *der, size_t derlen, unsigned char *out, int width) {
    const unsigned char *p = der;
    ECDSA_SIG *sig = d2i_ECDSA_SIG(NULL, &p, (long)derlen);
    if (sig == NULL) return 0;
    const BIGNUM *r = NULL, *s = NULL;
    ECDSA_SIG_get0(sig, &r, &s);
    int ok = BN_bn2binpad(r, out, width) == width && BN_bn2binpad(s, out + width, width) == width;
    ECDSA_SIG_free(sig);
    return ok;
}

/// Converts a raw R || S signature (2 * `width` bytes) to DER. Writes at most `cap` bytes; returns the length, 0 on failure.
static inline int pc_ecdsa_raw_to_der(const unsigned char *raw, int width, unsigned char *out, int cap) {
    ECDSA_SIG *sig = ECDSA_SIG_new();
    BIGNUM *r = BN_bin2bn(raw, width, NULL);
    BIGNUM *s = BN_bin2bn(raw + width, width, NULL);
    if (sig == NULL || r == NULL || s == NULL || ECDSA_SIG_set0(sig, r, s) != 1) {
        BN_free(r); BN_free(s); ECDSA_SIG_free(sig); return 0;
    }
    int len = i2d_ECDSA_SIG(sig, NULL);
    if (len <= 0 || len > cap) { ECDSA_SIG_free(sig); return 0; }
    unsigned char *p = out;
    len = i2d_ECDSA_SIG(sig, &p);
    ECDSA_SIG_free(sig);
    return len;
}

#endif
