import Glibc

/// `--trusted-proxy CIDR`: the peers (a reverse proxy such as nginx) whose `X-Forwarded-For`
/// names the client. From any other peer the header is the client's own claim, and ignored.
public struct TrustedProxies: Sendable {
    /// One network: its address bytes (4 or 16) and prefix length.
    struct Network: Sendable {
        let bytes: [UInt8]
        let prefix: Int

        func contains(_ address: [UInt8]) -> Bool {
            guard address.count == bytes.count else { return false }
            var left = prefix
            for index in bytes.indices where left > 0 {
                let bits = min(8, left)
                let mask = UInt8(truncatingIfNeeded: 0xFF << (8 - bits))
                if address[index] & mask != bytes[index] & mask { return false }
                left -= bits
            }
            return true
        }
    }

    let networks: [Network]

    /// None: every peer is the client.
    public init() { networks = [] }

    /// `10.0.0.0/8`, `127.0.0.1` (a /32), `::1`, `fd00::/8`; nil for anything else.
    public init?(parsing cidrs: [String]) {
        var networks: [Network] = []
        for cidr in cidrs {
            let parts = cidr.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
            guard let bytes = Self.address(String(parts[0])) else { return nil }
            let prefix = parts.count == 2 ? Int(parts[1]) : bytes.count * 8
            guard let prefix, (0...bytes.count * 8).contains(prefix) else { return nil }
            networks.append(Network(bytes: bytes, prefix: prefix))
        }
        self.networks = networks
    }

    /// Whether `address` (text) is in a trusted network.
    func trusts(_ address: String) -> Bool {
        guard let bytes = Self.address(address) else { return false }
        return networks.contains { $0.contains(bytes) }
    }

    /// The client of a request from `peer` with `forwardedFor`: the peer, unless it is a
    /// trusted proxy; then, from the header's right, the first address that is not one (the
    /// leftmost when all are). An entry that is no address ends the walk at the one before.
    public func client(peer: String, forwardedFor: String?) -> String {
        guard let forwardedFor, !networks.isEmpty, trusts(peer) else { return peer }
        var client = peer
        for entry in forwardedFor.split(separator: ",").reversed() {
            let address = String(entry.filter { $0 != " " && $0 != "\t" })
            guard Self.address(address) != nil else { break }
            client = address
            if !trusts(address) { break }
        }
        return client
    }

    /// The bytes of an IPv4 or IPv6 address in text; nil for anything else.
    static func address(_ text: String) -> [UInt8]? {
        var four = in_addr()
        if inet_pton(AF_INET, text, &four) == 1 { return withUnsafeBytes(of: four) { Array($0) } }
        var six = in6_addr()
        if inet_pton(AF_INET6, text, &six) == 1 { return withUnsafeBytes(of: six) { Array($0) } }
        return nil
    }
}
