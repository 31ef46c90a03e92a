/// Which rendered variant of which template: icon name, a digest of the template's bytes,
/// canonical parameters and scale. Stable across runs and machines.
///
/// The readable form (`description`) is `name?param=#rrggbb&param=#rrggbbaa@Sx`: parameter
/// names sorted, colors as lowercase hex (alpha only when not opaque), parameters equal to
/// their default and unknown names left out, scale in its shortest decimal form, e.g.
/// `flag?flag_color=#800080@2x` or `flag@1x`. `identity` prefixes the template digest, so
/// editing the file makes new keys.
public struct VariantKey: Hashable, Sendable, CustomStringConvertible {
    /// The icon's name.
    public let name: String
    /// SHA-256 of the template's bytes, hex.
    public let templateDigest: String
    /// Pixels per user unit.
    public let scale: Double
    /// The readable form, `flag?flag_color=#800080@2x`.
    public let description: String
    /// `<digest>:<description>`: what equality, hashing and disk entries use.
    public let identity: String
    /// `identity`'s hash in this process, computed once: keys are hashed on every cache hit.
    private let identityHash: Int

    /// `params` come from `SVGTemplate.resolve`, which already drops unknown names and
    /// values equal to the default.
    public init(name: String, templateDigest: String, params: ResolvedParameters, scale: Double) {
        self.name = name
        self.templateDigest = templateDigest
        self.scale = scale
        let query = params.effectiveValues.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value.hexString)" }
        description = name + (query.isEmpty ? "" : "?" + query.joined(separator: "&")) + "@\(scale.shortText)x"
        identity = templateDigest + ":" + description
        identityHash = identity.hashValue
    }

    /// The key of this variant with `halo` baked in: `flag?flag_color=#800080@2x+halo=2,#ffffff`
    /// (the blur after another comma when there is one).
    public func haloed(_ halo: Halo) -> VariantKey {
        VariantKey(
            name: name, templateDigest: templateDigest, scale: scale,
            description: description + "+halo=" + halo.text)
    }

    private init(name: String, templateDigest: String, scale: Double, description: String) {
        self.name = name
        self.templateDigest = templateDigest
        self.scale = scale
        self.description = description
        identity = templateDigest + ":" + description
        identityHash = identity.hashValue
    }

    /// Keys are equal when their identities are.
    public static func == (lhs: VariantKey, rhs: VariantKey) -> Bool { lhs.identity == rhs.identity }

    /// Hashes the identity (hashed once, when the key is made).
    public func hash(into hasher: inout Hasher) { hasher.combine(identityHash) }
}
