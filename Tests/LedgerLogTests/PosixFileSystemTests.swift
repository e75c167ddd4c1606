import Testing
@testable import LedgerLog

/// The real file system: creating a ledger folder by any spelling of its path.
struct PosixFileSystemTests {
    @Test func parentFolderOfEverySpelling() {
        #expect(PosixFileSystem.parentFolder(of: "L") == ".")
        #expect(PosixFileSystem.parentFolder(of: "L/") == ".")
        #expect(PosixFileSystem.parentFolder(of: "a/b") == "a")
        #expect(PosixFileSystem.parentFolder(of: "a/b//") == "a")
        #expect(PosixFileSystem.parentFolder(of: "/a") == "/")
        #expect(PosixFileSystem.parentFolder(of: "/a/b/c") == "/a/b")
        #expect(PosixFileSystem.parentFolder(of: "/") == "/")
    }
}
