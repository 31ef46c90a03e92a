/// Sprite ids of generated variants: `name?param=rrggbb&param=rrggbbaa`, parameter names
/// sorted, colors as lowercase hex without `#`, parameters equal to their default left out.
/// Deterministic, readable, and free of `:` (multi-sprite prefixes) and `{}` (legacy tokens).
package enum SpriteID {
    /// Whether `id` matches the glob `pattern`: `*` stands for any run of characters
    /// (slashes included), `?` for one; everything else for itself.
    package static func matches(_ id: String, pattern: String) -> Bool {
        let text = Array(id.unicodeScalars), glob = Array(pattern.unicodeScalars)
        // Iterative matching with one backtrack point: linear in practice, never exponential.
        var t = 0, g = 0, star = -1, resume = 0
        while t < text.count {
            if g < glob.count, glob[g] == "?" || (glob[g] != "*" && glob[g] == text[t]) {
                t += 1
                g += 1
            } else if g < glob.count, glob[g] == "*" {
                star = g
                resume = t
                g += 1
            } else if star >= 0 {
                g = star + 1
                resume += 1
                t = resume
            } else {
                return false
            }
        }
        while g < glob.count, glob[g] == "*" { g += 1 }
        return g == glob.count
    }

    /// The id of image `id` with `halo` baked in: `marker+halo=2,ffffff` (`,BLUR` after it
    /// when there is one), as `--halo` spells a halo, the color without `#`.
    package static func haloed(_ id: String, _ halo: Halo) -> String {
        id + "+halo=\(halo.width.shortText),\(halo.color.hexString.dropFirst())"
            + (halo.blur > 0 ? ",\(halo.blur.shortText)" : "")
    }

    package static func variant(of name: String, _ params: ResolvedParameters) -> String {
        let query = params.effectiveValues.sorted { $0.key < $1.key }
            .map { "\($0.key)=\($0.value.hexString.dropFirst())" }
        return query.isEmpty ? name : name + "?" + query.joined(separator: "&")
    }
}
