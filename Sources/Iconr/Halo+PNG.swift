import IconrCore
import IconrRender

extension Halo {
    /// `variant`'s PNG with the halo baked in (`variant` drawn at `scale`).
    /// - Throws: `IconrError.render` when the image cannot be encoded.
    public func png(of variant: IconVariant, scale: Double) throws(IconrError) -> [UInt8] {
        do {
            return try PNGEncoder.encode(apply(to: variant.image, scale: scale))
        } catch {
            throw IconrError.render(error, file: nil)
        }
    }
}
