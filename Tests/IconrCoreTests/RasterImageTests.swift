import Testing

@testable import IconrCore

/// `RasterImage.cropped(to:)`: a sprite entry's pixels, and nil for a place outside the image
/// (an index read from a file may say anything; a crop past the end would trap).
struct RasterImageTests {
    @Test func aCropIsItsRectangleOrNil() throws {
        let image = RasterImage(size: PixelSize(width: 3, height: 2), pixels: (0..<24).map { UInt8($0) })
        let cut = try #require(image.cropped(to: PixelRect(x: 1, y: 1, width: 2, height: 1)))
        #expect(cut.size == PixelSize(width: 2, height: 1) && cut.pixels == Array(16..<24))
        #expect(image.cropped(to: PixelRect(x: 0, y: 0, width: 3, height: 2)) == image)
        for outside in [
            PixelRect(x: 2, y: 0, width: 2, height: 1), PixelRect(x: 0, y: 1, width: 1, height: 2),
            PixelRect(x: -1, y: 0, width: 1, height: 1), PixelRect(x: 0, y: 0, width: -1, height: 1),
        ] {
            #expect(image.cropped(to: outside) == nil, "\(outside)")
        }
    }
}
