import Foundation
import Iconr
import IconrRender
func probe(_ documents: [[UInt8]]) {
    let clock = ContinuousClock()
    var scan = Duration.zero, load = Duration.zero, enc = Duration.zero, enc1 = Duration.zero
    for _ in 0..<5 { for d in documents {
        var s = clock.now
        _ = try! SVGTemplate(bytes: d)
        scan += clock.now - s
        s = clock.now
        _ = try! Rasterizer.intrinsicSize(of: d)
        load += clock.now - s
        let img = try! Rasterizer.render(d, scale: 1)
        s = clock.now
        _ = try! PNGEncoder.encode(img)
        enc += clock.now - s
        s = clock.now
        _ = try! PNGEncoder.encode(img, compressionLevel: 1)
        enc1 += clock.now - s
    } }
    let n = Double(documents.count * 5)
    print("scan", scan / n, "load", load / n, "encode6", enc / n, "encode1", enc1 / n)
}
