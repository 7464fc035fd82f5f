#include "CNGHTTP2Shims.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* A body being sent: owned by the stream (its user data) until fully read or the stream closes. */
typedef struct {
    uint8_t *data;
    size_t length;
    size_t offset;
} body_source;

#if NGHTTP2_VERSION_NUM >= 0x013c00
typedef nghttp2_ssize read_result;
#else
typedef ssize_t read_result;
#endif

static read_result read_body(nghttp2_session *session, int32_t stream_id, uint8_t *buffer, size_t length,
                             uint32_t *flags, nghttp2_data_source *source, void *user_data) {
    (void)user_data;
    body_source *body = source->ptr;
    size_t left = body->length - body->offset;
    size_t count = left < length ? left : length;
    memcpy(buffer, body->data + body->offset, count);
    body->offset += count;
    if (body->offset == body->length) {
        *flags |= NGHTTP2_DATA_FLAG_EOF;
        nghttp2_session_set_stream_user_data(session, stream_id, NULL);
        free(body->data);
        free(body);
    }
    return (read_result)count;
}

static body_source *copy_body(const uint8_t *data, size_t length) {
    body_source *body = malloc(sizeof *body);
    if (body == NULL) return NULL;
    body->data = malloc(length > 0 ? length : 1);
    if (body->data == NULL) { free(body); return NULL; }
    memcpy(body->data, data, length);
    body->length = length;
    body->offset = 0;
    return body;
}

/* A server session allocates its 16 KiB frame buffer up front and keeps it, though an idle
   connection only ever writes its first bytes. malloc often hands back memory an earlier
   connection touched (TLS handshake buffers), which would keep all of it resident: the pages
   wholly inside a new large block are given back (they read as zeros when touched again). */
static void *fresh_malloc(size_t size, void *user_data) {
    (void)user_data;
    void *block = malloc(size);
    /* The many small blocks of every stream are left alone without asking the page size. */
    if (block == NULL || size < 8192) return block;
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    if (size >= 2 * page) {
        uintptr_t start = ((uintptr_t)block + page - 1) & ~(page - 1);
        uintptr_t end = ((uintptr_t)block + size) & ~(page - 1);
        if (end > start) madvise((void *)start, end - start, MADV_DONTNEED);
    }
    return block;
}

static void fresh_free(void *block, void *user_data) {
    (void)user_data;
    free(block);
}

static void *fresh_calloc(size_t count, size_t size, void *user_data) {
    (void)user_data;
    return calloc(count, size);
}

static void *fresh_realloc(void *block, size_t size, void *user_data) {
    return block == NULL ? fresh_malloc(size, user_data) : realloc(block, size);
}

static nghttp2_mem fresh_memory = {NULL, fresh_malloc, fresh_free, fresh_calloc, fresh_realloc};

int fakeapns_h2_session_new(nghttp2_session **session, const nghttp2_session_callbacks *callbacks,
                            void *user_data, int server) {
    if (!server) return nghttp2_session_client_new(session, callbacks, user_data);
    nghttp2_option *option;
    int result = nghttp2_option_new(&option);
    if (result != 0) return result;
    result = nghttp2_session_server_new3(session, callbacks, user_data, option, &fresh_memory);
    nghttp2_option_del(option);
    return result;
}

long fakeapns_h2_mem_send(nghttp2_session *session, const uint8_t **data) {
#if NGHTTP2_VERSION_NUM >= 0x013c00
    return (long)nghttp2_session_mem_send2(session, data);
#else
    return (long)nghttp2_session_mem_send(session, data);
#endif
}

long fakeapns_h2_mem_recv(nghttp2_session *session, const uint8_t *in, size_t length) {
#if NGHTTP2_VERSION_NUM >= 0x013c00
    return (long)nghttp2_session_mem_recv2(session, in, length);
#else
    return (long)nghttp2_session_mem_recv(session, in, length);
#endif
}

int fakeapns_h2_submit_response(nghttp2_session *session, int32_t stream_id, const nghttp2_nv *nva,
                                size_t nvlen, const uint8_t *body, size_t body_length) {
    if (body == NULL || body_length == 0) {
#if NGHTTP2_VERSION_NUM >= 0x013c00
        return nghttp2_submit_response2(session, stream_id, nva, nvlen, NULL);
#else
        return nghttp2_submit_response(session, stream_id, nva, nvlen, NULL);
#endif
    }
    body_source *source = copy_body(body, body_length);
    if (source == NULL) return NGHTTP2_ERR_NOMEM;
    nghttp2_session_set_stream_user_data(session, stream_id, source);
#if NGHTTP2_VERSION_NUM >= 0x013c00
    nghttp2_data_provider2 provider = {.source = {.ptr = source}, .read_callback = read_body};
    int result = nghttp2_submit_response2(session, stream_id, nva, nvlen, &provider);
#else
    nghttp2_data_provider provider = {.source = {.ptr = source}, .read_callback = read_body};
    int result = nghttp2_submit_response(session, stream_id, nva, nvlen, &provider);
#endif
    if (result != 0) {
        nghttp2_session_set_stream_user_data(session, stream_id, NULL);
        free(source->data);
        free(source);
    }
    return result;
}

int fakeapns_h2_submit_accepted(nghttp2_session *session, int32_t stream_id, const uint8_t *apns_id,
                                size_t apns_id_length, const uint8_t *unique_id, size_t unique_id_length,
                                int index_names) {
    static uint8_t status_name[] = ":status", status_value[] = "200";
    static uint8_t id_name[] = "apns-id", unique_name[] = "apns-unique-id";
    /* The names and the status live as long as the program: nghttp2 need not copy them. The
     * ids are new in every answer: kept out of the HPACK tables (never indexed), they refer to
     * their names there, which the first answer of a connection put in. */
    const uint8_t static_flags = NGHTTP2_NV_FLAG_NO_COPY_NAME | NGHTTP2_NV_FLAG_NO_COPY_VALUE;
    const uint8_t id_flags = NGHTTP2_NV_FLAG_NO_COPY_NAME | (index_names ? 0 : NGHTTP2_NV_FLAG_NO_INDEX);
    nghttp2_nv nva[3] = {
        {status_name, status_value, sizeof status_name - 1, sizeof status_value - 1, static_flags},
        {id_name, (uint8_t *)apns_id, sizeof id_name - 1, apns_id_length, id_flags},
        {unique_name, (uint8_t *)unique_id, sizeof unique_name - 1, unique_id_length, id_flags},
    };
    size_t count = unique_id != NULL ? 3 : 2;
#if NGHTTP2_VERSION_NUM >= 0x013c00
    return nghttp2_submit_response2(session, stream_id, nva, count, NULL);
#else
    return nghttp2_submit_response(session, stream_id, nva, count, NULL);
#endif
}

int32_t fakeapns_h2_submit_request(nghttp2_session *session, const nghttp2_nv *nva, size_t nvlen,
                                   const uint8_t *body, size_t body_length) {
    if (body == NULL || body_length == 0) {
#if NGHTTP2_VERSION_NUM >= 0x013c00
        return nghttp2_submit_request2(session, NULL, nva, nvlen, NULL, NULL);
#else
        return nghttp2_submit_request(session, NULL, nva, nvlen, NULL, NULL);
#endif
    }
    body_source *source = copy_body(body, body_length);
    if (source == NULL) return NGHTTP2_ERR_NOMEM;
#if NGHTTP2_VERSION_NUM >= 0x013c00
    nghttp2_data_provider2 provider = {.source = {.ptr = source}, .read_callback = read_body};
    int32_t stream_id = nghttp2_submit_request2(session, NULL, nva, nvlen, &provider, source);
#else
    nghttp2_data_provider provider = {.source = {.ptr = source}, .read_callback = read_body};
    int32_t stream_id = nghttp2_submit_request(session, NULL, nva, nvlen, &provider, source);
#endif
    if (stream_id < 0) {
        free(source->data);
        free(source);
    }
    return stream_id;
}

void fakeapns_h2_release_stream_body(nghttp2_session *session, int32_t stream_id) {
    body_source *body = nghttp2_session_get_stream_user_data(session, stream_id);
    if (body != NULL) {
        nghttp2_session_set_stream_user_data(session, stream_id, NULL);
        free(body->data);
        free(body);
    }
}
