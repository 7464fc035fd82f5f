#include "COpenSSLShims.h"
#include <openssl/err.h>
#include <openssl/objects.h>
#include <string.h>

int fakeapns_ssl_ctx_configure(SSL_CTX *ctx, int allow_legacy_versions) {
    uint64_t options = SSL_OP_NO_RENEGOTIATION | SSL_OP_IGNORE_UNEXPECTED_EOF | SSL_OP_CIPHER_SERVER_PREFERENCE;
    SSL_CTX_set_options(ctx, options);
    /* Buffers stay while a connection is busy (a quiet connection gives them back, see
     * TLSStream.releaseBuffers): freeing them after every record cost a 17 KB allocation and
     * fresh pages per record. Read-ahead fills the read buffer from the socket in one read
     * where records arrive back to back, instead of two reads (header, body) a record. */
    SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
    SSL_CTX_set_read_ahead(ctx, 1);
    SSL_CTX_set_default_read_buffer_len(ctx, FAKEAPNS_TLS_READ_BUFFER);
    if (allow_legacy_versions) {
        /* Security level 0 lets TLS 1.0/1.1 clients of the binary era connect. */
        SSL_CTX_set_security_level(ctx, 0);
        return SSL_CTX_set_min_proto_version(ctx, TLS1_VERSION);
    }
    return SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
}

void fakeapns_ssl_set_modes(SSL *ssl) {
    SSL_set_mode(ssl, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
}

int fakeapns_ssl_set_host_name(SSL *ssl, const char *name) {
    return (int)SSL_set_tlsext_host_name(ssl, name);
}

long fakeapns_bio_mem_data(BIO *bio, char **data) {
    return BIO_get_mem_data(bio, data);
}

int fakeapns_x509_subject_uid(X509 *cert, char *buffer, int capacity) {
    X509_NAME *name = X509_get_subject_name(cert);
    if (name == NULL) return -1;
    int index = X509_NAME_get_index_by_NID(name, NID_userId, -1);
    if (index < 0) return -1;
    X509_NAME_ENTRY *entry = X509_NAME_get_entry(name, index);
    ASN1_STRING *value = X509_NAME_ENTRY_get_data(entry);
    unsigned char *utf8 = NULL;
    int length = ASN1_STRING_to_UTF8(&utf8, value);
    if (length < 0) return -1;
    if (length > capacity) { OPENSSL_free(utf8); return -1; }
    memcpy(buffer, utf8, (size_t)length);
    OPENSSL_free(utf8);
    return length;
}

int fakeapns_x509_subject_rfc2253(X509 *cert, char *buffer, int capacity) {
    X509_NAME *name = X509_get_subject_name(cert);
    if (name == NULL) return -1;
    BIO *bio = BIO_new(BIO_s_mem());
    if (bio == NULL) return -1;
    X509_NAME_print_ex(bio, name, 0, XN_FLAG_RFC2253 & ~ASN1_STRFLGS_ESC_MSB);
    char *data = NULL;
    long length = BIO_get_mem_data(bio, &data);
    int result = -1;
    if (length >= 0 && length <= capacity) {
        memcpy(buffer, data, (size_t)length);
        result = (int)length;
    }
    BIO_free(bio);
    return result;
}

const char *fakeapns_ssl_verify_error(SSL *ssl) {
    long result = SSL_get_verify_result(ssl);
    if (result == X509_V_OK) return NULL;
    return X509_verify_cert_error_string(result);
}

int fakeapns_drain_errors(char *buffer, int capacity) {
    int used = 0;
    unsigned long code;
    while ((code = ERR_get_error()) != 0) {
        char line[256];
        ERR_error_string_n(code, line, sizeof line);
        int length = (int)strlen(line);
        if (used > 0 && used + 2 < capacity) { buffer[used++] = ';'; buffer[used++] = ' '; }
        if (used + length < capacity) { memcpy(buffer + used, line, (size_t)length); used += length; }
    }
    return used;
}

static int select_h2(SSL *ssl, const unsigned char **out, unsigned char *outlen,
                     const unsigned char *in, unsigned int inlen, void *arg) {
    (void)ssl; (void)arg;
    unsigned int offset = 0;
    while (offset < inlen) {
        unsigned int length = in[offset];
        if (offset + 1 + length > inlen) break;
        if (length == 2 && memcmp(in + offset + 1, "h2", 2) == 0) {
            *out = in + offset + 1;
            *outlen = 2;
            return SSL_TLSEXT_ERR_OK;
        }
        offset += 1 + length;
    }
    return SSL_TLSEXT_ERR_NOACK;
}

int fakeapns_ssl_ctx_configure_h2(SSL_CTX *ctx) {
    /* RFC 9113 §9.2.2's deny list is every TLS 1.2 suite but the AEAD ones with ephemeral
       key exchange; TLS 1.3 has only AEAD suites. DHE suites need the server's DH group. */
    if (SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION) != 1) return 0;
    if (SSL_CTX_set_cipher_list(ctx, "ECDHE+AESGCM:ECDHE+CHACHA20:DHE+AESGCM:DHE+CHACHA20") != 1) return 0;
    if (SSL_CTX_set_dh_auto(ctx, 1) != 1) return 0;
    SSL_CTX_set_alpn_select_cb(ctx, select_h2, NULL);
    return 1;
}

int fakeapns_ssl_request_h2(SSL *ssl) {
    static const unsigned char protocols[] = {2, 'h', '2'};
    return SSL_set_alpn_protos(ssl, protocols, sizeof protocols) == 0;
}

int fakeapns_x509_extension_value(X509 *cert, const char *oid, unsigned char *buffer, int capacity) {
    ASN1_OBJECT *object = OBJ_txt2obj(oid, 1);
    if (object == NULL) return 0;
    int index = X509_get_ext_by_OBJ(cert, object, -1);
    ASN1_OBJECT_free(object);
    if (index < 0) return 0;
    X509_EXTENSION *extension = X509_get_ext(cert, index);
    ASN1_OCTET_STRING *data = X509_EXTENSION_get_data(extension);
    int length = ASN1_STRING_length(data);
    if (length > capacity) return -1;
    memcpy(buffer, ASN1_STRING_get0_data(data), (size_t)length);
    return length;
}

void fakeapns_ssl_require_close_notify(SSL *ssl) {
    SSL_clear_options(ssl, SSL_OP_IGNORE_UNEXPECTED_EOF);
}
