/*
 * sprite-floor: the least a sprite build can cost with iconr's libraries, for iconr-bench.
 *
 *   sprite-floor THREADS ICON_DIR SHEET.json...
 *
 * For each sprite index (as `iconr sprite` writes it: one image a line), every image is
 * rendered by librsvg into a cairo image surface of its size (THREADS threads take images
 * in turn), un-premultiplied into its sheet at the index's place, and each sheet is then
 * written by libpng beside its index (SHEET.floor.png: RGBA, zlib level 7, no filter; the
 * sheets in parallel). No cache, no metadata, no packing, no color reduction: the work a
 * build cannot avoid. Ids are file names under ICON_DIR without ".svg" (or ".png" or
 * "@2x.png": a PNG icon is painted scaled to its place by cairo's good filter).
 */
#include <cairo.h>
#include <librsvg/rsvg.h>
#include <png.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct {
    char *path;
    int x, y, width, height, sheet;
} Image;

typedef struct {
    char *output;
    int width, height;
    unsigned char *pixels; /* straight RGBA */
} Sheet;

static Image *images;
static int imageCount;
static Sheet *sheets;
static int sheetCount;
static atomic_int nextImage;
static atomic_int nextSheet;
static atomic_int failures;

static int field(const char *line, const char *name) {
    const char *at = strstr(line, name);
    return at ? atoi(at + strlen(name)) : -1;
}

static void readIndex(const char *indexPath, const char *iconDir) {
    FILE *file = fopen(indexPath, "r");
    if (!file) {
        fprintf(stderr, "sprite-floor: cannot read %s\n", indexPath);
        exit(1);
    }
    Sheet *sheet = &sheets[sheetCount];
    size_t length = strlen(indexPath);
    sheet->output = malloc(length + 16);
    snprintf(sheet->output, length + 16, "%.*s.floor.png", (int)(length - 5), indexPath);
    char line[4096];
    while (fgets(line, sizeof line, file)) {
        char *open = strchr(line, '"'), *close = open ? strchr(open + 1, '"') : NULL;
        if (!close || !strstr(line, "\"width\"")) continue;
        Image *image = &images[imageCount++];
        size_t pathLength = strlen(iconDir) + (size_t)(close - open) + 8;
        image->path = malloc(pathLength);
        snprintf(image->path, pathLength, "%s/%.*s.svg", iconDir, (int)(close - open - 1), open + 1);
        image->x = field(line, "\"x\": ");
        image->y = field(line, "\"y\": ");
        image->width = field(line, "\"width\": ");
        image->height = field(line, "\"height\": ");
        image->sheet = sheetCount;
        if (image->x + image->width > sheet->width) sheet->width = image->x + image->width;
        if (image->y + image->height > sheet->height) sheet->height = image->y + image->height;
    }
    fclose(file);
    sheet->pixels = calloc((size_t)sheet->width * sheet->height, 4);
    sheetCount++;
}

/* Paints the PNG beside the missing SVG `image->path` (".png" or "@2x.png") onto `cairo`. */
static int paintPNG(const Image *image, cairo_t *cairo) {
    size_t length = strlen(image->path);
    char *path = malloc(length + 8);
    snprintf(path, length + 8, "%.*s.png", (int)(length - 4), image->path);
    if (access(path, F_OK) != 0) snprintf(path, length + 8, "%.*s@2x.png", (int)(length - 4), image->path);
    cairo_surface_t *picture = cairo_image_surface_create_from_png(path);
    free(path);
    int width = cairo_image_surface_get_width(picture), height = cairo_image_surface_get_height(picture);
    if (cairo_surface_status(picture) != CAIRO_STATUS_SUCCESS || width <= 0 || height <= 0) {
        fprintf(stderr, "sprite-floor: %s: no SVG or PNG\n", image->path);
        cairo_surface_destroy(picture);
        return 0;
    }
    cairo_scale(cairo, (double)image->width / width, (double)image->height / height);
    cairo_set_source_surface(cairo, picture, 0, 0);
    cairo_pattern_set_filter(cairo_get_source(cairo), CAIRO_FILTER_GOOD);
    cairo_paint(cairo);
    cairo_surface_destroy(picture);
    return 1;
}

static void render(const Image *image) {
    cairo_surface_t *surface = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, image->width, image->height);
    cairo_t *cairo = cairo_create(surface);
    if (access(image->path, F_OK) != 0) {
        if (!paintPNG(image, cairo)) atomic_fetch_add(&failures, 1);
    } else {
        GError *error = NULL;
        RsvgHandle *handle = rsvg_handle_new_from_file(image->path, &error);
        if (!handle) {
            fprintf(stderr, "sprite-floor: %s: %s\n", image->path, error ? error->message : "cannot load");
            atomic_fetch_add(&failures, 1);
        } else {
            RsvgRectangle viewport = {0, 0, image->width, image->height};
            if (!rsvg_handle_render_document(handle, cairo, &viewport, &error)) atomic_fetch_add(&failures, 1);
            g_object_unref(handle);
        }
    }
    cairo_destroy(cairo);
    cairo_surface_flush(surface);
    const Sheet *sheet = &sheets[image->sheet];
    const unsigned char *data = cairo_image_surface_get_data(surface);
    int stride = cairo_image_surface_get_stride(surface);
    for (int row = 0; row < image->height; row++) {
        const uint32_t *source = (const uint32_t *)(data + (size_t)row * stride);
        unsigned char *target = sheet->pixels + (((size_t)(image->y + row) * sheet->width) + image->x) * 4;
        for (int column = 0; column < image->width; column++, target += 4) {
            uint32_t pixel = source[column];
            unsigned alpha = pixel >> 24;
            unsigned red = (pixel >> 16) & 0xFF, green = (pixel >> 8) & 0xFF, blue = pixel & 0xFF;
            if (alpha && alpha < 255) {
                red = (red * 255 + alpha / 2) / alpha;
                green = (green * 255 + alpha / 2) / alpha;
                blue = (blue * 255 + alpha / 2) / alpha;
            }
            target[0] = red, target[1] = green, target[2] = blue, target[3] = alpha;
        }
    }
    cairo_surface_destroy(surface);
}

static void encode(const Sheet *sheet) {
    FILE *file = fopen(sheet->output, "wb");
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    png_infop info = png_create_info_struct(png);
    if (!file || !png || !info || setjmp(png_jmpbuf(png))) {
        fprintf(stderr, "sprite-floor: cannot write %s\n", sheet->output);
        atomic_fetch_add(&failures, 1);
        return;
    }
    png_init_io(png, file);
    png_set_IHDR(png, info, sheet->width, sheet->height, 8, PNG_COLOR_TYPE_RGBA, PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_set_compression_level(png, 7);
    png_set_filter(png, 0, PNG_FILTER_NONE);
    png_write_info(png, info);
    for (int row = 0; row < sheet->height; row++) png_write_row(png, sheet->pixels + (size_t)row * sheet->width * 4);
    png_write_end(png, NULL);
    png_destroy_write_struct(&png, &info);
    fclose(file);
}

static void *work(void *unused) {
    (void)unused;
    for (int index; (index = atomic_fetch_add(&nextImage, 1)) < imageCount;) render(&images[index]);
    return NULL;
}

static void *writeSheets(void *unused) {
    (void)unused;
    for (int index; (index = atomic_fetch_add(&nextSheet, 1)) < sheetCount;) encode(&sheets[index]);
    return NULL;
}

static void inParallel(int threads, void *(*body)(void *)) {
    pthread_t *started = calloc((size_t)threads, sizeof *started);
    for (int thread = 0; thread < threads; thread++) pthread_create(&started[thread], NULL, body, NULL);
    for (int thread = 0; thread < threads; thread++) pthread_join(started[thread], NULL);
    free(started);
}

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: sprite-floor THREADS ICON_DIR SHEET.json...\n");
        return 64;
    }
    int threads = atoi(argv[1]);
    images = calloc(1 << 20, sizeof *images);
    sheets = calloc((size_t)argc, sizeof *sheets);
    for (int argument = 3; argument < argc; argument++) readIndex(argv[argument], argv[2]);
    inParallel(threads, work);
    inParallel(threads < sheetCount ? threads : sheetCount, writeSheets);
    return atomic_load(&failures) ? 1 : 0;
}
