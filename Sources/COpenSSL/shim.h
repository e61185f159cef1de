#ifndef PC_OPENSSL_SHIM_H
#define PC_OPENSSL_SHIM_H
// Typed wrappers for the OpenSSL 3 macros and OSSL_PARAM-building APIs the Crypto target needs.
// OSSL_PARAM arrays are built here in C so that no Swift-bridged temporary string is ever kept by OpenSSL.
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <stdio.h>
#include <errno.h>
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
#include <openssl/ssl.h>

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

/// 0 = SHA-256, 1 = MD5, 2 = SHA-384, 3 = SHA-512, 4 = SHA-1 (only for HMAC-SHA1, which V2 signed URLs use). Fetched by the caller once and kept for the process.
static inline EVP_MD *pc_md_fetch(int which) {
    static const char *const names[] = { "SHA256", "MD5", "SHA384", "SHA512", "SHA1" };
    if (which < 0 || which > 4) return NULL;
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
    static const char *const names[] = { "SHA256", "MD5", "SHA384", "SHA512", "SHA1" };
    if (which < 0 || which > 4) return 0;
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

// MARK: - TLS server (libssl)

/// Picks `http/1.1` when the client offers it; a client offering only other protocols gets no ALPN answer
/// (rather than a failed handshake), and then speaks HTTP/1.1 or fails on its own.
static int pc_tls_alpn_select(SSL *ssl, const unsigned char **out, unsigned char *outlen,
                              const unsigned char *in, unsigned int inlen, void *arg) {
    (void)ssl; (void)arg;
    static const unsigned char wanted[] = { 8, 'h', 't', 't', 'p', '/', '1', '.', '1' };
    unsigned char *selected = NULL;
    if (SSL_select_next_proto(&selected, outlen, wanted, sizeof wanted, in, inlen) != OPENSSL_NPN_NEGOTIATED)
        return SSL_TLSEXT_ERR_NOACK;
    *out = selected;
    return SSL_TLSEXT_ERR_OK;
}

/// A server context with the certificate chain (PEM, leaf first) and private key (PEM) given, and modern
/// defaults: TLS 1.2 minimum (1.3 preferred by the protocol itself), forward-secret AEAD suites only for 1.2,
/// server cipher preference, no compression, no renegotiation, ALPN `http/1.1`, partial writes. NULL on
/// failure, with the reason in `err` (OpenSSL's text; never key material).
static inline SSL_CTX *pc_tls_server_ctx_new(const unsigned char *cert, size_t certlen,
                                             const unsigned char *key, size_t keylen, char *err, size_t errlen) {
    if (err != NULL && errlen > 0) err[0] = 0;
    if (certlen > 0x7fffffff || keylen > 0x7fffffff) { snprintf(err, errlen, "file too large"); return NULL; }
    ERR_clear_error();
    SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
    BIO *bio = NULL;
    X509 *leaf = NULL;
    EVP_PKEY *pkey = NULL;
    const char *what = "cannot create a TLS context";
    if (ctx == NULL) goto fail;
    if (SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION) != 1) goto fail;
    SSL_CTX_set_options(ctx, SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION | SSL_OP_CIPHER_SERVER_PREFERENCE |
                             SSL_OP_IGNORE_UNEXPECTED_EOF);
    SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER |
                          SSL_MODE_RELEASE_BUFFERS);
    if (SSL_CTX_set_cipher_list(ctx, "ECDHE+AESGCM:ECDHE+CHACHA20") != 1) goto fail;
    SSL_CTX_set_alpn_select_cb(ctx, pc_tls_alpn_select, NULL);

    what = "no certificate in the certificate file";
    bio = BIO_new_mem_buf(cert, (int)certlen);
    if (bio == NULL) goto fail;
    leaf = PEM_read_bio_X509(bio, NULL, NULL, NULL);
    if (leaf == NULL) goto fail;
    what = "the certificate is not usable";
    if (SSL_CTX_use_certificate(ctx, leaf) != 1) goto fail;
    for (;;) {
        X509 *extra = PEM_read_bio_X509(bio, NULL, NULL, NULL);
        if (extra == NULL) break;
        if (SSL_CTX_add0_chain_cert(ctx, extra) != 1) { X509_free(extra); goto fail; }
    }
    ERR_clear_error();  // the end of the PEM text is reported as an error
    BIO_free(bio);

    what = "no private key in the key file";
    bio = BIO_new_mem_buf(key, (int)keylen);
    if (bio == NULL) goto fail;
    pkey = PEM_read_bio_PrivateKey(bio, NULL, NULL, NULL);
    if (pkey == NULL) goto fail;
    what = "the private key does not match the certificate or is not usable";
    if (SSL_CTX_use_PrivateKey(ctx, pkey) != 1) goto fail;
    what = "the private key does not match the certificate";
    if (SSL_CTX_check_private_key(ctx) != 1) goto fail;
    BIO_free(bio);
    X509_free(leaf);
    EVP_PKEY_free(pkey);
    ERR_clear_error();
    return ctx;
fail:
    if (err != NULL && errlen > 0) {
        unsigned long code = ERR_peek_last_error();
        if (code != 0) {
            char detail[200];
            ERR_error_string_n(code, detail, sizeof detail);
            snprintf(err, errlen, "%s (%s)", what, detail);
        } else {
            snprintf(err, errlen, "%s", what);
        }
    }
    ERR_clear_error();
    BIO_free(bio);
    X509_free(leaf);
    EVP_PKEY_free(pkey);
    SSL_CTX_free(ctx);
    return NULL;
}

/// A server session reading and writing the socket `fd` directly (the handshake runs inside the first reads).
static inline SSL *pc_tls_session_new(SSL_CTX *ctx, int fd) {
    SSL *ssl = SSL_new(ctx);
    if (ssl == NULL) return NULL;
    if (SSL_set_fd(ssl, fd) != 1) { SSL_free(ssl); return NULL; }
    SSL_set_accept_state(ssl);
    return ssl;
}

/// Outcome codes of pc_tls_read/pc_tls_write: >0 bytes; these otherwise.
/// PC_TLS_PLAIN_HTTP: the peer sent a plain HTTP request line where a TLS record belongs.
enum { PC_TLS_WANT_READ = -1, PC_TLS_WANT_WRITE = -2, PC_TLS_CLOSED = -3, PC_TLS_FAILED = -4, PC_TLS_PLAIN_HTTP = -5 };

static inline int pc_tls_outcome(SSL *ssl, int n, char *err, size_t errlen) {
    if (n > 0) return n;
    int code = SSL_get_error(ssl, n);
    switch (code) {
    case SSL_ERROR_WANT_READ: return PC_TLS_WANT_READ;
    case SSL_ERROR_WANT_WRITE: return PC_TLS_WANT_WRITE;
    case SSL_ERROR_ZERO_RETURN: ERR_clear_error(); return PC_TLS_CLOSED;
    default: {
        unsigned long e = ERR_get_error();
        if (e != 0 && ERR_GET_LIB(e) == ERR_LIB_SSL && ERR_GET_REASON(e) == SSL_R_HTTP_REQUEST) {
            ERR_clear_error();
            return PC_TLS_PLAIN_HTTP;
        }
        if (e != 0) ERR_error_string_n(e, err, errlen);
        else if (code == SSL_ERROR_SYSCALL) snprintf(err, errlen, "socket error (errno %d)", errno);
        else snprintf(err, errlen, "TLS error %d", code);
        ERR_clear_error();
        return PC_TLS_FAILED;
    }
    }
}

static inline int pc_tls_read(SSL *ssl, void *buf, size_t len, char *err, size_t errlen) {
    ERR_clear_error();
    int n = SSL_read(ssl, buf, len > 0x7fffffff ? 0x7fffffff : (int)len);
    return pc_tls_outcome(ssl, n, err, errlen);
}

static inline int pc_tls_write(SSL *ssl, const void *buf, size_t len, char *err, size_t errlen) {
    ERR_clear_error();
    int n = SSL_write(ssl, buf, len > 0x7fffffff ? 0x7fffffff : (int)len);
    return pc_tls_outcome(ssl, n, err, errlen);
}

/// Sends close_notify once if the handshake is done; never waits for the peer's.
static inline void pc_tls_shutdown(SSL *ssl) {
    if (SSL_is_init_finished(ssl)) { (void)SSL_shutdown(ssl); }
    ERR_clear_error();
}

#endif
