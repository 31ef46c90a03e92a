import Glibc
import IconrCore
import IconrSystem

/// An icon's references to other files (`<image href="x.png">`, `<use>` of another file,
/// CSS `url()`), which librsvg draws once the document has its file as base: the files
/// inside the icon's folder count in its cache key, and the rest are named in warnings.
package enum IconReferences {
    /// The digest that keys `bytes` (the template at `path`) in caches, covering the files it
    /// draws, and a warning for each reference that is not drawn.
    package static func digest(
        of bytes: [UInt8], template: SVGTemplate, path: String
    ) -> (digest: String, warnings: [String]) {
        var warnings: [String] = []
        var input = bytes
        for reference in template.externalReferences {
            switch target(of: reference, from: path) {
            case .success(let target): input += Array(target.path.utf8) + [0] + Array(target.digest.utf8)
            case .failure(let reason): warnings.append("\(path): refers to \"\(reference)\", \(reason.text): not drawn")
            }
        }
        return (SHA256.hex(input), warnings)
    }

    /// A digest of what `references` (by the path of the icon file that makes them) lead to
    /// now: each file and its bytes' digest, or why it is not drawn.
    package static func fingerprint(of references: [String: [String]]) -> String {
        guard !references.isEmpty else { return "none" }
        var text = ""
        for (path, targets) in references.sorted(by: { $0.key < $1.key }) {
            for reference in targets {
                text += path + "\u{0}" + reference + "\u{0}"
                switch target(of: reference, from: path) {
                case .success(let target): text += target.path + "\u{0}" + target.digest + "\n"
                case .failure(let reason): text += "not drawn: " + reason.text + "\n"
                }
            }
        }
        return SHA256.hex(Array(text.utf8))
    }

    /// Why a reference is not drawn (`which cannot be read`, `outside the icon's folder`, ...).
    struct NotDrawn: Error {
        let text: String
    }

    /// The file `reference` from the icon at `path` leads to and the SHA-256 of its bytes, or
    /// why it is not drawn.
    private static func target(
        of reference: String, from path: String
    ) -> Result<(path: String, digest: String), NotDrawn> {
        switch ExternalReference.resolve(reference, from: path) {
        case .inside(let resolved):
            guard let referenced = try? FileReader.readIcon(resolved) else {
                return .failure(NotDrawn(text: "which cannot be read"))
            }
            return .success((resolved, SHA256.hex(referenced)))
        case .refused(let reason): return .failure(NotDrawn(text: reason))
        }
    }
}

/// Where a reference from an icon to another file leads, by librsvg's rule for a document
/// with a base file: only files in that file's folder and below load.
enum ExternalReference {
    enum Resolution {
        case inside(String)
        case refused(String)
    }

    static func resolve(_ reference: String, from iconPath: String) -> Resolution {
        var target = reference
        if let cut = target.firstIndex(where: { $0 == "#" || $0 == "?" }) { target = String(target[..<cut]) }
        if target.lowercased().hasPrefix("file://") {
            target = String(target.dropFirst(7))
        } else if let colon = target.firstIndex(of: ":"), !target[..<colon].contains("/") {
            return .refused("which is not a local file (iconr never uses the network)")
        }
        target = target.removingPercentEscapes
        let folder = iconPath.lastIndex(of: "/").map { String(iconPath[..<$0]) } ?? "."
        let path = target.hasPrefix("/") ? target : folder + "/" + target
        guard let resolved = FileReader.realPath(path) else { return .refused("which does not exist") }
        guard let base = FileReader.realPath(folder), FileReader.isWithin(base, resolved) else {
            return .refused("outside the icon's folder")
        }
        return .inside(resolved)
    }
}

private extension String {
    /// `%20` and the like decoded; invalid escapes left as they are.
    var removingPercentEscapes: String {
        guard contains("%") else { return self }
        var bytes: [UInt8] = []
        var utf8 = Array(self.utf8)[...]
        while let byte = utf8.popFirst() {
            if byte == UInt8(ascii: "%"), utf8.count >= 2,
                let value = UInt8(String(decoding: utf8.prefix(2), as: UTF8.self), radix: 16)
            {
                bytes.append(value)
                utf8 = utf8.dropFirst(2)
            } else {
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
