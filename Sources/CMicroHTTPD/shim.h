#ifndef ICONR_CMICROHTTPD_SHIM_H
#define ICONR_CMICROHTTPD_SHIM_H
/*
 * The part of GNU libmicrohttpd 0.9's C API (Debian's libmicrohttpd12) that `iconr serve`
 * calls, declared here (its header is not included) so that the binary does not link it:
 * IconrHTTP opens libmicrohttpd.so.12 with dlopen when a server starts (MicroHTTPD.swift).
 * Every other command never loads it, nor GnuTLS and the libraries that come with it.
 * The values are the library's ABI, from its microhttpd.h.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct MHD_Daemon;
struct MHD_Connection;
struct MHD_Response;

enum { ICONR_MHD_NO = 0, ICONR_MHD_YES = 1 };

/* Daemon flags. */
enum {
    ICONR_MHD_USE_INTERNAL_POLLING_THREAD = 8,
    ICONR_MHD_USE_EPOLL = 512,
    ICONR_MHD_USE_ITC = 1024,
    /* Includes MHD_USE_ITC: a resumed connection wakes its thread at once. */
    ICONR_MHD_ALLOW_SUSPEND_RESUME = 8192 | 1024,
};

/* Daemon options (each with one value in `struct MHD_OptionItem`). */
enum {
    ICONR_MHD_OPTION_END = 0,
    ICONR_MHD_OPTION_CONNECTION_MEMORY_LIMIT = 1,
    ICONR_MHD_OPTION_CONNECTION_LIMIT = 2,
    ICONR_MHD_OPTION_CONNECTION_TIMEOUT = 3,
    ICONR_MHD_OPTION_NOTIFY_COMPLETED = 4,
    ICONR_MHD_OPTION_URI_LOG_CALLBACK = 7,
    ICONR_MHD_OPTION_LISTEN_SOCKET = 12,
    ICONR_MHD_OPTION_THREAD_POOL_SIZE = 14,
    ICONR_MHD_OPTION_ARRAY = 15,
    ICONR_MHD_OPTION_UNESCAPE_CALLBACK = 16,
    ICONR_MHD_OPTION_NOTIFY_CONNECTION = 27,
};

/* Value kinds and response memory modes. */
enum {
    ICONR_MHD_HEADER_KIND = 1,
    ICONR_MHD_RESPMEM_MUST_COPY = 2,
};

struct MHD_OptionItem {
    int option;
    intptr_t value;
    void *ptr_value;
};

typedef int (*MHD_AccessHandlerCallback)(void *cls, struct MHD_Connection *connection, const char *url,
                                         const char *method, const char *version, const char *upload_data,
                                         size_t *upload_data_size, void **request_context);
typedef int (*MHD_KeyValueIterator)(void *cls, int kind, const char *key, const char *value);
typedef void (*MHD_RequestCompletedCallback)(void *cls, struct MHD_Connection *connection, void **request_context,
                                             int termination);
typedef void (*MHD_NotifyConnectionCallback)(void *cls, struct MHD_Connection *connection, void **socket_context,
                                             int code);
enum { ICONR_MHD_CONNECTION_NOTIFY_STARTED = 0, ICONR_MHD_CONNECTION_NOTIFY_CLOSED = 1 };
typedef size_t (*MHD_UnescapeCallback)(void *cls, struct MHD_Connection *connection, char *text);
/* Called with the request's URI (path and query, in the connection's own buffer, which
   libmicrohttpd parses the query from once this returns) as soon as the request line is in;
   its result is the request's context. */
typedef void *(*MHD_LogCallback)(void *cls, const char *uri, struct MHD_Connection *connection);

/* The functions, by their C names; every one must be found for the table to be made. */
typedef struct {
    /* Variadic, which Swift cannot name: stored untyped, called by the functions below. */
    void *_Nonnull MHD_start_daemon;
    void (*_Nonnull MHD_stop_daemon)(struct MHD_Daemon *daemon);
    int (*_Nonnull MHD_quiesce_daemon)(struct MHD_Daemon *daemon);
    const char *(*_Nonnull MHD_lookup_connection_value)(struct MHD_Connection *connection, int kind, const char *key);
    int (*_Nonnull MHD_get_connection_values)(struct MHD_Connection *connection, int kind,
                                              MHD_KeyValueIterator iterator, void *iterator_cls);
    struct MHD_Response *(*_Nonnull MHD_create_response_from_buffer)(size_t size, void *buffer, int mode);
    int (*_Nonnull MHD_add_response_header)(struct MHD_Response *response, const char *header, const char *content);
    int (*_Nonnull MHD_queue_response)(struct MHD_Connection *connection, unsigned int status,
                                       struct MHD_Response *response);
    void (*_Nonnull MHD_destroy_response)(struct MHD_Response *response);
    void (*_Nonnull MHD_suspend_connection)(struct MHD_Connection *connection);
    void (*_Nonnull MHD_resume_connection)(struct MHD_Connection *connection);
    /* Variadic: called by IconrMHD_connection_socket. */
    void *_Nonnull MHD_get_connection_info;
} IconrMicroHTTPD;

/* MHD_start_daemon is variadic, which Swift cannot call: its options go as one array. */
static inline struct MHD_Daemon *IconrMHD_start(const IconrMicroHTTPD *api, unsigned int flags,
                                                MHD_AccessHandlerCallback handler, void *handler_cls,
                                                const struct MHD_OptionItem *options) {
    struct MHD_Daemon *(*start)(unsigned int, uint16_t, void *, void *, MHD_AccessHandlerCallback, void *, ...) =
        (struct MHD_Daemon *(*)(unsigned int, uint16_t, void *, void *, MHD_AccessHandlerCallback, void *, ...))
            api->MHD_start_daemon;
    return start(flags, 0, NULL, NULL, handler, handler_cls, ICONR_MHD_OPTION_ARRAY, options, ICONR_MHD_OPTION_END);
}

/* The connection's client address bytes (4 for IPv4, 16 for IPv6) copied to `address`, and
   their count; 0 when unknown. MHD_CONNECTION_INFO_CLIENT_ADDRESS's union member is a
   `struct sockaddr *`. */
static inline int IconrMHD_client_address(const IconrMicroHTTPD *api, struct MHD_Connection *connection,
                                          unsigned char address[16]) {
    struct sockaddr_shape { unsigned short family; unsigned short port; unsigned char rest[24]; };
    const unsigned char *const *(*info)(struct MHD_Connection *, int, ...) =
        (const unsigned char *const *(*)(struct MHD_Connection *, int, ...))api->MHD_get_connection_info;
    const unsigned char *const *found = info(connection, 2);
    if (!found || !*found) return 0;
    const struct sockaddr_shape *socket_address = (const struct sockaddr_shape *)*found;
    if (socket_address->family == 2) { memcpy(address, socket_address->rest, 4); return 4; }     /* AF_INET: sin_addr */
    if (socket_address->family == 10) { memcpy(address, socket_address->rest + 4, 16); return 16; } /* AF_INET6: after flowinfo */
    return 0;
}

/* The connection's socket (MHD_CONNECTION_INFO_CONNECTION_FD, whose union member is the
   descriptor), or -1. */
static inline int IconrMHD_connection_socket(const IconrMicroHTTPD *api, struct MHD_Connection *connection) {
    const int *(*info)(struct MHD_Connection *, int, ...) =
        (const int *(*)(struct MHD_Connection *, int, ...))api->MHD_get_connection_info;
    const int *descriptor = info(connection, 6);
    return descriptor ? *descriptor : -1;
}

#endif
