/*
 * render-floor: the least `iconr render` of many icons can cost with iconr's libraries, for
 * iconr-bench render.
 *
 *   render-floor OUT_DIR ICON.svg...
 *
 * One thread, one process. For each icon: librsvg loads the file, renders it at its
 * intrinsic size (rounded, at least 1 pixel) into a cairo image surface, and cairo's libpng
 * writer writes OUT_DIR/<name>.png. No cache, no parameters, no checks, no temporary file:
 * the work a batch cannot avoid.
 */
#include "floor-render.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int renderOne(const char *path, const char *outDir) {
    GError *error = NULL;
    RsvgHandle *handle = rsvg_handle_new_from_file(path, &error);
    if (!handle) {
        fprintf(stderr, "render-floor: %s: %s\n", path, error ? error->message : "cannot load");
        return 1;
    }
    int failed;
    cairo_surface_t *surface = renderAtIntrinsicSize(handle, &failed);
    const char *slash = strrchr(path, '/');
    const char *name = slash ? slash + 1 : path;
    size_t length = strlen(name);
    if (length > 4 && strcmp(name + length - 4, ".svg") == 0) length -= 4;
    char output[4096];
    snprintf(output, sizeof output, "%s/%.*s.png", outDir, (int)length, name);
    failed |= cairo_surface_write_to_png(surface, output) != CAIRO_STATUS_SUCCESS;
    cairo_surface_destroy(surface);
    g_object_unref(handle);
    if (failed) fprintf(stderr, "render-floor: %s: cannot render or write it\n", path);
    return failed;
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: render-floor OUT_DIR ICON.svg...\n");
        return 64;
    }
    int failures = 0;
    for (int index = 2; index < argc; index++) failures += renderOne(argv[index], argv[1]);
    return failures ? 1 : 0;
}
