/// The exact Euclidean distance transform of a grid (Felzenszwalb and Huttenlocher), for
/// signed distance fields and baked halos.
package enum DistanceTransform {
    /// Squared distance from every pixel to the nearest pixel where `isTarget` holds.
    package static func squaredDistances(_ width: Int, _ height: Int, isTarget: (Int) -> Bool) -> [Double] {
        let far = Double(width * width + height * height) * 4
        var grid = (0..<(width * height)).map { isTarget($0) ? 0 : far }
        var line = [Double](repeating: 0, count: max(width, height))
        for x in 0..<width {
            for y in 0..<height { line[y] = grid[y * width + x] }
            let column = transform(line, count: height)
            for y in 0..<height { grid[y * width + x] = column[y] }
        }
        for y in 0..<height {
            for x in 0..<width { line[x] = grid[y * width + x] }
            let row = transform(line, count: width)
            for x in 0..<width { grid[y * width + x] = row[x] }
        }
        return grid
    }

    /// The one-dimensional squared distance transform of the first `count` values of `f`.
    private static func transform(_ f: [Double], count: Int) -> [Double] {
        var result = [Double](repeating: 0, count: count)
        var vertices = [Int](repeating: 0, count: count)
        var bounds = [Double](repeating: 0, count: count + 1)
        var k = 0
        bounds[0] = -.infinity
        bounds[1] = .infinity
        for q in 1..<max(1, count) {
            var s: Double
            repeat {
                let p = vertices[k]
                s = ((f[q] + Double(q * q)) - (f[p] + Double(p * p))) / Double(2 * q - 2 * p)
                if s <= bounds[k] { k -= 1 } else { break }
            } while k >= 0
            k += 1
            vertices[k] = q
            bounds[k] = s
            bounds[k + 1] = .infinity
        }
        k = 0
        for q in 0..<count {
            while bounds[k + 1] < Double(q) { k += 1 }
            let p = vertices[k]
            result[q] = Double((q - p) * (q - p)) + f[p]
        }
        return result
    }
}
