/// What a supervisor that runs an in-process build in a child process, and starts it again
/// after a crash or a timeout, tells the next attempt and hears from it.
package struct SpriteBuildRecovery: Sendable {
    /// Icons (by path) that crashed librsvg or rendered too long in an earlier attempt, with
    /// the reason: they are not rendered again, and fail (or are skipped) with that reason.
    package var failed: [String: String] = [:]
    /// Icons that were rendering when an attempt crashed: each renders alone, before the
    /// others, so that a crash among them names one.
    package var suspects: Set<String> = []
    /// Hear an icon's path right before librsvg works on it, and right after.
    package var willRender: (@Sendable (String) -> Void)?
    /// Called after librsvg work on a file ended (see `willRender`).
    package var didRender: (@Sendable (String) -> Void)?

    /// No failures known, no suspects, no listeners.
    package init() {}

    /// `body`'s result, with `path` announced to the listeners before and after it: every
    /// read, scan, measurement and render of a file goes through here.
    package func watching<Value, Failure: Error>(
        _ path: String, _ body: () throws(Failure) -> Value
    ) throws(Failure) -> Value {
        willRender?(path)
        defer { didRender?(path) }
        return try body()
    }
}
