import Glibc
import IconrSystem
import Testing

/// The platform layer: descriptors, system errors, child processes.
@Suite struct PlatformTests {
    @Test func aPipeCarriesBytesAndEndsEmpty() throws {
        let (input, output) = try FileDescriptor.pipe()
        try output.writeAll(Array(0..<200))
        try output.close()
        #expect(try input.read(upTo: 100) == Array(0..<100))
        #expect(try input.read(upTo: 1000) == Array(100..<200))
        #expect(try input.read(upTo: 1).isEmpty)
        try input.close()
    }

    @Test func sharedMemoryIsZeroedAndSeenByAForkedChild() throws {
        let memory = try SharedMemory(count: 1 << 20)
        #expect(memory.count == 1 << 20)
        #expect(UnsafeRawBufferPointer(start: memory.base, count: memory.count).allSatisfy { $0 == 0 })
        let child = fork()
        if child == 0 {
            // Only a store and _exit in the child of a threaded process.
            (memory.base + 4096).storeBytes(of: 0x1234_5678, as: UInt64.self)
            _exit(0)
        }
        try #require(child > 0)
        #expect(try ChildProcess.wait(for: child) == .exited(0))
        #expect((memory.base + 4096).load(as: UInt64.self) == 0x1234_5678)
    }

    @Test func failuresNameTheCallAndTheErrno() throws {
        #expect(throws: SystemError("open", errno: ENOENT)) {
            try FileDescriptor.open("/nonexistent/iconr-file", O_RDONLY)
        }
        #expect(SystemError("rename", errno: EXDEV).description == "rename: Invalid cross-device link")
        let (input, output) = try FileDescriptor.pipe()
        try input.close()
        // A peer that has gone is an EPIPE error with `noSignal`, not a SIGPIPE.
        let (socket, peer) = try FileDescriptor.socketPair()
        try peer.close()
        #expect(throws: SystemError("send", errno: EPIPE)) { try socket.writeAll([1, 2, 3], noSignal: true) }
        try socket.close()
        try output.close()
        #expect(throws: SystemError("close", errno: EBADF)) { try output.close() }
    }

    @Test func childrenExitAndAreSignalled() throws {
        let exiting = try ChildProcess.spawn("/bin/sh", ["-c", "exit 3"])
        #expect(try ChildProcess.wait(for: exiting) == .exited(3))
        let sleeping = try ChildProcess.spawn("/bin/sleep", ["30"])
        #expect(try ChildProcess.poll(sleeping) == nil)
        kill(sleeping, SIGTERM)
        #expect(try ChildProcess.wait(for: sleeping) == .signaled(SIGTERM))
        #expect(Termination(waitStatus: 0x0100).signal == nil)
        #expect(throws: SystemError("posix_spawn", errno: ENOENT)) { try ChildProcess.spawn("/nonexistent/iconr", []) }
    }

    @Test func aChildGetsItsFilesAndEnvironment() throws {
        let folder = "/tmp/iconr-platform-\(getpid())"
        try FileReader.makeFolder(folder + "/a/b")
        defer { _ = system("rm -rf \(folder)") }
        let pid = try ChildProcess.spawn(
            "/bin/sh", ["-c", "printf '%s' \"$ICONR_TEST\""],
            fileActions: [.open(folder + "/a/out", flags: O_WRONLY | O_CREAT | O_TRUNC, as: 1)],
            environment: ["ICONR_TEST=seen"])
        #expect(try ChildProcess.wait(for: pid) == .exited(0))
        #expect(try FileReader.read(folder + "/a/out") == Array("seen".utf8))
        // Something other than a folder in the way.
        #expect(throws: SystemError("mkdir", errno: ENOTDIR)) { try FileReader.makeFolder(folder + "/a/out/c") }
    }

    /// What `CrashSignals.isOwnFault` asks of a faulting address (the crashes themselves:
    /// CrashAttributionTests).
    @Test func ownCodeIsTheProgramsAndNotTheCLibrarys() throws {
        CrashSignals.findOwnCode()
        let own: @convention(c) () -> Void = {}
        #expect(CrashSignals.isOwnCode(UInt(bitPattern: unsafeBitCast(own, to: UnsafeRawPointer.self))))
        let strlenAddress = try #require(dlsym(nil, "strlen"))
        #expect(!CrashSignals.isOwnCode(UInt(bitPattern: strlenAddress)))
        #expect(!CrashSignals.isOwnCode(0))
    }

    /// A file written in pieces is their bytes joined, in place of the old file only once
    /// all are written; a write into a missing folder names it and leaves nothing behind.
    @Test func aFileWrittenInPiecesIsWholeOrNotThere() throws {
        let folder = "/tmp/iconr-pieces-\(getpid())"
        try FileReader.makeFolder(folder)
        defer { _ = system("rm -rf \(folder)") }
        try AtomicFile.write([1, 2, 3], to: folder + "/pack")
        let pieces = (0..<40).map { piece in [UInt8](repeating: UInt8(piece), count: 1 << 16) }
        try AtomicFile.write(pieces: pieces, to: folder + "/pack")
        #expect(try FileReader.read(folder + "/pack") == pieces.flatMap { $0 })
        #expect(FileReader.names(in: folder) == ["pack"], "no temporary file is left")
        #expect(throws: FileWriteError.self) { try AtomicFile.write(pieces: pieces, to: folder + "/none/pack") }
        #expect(FileReader.names(in: folder) == ["pack"])
    }

    /// What a write of a set killed among its renames left (issue 64) is put right by the next
    /// write to its folder: the renames it announced are finished, so every file of the set is
    /// the new one; the temporary files and intents of dead processes go, a running one's stay.
    @Test func aSetKilledAmongItsRenamesIsFinishedAndItsTemporariesGo() throws {
        let folder = "/tmp/iconr-set-\(getpid())"
        try FileReader.makeFolder(folder)
        defer { _ = system("rm -rf \(folder)") }
        // A process that has exited: its pid names the killed writer.
        let gone = try ChildProcess.spawn("/bin/true", [])
        _ = try ChildProcess.wait(for: gone)
        func put(_ bytes: [UInt8], _ name: String) throws {
            let file = try FileDescriptor.open(folder + "/" + name, O_WRONLY | O_CREAT | O_TRUNC, permissions: 0o644)
            try file.writeAll(bytes)
            try file.close()
        }
        // The old set; the new one's index renamed already (its old file kept as `.old`), its
        // sheet's temporary not yet; the intent naming both; a stray temporary of the dead
        // writer, and one of this (running) process.
        try put([2], "sprite.json")
        try put([1], ".sprite.json.\(gone).11.tmp.old")
        try put([1], "sprite.png")
        try put([2], ".sprite.png.\(gone).12.tmp")
        try put([9], ".other.png.\(gone).13.tmp")
        try put([8], ".mine.png.\(getpid()).14.tmp")
        let intent =
            "\(folder)/.sprite.json.\(gone).11.tmp\u{0}\(folder)/sprite.json\u{0}"
            + "\(folder)/.sprite.png.\(gone).12.tmp\u{0}\(folder)/sprite.png\u{0}"
        try put(Array(intent.utf8), ".iconr-set.\(gone).7")
        #expect(try FileReader.read(folder + "/sprite.png") == [1], "the set is mixed before")

        AtomicFile.recoverInterruptedWrites(in: folder)
        #expect(try FileReader.read(folder + "/sprite.json") == [2])
        #expect(try FileReader.read(folder + "/sprite.png") == [2], "the rename the kill stopped is made")
        #expect(
            Set(FileReader.hiddenNames(in: folder)) == [".mine.png.\(getpid()).14.tmp"],
            "the dead writer's temporaries and intent are gone; a running one's stays")

        // A write of a set leaves no intent and no temporary; it puts a folder right first.
        try put([3], ".stale.json.\(gone).15.tmp")
        try AtomicFile.writeTogether([([4], folder + "/sprite.json"), ([4], folder + "/sprite.png")])
        #expect(try FileReader.read(folder + "/sprite.png") == [4])
        #expect(Set(FileReader.hiddenNames(in: folder)) == [".mine.png.\(getpid()).14.tmp"])
    }

    /// Writing the bytes a file holds already leaves that file (its inode) where it is, with
    /// a new modification time; other bytes of the same length replace it.
    @Test func rewritingTheSameBytesOnlyStampsTheFile() throws {
        let folder = "/tmp/iconr-same-\(getpid())"
        try FileReader.makeFolder(folder)
        defer { _ = system("rm -rf \(folder)") }
        let path = folder + "/icon.png"
        func status() -> stat {
            var info = stat()
            stat(path, &info)
            return info
        }
        try AtomicFile.write([1, 2, 3], to: path)
        let first = status()
        var past = [timespec(tv_sec: 1_000_000, tv_nsec: 0), timespec(tv_sec: 1_000_000, tv_nsec: 0)]
        #expect(utimensat(AT_FDCWD, path, &past, 0) == 0)
        try AtomicFile.write([1, 2, 3], to: path)
        #expect(status().st_ino == first.st_ino && status().st_mtim.tv_sec > 1_000_000)
        try AtomicFile.write([1, 2, 4], to: path)
        #expect(status().st_ino != first.st_ino)
        #expect(try FileReader.read(path) == [1, 2, 4])
        #expect(FileReader.names(in: folder) == ["icon.png"], "no temporary file is left")
    }

    /// A file made only where there is none: the first call makes it, a second leaves it as
    /// it is (processes making one at once agree on it), and no temporary file is left; reads
    /// at an offset get what is there, fewer bytes where the file ends.
    @Test func aFileIsMadeOnceAndReadAtOffsets() throws {
        let folder = "/tmp/iconr-create-\(getpid())"
        try FileReader.makeFolder(folder)
        defer { _ = system("rm -rf \(folder)") }
        #expect(AtomicFile.create(Array(0..<100), at: folder + "/made", permissions: 0o600))
        #expect(!AtomicFile.create([7, 7, 7], at: folder + "/made", permissions: 0o600))
        #expect(!AtomicFile.create([7], at: folder + "/none/made", permissions: 0o600))
        #expect(FileReader.names(in: folder) == ["made"], "no temporary file is left")
        var info = stat()
        #expect(stat(folder + "/made", &info) == 0 && info.st_mode & 0o777 == 0o600)
        let file = try FileDescriptor.open(folder + "/made", O_RDONLY)
        defer { try? file.close() }
        #expect(try file.read(upTo: 10, at: 20) == Array(20..<30))
        #expect(try file.read(upTo: 10, at: 95) == Array(95..<100))
        #expect(try file.read(upTo: 10, at: 200).isEmpty)
        #expect(try file.read(upTo: 0, at: 0).isEmpty && file.read(upTo: -1, at: 0).isEmpty, "no count, no trap")
    }
}
