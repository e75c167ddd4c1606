import Foundation

/// Locates `../shared` (beside the repository) for tests that read real exports
/// and reference tables. Tests that need it skip with a clear message when absent.
enum SharedData {
    /// The repository root, found from this file's path.
    static let repositoryRoot: URL = {
        var url = URL(fileURLWithPath: #filePath)
        while url.path != "/" {
            url.deleteLastPathComponent()
            if FileManager.default.fileExists(atPath: url.appendingPathComponent("Package.swift").path) { return url }
        }
        return URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
    }()

    /// `../shared`, or nil when it is not there.
    static let root: URL? = {
        let url = repositoryRoot.deletingLastPathComponent().appendingPathComponent("shared")
        return FileManager.default.fileExists(atPath: url.path) ? url : nil
    }()

    /// A file under `../shared`, or nil (with the reason printed once) when absent.
    static func file(_ relativePath: String) -> URL? {
        guard let root else {
            print("SKIPPED: ../shared is not beside the repository; \(relativePath) unavailable")
            return nil
        }
        let url = root.appendingPathComponent(relativePath)
        guard FileManager.default.fileExists(atPath: url.path) else {
            print("SKIPPED: \(url.path) is absent")
            return nil
        }
        return url
    }
}
