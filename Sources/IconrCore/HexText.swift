/// `bytes` as lowercase hex digits, two a byte: digests (`SHA256.hex`, cache entry names)
/// and colors (`Color.hexString`) are spelled with it.
package func hexText(_ bytes: [UInt8]) -> String {
    String(unsafeUninitializedCapacity: bytes.count * 2) { text in
        let digits: StaticString = "0123456789abcdef"
        digits.withUTF8Buffer { digits in
            for (index, byte) in bytes.enumerated() {
                text[index * 2] = digits[Int(byte >> 4)]
                text[index * 2 + 1] = digits[Int(byte & 15)]
            }
        }
        return bytes.count * 2
    }
}
