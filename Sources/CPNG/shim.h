#ifndef ICONR_CPNG_SHIM_H
#define ICONR_CPNG_SHIM_H

/* libdeflate (Debian's libdeflate0, which libtiff and so librsvg bring already): one-shot zlib
   streams in a third to a half of zlib's time at the same size. */
#include <libdeflate.h>
#include <png.h>
#include <setjmp.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

/* libpng reports errors by longjmp, which Swift cannot catch. These static inline helpers
   keep setjmp/longjmp inside C and hand Swift a status code and libpng's own message. */

/** A growable byte buffer that CPNG_encode fills; free `data` with free(). */
typedef struct {
    unsigned char *data;
    size_t length;
    size_t capacity;
    int failed;
} CPNG_Buffer;

typedef struct {
    char message[256];
} CPNG_Error;

static inline void CPNG_on_error(png_structp png, png_const_charp message) {
    CPNG_Error *error = (CPNG_Error *)png_get_error_ptr(png);
    if (error) {
        strncpy(error->message, message ? message : "unknown libpng error", sizeof(error->message) - 1);
        error->message[sizeof(error->message) - 1] = 0;
    }
    png_longjmp(png, 1);
}

static inline void CPNG_on_warning(png_structp png, png_const_charp message) {
    (void)png; (void)message;
}

static inline void CPNG_write_to_buffer(png_structp png, png_bytep bytes, png_size_t count) {
    CPNG_Buffer *buffer = (CPNG_Buffer *)png_get_io_ptr(png);
    if (buffer->length + count > buffer->capacity) {
        size_t capacity = buffer->capacity ? buffer->capacity * 2 : 4096;
        while (capacity < buffer->length + count) capacity *= 2;
        unsigned char *grown = (unsigned char *)realloc(buffer->data, capacity);
        if (!grown) png_error(png, "out of memory");
        buffer->data = grown;
        buffer->capacity = capacity;
    }
    memcpy(buffer->data + buffer->length, bytes, count);
    buffer->length += count;
}

static inline void CPNG_flush(png_structp png) { (void)png; }

/**
 Encodes 8-bit rows as a PNG into `out`. `color_type` is a PNG_COLOR_TYPE_*; `rows` hold that
 type's samples (`stride` bytes apart). For PNG_COLOR_TYPE_PALETTE, `palette` holds
 `palette_count` RGB triples and `alpha` `alpha_count` transparency values (tRNS).
 `compression_level` is zlib's 0-9, `filters` a PNG_FILTER_* mask (0 keeps libpng's default),
 `strategy` zlib's (0 is Z_DEFAULT_STRATEGY).
 Returns 1 on success; 0 with `error->message` set on failure (out->data may still need free()).
 */
static inline int CPNG_encode(const unsigned char *rows, png_uint_32 width, png_uint_32 height, size_t stride,
                              int color_type, const unsigned char *palette, int palette_count,
                              const unsigned char *alpha, int alpha_count,
                              int compression_level, int filters, int strategy,
                              CPNG_Buffer *out, CPNG_Error *error) {
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, error, CPNG_on_error, CPNG_on_warning);
    if (!png) {
        strcpy(error->message, "png_create_write_struct failed");
        return 0;
    }
    png_infop info = png_create_info_struct(png);
    if (!info) {
        png_destroy_write_struct(&png, NULL);
        strcpy(error->message, "png_create_info_struct failed");
        return 0;
    }
    if (setjmp(png_jmpbuf(png))) {
        png_destroy_write_struct(&png, &info);
        return 0;
    }
    png_set_write_fn(png, out, CPNG_write_to_buffer, CPNG_flush);
    png_set_compression_level(png, compression_level);
    png_set_compression_strategy(png, strategy);
    /* zlib's default state is about 256 KiB. For a small icon, a window no larger than the
       image data and a smaller hash table keep it far below malloc's trim threshold, so
       encoding no longer grows and shrinks the heap (brk) on every icon, which was most of
       the cost. A window never needs to reach before the start of the data, so this does
       not change the output of images up to 32 KiB of pixel data. */
    size_t data_size = (size_t)height * (1 + stride);
    int window_bits = 9;
    while (window_bits < 15 && ((size_t)1 << window_bits) < data_size) window_bits++;
    png_set_compression_window_bits(png, window_bits);
    if (window_bits < 15) png_set_compression_mem_level(png, window_bits - 7 > 1 ? window_bits - 7 : 1);
    if (filters) png_set_filter(png, PNG_FILTER_TYPE_BASE, filters);
    png_set_IHDR(png, info, width, height, 8, color_type, PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_BASE, PNG_FILTER_TYPE_BASE);
    if (color_type == PNG_COLOR_TYPE_PALETTE) {
        png_set_PLTE(png, info, (png_const_colorp)palette, palette_count);
        if (alpha_count > 0) png_set_tRNS(png, info, alpha, alpha_count, NULL);
    }
    png_write_info(png, info);
    for (png_uint_32 row = 0; row < height; row++) {
        png_write_row(png, (png_const_bytep)(rows + (size_t)row * stride));
    }
    png_write_end(png, info);
    png_destroy_write_struct(&png, &info);
    return 1;
}

#include <zlib.h>

/**
 Decompresses gzip data (an .svgz file) into `out`, refusing to produce more than `limit`
 bytes (a gzip bomb stops there). Returns 1 on success; 0 with `error->message` set.
 */
static inline int CPNG_gunzip(const unsigned char *data, size_t length, size_t limit, CPNG_Buffer *out, CPNG_Error *error) {
    z_stream stream;
    memset(&stream, 0, sizeof(stream));
    if (inflateInit2(&stream, 16 + MAX_WBITS) != Z_OK) {
        strcpy(error->message, "zlib could not start");
        return 0;
    }
    stream.next_in = (unsigned char *)data;
    stream.avail_in = (uInt)(length > 0xFFFFFFFFu ? 0xFFFFFFFFu : length);
    int status = Z_OK;
    while (status != Z_STREAM_END) {
        if (out->length == out->capacity) {
            size_t capacity = out->capacity ? out->capacity * 2 : 65536;
            if (capacity > limit + 1) capacity = limit + 1;
            if (capacity <= out->length) {
                inflateEnd(&stream);
                snprintf(error->message, sizeof(error->message), "it decompresses to more than %zu bytes", limit);
                return 0;
            }
            unsigned char *grown = (unsigned char *)realloc(out->data, capacity);
            if (!grown) {
                inflateEnd(&stream);
                strcpy(error->message, "out of memory");
                return 0;
            }
            out->data = grown;
            out->capacity = capacity;
        }
        stream.next_out = out->data + out->length;
        stream.avail_out = (uInt)(out->capacity - out->length);
        status = inflate(&stream, Z_NO_FLUSH);
        out->length = out->capacity - stream.avail_out;
        if (status != Z_OK && status != Z_STREAM_END) {
            snprintf(error->message, sizeof(error->message), "not valid gzip data (%s)", stream.msg ? stream.msg : "truncated");
            inflateEnd(&stream);
            return 0;
        }
        if (out->length > limit) {
            inflateEnd(&stream);
            snprintf(error->message, sizeof(error->message), "it decompresses to more than %zu bytes", limit);
            return 0;
        }
    }
    inflateEnd(&stream);
    return 1;
}

/**
 Makes the raw deflate stream `stream` (one whole stream, as libdeflate writes it) joinable
 to a stream that goes on after it: checks that it inflates to exactly `expected`, then
 clears the BFINAL bit of its last block. Returns the number of unused (zero) bits at the
 end of its last byte, 0 to 7, where the next block's header goes; -1 when the stream is
 not sound or not `expected`.
 */
static inline int CPNG_open_last_block(unsigned char *stream, size_t length, const unsigned char *expected,
                                       size_t expected_length) {
    if (length == 0 || length > 0xFFFFFFFFu || expected_length > 0xFFFFFFFFu) return -1;
    unsigned char *inflated = (unsigned char *)malloc(expected_length + 1);
    if (!inflated) return -1;
    z_stream z;
    memset(&z, 0, sizeof(z));
    if (inflateInit2(&z, -MAX_WBITS) != Z_OK) {
        free(inflated);
        return -1;
    }
    z.next_in = stream;
    z.avail_in = (uInt)length;
    z.next_out = inflated;
    z.avail_out = (uInt)(expected_length + 1);
    /* Z_BLOCK stops at each block boundary; the last one before the end is where the final
       block's header, and its BFINAL bit, begins. */
    size_t last_block_bit = 0, last_block_output = 0;
    int status = Z_OK;
    while (status == Z_OK) {
        status = inflate(&z, Z_BLOCK);
        if (status == Z_OK && (z.data_type & 128) && !(z.data_type & 64)) {
            last_block_bit = (size_t)z.total_in * 8 - (size_t)(z.data_type & 7);
            last_block_output = z.total_out;
        }
    }
    int sound = status == Z_STREAM_END && z.avail_in == 0 && z.total_out == expected_length
        && memcmp(inflated, expected, expected_length) == 0;
    inflateEnd(&z);
    free(inflated);
    if (!sound) return -1;
    stream[last_block_bit / 8] &= (unsigned char)~(1u << (last_block_bit % 8));
    /* Where the last block ends is lost at the end of a stream: inflate it again, now not
       final, from its header (the output before it as the window), to the boundary after it. */
    size_t block_length = expected_length - last_block_output;
    unsigned char *block = (unsigned char *)malloc(block_length + 1);
    if (!block) return -1;
    memset(&z, 0, sizeof(z));
    if (inflateInit2(&z, -MAX_WBITS) != Z_OK) {
        free(block);
        return -1;
    }
    size_t window = last_block_output < 32768 ? last_block_output : 32768;
    size_t first_byte = last_block_bit / 8;
    int skipped = (int)(last_block_bit % 8);
    int ready = (window == 0 || inflateSetDictionary(&z, expected + last_block_output - window, (uInt)window) == Z_OK)
        && (skipped == 0 || inflatePrime(&z, 8 - skipped, stream[first_byte] >> skipped) == Z_OK);
    z.next_in = stream + first_byte + (skipped ? 1 : 0);
    z.avail_in = (uInt)(length - first_byte - (skipped ? 1 : 0));
    z.next_out = block;
    z.avail_out = (uInt)(block_length + 1);
    status = ready ? inflate(&z, Z_BLOCK) : Z_DATA_ERROR;
    int unused = z.data_type & 7;
    sound = status == Z_OK && (z.data_type & 128) && z.avail_in == 0 && z.total_out == block_length
        && memcmp(block, expected + last_block_output, block_length) == 0;
    inflateEnd(&z);
    free(block);
    return sound ? unused : -1;
}

/* PNG_FORMAT_RGBA is a macro built from other macros, which Swift does not import. */
static const png_uint_32 CPNG_FORMAT_RGBA = PNG_FORMAT_RGBA;

#endif
