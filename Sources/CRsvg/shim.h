#ifndef ICONR_CRSVG_SHIM_H
#define ICONR_CRSVG_SHIM_H
/*
 * The part of librsvg 2.54's, cairo's, GObject's and GIO's C API that iconr calls, declared
 * here (their headers are not included) so that the binary does not link them: IconrRender
 * opens librsvg-2.so.2 with dlopen on the first render and fills `IconrLibrsvg` with dlsym
 * (Librsvg.swift). A process that never renders (--version, a cache hit, `expression`)
 * never loads librsvg and the ~50 libraries it brings.
 */
#include <stddef.h>
#include <stdint.h>

typedef int gboolean;
typedef unsigned long gsize;
typedef long gssize;
typedef uint32_t GQuark;

typedef struct _GError {
    GQuark domain;
    int code;
    char *message;
} GError;

typedef struct _RsvgHandle RsvgHandle;
typedef struct _GInputStream GInputStream;
typedef struct _GFile GFile;
typedef struct _GCancellable GCancellable;
typedef struct _cairo cairo_t;
typedef struct _cairo_surface cairo_surface_t;
typedef struct _cairo_pattern cairo_pattern_t;

typedef struct {
    double x;
    double y;
    double width;
    double height;
} RsvgRectangle;

typedef struct {
    double length;
    int unit;
} RsvgLength;

typedef enum { RSVG_HANDLE_FLAGS_NONE = 0 } RsvgHandleFlags;
typedef enum { CAIRO_FORMAT_ARGB32 = 0 } cairo_format_t;
typedef enum { CAIRO_STATUS_SUCCESS = 0 } cairo_status_t;
typedef enum { CAIRO_FILTER_BEST = 2 } cairo_filter_t;
typedef enum { CAIRO_EXTEND_PAD = 3 } cairo_extend_t;
typedef cairo_status_t (*cairo_write_func_t)(void *closure, const unsigned char *data, unsigned int length);

/* The functions, by their C names; every one must be found for the table to be made. */
typedef struct {
    RsvgHandle *(*_Nonnull rsvg_handle_new_from_data)(const uint8_t *data, gsize length, GError **error);
    RsvgHandle *(*_Nonnull rsvg_handle_new_from_stream_sync)(GInputStream *stream, GFile *base, RsvgHandleFlags flags,
                                                            GCancellable *cancellable, GError **error);
    void (*_Nonnull rsvg_handle_set_dpi)(RsvgHandle *handle, double dpi);
    gboolean (*_Nonnull rsvg_handle_get_intrinsic_size_in_pixels)(RsvgHandle *handle, double *width, double *height);
    void (*_Nonnull rsvg_handle_get_intrinsic_dimensions)(RsvgHandle *handle, gboolean *has_width, RsvgLength *width,
                                                          gboolean *has_height, RsvgLength *height,
                                                          gboolean *has_viewbox, RsvgRectangle *viewbox);
    gboolean (*_Nonnull rsvg_handle_get_geometry_for_layer)(RsvgHandle *handle, const char *id, const RsvgRectangle *viewport,
                                                            RsvgRectangle *ink, RsvgRectangle *logical, GError **error);
    gboolean (*_Nonnull rsvg_handle_render_document)(RsvgHandle *handle, cairo_t *cr, const RsvgRectangle *viewport,
                                                     GError **error);
    gboolean (*_Nonnull rsvg_handle_set_stylesheet)(RsvgHandle *handle, const uint8_t *css, gsize css_len,
                                                    GError **error);
    void (*_Nonnull g_object_unref)(void *object);
    void (*_Nonnull g_error_free)(GError *error);
    GInputStream *(*_Nonnull g_memory_input_stream_new_from_data)(const void *data, gssize length, void (*destroy)(void *));
    GFile *(*_Nonnull g_file_new_for_path)(const char *path);
    cairo_surface_t *(*_Nonnull cairo_image_surface_create)(cairo_format_t format, int width, int height);
    cairo_surface_t *(*_Nonnull cairo_image_surface_create_for_data)(unsigned char *data, cairo_format_t format, int width,
                                                                     int height, int stride);
    void (*_Nonnull cairo_surface_destroy)(cairo_surface_t *surface);
    cairo_status_t (*_Nonnull cairo_surface_status)(cairo_surface_t *surface);
    void (*_Nonnull cairo_surface_flush)(cairo_surface_t *surface);
    int (*_Nonnull cairo_image_surface_get_stride)(cairo_surface_t *surface);
    unsigned char *(*_Nonnull cairo_image_surface_get_data)(cairo_surface_t *surface);
    int (*_Nonnull cairo_format_stride_for_width)(cairo_format_t format, int width);
    cairo_status_t (*_Nonnull cairo_surface_write_to_png_stream)(cairo_surface_t *surface, cairo_write_func_t write,
                                                                 void *closure);
    cairo_t *(*_Nonnull cairo_create)(cairo_surface_t *target);
    void (*_Nonnull cairo_destroy)(cairo_t *cr);
    cairo_status_t (*_Nonnull cairo_status)(cairo_t *cr);
    const char *(*_Nonnull cairo_status_to_string)(cairo_status_t status);
    void (*_Nonnull cairo_scale)(cairo_t *cr, double sx, double sy);
    void (*_Nonnull cairo_set_source_surface)(cairo_t *cr, cairo_surface_t *surface, double x, double y);
    cairo_pattern_t *(*_Nonnull cairo_get_source)(cairo_t *cr);
    void (*_Nonnull cairo_pattern_set_filter)(cairo_pattern_t *pattern, cairo_filter_t filter);
    void (*_Nonnull cairo_pattern_set_extend)(cairo_pattern_t *pattern, cairo_extend_t extend);
    void (*_Nonnull cairo_paint)(cairo_t *cr);
} IconrLibrsvg;

#endif
