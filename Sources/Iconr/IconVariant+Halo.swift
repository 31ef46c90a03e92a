import IconrCore

extension IconVariant {
    /// This variant with `halo` baked in: the image grown by the halo's border on every side
    /// (the icon stays centered), its stretch areas and content box moved with it, and a key
    /// of its own (`VariantKey.haloed`).
    public func haloed(_ halo: Halo) -> IconVariant {
        let border = Double(halo.border(at: key.scale))
        return IconVariant(
            key: key.haloed(halo), image: halo.apply(to: image, scale: key.scale),
            stretchX: stretchX.map { StretchArea(start: $0.start + border, end: $0.end + border) },
            stretchY: stretchY.map { StretchArea(start: $0.start + border, end: $0.end + border) },
            content: content.map {
                ContentBox(
                    left: $0.left + border, top: $0.top + border, right: $0.right + border, bottom: $0.bottom + border)
            })
    }
}
