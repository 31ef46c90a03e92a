import Iconr
import IconrCore
import IconrHTTP
import IconrSystem

/// The whole answer to an icon URL whose variant memory holds, by the URL as it came: a
/// repeated request (the hot path of a map) skips decoding its path and query, parsing its
/// colors, finding its icon and building its headers. An answer is taken only while the
/// memory cache still holds its variant (the lookup counts as that cache's hit and keeps
/// it recent) and until its template's file is due to be checked again; SIGHUP forgets them all.
final class HitMemo: Sendable {
    /// One URL's answers.
    struct Answer: Sendable {
        /// The variant memory must hold for the answer to stand.
        let key: VariantKey
        /// The 200, and the 304 for a client that holds `tag`.
        let ok: HTTPResponse
        let notModified: HTTPResponse
        let tag: String
        /// When the icon's file is next checked: the answer is not taken from then on.
        let until: ContinuousClock.Instant
    }

    /// At most this many URLs, and their bodies at most `byteLimit` together (a halo's image
    /// may be one memory no longer holds); past either, all are forgotten and filled again.
    static let countLimit = 8192
    static let byteLimit = 32 << 20

    private let answers = Locked((byURL: [String: Answer](), bytes: 0))

    /// The memo's key for `request`: its path and query as they came.
    static func url(of request: HTTPRequest) -> String {
        var url = request.path
        for (index, pair) in request.query.enumerated() {
            url += index == 0 ? "?" : "&"
            url += pair.name
            url += "="
            url += pair.value
        }
        return url
    }

    /// The answer remembered for `url` if it still stands at `now` and `cache` still holds its
    /// variant (a 304 when the request holds its tag).
    func answer(
        for url: String, request: HTTPRequest, now: ContinuousClock.Instant, cache: IconCache
    ) -> HTTPResponse? {
        guard let answer = answers.withLock({ $0.byURL[url] }), now < answer.until,
            cache.memoryHit(for: answer.key) != nil
        else { return nil }
        return IconServer.holds(request, tag: answer.tag) ? answer.notModified : answer.ok
    }

    /// Remembers `answer` for `url`.
    func remember(_ answer: Answer, for url: String) {
        answers.withLock { memo in
            if memo.byURL.count >= Self.countLimit || memo.bytes + answer.ok.body.count > Self.byteLimit {
                memo = ([:], 0)
            }
            memo.bytes += answer.ok.body.count - (memo.byURL[url]?.ok.body.count ?? 0)
            memo.byURL[url] = answer
        }
    }

    /// Forgets every answer (SIGHUP: files are checked again).
    func forget() {
        answers.withLock { $0 = ([:], 0) }
    }
}
