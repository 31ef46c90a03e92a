/*
 * What render-floor.c and variant-floor.c share: a document drawn by librsvg at its
 * intrinsic size (rounded, at least 1 pixel; without one, the size of its drawing, as
 * rsvg-convert does) into a new cairo image surface.
 */
#include <cairo.h>
#include <librsvg/rsvg.h>
#include <math.h>

/* The surface with `handle` drawn; `*failed` is set when librsvg could not draw it. */
static cairo_surface_t *renderAtIntrinsicSize(RsvgHandle *handle, int *failed) {
    gdouble width = 0, height = 0;
    if (!rsvg_handle_get_intrinsic_size_in_pixels(handle, &width, &height)) {
        RsvgRectangle ink, logical;
        rsvg_handle_get_geometry_for_element(handle, NULL, &ink, &logical, NULL);
        width = logical.width;
        height = logical.height;
    }
    int wide = width < 1 ? 1 : (int)lround(width), high = height < 1 ? 1 : (int)lround(height);
    cairo_surface_t *surface = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, wide, high);
    cairo_t *cairo = cairo_create(surface);
    RsvgRectangle viewport = {0, 0, wide, high};
    *failed = !rsvg_handle_render_document(handle, cairo, &viewport, NULL);
    cairo_destroy(cairo);
    return surface;
}
