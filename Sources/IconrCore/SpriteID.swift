/// Sprite ids of generated variants: `name?param=rrggbb&param=rrggbbaa`, parameter names
/// sorted, colors as lowercase hex without `#`, parameters equal to their default left out.
/// Deterministic, readable, and free of `:` (multi-sprite prefixes) and `{}` (legacy tokens).
public enum SpriteID {
    public static func variant(of name: String, _ params: ResolvedParameters) -> String {
        let query = params.effectiveValues.sorted { $0.key < $1.key }
            .map { "\($0.key)=\($0.value.hexString.dropFirst())" }
        return query.isEmpty ? name : name + "?" + query.joined(separator: "&")
    }
}
