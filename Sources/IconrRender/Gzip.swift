import CPNG
import IconrCore
import IconrSystem

/// gzip, for `.svgz` icons (zlib, through the CPNG door).
package enum Gzip {
    /// Whether `bytes` start with the gzip magic number.
    package static func isCompressed(_ bytes: [UInt8]) -> Bool {
        bytes.count >= 2 && bytes[0] == 0x1F && bytes[1] == 0x8B
    }

    /// The decompressed bytes, at most `limit` of them (a gzip bomb is an error, not gigabytes).
    package static func decompress(_ bytes: [UInt8], limit: Int = FileReader.maxSize) throws(RenderError) -> [UInt8] {
        var buffer = CPNG_Buffer()
        var error = CPNG_Error()
        defer { free(buffer.data) }
        let succeeded = bytes.withUnsafeBufferPointer { CPNG_gunzip($0.baseAddress, $0.count, limit, &buffer, &error) }
        guard succeeded != 0 else {
            throw RenderError.invalidDocument("cannot decompress the .svgz: \(error.text)")
        }
        return Array(UnsafeBufferPointer(start: buffer.data, count: buffer.length))
    }
}
