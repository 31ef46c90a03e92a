import Foundation

/// Where the CLI writes: stdout for results, stderr for messages.
struct Console {
    func out(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }

    func outBytes(_ bytes: [UInt8]) {
        FileHandle.standardOutput.write(Data(bytes))
    }

    func error(_ message: String) {
        FileHandle.standardError.write(Data("error: \(message)\n".utf8))
    }

    func warning(_ message: String) {
        FileHandle.standardError.write(Data("warning: \(message)\n".utf8))
    }

    func note(_ message: String) {
        FileHandle.standardError.write(Data((message + "\n").utf8))
    }
}
