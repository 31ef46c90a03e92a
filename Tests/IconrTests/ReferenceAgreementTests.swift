import Foundation
import Iconr
import IconrCore
import IconrRender
import IconrSystem
import IconrTestSupport
import Testing

/// iconr against `rsvg-convert --zoom S` on real icon sets: for a template with no
/// parameters, at a scale where both agree on the size, every channel within 1.
@Suite(.enabled(if: TestSupport.corporaAvailable, Comment(rawValue: TestSupport.corporaMissing)))
struct ReferenceAgreementTests {
    struct Outcome: Sendable {
        var agreed: [String] = []
        var differed: [(file: String, difference: Int)] = []
        var sizeMismatch: [String] = []
        /// Neither renderer could draw it (both failed).
        var bothFailed: [String] = []
        /// Exactly one of the two failed: a disagreement about whether the file renders.
        var oneFailed: [(file: String, why: String)] = []

        var summary: String {
            "\(agreed.count) agree, \(differed.count) differ, \(sizeMismatch.count) differ in size, "
                + "\(bothFailed.count) fail in both, \(oneFailed.count) fail in one"
        }
    }

    static func compare(_ files: [URL], scale: Double) throws -> Outcome {
        let rsvgConvert = try #require(
            TestSupport.which("rsvg-convert"),
            "rsvg-convert is not installed (apt-get install librsvg2-bin)")
        let temporary = try TemporaryFolder("iconr-ref")
        defer { withExtendedLifetime(temporary) {} }
        let scratch = temporary.url
        let results = Locked<[(String, Comparison)]>([])
        DispatchQueue.concurrentPerform(iterations: files.count) { index in
            let file = files[index]
            let name = file.path.replacingOccurrences(of: TestSupport.corpora.path + "/", with: "")
            let reference = scratch.appendingPathComponent("\(index).png")
            var ours: RasterImage?, theirs: RasterImage?
            var why = ""
            do {
                let template = try IconSource(path: file.path)
                ours = try template.render(
                    scale: scale, placement: .isolated(TestSupport.isolated), limits: RenderLimits(timeout: 10)
                ).image
            } catch {
                why = "iconr: \(error)"
            }
            do {
                let run = try TestSupport.run(
                    "/usr/bin/timeout", ["10", rsvgConvert, "--zoom", "\(scale)", file.path, "-o", reference.path])
                if run.status == 0 {
                    theirs = try PNGDecoder.decode([UInt8](Data(contentsOf: reference)))
                } else {
                    why = "rsvg-convert: exit \(run.status) \(String(decoding: run.stderr, as: UTF8.self))"
                }
            } catch {
                why = "rsvg-convert: \(error)"
            }
            let comparison: Comparison =
                switch (ours, theirs) {
                case (let a?, let b?) where a.size != b.size: .sizeMismatch("\(a.size) vs \(b.size)")
                case (let a?, let b?): .compared(TestSupport.maxChannelDifference(a, b))
                case (nil, nil): .bothFailed
                default: .oneFailed(why)
                }
            results.withLock { $0.append((name, comparison)) }
        }
        var outcome = Outcome()
        for (name, comparison) in results.withLock({ $0 }).sorted(by: { $0.0 < $1.0 }) {
            switch comparison {
            case .compared(let difference) where difference <= 1: outcome.agreed.append(name)
            case .compared(let difference): outcome.differed.append((name, difference))
            case .sizeMismatch(let sizes): outcome.sizeMismatch.append("\(name) (\(sizes))")
            case .bothFailed: outcome.bothFailed.append(name)
            case .oneFailed(let why): outcome.oneFailed.append((name, why))
            }
        }
        return outcome
    }

    enum Comparison {
        case compared(Int)
        case sizeMismatch(String)
        case bothFailed
        case oneFailed(String)
    }

    @Test(arguments: [1.0, 2.0])
    func makiAgreesEverywhere(_ scale: Double) throws {
        let files = try TestSupport.requiredSVGFiles(in: TestSupport.corpus("maki"), atLeast: 214)
        #expect(files.count == 214)
        let outcome = try Self.compare(files, scale: scale)
        print("maki at \(scale)x: \(outcome.summary)")
        #expect(outcome.agreed.count == files.count, "\(outcome.differed) \(outcome.oneFailed) \(outcome.sizeMismatch)")
    }

    @Test func resvgFeatureTestsAgree() throws {
        let files = try TestSupport.requiredSVGFiles(in: TestSupport.corpus("resvg-svg"), atLeast: 878)
        let outcome = try Self.compare(files, scale: 1)
        print("resvg-svg at 1x: \(outcome.summary)")
        for (file, difference) in outcome.differed { print("  differs by \(difference): \(file)") }
        for file in outcome.sizeMismatch { print("  size differs: \(file)") }
        for (file, why) in outcome.oneFailed { print("  \(file): \(why)") }
        for file in outcome.bothFailed { print("  both fail: \(file)") }
        #expect(outcome.differed.isEmpty && outcome.oneFailed.isEmpty && outcome.sizeMismatch.isEmpty)
    }
}
