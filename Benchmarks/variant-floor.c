/*
 * variant-floor: the least a variant of an icon can cost with raw librsvg, cairo and libpng:
 * the floor of a miss in `iconr serve` (issue 28), for iconr-bench serve.
 *
 *   variant-floor ICON.svg...
 *
 * One thread. Every file is read into memory first, as a server holds its templates. Then,
 * timed by the thread's CPU clock, each document is loaded from memory by librsvg, rendered
 * at its intrinsic size (rounded, at least 1 pixel) into a cairo image surface, taken out of
 * premultiplied alpha, and encoded by libpng with its defaults into memory. Prints the mean
 * microseconds of CPU per variant. No cache, no parameters, no checks, no files written.
 */
#include "floor-render.h"
#include <png.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct {
    unsigned char *bytes;
    size_t count, capacity;
} Buffer;

static void append(png_structp png, png_bytep data, png_size_t count) {
    Buffer *buffer = png_get_io_ptr(png);
    if (buffer->count + count > buffer->capacity) {
        buffer->capacity = (buffer->count + count) * 2;
        buffer->bytes = realloc(buffer->bytes, buffer->capacity);
        if (!buffer->bytes) png_error(png, "out of memory");
    }
    memcpy(buffer->bytes + buffer->count, data, count);
    buffer->count += count;
}

static void flush(png_structp png) { (void)png; }

static double cpuMicroseconds(void) {
    struct timespec now;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
    return now.tv_sec * 1e6 + now.tv_nsec / 1e3;
}

/* One variant: 0 when its PNG was made. */
static int variant(const gchar *svg, gsize length, Buffer *png) {
    RsvgHandle *handle = rsvg_handle_new_from_data((const guint8 *)svg, length, NULL);
    if (!handle) return 1;
    int failed;
    cairo_surface_t *surface = renderAtIntrinsicSize(handle, &failed);
    g_object_unref(handle);
    int wide = cairo_image_surface_get_width(surface), high = cairo_image_surface_get_height(surface);
    cairo_surface_flush(surface);
    const unsigned char *pixels = cairo_image_surface_get_data(surface);
    int stride = cairo_image_surface_get_stride(surface);
    unsigned char *row = malloc((size_t)wide * 4);
    png_structp writer = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    png_infop info = png_create_info_struct(writer);
    png->count = 0;
    if (setjmp(png_jmpbuf(writer))) {
        failed = 1;
    } else {
        png_set_write_fn(writer, png, append, flush);
        png_set_IHDR(
            writer, info, wide, high, 8, PNG_COLOR_TYPE_RGB_ALPHA, PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT,
            PNG_FILTER_TYPE_DEFAULT);
        png_write_info(writer, info);
        for (int y = 0; y < high; y++) {
            const uint32_t *source = (const uint32_t *)(pixels + (size_t)y * stride);
            for (int x = 0; x < wide; x++) {
                uint32_t argb = source[x], alpha = argb >> 24;
                unsigned char *target = row + x * 4;
                for (int channel = 0; channel < 3; channel++) {
                    uint32_t value = (argb >> (16 - 8 * channel)) & 0xff;
                    target[channel] = alpha ? (unsigned char)((value * 255 + alpha / 2) / alpha) : 0;
                }
                target[3] = (unsigned char)alpha;
            }
            png_write_row(writer, row);
        }
        png_write_end(writer, info);
    }
    png_destroy_write_struct(&writer, &info);
    free(row);
    cairo_surface_destroy(surface);
    return failed || png->count == 0;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: variant-floor ICON.svg...\n");
        return 64;
    }
    int count = argc - 1;
    gchar **documents = calloc(count, sizeof *documents);
    gsize *lengths = calloc(count, sizeof *lengths);
    for (int index = 0; index < count; index++) {
        if (!g_file_get_contents(argv[index + 1], &documents[index], &lengths[index], NULL)) {
            fprintf(stderr, "variant-floor: cannot read %s\n", argv[index + 1]);
            return 1;
        }
    }
    Buffer png = {NULL, 0, 0};
    /* librsvg's and libpng's first use (their one-time set-up) is not a variant's cost. */
    if (variant(documents[0], lengths[0], &png)) {
        fprintf(stderr, "variant-floor: cannot render %s\n", argv[1]);
        return 1;
    }
    double started = cpuMicroseconds();
    int failures = 0;
    for (int index = 0; index < count; index++) failures += variant(documents[index], lengths[index], &png);
    double spent = cpuMicroseconds() - started;
    if (failures) {
        fprintf(stderr, "variant-floor: %d variants failed\n", failures);
        return 1;
    }
    printf("%.1f\n", spent / count);
    return 0;
}
