import Glibc
import LedgerKeys

/// keys-bench: the key store's costs at a size (default 100,000 keys): one write that
/// creates them all, opening the store, one write after that (destroying one key), and
/// the file's size. Run from a release build:
///   swift run -c release keys-bench [KEYS] [SCRATCH]
/// Prints one line per measurement: best of 5 runs, wall seconds.
let arguments = CommandLine.arguments
let count = arguments.count > 1 ? Int(arguments[1]) ?? 100_000 : 100_000
let scratch = arguments.count > 2 ? arguments[2] : "tools/scratch"

func now() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}

func best(_ runs: Int, _ body: () throws -> Void) rethrows -> Double {
    var best = Double.infinity
    for _ in 0..<runs {
        let start = now()
        try body()
        best = min(best, now() - start)
    }
    return best
}

func fileSize(_ path: String) -> Int {
    var info = stat()
    return stat(path, &info) == 0 ? Int(info.st_size) : -1
}

mkdir(scratch, 0o700)
let base = scratch + "/keys-bench-\(getpid())"
mkdir(base, 0o700)
let kekPath = base + "/kek"
let kek = try KeyEncryptionKey.create(at: kekPath)
// 20 sources × 150 types × months: the worst case DESIGN.md counts, cut at `count`.
var scopes: [KeyScope] = []
scopes.reserveCapacity(count)
var month: UInt32 = 2016 * 12
outer: while true {
    for source in 0..<20 {
        for type in 0..<150 {
            if scopes.count == count { break outer }
            scopes.append(KeyScope(source: .app(ordinal: UInt64(source)), type: UInt16(type), month: UTCMonth(index: month)))
        }
    }
    month += 1
}
var run = 0
let createAll = try best(5) {
    run += 1
    let folder = base + "/create-\(run)"
    let store = try KeyStore.create(folder: folder, kek: kek)
    _ = try store.prepare(scopes)
}
let folder = base + "/create-1"
let size = fileSize(folder + "/" + KeyStore.fileName)
var opened: KeyStore?
let open = try best(5) { opened = try KeyStore.open(folder: folder, kek: kek) }
let store = opened!
var nextVictim: UInt64 = 1
let destroyOne = try best(5) {
    _ = try store.destroy(ids: [nextVictim], at: 0)
    nextVictim += 1
}
let lookups = best(5) {
    var found = 0
    for id in 1...UInt64(count) { if case .live = store.lookup(id: id) { found += 1 } }
    precondition(found == count - 5)
}
print("keys \(count), file \(size) bytes (\(size / count) a key)")
print("create all in one write: \(createAll) s")
print("open (read, authenticate, decode): \(open) s")
print("destroy one key (a whole-store write): \(destroyOne) s")
print("lookup by id, all \(count): \(lookups) s")
// Clean up what this run made.
for r in 1...run { unlink(base + "/create-\(r)/" + KeyStore.fileName); rmdir(base + "/create-\(r)") }
unlink(kekPath)
rmdir(base)
